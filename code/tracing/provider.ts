/**
 * NewProvider — a component's TracerProvider: parent-based sampling, a batch span processor, and
 * an OTLP/HTTP exporter to the configured endpoint; or, without a configuration, a no-op one.
 * Upstream: NewProvider in component-base's tracing/utils.go.
 *
 * Solves:
 * - every component traces the same way: a span whose parent was sampled (an incoming
 *   `traceparent` with the sampled flag) is recorded; a trace the component starts itself is
 *   recorded for `samplingRatePerMillion` of a million, none by default;
 * - tracing off costs nothing: no exporter, no processor, no context manager — the spans the
 *   components "start" are OpenTelemetry's non-recording ones, and tracing.ts's helpers skip
 *   even those;
 * - spans carry the component in their resource (`service.name`: `apiserver`, `kubelet` as
 *   upstream names them; `kube-scheduler` and `kube-controller-manager` here) so one file of
 *   spans from every process can be read back per component.
 *
 * Invariants:
 * - a recording provider makes sure the process has an AsyncLocalStorage context manager (once
 *   per process): the active span follows the `await`s of a request, as Go's ctx is passed by hand;
 * - `shutdown()` exports what is still buffered before resolving (a component stopping cleanly
 *   loses none of its last spans).
 *
 * What upstream does differently: OTLP over gRPC (ours: OTLP/HTTP with JSON bodies, so the
 * course's collector needs no protobuf); the batch processor exports every 5 s (ours every
 * second, so `npm run cluster -- trace` sees a pod a moment after it ran).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/tracing/utils.go (NewProvider)
 * @chapter 08-cluster
 */
import { context, type TracerProvider, trace } from "@opentelemetry/api";
import { AsyncLocalStorageContextManager } from "@opentelemetry/context-async-hooks";
import { OTLPTraceExporter } from "@opentelemetry/exporter-trace-otlp-http";
import { resourceFromAttributes } from "@opentelemetry/resources";
import {
  AlwaysOffSampler,
  BasicTracerProvider,
  BatchSpanProcessor,
  ParentBasedSampler,
  TraceIdRatioBasedSampler,
} from "@opentelemetry/sdk-trace-base";
import { ATTR_SERVICE_NAME } from "@opentelemetry/semantic-conventions";
import { exportURL, type TracingConfiguration } from "./config.ts";

/** A component's tracer provider, and how to flush it on the way out. */
export interface ComponentTracerProvider {
  provider: TracerProvider;
  /** False for the no-op provider: callers skip building span attributes at all. */
  recording: boolean;
  shutdown(): Promise<void>;
}

/** The no-op provider: what every component uses when tracing is off. */
export const noopProvider: ComponentTracerProvider = {
  provider: trace.getTracerProvider(), // the API's default: a proxy to the no-op tracer
  recording: false,
  shutdown: async () => {},
};

let contextManagerSet = false;

// #region new-provider
/**
 * NewProvider: `undefined` config → the no-op provider. `resource` adds attributes to
 * service.name (the kubelet adds host.name, its node).
 */
export function newProvider(
  config: TracingConfiguration | undefined,
  serviceName: string,
  resource: Record<string, string> = {},
): ComponentTracerProvider {
  if (!config) return noopProvider;
  const rate = config.samplingRatePerMillion ?? 0;
  // Parent-based: a sampled parent is followed; a root is sampled at the rate, never by default.
  const root = rate > 0 ? new TraceIdRatioBasedSampler(rate / 1_000_000) : new AlwaysOffSampler();
  const exporter = new OTLPTraceExporter({ url: exportURL(config.endpoint) });
  const provider = new BasicTracerProvider({
    resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName, ...resource }),
    sampler: new ParentBasedSampler({ root }),
    spanProcessors: [new BatchSpanProcessor(exporter, { scheduledDelayMillis: 1000 })],
  });
  if (!contextManagerSet) {
    contextManagerSet = context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  }
  return { provider, recording: true, shutdown: () => provider.shutdown() };
}
// #endregion new-provider

/**
 * Many components of one kind in one process — kubemark's hollow kubelets: one exporter and one
 * batch processor shared by all, and a provider per component for its own resource (the
 * kubelet's host.name: its node), so a thousand hollow nodes make one export a second, not a
 * thousand. The components' providers do not flush on their own: `shutdown()` does, once, after
 * every component stopped. Upstream has no counterpart (a hollow node is a process of its own).
 */
export function newSharedProviders(
  config: TracingConfiguration | undefined,
  serviceName: string,
): { forResource(resource: Record<string, string>): ComponentTracerProvider; shutdown(): Promise<void> } {
  if (!config) return { forResource: () => noopProvider, shutdown: async () => {} };
  const rate = config.samplingRatePerMillion ?? 0;
  const root = rate > 0 ? new TraceIdRatioBasedSampler(rate / 1_000_000) : new AlwaysOffSampler();
  const processor = new BatchSpanProcessor(new OTLPTraceExporter({ url: exportURL(config.endpoint) }), {
    scheduledDelayMillis: 1000,
  });
  if (!contextManagerSet) {
    contextManagerSet = context.setGlobalContextManager(new AsyncLocalStorageContextManager().enable());
  }
  return {
    forResource: (resource) => ({
      provider: new BasicTracerProvider({
        resource: resourceFromAttributes({ [ATTR_SERVICE_NAME]: serviceName, ...resource }),
        sampler: new ParentBasedSampler({ root }),
        spanProcessors: [processor],
      }),
      recording: true,
      shutdown: async () => {},
    }),
    shutdown: () => processor.shutdown(),
  };
}

/**
 * Spans — how a component records a piece of its work: a component's entry point starts a span
 * with its own provider (`startSpan`), and everything called inside it nests child spans and
 * events under the active one (`withSpan`, `addEvent`) without being handed a tracer, as
 * component-base's `tracing.Start(ctx, name, attrs…)` nests under the span of its ctx.
 *
 * Solves:
 * - the code deep inside a request (a storage write, an admission plugin, a REST call from the
 *   scheduler) records under whichever span is active, and records nothing when none is —
 *   upstream's rule: "It only creates an OpenTelemetry span if the incoming context already
 *   includes a span";
 * - a request crossing processes stays one trace: the REST client sends the active span as a W3C
 *   `traceparent` header (upstream: client-go's otelhttp transport) and the API server's span
 *   continues it (upstream: the WithTracing filter's otelhttp handler);
 * - one pod's spans can be found in every component's output: `podAttributes` are the keys
 *   every span about a pod carries (semantic conventions' k8s.pod.uid, k8s.pod.name,
 *   k8s.namespace.name).
 *
 * Invariants:
 * - with tracing off the helpers call their function with `undefined` for the span: no span
 *   object, no attribute map, no context switch (callers write `span?.addEvent(…)`);
 * - a span started by `startSpan`/`withSpan` ends when its function returns or its promise
 *   settles; a thrown error is recorded on it (status ERROR) and rethrown.
 *
 * What upstream does differently: Go passes ctx by hand; we keep the active span in Node's
 * AsyncLocalStorage (provider.ts sets the context manager), and keep the component's tracer in
 * the same context, since an OpenTelemetry JS span does not expose its TracerProvider as Go's does.
 * Upstream's Span also feeds k8s.io/utils/trace (log lines for slow requests); ours does not.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/tracing/tracing.go (Start, Span, SpanFromContext)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/tracing/utils.go (Propagators, WrapperFor)
 * @chapter 08-cluster
 */
import {
  type Attributes,
  type Context,
  context,
  createContextKey,
  defaultTextMapGetter,
  defaultTextMapSetter,
  ROOT_CONTEXT,
  type Span,
  SpanKind,
  SpanStatusCode,
  type Tracer,
  trace,
} from "@opentelemetry/api";
import { CompositePropagator, W3CBaggagePropagator, W3CTraceContextPropagator } from "@opentelemetry/core";
import type { ComponentTracerProvider } from "./provider.ts";

export type { Span } from "@opentelemetry/api";

/** The tracer a component's entry point put in the context, for the spans nested under it. */
const tracerKey = createContextKey("k8s.io/component-base/tracing tracer");

/** Propagators: W3C trace context and baggage, as upstream's tracing.Propagators(). */
const propagator = new CompositePropagator({
  propagators: [new W3CTraceContextPropagator(), new W3CBaggagePropagator()],
});

// #region pod-attributes
/** The attributes that tie a span to a pod, from whatever of its metadata is known. */
export function podAttributes(pod: {
  metadata?: { uid?: string; name?: string; namespace?: string };
}): Attributes {
  const m = pod.metadata ?? {};
  const a: Attributes = {};
  if (m.uid) a["k8s.pod.uid"] = m.uid;
  if (m.name) a["k8s.pod.name"] = m.name;
  if (m.namespace) a["k8s.namespace.name"] = m.namespace;
  return a;
}
// #endregion pod-attributes

/** Runs `fn` with `span`, ending the span when `fn` returns or its promise settles. */
function runEnding<T>(span: Span, fn: (span: Span) => T): T {
  const fail = (e: unknown) => {
    span.recordException(e as Error);
    span.setStatus({ code: SpanStatusCode.ERROR, message: (e as Error)?.message });
    span.end();
  };
  let out: T;
  try {
    out = fn(span);
  } catch (e) {
    fail(e);
    throw e;
  }
  if (out instanceof Promise) {
    return out.then(
      (v) => {
        span.end();
        return v;
      },
      (e) => {
        fail(e);
        throw e;
      },
    ) as T;
  }
  span.end();
  return out;
}

// #region start-span
/**
 * A component's own span (the root of its work, or the child of `parent`: an incoming request's
 * context). Everything `fn` calls runs with it active and may nest under it with `withSpan`.
 */
export function startSpan<T>(
  tp: ComponentTracerProvider,
  scope: string,
  name: string,
  attributes: Attributes | (() => Attributes),
  fn: (span: Span | undefined) => T,
  options: { parent?: Context; kind?: SpanKind } = {},
): T {
  if (!tp.recording) return fn(undefined);
  const tracer = tp.provider.getTracer(scope);
  const parent = options.parent ?? context.active();
  const span = tracer.startSpan(
    name,
    {
      kind: options.kind ?? SpanKind.INTERNAL,
      attributes: typeof attributes === "function" ? attributes() : attributes,
    },
    parent,
  );
  const ctx = trace.setSpan(parent, span).setValue(tracerKey, tracer);
  return context.with(ctx, () => runEnding(span, fn));
}

/**
 * tracing.Start: a child of the active span, with the tracer that started it — or, when no
 * component span is active (tracing off, or code running outside any), just `fn(undefined)`.
 */
export function withSpan<T>(
  name: string,
  attributes: Attributes | (() => Attributes),
  fn: (span: Span | undefined) => T,
): T {
  const active = context.active();
  const tracer = active.getValue(tracerKey) as Tracer | undefined;
  if (!tracer) return fn(undefined);
  const span = tracer.startSpan(
    name,
    { attributes: typeof attributes === "function" ? attributes() : attributes },
    active,
  );
  return context.with(trace.setSpan(active, span), () => runEnding(span, fn));
}
// #endregion start-span

/**
 * Runs `fn` outside any span: for work that outlives the span it is started from (a probe
 * worker's loop, started by a sync) — as Go starts such goroutines with a fresh context. Without
 * it, Node's AsyncLocalStorage would make every later request of that loop a child of a span
 * that ended long ago.
 */
export function detached<T>(fn: () => T): T {
  return context.with(ROOT_CONTEXT, fn);
}

/** The active span when it records (SpanFromContext), else undefined. */
export function activeSpan(): Span | undefined {
  const span = trace.getSpan(context.active());
  return span?.isRecording() ? span : undefined;
}

/** Span.AddEvent on the active span; nothing when none records. */
export function addEvent(name: string, attributes?: Attributes): void {
  activeSpan()?.addEvent(name, attributes);
}

// #region propagation
/** The context an incoming request's `traceparent` (and `baggage`) carries; ROOT_CONTEXT without one. */
export function extractContext(headers: Record<string, string | string[] | undefined>): Context {
  if (!headers.traceparent) return ROOT_CONTEXT;
  return propagator.extract(ROOT_CONTEXT, headers, defaultTextMapGetter);
}

/**
 * Adds `traceparent` for the active span to an outgoing request's headers, so the server's span
 * becomes its child; nothing when no span is active (tracing off: no context manager, no span).
 */
export function injectTraceContext(headers: Record<string, string>): void {
  const active = context.active();
  if (!trace.getSpan(active)) return;
  propagator.inject(active, headers, defaultTextMapSetter);
}
// #endregion propagation

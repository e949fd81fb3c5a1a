/**
 * Tracing wiring — what `npm run cluster` does so that a pod's life can be read back across its
 * processes: one span collector (code/tracing/collector.ts) writing `<dir>/traces.jsonl`, the
 * control plane given `--tracing-config-file=<dir>/tracing.yaml` (the API server's
 * TracingConfiguration file, which this course's scheduler, controller-manager and kubemark read
 * too), and every kubelet given `--config=<dir>/kubelet-config.yaml`, a KubeletConfiguration
 * holding only its `tracing` field. No upstream counterpart as code: upstream clusters run an OpenTelemetry
 * Collector (its own Deployment or host process) and point the components at it with these same
 * two settings.
 *
 * Where the collector runs, and why: inside the supervisor (the `npm run cluster` process), as
 * the live view does, not as a component of its own. A learner reads the component list as
 * Kubernetes' processes, and a collector is not one of them; chaos kills and restarts
 * components, never the supervisor, so no span a component exported is lost to a fault; and the
 * supervisor closes the collector only after every component has stopped and flushed its last
 * batch (a kubelet's final status write is in the file).
 *
 * Solves:
 * - every component's spans in one file, each line one span with its component (`service`), so
 *   `npm run cluster -- trace <pod>` can put one pod's life back together;
 * - all traces recorded by default (`samplingRatePerMillion: 1000000`, where upstream's default
 *   is 0: a learner wants to see every pod, not one in ten thousand); `--tracing=false` starts
 *   no collector and passes no tracing flag at all (the components trace nothing).
 *
 * Invariants:
 * - the files are written before any component starts and not again until the next launch: a
 *   component restarted by chaos (same command line) finds the same collector's endpoint;
 * - `traces.jsonl` is appended to across launches in the same directory, as the logs are
 *   (`trace` picks a pod's latest incarnation); `npm run cluster -- down` removes it.
 *
 * What it costs: every request is a trace, so the file grows even when nothing happens — the
 * kubelets' Lease renewals and Node reads: about 1 KB/s with one node and two hollow ones, about
 * 40 KB/s (60 spans a second) with 100 idle hollow nodes. For long runs at scale,
 * `--tracing=false`.
 *
 * What upstream does differently: OTLP over gRPC to port 4317 (ours: OTLP/HTTP with JSON bodies,
 * code/tracing/config.ts); the kubelet's configuration file also holds every other setting (ours
 * passes those as flags, which take precedence over the file, as upstream's do); upstream
 * 1.32's scheduler and controller-manager have no tracing (ours take the flag as a COURSE FLAG).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/apis/apiserver/v1beta1/types.go (TracingConfiguration: the file the control plane reads)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/kubelet/config/v1beta1/types.go (KubeletConfiguration.Tracing)
 * @chapter 08-cluster
 */
import { writeFileSync } from "node:fs";
import { join } from "node:path";
import { stringify } from "yaml";
import { type Collector, startCollector } from "../../tracing/collector.ts";

/** Every trace: a learner traces any pod, not a sample. */
export const samplingAll = 1_000_000;

// #region tracing-files
/** The control plane's `--tracing-config-file`: apiserver.config.k8s.io/v1beta1 TracingConfiguration. */
export function tracingConfigYAML(endpoint: string, samplingRatePerMillion = samplingAll): string {
  return stringify({
    apiVersion: "apiserver.config.k8s.io/v1beta1",
    kind: "TracingConfiguration",
    endpoint,
    samplingRatePerMillion,
  });
}

/** The kubelets' `--config`: a KubeletConfiguration with only its `tracing` field set. */
export function kubeletTracingConfigYAML(endpoint: string, samplingRatePerMillion = samplingAll): string {
  return stringify({
    apiVersion: "kubelet.config.k8s.io/v1beta1",
    kind: "KubeletConfiguration",
    tracing: { endpoint, samplingRatePerMillion },
  });
}
// #endregion tracing-files

// #region cluster-tracing
/** The cluster's collector and the flags that point the components at it. */
export class ClusterTracing {
  private constructor(
    private readonly collector: Collector,
    /** `<dir>/traces.jsonl`: one span a line (collector.ts's SpanRecord). */
    readonly file: string,
    private readonly configFile: string,
    private readonly kubeletConfigFile: string,
  ) {}

  /** Starts the collector on a free port of 127.0.0.1 and writes both configuration files. */
  static async start(dir: string): Promise<ClusterTracing> {
    const file = join(dir, "traces.jsonl");
    const collector = await startCollector({ file });
    const configFile = join(dir, "tracing.yaml");
    const kubeletConfigFile = join(dir, "kubelet-config.yaml");
    writeFileSync(configFile, tracingConfigYAML(collector.endpoint));
    writeFileSync(kubeletConfigFile, kubeletTracingConfigYAML(collector.endpoint));
    return new ClusterTracing(collector, file, configFile, kubeletConfigFile);
  }

  /** Where the components send their spans: `http://127.0.0.1:<port>`. */
  get endpoint(): string {
    return this.collector.endpoint;
  }

  /** kube-apiserver, kube-scheduler, kube-controller-manager. */
  controlPlaneArgs(): string[] {
    return [`--tracing-config-file=${this.configFile}`];
  }

  /** A kubelet: its configuration file (its flags still win over the file, as upstream's). */
  kubeletArgs(): string[] {
    return [`--config=${this.kubeletConfigFile}`];
  }

  /** After every component stopped: the last exports are answered, every span is on disk. */
  close(): Promise<void> {
    return this.collector.close();
  }
}
// #endregion cluster-tracing

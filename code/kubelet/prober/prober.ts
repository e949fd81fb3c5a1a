/**
 * The prober — runs one probe of a container with the right handler and turns the handler's
 * answer into a counted result and, where the user should know, an event.
 * Mirrors kubernetes/kubernetes pkg/kubelet/prober/prober.go.
 *
 * Solves:
 * - the worker knows when to probe, the handlers know how; between them something must pick the
 *   handler from the probe spec (exec, httpGet, tcpSocket), fill in what the spec leaves out (the
 *   pod IP as host, a named port, the timeout) and say what happened on the container, where
 *   `kubectl describe pod` shows it: "Liveness probe failed: HTTP probe failed with statuscode: 500".
 * - a probe the kubelet could not even run (a port name that does not exist, the runtime refusing
 *   the exec) says nothing about the container's health: it is retried a few times, reported as
 *   "errored", and the worker throws the run away instead of counting it.
 *
 * Invariants:
 * - `success` → Success; `warning` → Success plus a ProbeWarning event; `failure` or `unknown` →
 *   Failure plus an Unhealthy event carrying the handler's output (every failed run, not only the
 *   one that reaches the threshold).
 * - a probe errored on each of its `maxProbeRetries` tries → an Unhealthy "errored" event and a
 *   rejection (upstream returns Failure with the error; the worker discards it either way).
 *
 * @upstream kubernetes/kubernetes pkg/probe/grpc/grpc.go (the gRPC handler: probe/grpc.ts)
 * @upstream kubernetes/kubernetes pkg/kubelet/prober/prober.go (prober, probe, runProbeWithRetries, runProbe, maxProbeRetries)
 * @upstream kubernetes/kubernetes pkg/kubelet/events/event.go (ContainerUnhealthy, ContainerProbeWarning)
 * @chapter 07-kubelet
 */

import type { Container, Pod, PodStatus, Probe } from "../../api/core.ts";
import { doExecProbe, type ExecSync } from "./probe/exec.ts";
import { doGRPCProbe } from "./probe/grpc.ts";
import { doHTTPProbe, type judgeHTTPResponse, newRequestForHTTPGetAction } from "./probe/http.ts";
import { type Dial, type ProbeOutcome, resolveContainerPort } from "./probe/probe.ts";
import { doTCPProbe } from "./probe/tcp.ts";
import type { Result } from "./results/results-manager.ts";
import type { ProbeType } from "./worker.ts";

/** How many times a probe that errors (not one that fails) is tried before giving up. */
export const maxProbeRetries = 3;

export interface ProberOptions {
  /** Where pod addresses really are on this machine (the process runtime's pod network). */
  dial?: Dial;
  /** The runtime's ExecSync for a container (chapter 7's runtime provides it). */
  execSync: (containerID: string) => ExecSync;
  /** Records an event on the container (the kubelet's recorder, with the container's reference). */
  recordEvent: (
    pod: Pod,
    container: Container,
    type: "Normal" | "Warning",
    reason: string,
    message: string,
  ) => void;
  /** How an HTTP probe judges each response; the real one unless a test (exercise 7.2) plugs in its own. */
  judgeHTTPResponse?: typeof judgeHTTPResponse;
}

export class Prober {
  constructor(private readonly o: ProberOptions) {}

  // #region probe
  /** Probes once; rejects when the probe could not be run (the worker then discards the run). */
  async probe(
    probeType: ProbeType,
    pod: Pod,
    status: PodStatus,
    container: Container,
    containerID: string,
  ): Promise<Result> {
    const spec = {
      Liveness: container.livenessProbe,
      Readiness: container.readinessProbe,
      Startup: container.startupProbe,
    }[probeType];
    if (!spec) return "Success"; // no probe of this type: nothing to fail

    let outcome: ProbeOutcome = { result: "unknown", output: "" };
    for (let i = 0; i < maxProbeRetries; i++) {
      outcome = await this.runProbe(spec, pod, status, container, containerID);
      if (!outcome.error) break;
    }
    if (outcome.error) {
      this.o.recordEvent(
        pod,
        container,
        "Warning",
        "Unhealthy",
        `${probeType} probe errored: ${outcome.error.message}`,
      );
      throw outcome.error;
    }
    if (outcome.result === "success") return "Success";
    if (outcome.result === "warning") {
      this.o.recordEvent(
        pod,
        container,
        "Warning",
        "ProbeWarning",
        `${probeType} probe warning: ${outcome.output}`,
      );
      return "Success";
    }
    this.o.recordEvent(
      pod,
      container,
      "Warning",
      "Unhealthy",
      `${probeType} probe failed: ${outcome.output}`,
    );
    return "Failure";
  }
  // #endregion probe

  // #region run-probe
  /** Picks the handler the probe names and runs it once. */
  async runProbe(
    spec: Probe,
    pod: Pod,
    status: PodStatus,
    container: Container,
    containerID: string,
  ): Promise<ProbeOutcome> {
    const timeoutMs = (spec.timeoutSeconds ?? 1) * 1000;
    const podIP = status.podIP ?? "";
    try {
      if (spec.exec)
        return await doExecProbe(this.o.execSync(containerID), spec.exec.command ?? [], timeoutMs);
      if (spec.httpGet)
        return await doHTTPProbe(
          { ...newRequestForHTTPGetAction(spec.httpGet, container, podIP), dial: this.o.dial },
          timeoutMs,
          this.o.judgeHTTPResponse,
        );
      if (spec.tcpSocket) {
        const port = resolveContainerPort(spec.tcpSocket.port, container);
        return await doTCPProbe(spec.tcpSocket.host || podIP, port, timeoutMs, this.o.dial);
      }
    } catch (err) {
      // A port that does not resolve: the probe cannot be judged.
      return { result: "unknown", output: "", error: err as Error };
    }
    // A gRPC probe has no host field: always the pod's IP.
    if (spec.grpc) return doGRPCProbe(podIP, spec.grpc.service ?? "", spec.grpc.port, timeoutMs, this.o.dial);
    // (format.Pod's "name_namespace(uid)" names the pod, as in upstream's message.)
    const where = `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid}):${container.name}`;
    return { result: "unknown", output: "", error: new Error(`missing probe handler for ${where}`) };
  }
  // #endregion run-probe
}

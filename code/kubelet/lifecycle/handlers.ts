/**
 * The lifecycle handler runner — runs a container's postStart or preStop hook: a command in the
 * container, an HTTP GET to it, or a sleep.
 * Mirrors kubernetes/kubernetes pkg/kubelet/lifecycle/handlers.go.
 *
 * Solves: an application that needs to drain connections or deregister before it stops gets a
 * preStop hook, run by the kubelet *before* SIGTERM and counted against the pod's grace period;
 * the runner is the one place that knows how to run each kind of hook.
 *
 * Invariants:
 * - an exec hook runs through the CRI's ExecSync with no timeout of its own (the caller bounds it
 *   by the grace period); a non-zero exit is a failure whose message carries the output;
 * - an httpGet hook fails only when the request fails: any HTTP status, even 500, is success;
 *   without a host it dials the pod's IP, resolved through the pod network (our one-machine
 *   port mapping) before dialling;
 * - a sleep hook ends early, as a failure, when the caller aborts it (the container was stopped);
 * - tcpSocket is not a hook (validation refuses it): "Cannot run handler".
 *
 * What upstream does differently: an https hook that gets an HTTP answer is retried over http
 * (with a LifecycleHTTPFallback event); we do not retry.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/lifecycle/handlers.go (handlerRunner.Run, runHTTPHandler, runSleepHandler)
 * @upstream kubernetes/kubernetes pkg/probe/http/request.go (NewRequestForHTTPGetAction: the kube-lifecycle user agent)
 * @chapter 07-kubelet
 */

import type { Container, LifecycleHandler, Pod } from "../../api/core.ts";
import { type Clock, sleep } from "../../client/util/clock.ts";
import { formatPod } from "../kuberuntime/helpers.ts";
import { newRequestForHTTPGetAction, probeUserAgent } from "../prober/probe/http.ts";
import type { RuntimeService } from "../runtime/cri.ts";
import { CodeExitError } from "../runtime/cri-errors.ts";

/** Where a pod's (ip, port) really listens: identity unless the runtime maps pod ports. */
export type PodNetworkResolve = (podIP: string, port: number) => { host: string; port: number };

export const lifecycleUserAgent = "kube-lifecycle/1.32";

export interface HandlerRunnerDeps {
  runtimeService: RuntimeService;
  clock: Clock;
  /** The pod's IPs as the runtime reports them (upstream asks GetPodStatus). */
  getPodIPs: (pod: Pod) => Promise<string[]>;
  podNetworkResolve?: PodNetworkResolve;
}

/** undefined on success; otherwise the message for the FailedPreStopHook/PostStartHook event. */
export type HandlerError = { message: string; err: Error } | undefined;

export class HandlerRunner {
  constructor(private readonly deps: HandlerRunnerDeps) {}

  async run(
    containerID: string,
    pod: Pod,
    container: Container,
    handler: LifecycleHandler,
    signal?: AbortSignal,
  ): Promise<HandlerError> {
    const where = `for Container "${container.name}" in Pod "${formatPod(pod)}"`;
    if (handler.exec) {
      const cmd = handler.exec.command ?? [];
      try {
        await this.deps.runtimeService.ExecSync(containerID, cmd, 0);
        return undefined;
      } catch (e) {
        const err = asError(e);
        const output = err instanceof CodeExitError ? err.stdout + err.stderr : "";
        return {
          err,
          message: `Exec lifecycle hook ([${cmd.join(" ")}]) ${where} failed - error: ${err.message}, message: ${JSON.stringify(output)}`,
        };
      }
    }
    if (handler.httpGet) {
      try {
        await this.runHTTPHandler(pod, container, handler, signal);
        return undefined;
      } catch (e) {
        const err = asError(e);
        return {
          err,
          message: `HTTP lifecycle hook (${handler.httpGet.path ?? ""}) ${where} failed - error: ${err.message}`,
        };
      }
    }
    if (handler.sleep) {
      const seconds = handler.sleep.seconds;
      await sleep(this.deps.clock, seconds * 1000, signal);
      if (signal?.aborted) {
        const err = new Error("container terminated before sleep hook finished");
        return { err, message: `Sleep lifecycle hook (${seconds}) ${where} failed - error: ${err.message}` };
      }
      return undefined;
    }
    const err = new Error(`invalid handler: ${JSON.stringify(handler)}`);
    return { err, message: `Cannot run handler: ${err.message}` };
  }

  private async runHTTPHandler(
    pod: Pod,
    container: Container,
    handler: LifecycleHandler,
    signal?: AbortSignal,
  ): Promise<void> {
    const httpGet = handler.httpGet!;
    let podIP = httpGet.host ?? "";
    if (!podIP) {
      const ips = await this.deps.getPodIPs(pod);
      if (ips.length === 0) throw new Error(`failed to find networking container: ${formatPod(pod)}`);
      podIP = ips[0];
    }
    const req = newRequestForHTTPGetAction(httpGet, container, podIP);
    if (req.headers.get("User-Agent")?.[0] === probeUserAgent)
      req.headers.set("User-Agent", [lifecycleUserAgent]);
    const url = new URL(req.url);
    const resolved = this.deps.podNetworkResolve?.(url.hostname, Number(url.port || 80)) ?? {
      host: url.hostname,
      port: Number(url.port || 80),
    };
    url.hostname = resolved.host;
    url.port = String(resolved.port);
    const headers = new Headers();
    for (const [name, values] of req.headers) for (const v of values) headers.append(name, v);
    const resp = await fetch(url, { headers, signal, redirect: "manual" });
    // The body is read and dropped so the connection can be reused; the status does not matter.
    await resp.arrayBuffer().catch(() => undefined);
  }
}

function asError(e: unknown): Error {
  return e instanceof Error ? e : new Error(String(e));
}

/**
 * probe.Result — what one run of a probe handler says, before the kubelet counts it.
 *
 * Solves:
 * - three very different checks (an HTTP GET, a TCP connect, a command in the container) must
 *   answer in one vocabulary so the prober can turn any of them into an event and a result.
 * - a redirect to another host is neither healthy nor broken: `warning` is "logically a success,
 *   with something worth telling the user" (the prober records a ProbeWarning event for it).
 *
 * Invariants:
 * - a handler never throws for a check that ran and failed (refused, timed out, status 500, exit
 *   1): that is `failure` with the text the event will carry. `error` is set only when the check
 *   could not be judged at all (upstream's third return value), and the prober then discards the
 *   run instead of counting it.
 *
 * @upstream kubernetes/kubernetes pkg/probe/probe.go (Result: Success, Warning, Failure, Unknown)
 * @upstream kubernetes/kubernetes pkg/probe/util.go (ResolveContainerPort, findPortByName)
 * @chapter 07-kubelet
 */

import type { Container, IntOrString } from "../../../api/core.ts";

export type Result = "success" | "warning" | "failure" | "unknown";

export interface ProbeOutcome {
  result: Result;
  /** The handler's output: the response body, the command's output, or why it failed. */
  output: string;
  /** Set only when the probe could not be judged (upstream returns it as a Go error). */
  error?: Error;
}

/**
 * The port an httpGet or tcpSocket action names: a number, or the name of one of the
 * container's ports. Throws with upstream's message when neither resolves to 1–65535.
 */
export function resolveContainerPort(param: IntOrString, container: Container): number {
  let port: number;
  if (typeof param === "number") {
    port = param;
  } else {
    const named = (container.ports ?? []).find((p) => p.name === param);
    if (!named) throw new Error(`port ${JSON.stringify(param)} not found`);
    port = named.containerPort;
  }
  if (port > 0 && port < 65536) return port;
  throw new Error(`invalid port number: ${port}`);
}

/** Go's net.JoinHostPort: an IPv6 literal goes in brackets so the port stays separable. */
export function joinHostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

/**
 * Where a probe really connects for `host:port` — the pod network's map on this machine (see
 * code/kubelet/runtime/network/pod-network.ts); undefined when nothing listens there. Messages
 * still name `host:port`, as a probe of a real pod IP would.
 */
export type Dial = (host: string, port: number) => { host: string; port: number } | undefined;

/**
 * The tcpSocket probe — healthy if a TCP connection to the address opens within the timeout.
 *
 * Solves:
 * - a server that speaks no HTTP (a database, a message broker) can still be probed: the kernel
 *   completing the handshake says the process is listening. Nothing is sent; the socket is closed
 *   at once.
 * - the event text must read as upstream's does, and upstream passes Go's dial error through
 *   untouched ("dial tcp 10.0.0.5:6379: connect: connection refused"), so Node's error codes are
 *   translated into Go's wording by `dialErrorText` (the HTTP probe reuses it).
 *
 * Invariants:
 * - every outcome is `success` or `failure` (a refused, unreachable or slow connect is a failure
 *   with Go's text, never an exception); the socket and the timer are released either way.
 *
 * @upstream kubernetes/kubernetes pkg/probe/tcp/tcp.go (DoTCPProbe)
 * @upstream kubernetes/kubernetes pkg/probe/dialer_others.go (ProbeDialer)
 * @chapter 07-kubelet
 */

import { connect } from "node:net";
import { type Dial, joinHostPort, type ProbeOutcome } from "./probe.ts";

/** The tcpSocket probe of `host:port`, given `timeoutMs` to connect. */
export function doTCPProbe(
  host: string,
  port: number,
  timeoutMs: number,
  dial?: Dial,
): Promise<ProbeOutcome> {
  const addr = joinHostPort(host, port);
  const target = dial ? dial(host, port) : { host, port };
  if (!target)
    return Promise.resolve({ result: "failure", output: `dial tcp ${addr}: connect: connection refused` });
  return new Promise((resolve) => {
    const socket = connect(target);
    const done = (outcome: ProbeOutcome) => {
      clearTimeout(timer);
      // ProbeDialer sets SO_LINGER 1 so a probe leaves no TIME_WAIT behind; destroy() is the
      // closest Node has (the socket is closed without waiting for the peer).
      socket.destroy();
      resolve(outcome);
    };
    const timer = setTimeout(
      () => done({ result: "failure", output: `dial tcp ${addr}: i/o timeout` }),
      timeoutMs,
    );
    socket.once("connect", () => done({ result: "success", output: "" }));
    socket.once("error", (err) => done({ result: "failure", output: dialErrorText(err, addr) }));
  });
}

// #region dial-error
/** Go's net.OpError text for a failed dial, from Node's error code. */
export function dialErrorText(err: NodeJS.ErrnoException, addr: string): string {
  switch (err.code) {
    case "ECONNREFUSED":
      return `dial tcp ${addr}: connect: connection refused`;
    case "EHOSTUNREACH":
      return `dial tcp ${addr}: connect: no route to host`;
    case "ENETUNREACH":
      return `dial tcp ${addr}: connect: network is unreachable`;
    case "ETIMEDOUT":
      return `dial tcp ${addr}: i/o timeout`;
    case "ENOTFOUND":
    case "EAI_AGAIN": {
      // Go reports a failed name lookup without the port: "dial tcp: lookup db on …: no such host".
      const host = addr.slice(0, addr.lastIndexOf(":")).replace(/^\[|\]$/g, "");
      return `dial tcp: lookup ${host}: no such host`;
    }
    case "ECONNRESET":
      return `read tcp ${addr}: read: connection reset by peer`;
    default:
      return `dial tcp ${addr}: ${err.message}`;
  }
}
// #endregion dial-error

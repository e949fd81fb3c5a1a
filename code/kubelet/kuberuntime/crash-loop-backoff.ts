/**
 * CrashLoopBackOff — how the kubelet spaces out restarts of a container that keeps exiting.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go (doBackOff).
 *
 * Solves: a container that crashes on start would otherwise be restarted on every sync (every
 * second or so), burning CPU and flooding logs and events. The kubelet keeps one client-go
 * Backoff per container: each restart waits twice as long as the last (10 s, 20 s, 40 s, 80 s,
 * 160 s, then 300 s for ever), and the container shows `waiting` with reason CrashLoopBackOff
 * and a message saying how long, until the wait is over.
 *
 * Invariants:
 * - the wait is measured from when the container last exited (its `finishedAt`), not from when
 *   the kubelet noticed: `now - finishedAt < backoff` means "still backing off";
 * - a restart that is let through bumps the backoff (`next`), so the next wait is longer;
 * - the reset: an exit more than 600 s after the last bump — a run of over 10 minutes, since the
 *   bump happens as the container is restarted — starts over at 10 s. The kubelet pins this at
 *   600 s (HasExpiredFunc) rather than client-go's 2 × max, which is also 600 s by default but
 *   would move if the node's max were configured;
 * - the key names the pod (name, namespace, uid), the container and a hash of its spec: a
 *   container whose spec changed starts with no backoff.
 *
 * Reduced: `doBackOff` takes the exited container's `finishedAt` rather than the runtime's pod
 * status, returns the event it would record instead of recording it, and the spec hash is FNV-32a
 * over our JSON of the container, not upstream's HashContainer bytes.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet.go (containerBackOffPeriod, MaxContainerBackOff, NewMainKubelet: backOff.HasExpiredFunc)
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go (doBackOff)
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/helpers.go (getStableKey)
 * @upstream kubernetes/kubernetes pkg/kubelet/events/event.go (BackOffStartContainer)
 * @chapter 07-kubelet
 */

import type { Container, Pod } from "../../api/core.ts";
import type { Clock } from "../../client/util/clock.ts";
import { Backoff } from "../../client/util/flowcontrol/backoff.ts";
import { ErrCrashLoopBackOff } from "../container/reasons.ts";

// #region crash-loop-backoff
/** The first wait before restarting a container that exited. */
export const containerBackOffPeriod = 10_000;
/** The longest wait: five minutes. */
export const MaxContainerBackOff = 300_000;
/** An exit this long after the last restart means the container had been running fine. */
export const crashLoopBackOffResetAfter = 600_000;

export function newCrashLoopBackOff(clock: Clock): Backoff {
  const backOff = new Backoff(containerBackOffPeriod, MaxContainerBackOff, clock);
  backOff.hasExpiredFunc = (eventTime, lastUpdate) => eventTime - lastUpdate > crashLoopBackOffResetAfter;
  return backOff;
}

/** Event reason of the Warning the kubelet records while it holds a restart back. */
export const BackOffStartContainer = "BackOff";

export type BackOffResult =
  | { inBackOff: false }
  | { inBackOff: true; reason: string; message: string; event: { reason: string; message: string } };

/**
 * Whether the kubelet must hold back restarting `container`, which last exited at `finishedAt`
 * (undefined: it has not exited, so there is nothing to back off from). When it may restart,
 * the backoff moves on, so the next exit waits longer.
 */
export function doBackOff(
  pod: Pod,
  container: Container,
  finishedAt: number | undefined,
  backOff: Backoff,
): BackOffResult {
  if (finishedAt === undefined) return { inBackOff: false };
  const key = getStableKey(pod, container);
  if (backOff.isInBackOffSince(key, finishedAt)) {
    const podName = formatPod(pod);
    return {
      inBackOff: true,
      reason: ErrCrashLoopBackOff,
      message: `back-off ${goSeconds(backOff.get(key))} restarting failed container=${container.name} pod=${podName}`,
      event: {
        reason: BackOffStartContainer,
        message: `Back-off restarting failed container ${container.name} in pod ${podName}`,
      },
    };
  }
  backOff.next(key, finishedAt);
  return { inBackOff: false };
}
// #endregion crash-loop-backoff

/** One backoff per (pod, container spec): `<pod>_<namespace>_<uid>_<container>_<hash hex>`. */
export function getStableKey(pod: Pod, container: Container): string {
  const m = pod.metadata;
  return `${m.name}_${m.namespace}_${m.uid}_${container.name}_${fnv32a(JSON.stringify(container)).toString(16)}`;
}

/** The kubelet's format.Pod: `name_namespace(uid)`. */
function formatPod(pod: Pod): string {
  return `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
}

/** Go's Duration.String() for whole seconds, the only values this backoff takes: 40s, 1m20s, 5m0s. */
function goSeconds(ms: number): string {
  const s = Math.round(ms / 1000);
  const h = Math.floor(s / 3600);
  const m = Math.floor((s % 3600) / 60);
  if (h > 0) return `${h}h${m}m${s % 60}s`;
  return m > 0 ? `${m}m${s % 60}s` : `${s}s`;
}

function fnv32a(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of new TextEncoder().encode(text)) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193) >>> 0;
  }
  return hash;
}

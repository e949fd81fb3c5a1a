/**
 * Exercise 7.4 — reference answer: the kubelet's CrashLoopBackOff, its numbers and its decision.
 */
import type { Container, Pod } from "../../../code/api/core.ts";
import type { Clock } from "../../../code/client/util/clock.ts";
import { Backoff } from "../../../code/client/util/flowcontrol/backoff.ts";
import type { BackOffResult } from "../../../code/kubelet/kuberuntime/crash-loop-backoff.ts";
import { getStableKey } from "../../../code/kubelet/kuberuntime/crash-loop-backoff.ts";

const second = 1000;

export function newCrashLoopBackOff(clock: Clock): Backoff {
  const backOff = new Backoff(10 * second, 300 * second, clock);
  // Strictly more than ten minutes since the last restart: the container had been running fine.
  backOff.hasExpiredFunc = (eventTime, lastUpdate) => eventTime - lastUpdate > 600 * second;
  return backOff;
}

export function doBackOff(
  pod: Pod,
  container: Container,
  finishedAt: number | undefined,
  backOff: Backoff,
): BackOffResult {
  if (finishedAt === undefined) return { inBackOff: false };
  const key = getStableKey(pod, container);
  if (!backOff.isInBackOffSince(key, finishedAt)) {
    // Let this restart through, and make the next exit wait longer.
    backOff.next(key, finishedAt);
    return { inBackOff: false };
  }
  const podName = `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
  return {
    inBackOff: true,
    reason: "CrashLoopBackOff",
    message: `back-off ${goDuration(backOff.get(key))} restarting failed container=${container.name} pod=${podName}`,
    event: {
      reason: "BackOff",
      message: `Back-off restarting failed container ${container.name} in pod ${podName}`,
    },
  };
}

/** Go's time.Duration String() for whole seconds under an hour: 10s, 1m20s, 5m0s. */
function goDuration(ms: number): string {
  const total = Math.round(ms / second);
  const minutes = Math.floor(total / 60);
  return minutes > 0 ? `${minutes}m${total % 60}s` : `${total}s`;
}

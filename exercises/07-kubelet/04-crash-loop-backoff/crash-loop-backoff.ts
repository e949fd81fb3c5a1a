/**
 * Exercise: CrashLoopBackOff. A container that keeps exiting is restarted at once the first time,
 * then after waits that double from 10 s up to 300 s; a run of more than ten minutes starts over.
 *
 * - `newCrashLoopBackOff(clock)`: the kubelet's Backoff — its first wait, its cap, and its reset.
 * - `doBackOff(pod, container, finishedAt, backOff)`: may the kubelet restart this container now?
 *
 * README.md has the rules. The test runs both inside the course's real KubeGenericRuntimeManager.
 */
import type { Container, Pod } from "../../../code/api/core.ts";
import type { Clock } from "../../../code/client/util/clock.ts";
import type { Backoff } from "../../../code/client/util/flowcontrol/backoff.ts";
import type { BackOffResult } from "../../../code/kubelet/kuberuntime/crash-loop-backoff.ts";

export function newCrashLoopBackOff(clock: Clock): Backoff {
  throw new Error(`TODO: newCrashLoopBackOff (clock at ${clock.now()})`);
}

export function doBackOff(
  pod: Pod,
  container: Container,
  finishedAt: number | undefined,
  backOff: Backoff,
): BackOffResult {
  throw new Error(
    `TODO: doBackOff(${pod.metadata.name}/${container.name}, exited at ${finishedAt}, backoff ${backOff.defaultDuration} ms)`,
  );
}

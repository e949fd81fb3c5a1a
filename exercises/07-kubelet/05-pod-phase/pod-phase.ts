/**
 * Exercise: the pod's phase — Pending, Running, Succeeded or Failed — from its containers' states,
 * as the kubelet recomputes it on every sync.
 *
 * - `getPhase(pod, info, podIsTerminal)`: `info` holds the statuses of init and app containers together.
 *
 * README.md has the rules. The test runs it inside the course's real generateAPIPodStatus.
 */
import type { ContainerStatus, Pod, PodPhase } from "../../../code/api/core.ts";

export function getPhase(pod: Pod, info: ContainerStatus[], podIsTerminal: boolean): PodPhase {
  throw new Error(
    `TODO: getPhase(${pod.metadata.name}, ${info.length} container statuses, terminal: ${podIsTerminal})`,
  );
}

/**
 * The probe results manager — the last counted result of one probe type, per container.
 * Mirrors kubernetes/kubernetes pkg/kubelet/prober/results/results_manager.go.
 *
 * Solves:
 * - the workers probe on their own timers, but the kubelet acts on results in its sync loop
 *   (restart on a liveness Failure, Ready from readiness): the manager is the hand-over, a cache
 *   the kubelet reads (`get`) plus a stream of changes it reacts to (`onUpdate`).
 * - a probe that keeps passing must not wake the kubelet every period: `set` publishes an update
 *   only when the container's result changes (or is first set).
 *
 * Invariants:
 * - one manager per probe type (the kubelet has a liveness, a readiness and a startup manager);
 *   results are keyed by container ID, so a restarted container starts with no result.
 * - `remove` forgets a container without publishing anything.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/prober/results/results_manager.go (Manager, Result, Update, Set, Get, Remove)
 * @chapter 07-kubelet
 */

import type { Pod } from "../../../api/core.ts";

/** A counted result. Unknown is the startup probe's value before its first verdict. */
export type Result = "Success" | "Failure" | "Unknown";

export interface Update {
  containerID: string;
  result: Result;
  podUID: string;
}

export class ResultsManager {
  private cache = new Map<string, Result>();
  private listeners: ((u: Update) => void)[] = [];

  get(containerID: string): Result | undefined {
    return this.cache.get(containerID);
  }

  // #region set
  /** Records `result` for the container; publishes an Update only if it differs from the cached one. */
  set(containerID: string, result: Result, pod: Pod): void {
    if (this.cache.has(containerID) && this.cache.get(containerID) === result) return;
    this.cache.set(containerID, result);
    const update = { containerID, result, podUID: pod.metadata.uid ?? "" };
    for (const l of this.listeners) l(update);
  }
  // #endregion set

  remove(containerID: string): void {
    this.cache.delete(containerID);
  }

  /** Upstream's Updates() channel, as a listener; returns the function that unsubscribes. */
  onUpdate(listener: (u: Update) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }
}

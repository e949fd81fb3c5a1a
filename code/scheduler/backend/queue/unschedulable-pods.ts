/**
 * UnschedulablePods — the pods that were tried and rejected, parked until a cluster event (or
 * the 5-minute flush) may change their answer; gated pods wait here too.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/backend/queue/scheduling_queue.go (UnschedulablePods, addOrUpdate, delete, get, clear)
 * @chapter 05-scheduler
 *
 * Solves: a pod no node can take should cost nothing while nothing changes. Keeping it out of
 * activeQ means the scheduler does not spin on it; keeping it here (not dropping it) means an
 * event can find it by key and move it back.
 *
 * Invariants:
 * - one entry per pod key; `gatedCount` counts the entries whose pod was gated when added (reported as
 *   scheduler_pending_pods{queue="gated"}, the rest as queue="unschedulable").
 */

import type { Pod } from "../../../api/core.ts";
import { getPodKey, type QueuedPodInfo } from "../../framework/types.ts";

export class UnschedulablePods {
  readonly podInfoMap = new Map<string, QueuedPodInfo>();
  // Keys of the entries that were gated when added: the flag on the QueuedPodInfo itself may
  // change before the entry is deleted (moveToActiveQ re-runs PreEnqueue first).
  private readonly gated = new Set<string>();

  addOrUpdate(pInfo: QueuedPodInfo): void {
    const key = getPodKey(pInfo.podInfo.pod);
    if (pInfo.gated) this.gated.add(key);
    else this.gated.delete(key);
    this.podInfoMap.set(key, pInfo);
  }

  delete(pod: Pod): void {
    const key = getPodKey(pod);
    this.gated.delete(key);
    this.podInfoMap.delete(key);
  }

  get(pod: Pod): QueuedPodInfo | undefined {
    return this.podInfoMap.get(getPodKey(pod));
  }

  len(): number {
    return this.podInfoMap.size;
  }

  gatedCount(): number {
    return this.gated.size;
  }

  clear(): void {
    this.podInfoMap.clear();
    this.gated.clear();
  }
}

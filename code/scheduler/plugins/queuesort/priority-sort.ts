/**
 * PrioritySort — the default QueueSort plugin: higher priority first, then the pod that has
 * waited longer.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/queuesort/priority_sort.go (PrioritySort, Less)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-helpers/scheduling/corev1/helpers.go (PodPriority)
 * @chapter 05-scheduler
 *
 * Solves: activeQ needs one total order. Priority first, so a system-critical pod never waits
 * behind a batch job; then the queue timestamp, so equal pods go first-come first-served and
 * none starves.
 *
 * Invariants: `less` is a strict weak order (irreflexive, transitive); ties on both keys keep
 * neither ahead, and the heap may return them in either order.
 */
import type { Pod } from "../../../api/core.ts";
import type { QueueSortPlugin } from "../../framework/interface.ts";
import type { QueuedPodInfo } from "../../framework/types.ts";

export const Name = "PrioritySort";

/** PodPriority: spec.priority, or 0 when the Priority admission plugin did not set one. */
export const podPriority = (pod: Pod): number => pod.spec.priority ?? 0;

// #region less
export function less(a: QueuedPodInfo, b: QueuedPodInfo): boolean {
  const p1 = podPriority(a.podInfo.pod);
  const p2 = podPriority(b.podInfo.pod);
  return p1 > p2 || (p1 === p2 && a.timestamp < b.timestamp);
}
// #endregion less

export class PrioritySort implements QueueSortPlugin {
  name(): string {
    return Name;
  }
  less = less;
}

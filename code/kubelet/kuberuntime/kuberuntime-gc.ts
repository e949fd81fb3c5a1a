/**
 * Container garbage collection — removes exited containers the kubelet no longer needs, so a
 * container in a crash loop does not leave one dead container (and one log file) per restart.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_gc.go.
 *
 * Solves: the kubelet restarts a container by creating attempt N+1 beside the exited attempt N;
 * after a day of CrashLoopBackOff that is hundreds of dead containers. It needs only the newest
 * exited one (for lastState and `kubectl logs --previous`); older ones go.
 *
 * Invariants:
 * - running containers are never evictable, nor containers younger than minAge;
 * - per (pod uid, container name) at most maxPerPodContainer exited containers are kept, the
 *   newest ones (the kubelet's default policy: minAge 0, maxPerPodContainer 1, no global cap);
 * - a pod the kubelet says may lose its content (deleted and terminated) loses all of them.
 *
 * Reduced: no global maxContainers cap, no sandbox and log-directory eviction (removeTerminatedPod
 * covers a finished pod's sandboxes).
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_gc.go (containerGC, evictableContainers, evictContainers, enforceMaxContainersPerEvictUnit, removeOldestN)
 * @upstream kubernetes/kubernetes pkg/kubelet/container/container_gc.go (GCPolicy)
 * @upstream kubernetes/kubernetes pkg/kubelet/apis/config/v1beta1/defaults.go (MaxPerPodContainerCount 1, MinimumGCAge 0)
 * @chapter 07-kubelet
 */

import type { RuntimeService } from "../runtime/cri.ts";
import { getContainerInfoFromLabels } from "./labels.ts";

export interface GCPolicy {
  /** Containers created less than this long ago (ms) are kept. */
  minAge: number;
  /** Exited containers kept per (pod, container name); negative: no limit. */
  maxPerPodContainer: number;
}

export const defaultGCPolicy: GCPolicy = { minAge: 0, maxPerPodContainer: 1 };

/** Removes evictable containers; returns the ids it removed. */
export async function evictContainers(
  runtimeService: RuntimeService,
  now: number,
  policy: GCPolicy,
  shouldPodContentBeRemoved: (uid: string) => boolean = () => false,
): Promise<string[]> {
  const units = new Map<string, { id: string; createdAt: number; uid: string }[]>();
  for (const c of await runtimeService.ListContainers()) {
    if (c.state === "CONTAINER_RUNNING") continue;
    const createdAt = c.createdAt / 1e6;
    if (now - policy.minAge < createdAt) continue;
    const { podUID } = getContainerInfoFromLabels(c.labels);
    const key = `${podUID}/${c.metadata.name}`;
    units.set(key, [...(units.get(key) ?? []), { id: c.id, createdAt, uid: podUID }]);
  }
  const removed: string[] = [];
  for (const unit of units.values()) {
    // Newest first (ids break ties, as the runtimes hand them out in order).
    unit.sort((a, b) => b.createdAt - a.createdAt || (a.id < b.id ? 1 : -1));
    const keep = shouldPodContentBeRemoved(unit[0].uid) ? 0 : policy.maxPerPodContainer;
    if (keep < 0) continue;
    for (const c of unit.slice(keep)) {
      await runtimeService.RemoveContainer(c.id);
      removed.push(c.id);
    }
  }
  return removed;
}

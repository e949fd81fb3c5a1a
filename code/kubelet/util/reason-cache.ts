/**
 * ReasonCache — the last start error of each container, so the pod's status can say why a
 * container is not running: `waiting: { reason: CrashLoopBackOff, message: "back-off 40s …" }`.
 * Mirrors kubernetes/kubernetes pkg/kubelet/util/reason_cache.go.
 *
 * Solves: a container that failed to start (its image cannot be pulled, it is backing off) has
 * no runtime state that says so — the runtime may have nothing for it at all. The failure exists
 * only in the SyncResult of the last sync; the kubelet keeps it here between the sync that saw it
 * and the status generation that reports it.
 *
 * Invariants:
 * - only StartContainer results touch the cache: a failure records (reason, message), a success
 *   removes the entry, so a started container stops showing its old error;
 * - keys are `<pod uid>_<container name>`; the cache is an LRU of 1000 entries (a node has at
 *   most a few hundred containers, and a forgotten pod's entries age out).
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/util/reason_cache.go (ReasonCache, ReasonItem, Update, Get, Remove, maxReasonCacheEntries)
 * @chapter 07-kubelet
 */

import type { PodSyncResult } from "../container/runtime.ts";

export const maxReasonCacheEntries = 1000;

export interface ReasonItem {
  /** The error's reason: ErrImagePull, ImagePullBackOff, CrashLoopBackOff, CreateContainerError, … */
  err: string;
  message: string;
}

export class ReasonCache {
  // A Map iterates in insertion order: re-inserting on use makes the first key the least recent.
  private readonly cache = new Map<string, ReasonItem>();

  constructor(private readonly maxEntries = maxReasonCacheEntries) {}

  private static key(uid: string, name: string): string {
    return `${uid}_${name}`;
  }

  /** Records each StartContainer result of a sync: failures added, successes cleared. */
  update(uid: string, result: PodSyncResult): void {
    for (const r of result.syncResults) {
      if (r.action !== "StartContainer") continue;
      if (r.error !== "") this.add(uid, r.target, r.error, r.message);
      else this.remove(uid, r.target);
    }
  }

  add(uid: string, name: string, err: string, message: string): void {
    const key = ReasonCache.key(uid, name);
    this.cache.delete(key);
    this.cache.set(key, { err, message });
    if (this.cache.size > this.maxEntries) this.cache.delete(this.cache.keys().next().value as string);
  }

  remove(uid: string, name: string): void {
    this.cache.delete(ReasonCache.key(uid, name));
  }

  /** Forgets every container of a pod that is gone (the kubelet's cleanup of a removed pod). */
  removePod(uid: string): void {
    for (const key of [...this.cache.keys()]) if (key.startsWith(`${uid}_`)) this.cache.delete(key);
  }

  get(uid: string, name: string): ReasonItem | undefined {
    const key = ReasonCache.key(uid, name);
    const item = this.cache.get(key);
    if (item) {
      this.cache.delete(key);
      this.cache.set(key, item);
    }
    return item;
  }
}

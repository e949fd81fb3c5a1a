/**
 * The pod status cache — the newest runtime PodStatus of every pod, written by the PLEG and read
 * by the pod workers.
 * Mirrors kubernetes/kubernetes pkg/kubelet/container/cache.go.
 *
 * Solves:
 * - a pod worker that has just synced a pod must not sync it again from the same, stale view of
 *   the runtime (it would start a container twice, or miss that one died): it asks for a status
 *   *newer than* its last sync and waits until the PLEG has relisted past that moment.
 * - most pods do not change between two relists, so the PLEG cannot re-inspect each of them every
 *   second; instead it moves one global timestamp ("everything not written since is still true at
 *   this time"), which answers the waiting workers of unchanged pods.
 *
 * Invariants:
 * - an entry's `modified` is the time of the relist that produced it, never the time of `set`.
 * - `getNewerThan(uid, t)` resolves once the entry was modified after `t` or the global timestamp
 *   is after `t`; a pod the cache has never seen resolves then with an empty status.
 * - `updateTime` never moves the global timestamp backwards.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/container/cache.go (Cache, cache, Get, GetNewerThan, Set, Delete, UpdateTime, getIfNewerThan, notify)
 * @chapter 07-kubelet
 */

import type { PodStatus } from "./runtime.ts";

interface Data {
  status: PodStatus;
  error?: Error;
  modified: number;
}

interface Subscriber {
  minTime: number;
  resolve: (d: { status: PodStatus; error?: Error }) => void;
}

/** A PodStatus with nothing in it: what the runtime has for a pod it never ran. */
export function emptyPodStatus(uid: string): PodStatus {
  return {
    id: uid,
    name: "",
    namespace: "",
    ips: [],
    containerStatuses: [],
    sandboxStatuses: [],
    timeStamp: 0,
  };
}

export class Cache {
  private pods = new Map<string, Data>();
  /** Every entry is at least this fresh (undefined until the first relist completes). */
  private timestamp: number | undefined;
  private subscribers = new Map<string, Subscriber[]>();

  get(uid: string): { status: PodStatus; error?: Error } {
    return this.pods.get(uid) ?? { status: emptyPodStatus(uid) };
  }

  // #region get-newer-than
  /** Resolves with the pod's status once the cache holds one newer than `minTime`. */
  getNewerThan(uid: string, minTime: number): Promise<{ status: PodStatus; error?: Error }> {
    const d = this.getIfNewerThan(uid, minTime);
    if (d) return Promise.resolve(d);
    return new Promise((resolve) => {
      const list = this.subscribers.get(uid) ?? [];
      list.push({ minTime, resolve });
      this.subscribers.set(uid, list);
    });
  }

  private getIfNewerThan(uid: string, minTime: number): { status: PodStatus; error?: Error } | undefined {
    const d = this.pods.get(uid);
    const globalIsNewer = this.timestamp !== undefined && this.timestamp > minTime;
    if (!d) return globalIsNewer ? { status: emptyPodStatus(uid) } : undefined;
    if (d.modified > minTime || globalIsNewer) return { status: d.status, error: d.error };
    return undefined; // not fresh enough yet: the caller waits for the next relist
  }
  // #endregion get-newer-than

  /** Stores a relist's result for one pod, `timestamp` being when the relist began. */
  set(uid: string, status: PodStatus, error: Error | undefined, timestamp: number): boolean {
    const old = this.pods.get(uid);
    if (old && old.modified > timestamp) return false; // a newer result is already here
    this.pods.set(uid, { status, error, modified: timestamp });
    this.notify(uid);
    return true;
  }

  delete(uid: string): void {
    this.pods.delete(uid);
  }

  /** Marks every entry as current at `timestamp` (the end of a relist) and wakes whoever waited. */
  updateTime(timestamp: number): void {
    if (this.timestamp !== undefined && timestamp < this.timestamp) return;
    this.timestamp = timestamp;
    for (const uid of [...this.subscribers.keys()]) this.notify(uid);
  }

  private notify(uid: string): void {
    const list = this.subscribers.get(uid);
    if (!list) return;
    const waiting: Subscriber[] = [];
    for (const s of list) {
      const d = this.getIfNewerThan(uid, s.minTime);
      if (d) s.resolve(d);
      else waiting.push(s);
    }
    if (waiting.length) this.subscribers.set(uid, waiting);
    else this.subscribers.delete(uid);
  }
}

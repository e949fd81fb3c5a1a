/**
 * indexedWatchers — the cacher's watchers, split by the value of the resource's indexed field
 * they ask for, so an event is offered only to the watchers that can want it.
 * Upstream: k8s.io/apiserver/pkg/storage/cacher/cacher.go (indexedWatchers, indexedTriggerFunc,
 * triggerValuesThreadUnsafe, startDispatching).
 *
 * Solves:
 * - a thousand kubelets each watch pods with `fieldSelector=spec.nodeName=<node>`: offered every
 *   pod event, each of the thousand tests its selector, and all but one (or two) say no — at
 *   1,000 nodes the API server's fan-out costs a thousand selector tests per pod write. Pods are
 *   indexed by spec.nodeName (their trigger function, pod.NodeNameTriggerFunc): a watch whose
 *   field selector requires one exact value of it (RequiresExactMatch) is filed under that value
 *   (`valueWatchers`), every other watch under `allWatchers`; an event goes to all of
 *   `allWatchers` and to the `valueWatchers` of its object's node, and no one else;
 * - a pod that leaves a node must still reach that node's kubelet (as DELETED: its selector no
 *   longer matches): the event's trigger values are its object's *and* its previous object's —
 *   a binding (`""` → node-1) reaches the `spec.nodeName=` watchers and node-1's, a deletion
 *   reaches the node the pod was on;
 * - a watcher is offered only the events of its value, in resourceVersion order (the order of the
 *   round), so a kubelet's watch costs the fan-out per event of its own node, not per event.
 *
 * Invariants:
 * - every live watcher is in exactly one set: `allWatchers`, or the `valueWatchers` of the one
 *   value it was filed under; a watcher that stops is removed from it (upstream's forgetWatcher);
 * - an event is offered to every watcher whose selector could match its object or its previous
 *   object: a value watcher's selector requires the field to equal its value, so an event whose
 *   trigger values do not include that value cannot match it, before or after;
 * - bookmarks are not events of any value: they go to every watcher (`all`).
 *
 * What upstream does differently (v1.32): it dispatches one event at a time and collects, per
 * event, the watchers into a reused buffer; here a round of events is dispatched at once, so the
 * index hands each watcher the events of its round that it may match, as one batch. Upstream
 * also splits `allWatchers` by the namespace and name a watch is scoped to (from the request or
 * a `metadata.namespace`/`metadata.name` exact match), so a namespaced watch is not offered the
 * other namespaces' events; here `allWatchers` is one set and the watcher's own scope test
 * (scopeTest) drops them. Upstream files a watch under a value only when the field is among its
 * predicate's IndexFields (pods: `spec.nodeName`); here the cacher's trigger names the field.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go (indexedWatchers, watchersMap, indexedTriggerFunc, triggerValuesThreadUnsafe, startDispatching, forgetWatcher)
 * @upstream kubernetes/kubernetes pkg/registry/core/pod/strategy.go (NodeNameTriggerFunc, MatchPod: IndexFields spec.nodeName)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/fields/selector.go (RequiresExactMatch)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import type { CacheWatcher } from "./cache-watcher.ts";
import type { WatchCacheEvent } from "./watch-cache.ts";

/**
 * indexedTriggerFunc: the field a resource is indexed by (pods: `spec.nodeName`) and the function
 * that reads it from an object (upstream's storage.IndexerFunc, one per resource at most).
 */
export interface IndexedTriggerFunc {
  indexName: string;
  indexerFunc: (obj: KubeObject) => string;
}

// #region trigger-values
/**
 * triggerValues: the index values an event concerns — its object's, and its previous object's
 * when that differs (the pod left that node: its watcher must hear it as DELETED).
 */
export function triggerValues(trigger: IndexedTriggerFunc, event: WatchCacheEvent): string[] {
  const current = trigger.indexerFunc(event.object);
  if (event.prevObject === undefined) return [current];
  const previous = trigger.indexerFunc(event.prevObject);
  return previous === current ? [current] : [current, previous];
}
// #endregion trigger-values

/** One watcher of a round, with the events of the round it is offered. */
export interface RoundTarget {
  watcher: CacheWatcher;
  events: WatchCacheEvent[];
}

// #region indexed-watchers
export class IndexedWatchers {
  /** Watchers with no value: offered every event. */
  private readonly allWatchers = new Set<CacheWatcher>();
  /** Watchers by the one value of the indexed field their selector requires. */
  private readonly valueWatchers = new Map<string, Set<CacheWatcher>>();
  private count = 0;

  /** @param trigger the resource's index, to read each event's values by (none: no index). */
  constructor(private readonly trigger: IndexedTriggerFunc | undefined) {}

  /** The value a watch is filed under, or undefined for allWatchers. */
  addWatcher(w: CacheWatcher, value: string | undefined): void {
    if (value === undefined) this.allWatchers.add(w);
    else {
      let set = this.valueWatchers.get(value);
      if (!set) {
        set = new Set();
        this.valueWatchers.set(value, set);
      }
      set.add(w);
    }
    this.count++;
  }

  /** forgetWatcher: the watcher stopped; an empty value's set goes too. */
  deleteWatcher(w: CacheWatcher, value: string | undefined): void {
    if (value === undefined) {
      if (this.allWatchers.delete(w)) this.count--;
      return;
    }
    const set = this.valueWatchers.get(value);
    if (!set?.delete(w)) return;
    this.count--;
    if (set.size === 0) this.valueWatchers.delete(value);
  }

  /**
   * startDispatching, for a round: every watcher of `allWatchers` with all the events, then each
   * value watcher with the events whose trigger values include its value — still in order.
   */
  forRound(events: WatchCacheEvent[]): RoundTarget[] {
    const targets: RoundTarget[] = [];
    for (const watcher of this.allWatchers) targets.push({ watcher, events });
    if (this.valueWatchers.size === 0) return targets;
    if (!this.trigger) {
      // Watchers filed by value without a trigger to read events by: a misconfiguration,
      // served as upstream does — every value watcher gets everything.
      for (const set of this.valueWatchers.values())
        for (const watcher of set) targets.push({ watcher, events });
      return targets;
    }
    const byValue = new Map<string, WatchCacheEvent[]>();
    for (const ev of events) {
      for (const value of triggerValues(this.trigger, ev)) {
        if (!this.valueWatchers.has(value)) continue;
        const list = byValue.get(value);
        if (list) list.push(ev);
        else byValue.set(value, [ev]);
      }
    }
    for (const [value, evs] of byValue) {
      for (const watcher of this.valueWatchers.get(value) ?? []) targets.push({ watcher, events: evs });
    }
    return targets;
  }

  /** Every watcher, whatever its value (bookmarks, termination). */
  *all(): Iterable<CacheWatcher> {
    yield* this.allWatchers;
    for (const set of this.valueWatchers.values()) yield* set;
  }

  /** terminateAll: every watcher ends (each one's stop removes it from here). */
  terminateAll(): void {
    for (const w of [...this.all()]) w.terminate();
  }

  get size(): number {
    return this.count;
  }
}
// #endregion indexed-watchers

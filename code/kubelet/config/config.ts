/**
 * PodConfig — merges the kubelet's pod sources into one stream of changes for the sync loop.
 * Mirrors kubernetes/kubernetes pkg/kubelet/config/config.go.
 *
 * Solves:
 * - each source knows only "here are all my pods now" (a SET): the API server source after every
 *   watch event, the file source after every scan. The sync loop wants to know what *changed*:
 *   which pods are new (ADD), changed (UPDATE), asked to stop gracefully (DELETE), gone (REMOVE),
 *   or differ only in status (RECONCILE). `merge` computes that per source.
 * - the kubelet must not kill pods it has merely not heard about yet after a restart: it waits
 *   until every source has sent once (`seenAllSources`) before cleaning up.
 *
 * Invariants:
 * - a pod keeps the `kubernetes.io/config.seen` time of its first sighting; every pod carries its
 *   `kubernetes.io/config.source`.
 * - a change to spec, labels, annotations or deletion fields is an UPDATE (a DELETE when the pod
 *   gained a deletionTimestamp); a change to the status alone is a RECONCILE.
 * - per merge the updates go out in the order REMOVE, ADD, UPDATE, DELETE, RECONCILE; the first
 *   SET of a source with nothing to add still sends an empty ADD, so the source counts as seen.
 * - a pod the SET carries as the very object of the previous SET is unchanged: it is neither
 *   copied nor compared again. A source sends a new object for a pod that changed (the
 *   reflector's store holds the object each watch event decoded; the file source reads its
 *   files anew), so a SET after one pod's event costs one copy, not one per pod on the node.
 *
 * What upstream does differently: upstream does not copy the source's pods at all; it writes the
 * source annotations onto the objects the source sent (pkg/kubelet/config/config.go,
 * updatePodsFunc). The copy here keeps a source's objects — the reflector's store — untouched.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/config/config.go (PodConfig, podStorage, Merge, merge, checkAndUpdatePod, podsDifferSemantically, recordFirstSeenTimestamp, updateAnnotations, seenSources)
 * @chapter 07-kubelet
 */

import type { Pod } from "../../api/core.ts";
import { type Clock, realClock } from "../../client/util/clock.ts";
import { semanticEqual } from "../status/patch-pod-status.ts";
import {
  ConfigFirstSeenAnnotationKey,
  ConfigSourceAnnotationKey,
  type PodUpdate,
} from "../types/pod-update.ts";

/** podsDifferSemantically: anything but the status (and our own first-seen annotation). */
export function podsDifferSemantically(existing: Pod, ref: Pod): boolean {
  const annotations = (p: Pod) => {
    const { [ConfigFirstSeenAnnotationKey]: _seen, ...rest } = p.metadata.annotations ?? {};
    return rest;
  };
  return !(
    semanticEqual(existing.spec, ref.spec) &&
    semanticEqual(existing.metadata.labels, ref.metadata.labels) &&
    semanticEqual(annotations(existing), annotations(ref)) &&
    existing.metadata.deletionTimestamp === ref.metadata.deletionTimestamp &&
    existing.metadata.deletionGracePeriodSeconds === ref.metadata.deletionGracePeriodSeconds
  );
}

export class PodConfig {
  /** Each source's pods by UID. */
  private pods = new Map<string, Map<string, Pod>>();
  private sourcesSeen = new Set<string>();
  private listeners: ((u: PodUpdate) => void)[] = [];
  /** Each pod kept (our copy) → the source's object it was copied from. */
  private copiedFrom = new WeakMap<Pod, Pod>();

  constructor(private readonly clock: Clock = realClock) {}

  /** Upstream's Updates() channel, as a listener. */
  onUpdate(listener: (u: PodUpdate) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** The function a source calls with each SET of its pods (Channel(source)). */
  channel(source: string): (update: PodUpdate) => void {
    return (update) => this.merge(source, update);
  }

  seenAllSources(expected: Iterable<string>): boolean {
    for (const s of expected) if (!this.sourcesSeen.has(s)) return false;
    return true;
  }

  // #region merge
  /** Turns a source's SET into the changes since its previous one, and sends them. */
  merge(source: string, change: PodUpdate): void {
    const firstSet = !this.sourcesSeen.has(source);
    this.sourcesSeen.add(source);
    const old = this.pods.get(source) ?? new Map<string, Pod>();
    const next = new Map<string, Pod>();
    const adds: Pod[] = [];
    const updates: Pod[] = [];
    const deletes: Pod[] = [];
    const reconciles: Pod[] = [];
    const removes: Pod[] = [];

    for (const incoming of change.pods) {
      const uid = incoming.metadata.uid ?? "";
      const existing = old.get(uid);
      // The same object as the previous SET sent: the pod has not changed since.
      if (existing && this.copiedFrom.get(existing) === incoming) {
        next.set(uid, existing);
        continue;
      }
      const ref = structuredClone(incoming);
      this.copiedFrom.set(ref, incoming);
      ref.metadata.annotations = { ...ref.metadata.annotations, [ConfigSourceAnnotationKey]: source };
      if (!existing) {
        // recordFirstSeenTimestamp
        ref.metadata.annotations[ConfigFirstSeenAnnotationKey] = new Date(this.clock.now()).toISOString();
        next.set(uid, ref);
        adds.push(ref);
        continue;
      }
      ref.metadata.annotations[ConfigFirstSeenAnnotationKey] =
        existing.metadata.annotations?.[ConfigFirstSeenAnnotationKey] ?? "";
      next.set(uid, ref);
      if (podsDifferSemantically(existing, ref)) {
        if (ref.metadata.deletionTimestamp) deletes.push(ref);
        else updates.push(ref);
      } else if (!semanticEqual(existing.status, ref.status)) {
        reconciles.push(ref); // only the status changed: the kubelet is its source of truth
      }
    }
    for (const [uid, p] of old) if (!next.has(uid)) removes.push(p);
    this.pods.set(source, next);

    const send = (op: PodUpdate["op"], pods: Pod[]) => {
      for (const l of this.listeners) l({ op, pods, source });
    };
    if (removes.length) send("REMOVE", removes);
    if (adds.length) send("ADD", adds);
    if (updates.length) send("UPDATE", updates);
    if (deletes.length) send("DELETE", deletes);
    if (firstSet && !adds.length && !updates.length && !deletes.length) send("ADD", []);
    if (reconciles.length) send("RECONCILE", reconciles);
  }
  // #endregion merge
}

// The reference answer. The course's DeltaFIFO does the same in
// code/client/tools/cache/delta-fifo.ts (regions dedup and replace), on every relist of every
// informer.
//
// A recorded mistake next to this file (wrong-*.ts) is this answer with one rule done wrong: it
// builds its functions with `withRules({ ...reference, <rule> })`.
import type { KubeObject } from "../../../code/api/meta.ts";
import {
  DeletedFinalStateUnknown,
  type Delta,
  type Deltas,
} from "../../../code/client/tools/cache/delta-fifo.ts";
import { metaNamespaceKeyFunc } from "../../../code/client/tools/cache/store.ts";

export interface Rules {
  /** The one delta two consecutive ones collapse into, or undefined to keep both (older b, newer a). */
  merge(a: Delta, b: Delta): Delta | undefined;
  /** The object a tombstone for a queued key carries. */
  lastQueued(deltas: Deltas): KubeObject | undefined;
  /** Whether a known key gets a tombstone. */
  tombstoneKnown(key: string, listed: Set<string>, out: Map<string, Deltas>): boolean;
}

export const reference: Rules = {
  merge: (a, b) => {
    if (a.type !== "Deleted" || b.type !== "Deleted") return undefined;
    return b.object instanceof DeletedFinalStateUnknown ? a : b;
  },
  lastQueued: (deltas) => {
    const last = deltas[deltas.length - 1]?.object;
    return last instanceof DeletedFinalStateUnknown ? last.obj : last;
  },
  tombstoneKnown: (key, listed, out) => !listed.has(key) && (out.get(key)?.length ?? 0) === 0,
};

export function withRules(r: Rules) {
  function dedupDeltas(deltas: Deltas): Deltas {
    const n = deltas.length;
    if (n < 2) return deltas;
    const merged = r.merge(deltas[n - 1], deltas[n - 2]);
    return merged ? [...deltas.slice(0, n - 2), merged] : deltas;
  }

  function replaceDeltas(
    queued: ReadonlyMap<string, Deltas>,
    listed: KubeObject[],
    known: ReadonlyMap<string, KubeObject>,
  ): Map<string, Deltas> {
    const out = new Map([...queued].map(([k, d]) => [k, [...d]]));
    const append = (key: string, d: Delta) => out.set(key, dedupDeltas([...(out.get(key) ?? []), d]));
    const keys = new Set<string>();
    for (const o of listed) {
      const key = metaNamespaceKeyFunc(o);
      keys.add(key);
      append(key, { type: "Replaced", object: o });
    }
    for (const [key, deltas] of queued) {
      if (keys.has(key)) continue;
      append(key, { type: "Deleted", object: new DeletedFinalStateUnknown(key, r.lastQueued(deltas)) });
    }
    for (const [key, obj] of known) {
      if (!r.tombstoneKnown(key, keys, out)) continue;
      append(key, { type: "Deleted", object: new DeletedFinalStateUnknown(key, obj) });
    }
    return out;
  }

  return { dedupDeltas, replaceDeltas };
}

export const { dedupDeltas, replaceDeltas } = withRules(reference);

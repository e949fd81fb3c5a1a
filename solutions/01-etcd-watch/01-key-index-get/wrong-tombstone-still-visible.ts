// Mistake: at the deletion's own revision the key is still found — its tombstone read as a live value.

import {
  ErrRevisionNotFound,
  type Generation,
  type KeyIndexGet,
} from "../../../code/store/mvcc/key-index.ts";
import type { EtcdError } from "../../../code/store/rpctypes/error.ts";

export function findGeneration(generations: readonly Generation[], rev: number): Generation | undefined {
  const last = generations.length - 1;
  for (let i = last; i >= 0; i--) {
    const g = generations[i];
    if (g.revs.length === 0) continue;
    // The mistake: `<` where `<=` belongs. A key deleted at revision 4 no longer exists at 4.
    if (i !== last && g.revs[g.revs.length - 1].main < rev) return undefined;
    if (g.revs[0].main <= rev) return g;
  }
  return undefined;
}

export function getAtRev(generations: readonly Generation[], atRev: number): KeyIndexGet | EtcdError {
  const g = findGeneration(generations, atRev);
  if (!g) return ErrRevisionNotFound;
  for (let n = g.revs.length - 1; n >= 0; n--) {
    if (g.revs[n].main <= atRev) {
      return { modified: g.revs[n], created: g.created, version: g.ver - (g.revs.length - n - 1) };
    }
  }
  return ErrRevisionNotFound;
}

// Mistake: the creation is taken to be the generation's oldest revision, which compaction may have removed.

import {
  ErrRevisionNotFound,
  findGeneration,
  type Generation,
  type KeyIndexGet,
} from "../../../code/store/mvcc/key-index.ts";
import type { EtcdError } from "../../../code/store/rpctypes/error.ts";

export { findGeneration } from "../../../code/store/mvcc/key-index.ts";

export function getAtRev(generations: readonly Generation[], atRev: number): KeyIndexGet | EtcdError {
  const g = findGeneration(generations, atRev);
  if (!g) return ErrRevisionNotFound;
  for (let n = g.revs.length - 1; n >= 0; n--) {
    if (g.revs[n].main <= atRev) {
      // The mistake: g.revs[0] instead of g.created.
      return { modified: g.revs[n], created: g.revs[0], version: g.ver - (g.revs.length - n - 1) };
    }
  }
  return ErrRevisionNotFound;
}

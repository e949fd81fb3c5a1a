// Mistake: version is the position among the revisions still kept, so it drops after compaction.

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
    // The mistake: n + 1 counts the revisions left in `revs`, not the changes made (`ver`).
    if (g.revs[n].main <= atRev) return { modified: g.revs[n], created: g.created, version: n + 1 };
  }
  return ErrRevisionNotFound;
}

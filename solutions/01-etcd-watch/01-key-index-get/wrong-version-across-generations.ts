// Mistake: version counts every change the key ever had, so it does not start over at 1 after a re-creation.

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
  // The mistake: the changes of the earlier incarnations (their tombstones included) are added in.
  let earlier = 0;
  for (const other of generations) {
    if (other === g) break;
    earlier += other.ver;
  }
  for (let n = g.revs.length - 1; n >= 0; n--) {
    if (g.revs[n].main <= atRev) {
      return { modified: g.revs[n], created: g.created, version: earlier + g.ver - (g.revs.length - n - 1) };
    }
  }
  return ErrRevisionNotFound;
}

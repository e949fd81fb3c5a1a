// Mistake: a compare over a range holds when it holds for any key in the range, instead of for every key.

import { compareKV } from "../../../code/store/etcdserver/apply.ts";
import type { Compare } from "../../../code/store/etcdserverpb/rpc.ts";
import type { TxnRead } from "../../../code/store/mvcc/kvstore-txn.ts";
import { zeroKeyValue } from "../../../code/store/mvccpb/kv.ts";

export { compareKV } from "../../../code/store/etcdserver/apply.ts";

export function applyCompare(rv: TxnRead, c: Compare): boolean {
  const rr = rv.range(c.key, c.rangeEnd);
  if (rr instanceof Error) return false;
  if (rr.kvs.length === 0) return c.target !== "VALUE" && compareKV(c, zeroKeyValue);
  // The mistake: some() where every() belongs.
  return rr.kvs.some((kv) => compareKV(c, kv));
}

// Mistake: a VALUE compare on a key that does not exist is made against the empty value, so `value(k) = ""` holds for a missing key.

import { compareKV } from "../../../code/store/etcdserver/apply.ts";
import type { Compare } from "../../../code/store/etcdserverpb/rpc.ts";
import type { TxnRead } from "../../../code/store/mvcc/kvstore-txn.ts";
import { type KeyValue, zeroKeyValue } from "../../../code/store/mvccpb/kv.ts";

export { compareKV } from "../../../code/store/etcdserver/apply.ts";

export function applyCompare(rv: TxnRead, c: Compare): boolean {
  const rr = rv.range(c.key, c.rangeEnd);
  if (rr instanceof Error) return false;
  // The mistake: every target, VALUE included, falls back to the zero KeyValue — whose value is "".
  const kvs: KeyValue[] = rr.kvs.length > 0 ? rr.kvs : [zeroKeyValue];
  return kvs.every((kv) => compareKV(c, kv));
}

// Mistake: any compare on a key that does not exist fails — so "create only if absent" (version = 0) can never succeed.
import { compareKV } from "../../../code/store/etcdserver/apply.ts";
import type { Compare } from "../../../code/store/etcdserverpb/rpc.ts";
import type { TxnRead } from "../../../code/store/mvcc/kvstore-txn.ts";

export { compareKV } from "../../../code/store/etcdserver/apply.ts";

export function applyCompare(rv: TxnRead, c: Compare): boolean {
  const rr = rv.range(c.key, c.rangeEnd);
  if (rr instanceof Error) return false;
  // The mistake: "no key, nothing to compare" — instead of comparing with the zero KeyValue.
  if (rr.kvs.length === 0) return false;
  return rr.kvs.every((kv) => compareKV(c, kv));
}

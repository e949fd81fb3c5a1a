// Mistake: GREATER and LESS are read the wrong way round — `mod(k) < 5` evaluated as `5 < mod(k)`.

import type { Compare } from "../../../code/store/etcdserverpb/rpc.ts";
import type { TxnRead } from "../../../code/store/mvcc/kvstore-txn.ts";
import { type KeyValue, zeroKeyValue } from "../../../code/store/mvccpb/kv.ts";
import { compareBytes } from "../../../code/store/pkg/bytes.ts";

export function compareKV(c: Compare, kv: KeyValue): boolean {
  // The mistake: the compare's value minus the key's, where etcd compares the key's with the compare's.
  let result: number;
  switch (c.target) {
    case "VALUE":
      result = compareBytes(c.value ?? new Uint8Array(0), kv.value);
      break;
    case "CREATE":
      result = Math.sign((c.createRevision ?? 0) - kv.createRevision);
      break;
    case "MOD":
      result = Math.sign((c.modRevision ?? 0) - kv.modRevision);
      break;
    case "VERSION":
      result = Math.sign((c.version ?? 0) - kv.version);
      break;
    case "LEASE":
      result = Math.sign((c.lease ?? 0) - kv.lease);
      break;
  }
  switch (c.result) {
    case "EQUAL":
      return result === 0;
    case "NOT_EQUAL":
      return result !== 0;
    case "GREATER":
      return result > 0;
    case "LESS":
      return result < 0;
  }
}

export function applyCompare(rv: TxnRead, c: Compare): boolean {
  const rr = rv.range(c.key, c.rangeEnd);
  if (rr instanceof Error) return false;
  if (rr.kvs.length === 0) return c.target !== "VALUE" && compareKV(c, zeroKeyValue);
  return rr.kvs.every((kv) => compareKV(c, kv));
}

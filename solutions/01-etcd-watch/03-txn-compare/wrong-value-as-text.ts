// Mistake: values are compared as decoded text, not as bytes — different bytes that are not valid UTF-8 all decode to U+FFFD and look equal.
import { compareKV as courseCompareKV } from "../../../code/store/etcdserver/apply.ts";
import type { Compare } from "../../../code/store/etcdserverpb/rpc.ts";
import type { TxnRead } from "../../../code/store/mvcc/kvstore-txn.ts";
import { type KeyValue, zeroKeyValue } from "../../../code/store/mvccpb/kv.ts";

const text = (bytes: Uint8Array | undefined) => new TextDecoder().decode(bytes ?? new Uint8Array(0));

export function compareKV(c: Compare, kv: KeyValue): boolean {
  if (c.target !== "VALUE") return courseCompareKV(c, kv);
  // The mistake: JavaScript string order on the decoded values.
  const a = text(kv.value);
  const b = text(c.value);
  const result = a === b ? 0 : a < b ? -1 : 1;
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

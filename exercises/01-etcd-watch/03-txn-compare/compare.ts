/**
 * Exercise: txn compares — the "if" of etcd's compare-and-swap.
 *
 * A Txn holds compares, a `success` branch and a `failure` branch; the store evaluates every
 * compare against the state at the txn's revision and runs one branch. You write the evaluation:
 * the real txn (code/store/etcdserver/apply.ts, applyTxn) calls your applyCompare for each compare.
 * README.md has the rules.
 *
 * Helpers you may import: `compareBytes(a, b)` from code/store/pkg/bytes.ts orders byte strings as
 * etcd does; `zeroKeyValue` from code/store/mvccpb/kv.ts is the KeyValue of a key that does not exist.
 * `rv.range(key, rangeEnd)` reads keys at the txn's revision (a RangeResult, or an EtcdError).
 */

import type { Compare } from "../../../code/store/etcdserverpb/rpc.ts";
import type { TxnRead } from "../../../code/store/mvcc/kvstore-txn.ts";
import type { KeyValue } from "../../../code/store/mvccpb/kv.ts";

/** Does the compare hold for this one key-value? */
export function compareKV(c: Compare, kv: KeyValue): boolean {
  throw new Error(
    `TODO: compareKV — is the key's ${c.target} ${c.result} the compare's? (the key is at version ${kv.version})`,
  );
}

/** Does the compare hold in this read view — for its key, or for every key of its range? */
export function applyCompare(rv: TxnRead, c: Compare): boolean {
  throw new Error(
    `TODO: applyCompare — read ${c.rangeEnd ? "the range" : "the key"} at revision ${rv.rev()}, then compare`,
  );
}

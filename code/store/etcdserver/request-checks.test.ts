import { describe, expect, it } from "vitest";
import type { RequestOp } from "../etcdserverpb/rpc.ts";
import { toBytes } from "../pkg/bytes.ts";
import { ErrKeyNotFound } from "./apply.ts";
import {
  checkIntervals,
  checkPutRequest,
  checkRangeRequest,
  checkTxnRequest,
  ErrDuplicateKey,
  ErrEmptyKey,
  ErrLeaseProvided,
  ErrTooManyOps,
  ErrValueProvided,
} from "./request-checks.ts";

const b = toBytes;
const put = (key: string): RequestOp => ({ requestPut: { key: b(key), value: b("v") } });
const del = (key: string, end?: string | Uint8Array): RequestOp => ({
  requestDeleteRange: { key: b(key), rangeEnd: typeof end === "string" ? b(end) : end },
});
const txn = (success: RequestOp[], failure: RequestOp[] = []): RequestOp => ({
  requestTxn: { success, failure },
});

function dup(ops: RequestOp[]): boolean {
  return checkIntervals(ops) === ErrDuplicateKey;
}

describe("request checks", () => {
  it("an empty key is refused", () => {
    expect(checkRangeRequest({ key: new Uint8Array() })).toBe(ErrEmptyKey);
    expect(checkPutRequest({ key: new Uint8Array() })).toBe(ErrEmptyKey);
    expect(ErrEmptyKey.message).toBe("etcdserver: key is not provided");
    expect(ErrEmptyKey.code).toBe("InvalidArgument");
  });

  it("ignore_value with a value, ignore_lease with a lease are refused", () => {
    expect(checkPutRequest({ key: b("k"), value: b("v"), ignoreValue: true })).toBe(ErrValueProvided);
    expect(checkPutRequest({ key: b("k"), lease: 5, ignoreLease: true })).toBe(ErrLeaseProvided);
    expect(checkPutRequest({ key: b("k"), ignoreValue: true, ignoreLease: true })).toBeUndefined();
  });

  it("at most maxTxnOps compares and ops per branch (default 128)", () => {
    const ops = (n: number) => Array.from({ length: n }, (_, i) => put(`k${i}`));
    expect(checkTxnRequest({ success: ops(128) })).toBeUndefined();
    expect(checkTxnRequest({ success: ops(129) })).toBe(ErrTooManyOps);
    expect(checkTxnRequest({ failure: ops(3) }, 2)).toBe(ErrTooManyOps);
    expect(ErrTooManyOps.message).toBe("etcdserver: too many operations in txn request");
    // a nested txn gets what its parent left: 4 - 3 = 1
    expect(checkTxnRequest({ success: [...ops(2), txn(ops(2))] }, 4)).toBe(ErrTooManyOps);
    expect(checkTxnRequest({ success: [...ops(2), txn(ops(1))] }, 4)).toBeUndefined();
  });

  it("compares need keys; an empty op is 'key not found'", () => {
    expect(
      checkTxnRequest({ compare: [{ key: new Uint8Array(), target: "VERSION", result: "EQUAL" }] }),
    ).toBe(ErrEmptyKey);
    expect(checkTxnRequest({ success: [{}] })).toBe(ErrKeyNotFound);
    expect(checkTxnRequest({ success: [{ requestRange: { key: new Uint8Array() } }] })).toBe(ErrEmptyKey);
  });
});

describe("checkIntervals (duplicate keys in a txn)", () => {
  it("two puts of one key, or a put inside a deleted range, are duplicates", () => {
    expect(dup([put("a"), put("a")])).toBe(true);
    expect(dup([put("b"), del("a", "c")])).toBe(true);
    expect(dup([put("a"), del("a")])).toBe(true);
    expect(dup([put("c"), del("a", "c")])).toBe(false);
    expect(dup([put("a"), put("b"), del("c")])).toBe(false);
    expect(ErrDuplicateKey.message).toBe("etcdserver: duplicate key given in txn request");
  });

  it("then and else of a nested txn may put the same key; the parent may not", () => {
    expect(dup([txn([put("a")], [put("a")])])).toBe(false);
    expect(dup([put("a"), txn([put("a")])])).toBe(true);
    expect(dup([del("a"), txn([], [put("a")])])).toBe(true);
    expect(dup([txn([del("a")]), put("a")])).toBe(true);
    expect(dup([txn([put("a")]), txn([put("a")])])).toBe(true);
  });

  it("like etcd, a from-key delete (range_end '\\0') is not checked against puts", () => {
    expect(dup([put("b"), del("a", new Uint8Array([0]))])).toBe(false);
  });
});

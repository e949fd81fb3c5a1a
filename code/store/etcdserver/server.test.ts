import { describe, expect, it } from "vitest";
import { ErrLeaseNotFound } from "../lease/lessor.ts";
import { prefixEnd } from "../mvcc/index.ts";
import { ErrCompacted, ErrFutureRev } from "../mvcc/kvstore-txn.ts";
import { toBytes, toText } from "../pkg/bytes.ts";
import { FakeClock } from "../pkg/clock.ts";
import type { EtcdError } from "../rpctypes/error.ts";
import { ErrDuplicateKey, ErrEmptyKey, ErrTooManyOps, ErrValueProvided } from "./request-checks.ts";
import { EtcdServer } from "./server.ts";

const b = toBytes;

/** The response, checking that the in-memory server answered at once and without an error. */
function ok<T>(x: T | EtcdError | Promise<T | EtcdError>): T {
  if (x instanceof Promise) throw new Error("an in-memory server must answer at once, not with a promise");
  if (x instanceof Error) throw x;
  return x;
}

function server() {
  const clock = new FakeClock();
  const s = new EtcdServer({
    clock,
    clusterId: 0xcdf818194e3a8c32n,
    memberId: 0x8e9e05c52164694dn,
    raftTerm: 2n,
  });
  return { clock, s };
}

describe("EtcdServer: KV", () => {
  it("answers with etcd's headers: identity plus the revision the request took effect at", () => {
    const { s } = server();
    const put = ok(s.put({ key: b("foo"), value: b("bar") }));
    expect(put.header).toEqual({
      clusterId: 0xcdf818194e3a8c32n,
      memberId: 0x8e9e05c52164694dn,
      revision: 2,
      raftTerm: 2n,
    });
    const get = ok(s.range({ key: b("foo") }));
    expect(
      get.kvs.map((kv) => [toText(kv.key), toText(kv.value), kv.createRevision, kv.modRevision, kv.version]),
    ).toEqual([["foo", "bar", 2, 2, 1]]);
    expect(get.header.revision).toBe(2);
    const del = ok(s.deleteRange({ key: b("foo"), prevKv: true }));
    expect([del.deleted, del.prevKvs.length, del.header.revision]).toEqual([1, 1, 3]);
  });

  it("refuses malformed requests before touching the store", () => {
    const { s } = server();
    expect(s.range({ key: new Uint8Array() })).toBe(ErrEmptyKey);
    expect(s.put({ key: b("k"), value: b("v"), ignoreValue: true })).toBe(ErrValueProvided);
    expect(s.deleteRange({ key: new Uint8Array() })).toBe(ErrEmptyKey);
    const many = Array.from({ length: 129 }, (_, i) => ({ requestPut: { key: b(`k${i}`) } }));
    expect(s.txn({ success: many })).toBe(ErrTooManyOps);
    expect(s.txn({ success: [{ requestPut: { key: b("k") } }, { requestPut: { key: b("k") } }] })).toBe(
      ErrDuplicateKey,
    );
    expect(s.put({ key: b("k"), lease: 123 })).toBe(ErrLeaseNotFound);
    expect(s.kv.rev()).toBe(1);
  });

  it("txn: create-if-absent, as Kubernetes' storage does", () => {
    const { s } = server();
    const create = () =>
      ok(
        s.txn({
          compare: [{ key: b("/registry/pods/default/web"), target: "MOD", result: "EQUAL", modRevision: 0 }],
          success: [{ requestPut: { key: b("/registry/pods/default/web"), value: b("{}") } }],
          failure: [{ requestRange: { key: b("/registry/pods/default/web") } }],
        }),
      );
    const first = create();
    expect([first.succeeded, first.header.revision]).toEqual([true, 2]);
    const second = create();
    expect([second.succeeded, second.header.revision]).toEqual([false, 2]);
    expect(second.responses[0].responseRange?.kvs[0].modRevision).toBe(2);
  });

  it("range at a future or compacted revision; compaction errors", () => {
    const { s } = server();
    for (let i = 0; i < 3; i++) s.put({ key: b("k"), value: b(`${i}`) });
    expect(s.range({ key: b("k"), revision: 5 })).toBe(ErrFutureRev);
    expect(s.compact({ revision: 5 })).toBe(ErrFutureRev);
    expect(ok(s.compact({ revision: 3 })).header.revision).toBe(4);
    expect(s.compact({ revision: 3 })).toBe(ErrCompacted);
    expect(s.range({ key: b("k"), revision: 2 })).toBe(ErrCompacted);
    expect(toText(ok(s.range({ key: b("k"), revision: 3 })).kvs[0].value)).toBe("1");
  });

  it("prefix listing with limit, like a paginated Kubernetes list", () => {
    const { s } = server();
    for (const n of ["a", "b", "c"]) s.put({ key: b(`/registry/pods/ns/${n}`), value: b(n) });
    const prefix = b("/registry/pods/");
    const page = ok(s.range({ key: prefix, rangeEnd: prefixEnd(prefix), limit: 2 }));
    expect([page.kvs.length, page.count, page.more]).toEqual([2, 3, true]);
    const next = ok(
      s.range({
        key: new Uint8Array([...page.kvs[1].key, 0]),
        rangeEnd: prefixEnd(prefix),
        limit: 2,
        revision: page.header.revision,
      }),
    );
    expect([next.kvs.map((kv) => toText(kv.value)), next.more]).toEqual([["c"], false]);
  });
});

describe("EtcdServer: leases", () => {
  it("grant, keep alive, time to live, leases, revoke", () => {
    const { clock, s } = server();
    const g = ok(s.leaseGrant({ TTL: 10 }));
    expect(g.ID).toBeGreaterThan(0);
    expect(g.TTL).toBe(10);
    s.put({ key: b("k"), value: b("v"), lease: g.ID });
    clock.advance(4_000);
    const ttl = ok(s.leaseTimeToLive({ ID: g.ID, keys: true }));
    expect([ttl.TTL, ttl.grantedTTL, ttl.keys.map(toText)]).toEqual([6, 10, ["k"]]);
    expect(ok(s.leaseKeepAlive({ ID: g.ID })).TTL).toBe(10);
    expect(ok(s.leaseGrant({ TTL: 1, ID: 99 })).TTL).toBe(2); // the minimum TTL
    expect(ok(s.leaseLeases()).leases.map((l) => l.ID)).toEqual([99, g.ID]);
    const rev = s.kv.rev();
    expect(ok(s.leaseRevoke({ ID: g.ID })).header.revision).toBe(rev + 1);
    expect(ok(s.range({ key: b("k") })).kvs).toEqual([]);
  });

  it("unknown leases: revoke errors, keep-alive answers TTL 0, time-to-live answers TTL -1", () => {
    const { s } = server();
    expect(s.leaseRevoke({ ID: 5 })).toBe(ErrLeaseNotFound);
    expect(ok(s.leaseKeepAlive({ ID: 5 })).TTL).toBe(0);
    expect(ok(s.leaseTimeToLive({ ID: 5 })).TTL).toBe(-1);
  });

  it("an expired lease deletes its keys and watchers are told", () => {
    const { clock, s } = server();
    const { ID } = ok(s.leaseGrant({ TTL: 3 }));
    s.put({ key: b("/leader"), value: b("me"), lease: ID });
    const w = s.watch();
    ok(w.watch({ key: b("/leader") }));
    clock.advance(3_500);
    const responses = w.drain().filter((r) => r.events.length > 0);
    expect(responses.map((r) => r.events.map((e) => e.type))).toEqual([["DELETE"]]);
    expect(responses[0].header.memberId).toBe(0x8e9e05c52164694dn);
  });
});

describe("EtcdServer: watch", () => {
  it("watch from a past revision then live, through the server", () => {
    const { clock, s } = server();
    s.put({ key: b("a"), value: b("1") });
    s.put({ key: b("a"), value: b("2") });
    const w = s.watch();
    ok(w.watch({ key: b("a"), startRevision: 2 }));
    clock.advance(0);
    s.put({ key: b("a"), value: b("3") });
    const values = w.drain().flatMap((r) => r.events.map((e) => toText(e.kv.value)));
    expect(values).toEqual(["1", "2", "3"]);
    s.close();
  });
});

import { describe, expect, it } from "vitest";
import type { WatchResponse } from "../etcdserverpb/rpc.ts";
import { WatchableStore } from "../mvcc/watchable-store.ts";
import { toBytes, toText } from "../pkg/bytes.ts";
import { FakeClock } from "../pkg/clock.ts";
import type { Lease } from "./lessor.ts";
import { ErrLeaseExists, ErrLeaseNotFound, ErrLeaseTTLTooLarge, Lessor, MaxLeaseTTL } from "./lessor.ts";

const b = toBytes;
const zero = new Uint8Array([0]);

function ok<T>(x: T): Exclude<T, Error> {
  if (x instanceof Error) throw x;
  return x as Exclude<T, Error>;
}

function setup() {
  const clock = new FakeClock(1_000_000);
  const lessor = new Lessor({ clock });
  const store = new WatchableStore({ clock, lessor });
  return { clock, lessor, store };
}

function liveKeys(store: WatchableStore): string[] {
  return ok(store.range(b("\0"), zero)).kvs.map((kv) => toText(kv.key));
}

describe("Lessor grant", () => {
  it("raises short TTLs to the minimum (2 s by default)", () => {
    const { lessor } = setup();
    expect(ok(lessor.grant(1, 1)).ttl).toBe(2);
    expect(ok(lessor.grant(2, 0)).ttl).toBe(2);
    expect(ok(lessor.grant(3, 30)).ttl).toBe(30);
  });

  it("refuses an existing id and a TTL above the maximum", () => {
    const { lessor } = setup();
    ok(lessor.grant(1, 10));
    expect(lessor.grant(1, 10)).toBe(ErrLeaseExists);
    expect(lessor.grant(2, MaxLeaseTTL + 1)).toBe(ErrLeaseTTLTooLarge);
    expect(ErrLeaseNotFound.message).toBe("etcdserver: requested lease not found");
    expect(ErrLeaseNotFound.code).toBe("NotFound");
  });

  it("id 0 gets a fresh positive id below 2^53", () => {
    const { lessor } = setup();
    const ids = [ok(lessor.grant(0, 10)).id, ok(lessor.grant(0, 10)).id];
    expect(ids[0]).toBeGreaterThan(0);
    expect(ids[1]).toBeGreaterThan(ids[0]);
    expect(Number.isSafeInteger(ids[1])).toBe(true);
    // an id a client chose is skipped
    ok(lessor.grant(ids[1] + 1, 10));
    expect(ok(lessor.grant(0, 10)).id).toBe(ids[1] + 2);
  });
});

describe("Lessor with the store", () => {
  it("attaches on put with a lease, detaches on put without, moves on put with another", () => {
    const { lessor, store } = setup();
    const l1 = ok(lessor.grant(1, 10));
    ok(lessor.grant(2, 10));
    ok(store.put(b("k"), b("v"), 1));
    expect(lessor.getLease(b("k"))).toBe(1);
    ok(store.put(b("k"), b("v"), 2));
    expect(lessor.getLease(b("k"))).toBe(2);
    expect(l1.keys()).toEqual([]);
    ok(store.put(b("k"), b("v")));
    expect(lessor.getLease(b("k"))).toBe(0);
    ok(store.put(b("k"), b("v"), 2));
    ok(store.deleteRange(b("k")));
    expect(lessor.getLease(b("k"))).toBe(0);
    expect(ok(lessor.timeToLive(2, { keys: true })).keys).toEqual([]);
  });

  it("revoke deletes all the lease's keys in one revision", () => {
    const { lessor, store } = setup();
    ok(lessor.grant(7, 10));
    ok(store.put(b("b"), b("1"), 7));
    ok(store.put(b("a"), b("1"), 7));
    ok(store.put(b("other"), b("1")));
    const rev = store.rev();
    expect(lessor.revoke(7)).toBeUndefined();
    expect(store.rev()).toBe(rev + 1);
    expect(liveKeys(store)).toEqual(["other"]);
    // deleted in key order, as sub-revisions 0 and 1 of one revision
    expect(
      store.backend.range(rev + 1, rev + 2).map((r) => [r.rev.sub, toText(r.kv.key), r.tombstone]),
    ).toEqual([
      [0, "a", true],
      [1, "b", true],
    ]);
    expect(lessor.lookup(7)).toBeUndefined();
    expect(lessor.revoke(7)).toBe(ErrLeaseNotFound);
  });

  it("revoking a lease without keys writes nothing", () => {
    const { lessor, store } = setup();
    ok(lessor.grant(7, 10));
    lessor.revoke(7);
    expect(store.rev()).toBe(1);
  });

  it("expires on the clock: keys are deleted and a watcher sees the DELETEs in one response", () => {
    const { clock, lessor, store } = setup();
    ok(lessor.grant(7, 5));
    ok(store.put(b("node/a"), b("alive"), 7));
    ok(store.put(b("node/b"), b("alive"), 7));
    const stream = store.newWatchStream();
    ok(stream.watch({ key: b("node/"), rangeEnd: b("node0") }));
    stream.drain();

    clock.advance(4_000);
    expect(liveKeys(store)).toEqual(["node/a", "node/b"]);
    expect(ok(lessor.timeToLive(7)).ttl).toBe(1);
    clock.advance(1_500); // past 5 s; the 500 ms expiry loop has run
    expect(liveKeys(store)).toEqual([]);
    const responses: WatchResponse[] = stream.drain();
    expect(responses).toHaveLength(1);
    expect(responses[0].events.map((e) => `${e.type} ${toText(e.kv.key)} @${e.kv.modRevision}`)).toEqual([
      "DELETE node/a @4",
      "DELETE node/b @4",
    ]);
    expect(lessor.timeToLive(7)).toBe(ErrLeaseNotFound);
  });

  it("keepAlive (renew) restarts the full TTL", () => {
    const { clock, lessor, store } = setup();
    ok(lessor.grant(7, 5));
    ok(store.put(b("k"), b("v"), 7));
    for (let i = 0; i < 10; i++) {
      clock.advance(3_000);
      expect(lessor.renew(7)).toBe(5);
    }
    expect(liveKeys(store)).toEqual(["k"]);
    clock.advance(5_500);
    expect(liveKeys(store)).toEqual([]);
    expect(lessor.renew(7)).toBe(ErrLeaseNotFound);
  });

  it("renewing an expired lease is refused, and its keys go", () => {
    const clock = new FakeClock();
    const lessor = new Lessor({ clock, revokeInterval: 60_000 }); // the loop will not get there first
    const store = new WatchableStore({ clock, lessor });
    ok(lessor.grant(7, 5));
    ok(store.put(b("k"), b("v"), 7));
    clock.advance(5_000);
    expect(lessor.renew(7)).toBe(ErrLeaseNotFound);
    expect(liveKeys(store)).toEqual([]);
  });

  it("timeToLive reports seconds left (truncated), granted TTL and keys; leases() soonest first", () => {
    const { clock, lessor, store } = setup();
    ok(lessor.grant(1, 60));
    ok(lessor.grant(2, 10));
    ok(store.put(b("y"), b("v"), 1));
    ok(store.put(b("x"), b("v"), 1));
    clock.advance(2_500);
    const ttl = ok(lessor.timeToLive(1, { keys: true }));
    expect({ ...ttl, keys: ttl.keys.map(toText) }).toEqual({
      id: 1,
      ttl: 57,
      grantedTTL: 60,
      keys: ["x", "y"],
    });
    expect(ok(lessor.timeToLive(1)).keys).toEqual([]);
    expect(lessor.leases().map((l: Lease) => l.id)).toEqual([2, 1]);
  });

  it("stop() ends the expiry loop", () => {
    const { clock, lessor, store } = setup();
    ok(lessor.grant(7, 2));
    ok(store.put(b("k"), b("v"), 7));
    lessor.stop();
    clock.advance(10_000);
    expect(liveKeys(store)).toEqual(["k"]);
    expect(lessor.revokeExpiredLeases()).toEqual([7]);
    expect(liveKeys(store)).toEqual([]);
  });
});

import { describe, expect, it } from "vitest";
import type { WatchResponse } from "../../../code/store/etcdserverpb/rpc.ts";
import { keyRange } from "../../../code/store/mvcc/index.ts";
import { WatchableStore, type WatchableStoreOptions } from "../../../code/store/mvcc/watchable-store.ts";
import { Watcher } from "../../../code/store/mvcc/watcher.ts";
import { type EventBatch, WatcherGroup } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";
import { toBytes, toText } from "../../../code/store/pkg/bytes.ts";
import { FakeClock } from "../../../code/store/pkg/clock.ts";
import { newWatcherBatch } from "./watcher-batch.ts";

const b = toBytes;

function ok<T>(x: T): Exclude<T, Error> {
  if (x instanceof Error) throw x;
  return x as Exclude<T, Error>;
}

/** "a@3": one event, by key and revision. */
const label = (ev: Event) => `${toText(ev.kv.key)}@${ev.kv.modRevision}`;

describe("newWatcherBatch on its own", () => {
  const ev = (key: string, rev: number): Event => ({
    type: "PUT",
    kv: { key: b(key), createRevision: rev, modRevision: rev, version: 1, value: b("v"), lease: 0 },
  });
  const sink = { trySend: () => true };
  /** A watcher of one key ("a") or a range (["a", "c"]) that still needs everything from minRev on. */
  function watcher(key: string | [string, string], minRev: number): Watcher {
    const range = typeof key === "string" ? keyRange(b(key)) : keyRange(b(key[0]), b(key[1]));
    return new Watcher(range, minRev, 0, sink);
  }
  function group(...watchers: Watcher[]): WatcherGroup {
    const wg = new WatcherGroup();
    for (const w of watchers) wg.add(w);
    return wg;
  }
  const labels = (eb: EventBatch | undefined) => eb?.evs.map(label);

  it("gives each watcher the events on its keys, from its minRev on — the event at minRev included", () => {
    const onA = watcher("a", 3);
    const aToC = watcher(["a", "c"], 2);
    const onZ = watcher("z", 1);
    const evs = [ev("a", 2), ev("b", 2), ev("a", 3), ev("c", 3), ev("b", 4)];
    const wb = newWatcherBatch(group(onA, aToC, onZ), evs, 1000);
    expect(labels(wb.get(onA))).toEqual(["a@3"]);
    expect(labels(wb.get(aToC))).toEqual(["a@2", "b@2", "a@3", "b@4"]);
    expect(wb.get(aToC)).toMatchObject({ revs: 3, moreRev: 0 });
    expect(wb.get(onA)).toMatchObject({ revs: 1, moreRev: 0 });
  });

  it("leaves out a watcher that wants none of the events", () => {
    const onZ = watcher("z", 1);
    const late = watcher("a", 9);
    const wb = newWatcherBatch(group(onZ, late), [ev("a", 2), ev("b", 3)], 1000);
    expect(wb.has(onZ)).toBe(false);
    expect(wb.has(late)).toBe(false);
    expect(wb.size).toBe(0);
  });

  it("holds at most maxRevs revisions; moreRev is the first revision left out", () => {
    const all = watcher(["a", "z"], 1);
    const evs = [ev("a", 2), ev("a", 3), ev("b", 3), ev("a", 4), ev("a", 5)];
    const eb = newWatcherBatch(group(all), evs, 2).get(all);
    expect(labels(eb)).toEqual(["a@2", "a@3", "b@3"]);
    expect(eb?.moreRev).toBe(4);
    // etcd counts the revision that did not fit: a full batch has maxRevs + 1.
    expect(eb?.revs).toBe(3);
  });

  it("counts each watcher's revisions on its own: another watcher's events use up none of its batch", () => {
    const early = watcher("a", 2);
    const late = watcher("b", 5);
    const evs = [ev("a", 2), ev("a", 3), ev("a", 4), ev("b", 5), ev("z", 6), ev("b", 7), ev("b", 8)];
    const wb = newWatcherBatch(group(early, late), evs, 2);
    expect(labels(wb.get(early))).toEqual(["a@2", "a@3"]);
    expect(wb.get(early)?.moreRev).toBe(4);
    // Revisions 2–4 and 6 are not the late watcher's: its two are 5 and 7.
    expect(labels(wb.get(late))).toEqual(["b@5", "b@7"]);
    expect(wb.get(late)?.moreRev).toBe(8);
  });

  it("never splits a revision, however many events it holds", () => {
    const all = watcher(["a", "z"], 1);
    const evs = [ev("a", 2), ev("b", 2), ev("c", 2), ev("a", 3)];
    const eb = newWatcherBatch(group(all), evs, 1).get(all);
    expect(labels(eb)).toEqual(["a@2", "b@2", "c@2"]);
    expect(eb?.moreRev).toBe(3);
  });
});

describe("newWatcherBatch inside the real WatchableStore", () => {
  /** A real store whose notify() and syncWatchers() share events out with your newWatcherBatch. */
  function setup(opts: WatchableStoreOptions = {}) {
    const clock = new FakeClock();
    const store = new WatchableStore({ clock, newWatcherBatch, ...opts });
    return { clock, store, stream: store.newWatchStream() };
  }

  /** Each data response as its events: [["a@2", "b@2"], ["a@3"]]. */
  function responses(got: WatchResponse[]): string[][] {
    return got.filter((r) => !r.created && !r.canceled).map((r) => r.events.map(label));
  }

  it("a watcher from the past gets every event from its start revision on, once, then goes live", () => {
    const { store, stream } = setup();
    for (const v of ["1", "2", "3", "4"]) ok(store.put(b("k"), b(v))); // 2, 3, 4, 5
    ok(stream.watch({ key: b("k"), startRevision: 3 }));
    expect(store.syncWatchers()).toBe(0); // caught up in one round
    expect(store.synced.size).toBe(1);
    ok(store.put(b("k"), b("5"))); // 6: live
    ok(store.deleteRange(b("k"))); // 7: live
    expect(responses(stream.drain())).toEqual([["k@3", "k@4", "k@5"], ["k@6"], ["k@7"]]);
  });

  it("a synced watcher gets each commit in one response, all of its events together", () => {
    const { store, stream } = setup();
    ok(stream.watch({ key: b("a"), rangeEnd: b("c") }));
    ok(store.put(b("a"), b("1"))); // 2
    const txn = store.write(); // 3
    txn.put(b("a"), b("2"));
    txn.put(b("zzz"), b("2")); // outside the range
    txn.put(b("b"), b("2"));
    txn.end();
    expect(responses(stream.drain())).toEqual([["a@2"], ["a@3", "b@3"]]);
  });

  it("watchers caught up in the same round each get their own part of the history", () => {
    const { store, stream } = setup();
    for (const v of ["1", "2", "3", "4"]) ok(store.put(b("k"), b(v))); // 2, 3, 4, 5
    const early = ok(stream.watch({ key: b("k"), startRevision: 2 }));
    const late = ok(stream.watch({ key: b("k"), startRevision: 4 }));
    expect(store.syncWatchers()).toBe(0); // one round, one history read from revision 2
    const got = stream.drain();
    expect(responses(got.filter((r) => r.watchId === early))).toEqual([["k@2", "k@3", "k@4", "k@5"]]);
    expect(responses(got.filter((r) => r.watchId === late))).toEqual([["k@4", "k@5"]]);
  });

  it("long history comes in batches; the watcher stays unsynced until the last one was sent", () => {
    const { store, stream } = setup({ watchBatchMaxRevs: 2 });
    for (const v of ["1", "2", "3", "4", "5"]) ok(store.put(b("k"), b(v))); // 2 … 6
    ok(stream.watch({ key: b("k"), startRevision: 2 }));
    expect(store.syncWatchers()).toBe(1); // 2, 3 sent; still behind
    ok(store.put(b("k"), b("6"))); // 7: not live yet, the watcher is unsynced
    expect(store.syncWatchers()).toBe(1); // 4, 5
    expect(store.syncWatchers()).toBe(0); // 6, 7: nothing left, synced
    ok(store.put(b("k"), b("7"))); // 8: live
    expect(responses(stream.drain())).toEqual([["k@2", "k@3"], ["k@4", "k@5"], ["k@6", "k@7"], ["k@8"]]);
  });

  it("never splits a transaction's events across two responses", () => {
    const { store, stream } = setup({ watchBatchMaxRevs: 2 });
    ok(store.put(b("a"), b("1"))); // 2
    const txn = store.write(); // 3: three events
    txn.put(b("a"), b("2"));
    txn.put(b("b"), b("2"));
    txn.deleteRange(b("a"), undefined);
    txn.end();
    ok(store.put(b("c"), b("3"))); // 4
    ok(store.put(b("d"), b("4"))); // 5
    ok(stream.watch({ key: b("a"), rangeEnd: b("z"), startRevision: 2 }));
    for (let round = 0; round < 10 && store.syncWatchers() > 0; round++) {
      // one round per batch (bounded: a batch that never ends must fail, not hang)
    }
    expect(responses(stream.drain())).toEqual([
      ["a@2", "a@3", "b@3", "a@3"],
      ["c@4", "d@5"],
    ]);
  });

  it("the store's own sync loop catches a watcher up, with a batch of one revision", () => {
    const { clock, store, stream } = setup({ watchBatchMaxRevs: 1 });
    const txn = store.write(); // 2: two events
    txn.put(b("x"), b("1"));
    txn.put(b("y"), b("1"));
    txn.end();
    ok(store.put(b("x"), b("2"))); // 3
    ok(stream.watch({ key: b("x"), rangeEnd: b("z"), startRevision: 1 }));
    for (let i = 0; i < 5; i++) clock.advance(100);
    expect(store.unsynced.size).toBe(0);
    ok(store.put(b("y"), b("2"))); // 4: live
    expect(responses(stream.drain())).toEqual([["x@2", "y@2"], ["x@3"], ["y@4"]]);
  });
});

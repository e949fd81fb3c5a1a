import { describe, expect, it } from "vitest";
import type { Event } from "../mvccpb/kv.ts";
import { toBytes } from "../pkg/bytes.ts";
import { keyRange } from "./index.ts";
import { Watcher, type WatcherResponse } from "./watcher.ts";
import { addToBatch, type EventBatch, newWatcherBatch, WatcherGroup } from "./watcher-group.ts";

const b = toBytes;
const sink = { trySend: (_r: WatcherResponse) => true };

function ev(key: string, rev: number, type: Event["type"] = "PUT"): Event {
  return {
    type,
    kv: { key: b(key), createRevision: rev, modRevision: rev, version: 1, value: b("v"), lease: 0 },
  };
}

function watcher(key: string, rangeEnd?: string, minRev = 1): Watcher {
  const end = rangeEnd === undefined ? undefined : rangeEnd === "\0" ? new Uint8Array([0]) : b(rangeEnd);
  return new Watcher(keyRange(b(key), end), minRev, 0, sink);
}

describe("eventBatch", () => {
  it("holds at most maxRevs revisions and never splits a revision", () => {
    const eb: EventBatch = { evs: [], revs: 0, moreRev: 0 };
    for (const e of [ev("a", 2), ev("b", 2), ev("a", 3), ev("a", 4), ev("b", 4), ev("a", 5)])
      addToBatch(eb, e, 2);
    expect(eb.evs.map((e) => e.kv.modRevision)).toEqual([2, 2, 3]);
    expect(eb.moreRev).toBe(4);
  });

  it("moreRev stays 0 when everything fits", () => {
    const eb: EventBatch = { evs: [], revs: 0, moreRev: 0 };
    for (const e of [ev("a", 2), ev("a", 3)]) addToBatch(eb, e, 2);
    expect(eb.moreRev).toBe(0);
    expect(eb.evs).toHaveLength(2);
  });
});

describe("WatcherGroup", () => {
  it("finds single-key and range watchers by key", () => {
    const wg = new WatcherGroup();
    const one = watcher("foo");
    const range = watcher("fa", "fz");
    const from = watcher("g", "\0");
    for (const w of [one, range, from]) wg.add(w);
    expect([...wg.watcherSetByKey(b("foo"))]).toEqual([one, range]);
    expect([...wg.watcherSetByKey(b("fz"))]).toEqual([]);
    expect([...wg.watcherSetByKey(b("zzz"))]).toEqual([from]);
    expect(wg.contains(b("fa"))).toBe(true);
    expect(wg.contains(b("a"))).toBe(false);
    expect(wg.delete(one)).toBe(true);
    expect(wg.delete(one)).toBe(false);
    expect(wg.contains(b("foo"))).toBe(true); // still the range watcher
    expect(wg.size).toBe(2);
  });

  it("newWatcherBatch skips events below a watcher's minRev", () => {
    const wg = new WatcherGroup();
    const early = watcher("a", undefined, 2);
    const late = watcher("a", undefined, 4);
    wg.add(early);
    wg.add(late);
    const wb = newWatcherBatch(wg, [ev("a", 2), ev("b", 3), ev("a", 4)]);
    expect(wb.get(early)?.evs.map((e) => e.kv.modRevision)).toEqual([2, 4]);
    expect(wb.get(late)?.evs.map((e) => e.kv.modRevision)).toEqual([4]);
  });

  it("choose takes at most maxWatchers", () => {
    const wg = new WatcherGroup();
    for (let i = 0; i < 5; i++) wg.add(watcher(`k${i}`));
    expect(wg.choose(3)).toHaveLength(3);
    expect(wg.choose(10)).toHaveLength(5);
  });
});

import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../testing/random.ts";
import type { WatchResponse } from "../etcdserverpb/rpc.ts";
import { toBytes, toText } from "../pkg/bytes.ts";
import { FakeClock } from "../pkg/clock.ts";
import { WatchableStore, type WatchableStoreOptions } from "./watchable-store.ts";
import type { WatchStream } from "./watcher.ts";

const b = toBytes;

function ok<T>(x: T): Exclude<T, Error> {
  if (x instanceof Error) throw x;
  return x as Exclude<T, Error>;
}

function setup(opts: WatchableStoreOptions = {}) {
  const clock = new FakeClock();
  const store = new WatchableStore({ clock, ...opts });
  return { clock, store };
}

/** "PUT a=1 @2" for each event of each response with events. */
function events(responses: WatchResponse[]): string[][] {
  return responses
    .filter((r) => r.events.length > 0)
    .map((r) =>
      r.events.map(
        (e) =>
          `${e.type} ${toText(e.kv.key)}${e.type === "PUT" ? `=${toText(e.kv.value)}` : ""} @${e.kv.modRevision}`,
      ),
    );
}

function dataOnly(responses: WatchResponse[]): WatchResponse[] {
  return responses.filter((r) => !r.created && !r.canceled);
}

describe("WatchableStore: live watchers", () => {
  it("a synced watcher gets each write at once, one response per revision", () => {
    const { store } = setup();
    const s = store.newWatchStream();
    const id = ok(s.watch({ key: b("a"), rangeEnd: b("c") }));
    const created = s.receive()!;
    expect(created).toMatchObject({ watchId: id, created: true, canceled: false });
    expect(created.header.revision).toBe(1);

    store.put(b("a"), b("1"));
    const txn = store.write();
    txn.put(b("b"), b("1"));
    txn.put(b("zzz"), b("1")); // outside the range
    txn.deleteRange(b("a"), undefined);
    txn.end();
    const got = s.drain();
    expect(events(got)).toEqual([["PUT a=1 @2"], ["PUT b=1 @3", "DELETE a @3"]]);
    expect(got.map((r) => r.header.revision)).toEqual([2, 3]);
  });

  it("a DELETE event carries only the key and the deletion's revision", () => {
    const { store } = setup();
    store.put(b("k"), b("v"), 0);
    const s = store.newWatchStream();
    s.watch({ key: b("k") });
    store.deleteRange(b("k"));
    const del = dataOnly(s.drain())[0].events[0];
    expect(del.type).toBe("DELETE");
    expect(del.kv).toMatchObject({ createRevision: 0, modRevision: 3, version: 0, lease: 0 });
    expect(del.kv.value.length).toBe(0);
  });

  it("start revision 0 means from the next revision; a future start waits for it", () => {
    const { store } = setup();
    store.put(b("k"), b("1")); // 2
    const s = store.newWatchStream();
    s.watch({ key: b("k") });
    s.watch({ key: b("k"), startRevision: 4, watchId: 9 });
    store.put(b("k"), b("2")); // 3
    store.put(b("k"), b("3")); // 4
    const got = dataOnly(s.drain());
    expect(got.map((r) => [r.watchId, r.events[0].kv.modRevision])).toEqual([
      [0, 3],
      [0, 4],
      [9, 4],
    ]);
    expect(store.unsynced.size).toBe(0);
  });
});

describe("WatchableStore: watching from the past", () => {
  it("starts unsynced, replays history on syncWatchers, then goes live without duplicates", () => {
    const { store } = setup();
    for (let i = 1; i <= 3; i++) store.put(b("k"), b(`${i}`)); // 2, 3, 4
    const s = store.newWatchStream();
    s.watch({ key: b("k"), startRevision: 3 });
    expect(store.unsynced.size).toBe(1);
    store.put(b("k"), b("4")); // 5 — the writer does not notify the unsynced watcher
    expect(s.pending()).toBe(0);
    expect(store.syncWatchers()).toBe(0);
    expect(store.synced.size).toBe(1);
    store.put(b("k"), b("5")); // 6 — live
    const got = dataOnly(s.drain());
    expect(events(got)).toEqual([["PUT k=2 @3", "PUT k=3 @4", "PUT k=4 @5"], ["PUT k=5 @6"]]);
    // a catch-up response speaks for the store revision it read up to
    expect(got[0].header.revision).toBe(5);
  });

  it("the sync loop runs on the clock: at once when kicked, and every 100 ms", () => {
    const { clock, store } = setup();
    store.put(b("k"), b("1"));
    const s = store.newWatchStream();
    s.watch({ key: b("k"), startRevision: 1 });
    clock.advance(0); // the prompt kick
    expect(events(s.drain())).toEqual([["PUT k=1 @2"]]);
    expect(store.synced.size).toBe(1);
  });

  it("catches up in batches of watchBatchMaxRevs revisions, never splitting a revision", () => {
    const { store } = setup({ watchBatchMaxRevs: 2 });
    store.put(b("a"), b("1")); // 2
    const txn = store.write(); // 3: two events
    txn.put(b("a"), b("2"));
    txn.put(b("b"), b("2"));
    txn.end();
    store.put(b("a"), b("3")); // 4
    store.put(b("b"), b("4")); // 5
    const s = store.newWatchStream();
    s.watch({ key: b("a"), rangeEnd: b("c"), startRevision: 2 });
    expect(store.syncWatchers()).toBe(1); // revisions 2, 3 sent; more to come
    expect(store.syncWatchers()).toBe(0); // 4, 5
    expect(events(s.drain())).toEqual([
      ["PUT a=1 @2", "PUT a=2 @3", "PUT b=2 @3"],
      ["PUT a=3 @4", "PUT b=4 @5"],
    ]);
  });

  it("syncs at most maxWatchersPerSync watchers per round", () => {
    const { store } = setup({ maxWatchersPerSync: 2 });
    store.put(b("k"), b("1"));
    const s = store.newWatchStream();
    for (let i = 0; i < 5; i++) s.watch({ key: b("k"), startRevision: 2 });
    expect(store.syncWatchers()).toBe(3);
    expect(store.syncWatchers()).toBe(1);
    expect(store.syncWatchers()).toBe(0);
    expect(dataOnly(s.drain())).toHaveLength(5);
  });

  it("a watcher from a compacted revision is cancelled with the compact revision", () => {
    const { store } = setup();
    for (let i = 1; i <= 4; i++) store.put(b("k"), b(`${i}`)); // 2..5
    ok(store.compact(4));
    const s = store.newWatchStream();
    const old = ok(s.watch({ key: b("k"), startRevision: 3 }));
    const atCompaction = ok(s.watch({ key: b("k"), startRevision: 4 }));
    store.syncWatchers();
    const got = s.drain().filter((r) => !r.created);
    const cancel = got.find((r) => r.watchId === old)!;
    expect(cancel).toMatchObject({ canceled: true, compactRevision: 4, events: [] });
    // watching from the compaction revision itself still works
    expect(events(got.filter((r) => r.watchId === atCompaction))).toEqual([["PUT k=3 @4", "PUT k=4 @5"]]);
    expect(store.unsynced.size + store.synced.size).toBe(1);
  });
});

describe("WatchableStore: slow watchers never block writers", () => {
  it("a full buffer makes the watcher a victim; it gets everything, in order, once read", () => {
    const { clock, store } = setup();
    const slow = store.newWatchStream({ bufferSize: 2 });
    const fast = store.newWatchStream();
    slow.watch({ key: b("k") });
    fast.watch({ key: b("k") });
    slow.drain();
    for (let i = 1; i <= 5; i++) store.put(b("k"), b(`${i}`)); // 2..6, never waits
    expect(events(fast.drain())).toHaveLength(5);
    expect(slow.pending()).toBe(2);
    expect(store.victims).toHaveLength(1);
    expect(store.synced.size).toBe(1); // only the fast one

    // reading frees space; the victim is retried and then catches up from history
    const got = [...slow.drain()];
    clock.advance(0);
    got.push(...slow.drain());
    clock.advance(0);
    got.push(...slow.drain());
    expect(events(got).map((r) => r.map((e) => e.split(" @")[1]))).toEqual([["2"], ["3"], ["4"], ["5", "6"]]);
    expect(store.victims).toHaveLength(0);
    expect(store.synced.size).toBe(2);
    store.put(b("k"), b("7"));
    expect(events(slow.drain())).toEqual([["PUT k=7 @7"]]);
  });

  it("a cancelled victim is forgotten", () => {
    const { store } = setup();
    const slow = store.newWatchStream({ bufferSize: 1 });
    const id = ok(slow.watch({ key: b("k") }));
    store.put(b("k"), b("1"));
    store.put(b("k"), b("2"));
    expect(store.victims[0].size).toBe(1);
    slow.cancel(id);
    expect(store.victims[0].size).toBe(0);
    slow.drain();
    store.moveVictims();
    expect(store.synced.size + store.unsynced.size).toBe(0);
  });
});

describe("WatchableStore: progress", () => {
  it("a progress notification is sent only to a synced watcher, with the current revision", () => {
    const { store } = setup();
    store.put(b("k"), b("1"));
    const s = store.newWatchStream();
    const past = ok(s.watch({ key: b("k"), startRevision: 1 }));
    s.drain();
    s.requestProgress(past); // unsynced: history still to come, so no promise can be made
    expect(s.drain()).toEqual([]);
    expect(s.requestProgressAll()).toBe(false);
    store.syncWatchers();
    s.drain();
    s.requestProgress(past);
    const p = s.receive()!;
    expect(p).toMatchObject({ watchId: past, events: [], created: false, canceled: false });
    expect(p.header.revision).toBe(2);
    expect(s.requestProgressAll()).toBe(true);
    expect(s.receive()).toMatchObject({ watchId: -1, events: [] });
  });
});

// ---------------------------------------------------------------------------------------------

interface ModelEvent {
  rev: number;
  type: "PUT" | "DELETE";
  key: string;
  value: string;
}

interface TrackedWatch {
  stream: number;
  id: number;
  key: string;
  end?: string; // undefined = single key; "\0" = from key
  startRev: number; // effective: first revision it may receive
  got: { response: number; ev: ModelEvent }[];
  responses: number;
  progressFloor: number; // highest revision promised complete by a progress notification
  cancelled: boolean;
  announced: boolean;
  compactedAt?: number;
}

function matches(w: { key: string; end?: string }, key: string): boolean {
  if (w.end === undefined) return key === w.key;
  if (w.end === "\0") return key >= w.key;
  return key >= w.key && key < w.end;
}

describe("WatchableStore: randomized interleaving of writes, watchers, slow readers, compaction", () => {
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8]) {
    it(`watchers see every matching event exactly once, in order, revisions whole (seed ${seed})`, () => {
      const rand = mulberry32(seed);
      const pick = <T>(xs: T[]): T => xs[Math.floor(rand() * xs.length)];
      const clock = new FakeClock();
      const store = new WatchableStore({ clock, watchBatchMaxRevs: 3, maxWatchersPerSync: 3 });
      const keys = ["a", "b", "c", "d", "e"];
      const streams: WatchStream[] = [1, 2, 3, 64].map((bufferSize) => store.newWatchStream({ bufferSize }));
      const watches = new Map<string, TrackedWatch>(); // `${stream}/${id}`
      const history: ModelEvent[] = [];
      const model = new Map<string, string>();
      let rev = 1;
      let compacted = 0;
      let responseSeq = 0;

      const collect = (si: number, limit = Number.POSITIVE_INFINITY) => {
        for (let n = 0; n < limit; n++) {
          const r = streams[si].receive();
          if (!r) return;
          if (r.created) {
            const w = watches.get(`${si}/${r.watchId}`);
            if (w) w.announced = true;
            continue;
          }
          // A progress for the whole stream (id -1) speaks for the watches created before it was
          // sent — those whose `created` response came earlier in the stream.
          const targets =
            r.watchId === -1
              ? [...watches.values()].filter((w) => w.stream === si && w.announced && !w.cancelled)
              : [watches.get(`${si}/${r.watchId}`)];
          for (const w of targets) {
            if (!w || (w.cancelled && r.events.length === 0)) continue;
            if (r.compactRevision) {
              w.compactedAt = r.compactRevision;
              w.cancelled = true;
              continue;
            }
            if (r.canceled) continue;
            const seq = responseSeq++;
            if (r.events.length === 0) {
              w.progressFloor = Math.max(w.progressFloor, r.header.revision);
              continue;
            }
            for (const e of r.events) {
              // a progress notification promised nothing at or below it was still to come
              expect(e.kv.modRevision).toBeGreaterThan(w.progressFloor);
              w.got.push({
                response: seq,
                ev: { rev: e.kv.modRevision, type: e.type, key: toText(e.kv.key), value: toText(e.kv.value) },
              });
            }
          }
        }
      };

      const write = () => {
        const ops = Array.from({ length: 1 + Math.floor(rand() * 3) }, () => pick(keys));
        const distinct = [...new Set(ops)];
        const txn = store.write();
        const evs: ModelEvent[] = [];
        for (const key of distinct) {
          if (rand() < 0.3) {
            txn.deleteRange(b(key), undefined);
            if (model.has(key)) {
              model.delete(key);
              evs.push({ rev: rev + 1, type: "DELETE", key, value: "" });
            }
          } else {
            const value = `${key}${rev + 1}`;
            txn.put(b(key), b(value));
            model.set(key, value);
            evs.push({ rev: rev + 1, type: "PUT", key, value });
          }
        }
        txn.end();
        if (evs.length > 0) {
          rev++;
          history.push(...evs);
        }
        expect(store.rev()).toBe(rev);
      };

      const startWatch = (si: number, key: string, end: string | undefined, startRevision: number) => {
        const id = ok(
          streams[si].watch({ key: b(key), rangeEnd: end === undefined ? undefined : b(end), startRevision }),
        );
        watches.set(`${si}/${id}`, {
          stream: si,
          id,
          key,
          end,
          startRev: startRevision === 0 ? rev + 1 : startRevision,
          got: [],
          responses: 0,
          progressFloor: 0,
          cancelled: false,
          announced: false,
        });
      };

      for (let step = 0; step < 400; step++) {
        const x = rand();
        if (x < 0.45) write();
        else if (x < 0.55) {
          const [key, end] = pick<[string, string | undefined]>([
            ["a", undefined],
            ["c", undefined],
            ["b", "d"],
            ["c", "\0"],
            ["\0", "\0"],
          ]);
          const start =
            rand() < 0.25
              ? 0
              : Math.max(1, compacted - 1) + Math.floor(rand() * (rev + 2 - Math.max(1, compacted - 1)));
          startWatch(Math.floor(rand() * streams.length), key, end, start);
        } else if (x < 0.75) collect(Math.floor(rand() * streams.length), 1 + Math.floor(rand() * 3));
        else if (x < 0.87) clock.advance(Math.floor(rand() * 150));
        else if (x < 0.9 && rev > compacted + 1) {
          compacted = compacted + 1 + Math.floor(rand() * (rev - compacted));
          ok(store.compact(compacted));
        } else if (x < 0.93) {
          const live = [...watches.values()].filter((w) => !w.cancelled);
          if (live.length > 0) {
            const w = pick(live);
            streams[w.stream].cancel(w.id);
            w.cancelled = true;
          }
        } else if (x < 0.97) {
          const si = Math.floor(rand() * streams.length);
          streams[si].requestProgressAll();
        } else {
          const live = [...watches.values()].filter((w) => !w.cancelled);
          if (live.length > 0) {
            const w = pick(live);
            streams[w.stream].requestProgress(w.id);
          }
        }
      }

      // Let everything settle: read every stream, let the loops run, until nothing moves.
      for (
        let i = 0;
        i < 1000 &&
        (store.unsynced.size > 0 || store.victims.length > 0 || streams.some((s) => s.pending() > 0));
        i++
      ) {
        for (let si = 0; si < streams.length; si++) collect(si);
        clock.advance(100);
      }
      for (let si = 0; si < streams.length; si++) collect(si);
      expect(store.unsynced.size).toBe(0);
      expect(store.victims).toHaveLength(0);

      const expectedFor = (w: { key: string; end?: string; startRev: number }) =>
        history.filter((e) => e.rev >= w.startRev && matches(w, e.key));

      let checked = 0;
      for (const w of watches.values()) {
        const got = w.got.map((g) => g.ev);
        const expected = expectedFor(w);
        if (w.cancelled) {
          // cancelled (by the client or by compaction): what arrived is a gap-free prefix
          expect(got).toEqual(expected.slice(0, got.length));
          if (w.compactedAt !== undefined) expect(w.startRev).toBeLessThan(w.compactedAt);
          continue;
        }
        // ordered, unique, reliable: exactly the model's events
        expect(got).toEqual(expected);
        // atomic: all events of one revision arrived in one response
        const responseOfRev = new Map<number, number>();
        for (const g of w.got) {
          const seen = responseOfRev.get(g.ev.rev);
          if (seen !== undefined) expect(g.response).toBe(seen);
          responseOfRev.set(g.ev.rev, g.response);
        }
        checked++;

        // resumable: a new watch from (some received revision + 1) sees exactly the rest
        if (got.length > 1) {
          const last = got[Math.floor(rand() * (got.length - 1))].rev;
          if (last + 1 >= compacted) {
            const resume = store.newWatchStream();
            const id = ok(
              resume.watch({
                key: b(w.key),
                rangeEnd: w.end === undefined ? undefined : b(w.end),
                startRevision: last + 1,
              }),
            );
            while (store.syncWatchers() > 0) {
              // catch up in batches of watchBatchMaxRevs
            }
            const rest = resume
              .drain()
              .filter((r) => r.watchId === id)
              .flatMap((r) => r.events)
              .map((e) => ({
                rev: e.kv.modRevision,
                type: e.type,
                key: toText(e.kv.key),
                value: toText(e.kv.value),
              }));
            expect(rest).toEqual(expectedFor({ ...w, startRev: last + 1 }));
            resume.close();
          }
        }
      }
      expect(checked).toBeGreaterThan(0);
      expect(history.length).toBeGreaterThan(50);
    });
  }
});

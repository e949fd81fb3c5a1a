import { describe, expect, it } from "vitest";
import type { Event } from "../mvccpb/kv.ts";
import { toBytes, toText } from "../pkg/bytes.ts";
import { FakeClock } from "../pkg/clock.ts";
import { WatchableStore } from "./watchable-store.ts";
import { ErrEmptyWatcherRange, ErrWatcherDuplicateID, ErrWatcherNotExist } from "./watcher.ts";

const b = toBytes;

function ok<T>(x: T): Exclude<T, Error> {
  if (x instanceof Error) throw x;
  return x as Exclude<T, Error>;
}

function setup() {
  const clock = new FakeClock();
  const store = new WatchableStore({ clock });
  return { clock, store, stream: store.newWatchStream() };
}

const show = (e: Event) => `${e.type} ${toText(e.kv.key)}@${e.kv.modRevision}`;

describe("WatchStream: creating and cancelling watches", () => {
  it("hands out ids from 0, answers `created` first, then events", () => {
    const { store, stream } = setup();
    expect(stream.watch({ key: b("a") })).toBe(0);
    expect(stream.watch({ key: b("b") })).toBe(1);
    expect(stream.watch({ key: b("c"), watchId: 7 })).toBe(7);
    store.put(b("a"), b("1"));
    const got = stream.drain();
    expect(got.map((r) => [r.watchId, r.created, r.events.length])).toEqual([
      [0, true, 0],
      [1, true, 0],
      [7, true, 0],
      [0, false, 1],
    ]);
  });

  it("refuses a duplicate id, an empty range and a negative start revision, with a canceled `created`", () => {
    const { stream } = setup();
    stream.watch({ key: b("a"), watchId: 3 });
    expect(stream.watch({ key: b("b"), watchId: 3 })).toBe(ErrWatcherDuplicateID);
    expect(stream.watch({ key: b("b"), rangeEnd: b("a") })).toBe(ErrEmptyWatcherRange);
    expect(stream.watch({ key: b("b"), startRevision: -1 })).toBeInstanceOf(Error);
    const refusals = stream.drain().slice(1);
    expect(refusals.map((r) => [r.watchId, r.created, r.canceled, r.cancelReason])).toEqual([
      [-1, true, true, "mvcc: duplicate watch ID provided on the WatchStream"],
      [-1, true, true, "mvcc: watcher range is empty"],
      [-1, true, true, "etcdserver: mvcc: required revision has been compacted"],
    ]);
  });

  it("an empty key means the smallest key, so key '' with range_end '\\0' watches everything", () => {
    const { store, stream } = setup();
    stream.watch({ key: new Uint8Array(), rangeEnd: new Uint8Array([0]) });
    store.put(b("\u0001"), b("x"));
    store.put(b("zzz"), b("x"));
    expect(stream.drain().flatMap((r) => r.events).length).toBe(2);
  });

  it("cancel answers `canceled` after what was already queued, then nothing more", () => {
    const { store, stream } = setup();
    const id = ok(stream.watch({ key: b("a") }));
    store.put(b("a"), b("1"));
    expect(stream.cancel(id)).toBeUndefined();
    store.put(b("a"), b("2"));
    const got = stream.drain();
    expect(got.map((r) => [r.created, r.canceled, r.events.length])).toEqual([
      [true, false, 0],
      [false, false, 1],
      [false, true, 0],
    ]);
    expect(stream.cancel(id)).toBe(ErrWatcherNotExist);
    expect(store.synced.size).toBe(0);
  });
});

describe("WatchStream: what each watch receives", () => {
  it("filters NOPUT and NODELETE drop those events (and responses left empty)", () => {
    const { store, stream } = setup();
    const noPut = ok(stream.watch({ key: b("k"), filters: ["NOPUT"] }));
    const noDel = ok(stream.watch({ key: b("k"), filters: ["NODELETE"] }));
    stream.drain();
    store.put(b("k"), b("1"));
    store.deleteRange(b("k"));
    const got = stream.drain();
    expect(got.filter((r) => r.watchId === noPut).map((r) => r.events.map(show))).toEqual([["DELETE k@3"]]);
    expect(got.filter((r) => r.watchId === noDel).map((r) => r.events.map(show))).toEqual([["PUT k@2"]]);
  });

  it("prev_kv carries the key before each change, except for creations and compacted history", () => {
    const { store, stream } = setup();
    ok(stream.watch({ key: b("k"), prevKv: true, startRevision: 1 }));
    store.put(b("k"), b("1")); // 2: creation
    store.put(b("k"), b("2")); // 3
    store.deleteRange(b("k")); // 4
    store.syncWatchers();
    const evs = stream.drain().flatMap((r) => r.events);
    expect(evs.map((e) => [show(e), e.prevKv ? toText(e.prevKv.value) : undefined])).toEqual([
      ["PUT k@2", undefined],
      ["PUT k@3", "1"],
      ["DELETE k@4", "2"],
    ]);
    const late = store.newWatchStream();
    ok(late.watch({ key: b("k"), prevKv: true }));
    store.put(b("k"), b("3")); // 5
    store.put(b("k"), b("4")); // 6
    ok(store.compact(6));
    const lateEvs = late.drain().flatMap((r) => r.events);
    // at 5 the key is re-created (no prev); the prev of 6 (at revision 5) was compacted away
    expect(lateEvs.map((e) => e.prevKv)).toEqual([undefined, undefined]);
  });

  it("progress_notify: an idle watch hears the revision every interval, a busy one does not", () => {
    const { clock, store } = setup();
    const stream = store.newWatchStream({ progressNotifyInterval: 1000 });
    const idle = ok(stream.watch({ key: b("idle"), progressNotify: true }));
    const busy = ok(stream.watch({ key: b("busy"), progressNotify: true }));
    stream.drain();
    clock.advance(500);
    store.put(b("busy"), b("1"));
    store.put(b("other"), b("1"));
    clock.advance(500); // first tick
    const got = stream.drain();
    expect(got.map((r) => [r.watchId, r.events.length, r.header.revision])).toEqual([
      [busy, 1, 2],
      [idle, 0, 3],
    ]);
    clock.advance(1000); // second tick: both idle now
    expect(stream.drain().map((r) => [r.watchId, r.header.revision])).toEqual([
      [idle, 3],
      [busy, 3],
    ]);
  });

  it("a compaction cancel says canceled with the compact revision; the id stays taken until the client cancels", () => {
    // Found by differential.test.ts (seed 9): etcd refused a new watch asking for the id of a
    // watch compaction had cancelled ("duplicate watch ID"); ours accepted it.
    const { store, stream } = setup();
    store.put(b("k"), b("1"));
    store.put(b("k"), b("2"));
    ok(store.compact(3));
    const id = ok(stream.watch({ key: b("k"), startRevision: 2, watchId: 7 }));
    store.syncWatchers();
    const r = stream.drain().at(-1)!;
    expect(r).toMatchObject({ watchId: id, canceled: true, compactRevision: 3 });
    expect(stream.watch({ key: b("k"), watchId: 7 })).toBe(ErrWatcherDuplicateID);
    expect(stream.drain()).toMatchObject([{ watchId: -1, created: true, canceled: true }]);
    // The client's cancel is answered, and frees the id.
    expect(stream.cancel(id)).toBeUndefined();
    expect(stream.drain()).toMatchObject([{ watchId: 7, canceled: true, compactRevision: 0 }]);
    expect(stream.cancel(id)).toBe(ErrWatcherNotExist);
    expect(ok(stream.watch({ key: b("k"), watchId: 7 }))).toBe(7);
  });
});

describe("WatchStream: reading", () => {
  it("next() waits for a response and resolves undefined after close", async () => {
    const { store, stream } = setup();
    stream.watch({ key: b("k") });
    expect((await stream.next())?.created).toBe(true);
    const pending = stream.next();
    store.put(b("k"), b("1"));
    expect((await pending)?.events.map(show)).toEqual(["PUT k@2"]);
    const end = stream.next();
    stream.close();
    expect(await end).toBeUndefined();
    expect(store.synced.size).toBe(0);
  });
});

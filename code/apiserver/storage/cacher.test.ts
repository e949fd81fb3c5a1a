import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { EtcdServer } from "../../store/etcdserver/server.ts";
import { nextEvents, pod, statusOf, summary, watchEnded } from "../testing/storage-suite.ts";
import type { CacheWatcher } from "./cache-watcher.ts";
import { Cacher, type CacherOptions } from "./cacher.ts";
import { InProcessEtcdClient } from "./etcd-client.ts";
import { Etcd3Store } from "./etcd3-store.ts";
import type { Interface, ListOptions, WatchOptions } from "./interfaces.ts";
import { everything, newSelectionPredicate } from "./selection-predicate.ts";

const prefix = "/registry/pods";
const key = (name: string) => `${prefix}/default/${name}`;
const gr = { group: "", resource: "pods" };

/** The etcd3 store, counting the calls that reach it. */
class CountingStore extends Etcd3Store {
  listCalls = 0;
  watchCalls = 0;
  override getList(k: string, opts: ListOptions) {
    this.listCalls++;
    return super.getList(k, opts);
  }
  override watch(k: string, opts: WatchOptions) {
    this.watchCalls++;
    return super.watch(k, opts);
  }
}

let server: EtcdServer;
let store: CountingStore;
let cachers: Cacher[];

beforeEach(() => {
  server = new EtcdServer();
  store = new CountingStore({ client: new InProcessEtcdClient(server), groupResource: gr });
  cachers = [];
});

afterEach(async () => {
  for (const c of cachers) await c.close();
  await server.close();
});

async function newCacher(opts: Partial<CacherOptions> = {}): Promise<Cacher> {
  const c = new Cacher({ storage: store, resourcePrefix: prefix, groupResource: gr, ...opts });
  cachers.push(c);
  await c.waitReady();
  return c;
}

/** Resolves once the cache has seen revision `rv`. */
async function cacheAt(c: Cacher, rv: string | undefined): Promise<void> {
  await c.getList(prefix, { predicate: everything, recursive: true, resourceVersion: rv });
}

const bump = (s: Interface, name: string, n: number) =>
  s.guaranteedUpdate(key(name), {}, (cur) => ({ ...(cur as KubeObject), n }));

describe("Cacher", () => {
  it("serves resourceVersion=0 lists from memory, and delegates consistent and exact reads", async () => {
    await store.create(key("a"), pod("a"));
    const c = await newCacher();
    const b = await c.create(key("b"), pod("b"));
    await cacheAt(c, b.metadata.resourceVersion);
    const before = store.listCalls;
    const list = await c.getList(prefix, { predicate: everything, recursive: true, resourceVersion: "0" });
    expect(list.items.map((o) => o.metadata.name)).toEqual(["a", "b"]);
    expect(list.resourceVersion).toBe(b.metadata.resourceVersion);
    const selected = await c.getList(prefix, {
      predicate: newSelectionPredicate("", "metadata.name=b"),
      recursive: true,
      resourceVersion: "0",
      limit: 1, // ignored by the cache, as in v1.32
    });
    expect(selected.items.map((o) => o.metadata.name)).toEqual(["b"]);
    expect(store.listCalls).toBe(before);
    await c.getList(prefix, { predicate: everything, recursive: true });
    await c.getList(prefix, {
      predicate: everything,
      recursive: true,
      resourceVersion: "1",
      resourceVersionMatch: "Exact",
    });
    expect(store.listCalls).toBe(before + 2);
    expect(await c.get(key("a"), { resourceVersion: "0" })).toMatchObject({ metadata: { name: "a" } });
    expect((await statusOf(c.get(key("zz"), { resourceVersion: "0" }))).status.message).toBe(
      'pods "zz" not found',
    );
  });

  it("waits for the cache to reach a requested resourceVersion, or answers 504 after the block timeout", async () => {
    const c = await newCacher({ blockTimeoutMs: 150 });
    const a = await c.create(key("a"), pod("a"));
    const next = String(Number(a.metadata.resourceVersion) + 1);
    const waiting = c.getList(prefix, { predicate: everything, recursive: true, resourceVersion: next });
    await c.create(key("b"), pod("b"));
    expect((await waiting).items).toHaveLength(2);
    const tooLarge = await statusOf(
      c.getList(prefix, { predicate: everything, recursive: true, resourceVersion: "999" }),
    );
    expect(tooLarge.status).toMatchObject({ code: 504, reason: "Timeout" });
    expect(tooLarge.status.message).toMatch(/^Timeout: Too large resource version: 999, current: \d+$/);
  });

  it("replays a watch from the ring, and answers 410 once the ring no longer reaches back", async () => {
    const c = await newCacher({ capacity: 5 });
    const a = await c.create(key("a"), pod("a"));
    const rvs: string[] = [a.metadata.resourceVersion as string];
    for (let i = 1; i <= 9; i++) rvs.push((await bump(c, "a", i)).metadata.resourceVersion as string);
    await cacheAt(c, rvs[9]);
    // The ring holds the last five events (rvs[5..9]): a watch from rvs[4] still gets them all.
    const ok = await c.watch(prefix, { resourceVersion: rvs[4], predicate: everything, recursive: true });
    const replay = await nextEvents(ok, 5);
    expect(replay.map((e) => e.object.metadata.resourceVersion)).toEqual(rvs.slice(5));
    expect(replay.map((e) => e.type)).toEqual(Array(5).fill("MODIFIED"));
    ok.stop();

    const old = await c.watch(prefix, { resourceVersion: rvs[3], predicate: everything, recursive: true });
    const [err] = await nextEvents(old, 1);
    expect(err.type).toBe("ERROR");
    expect(err.object).toMatchObject({
      code: 410,
      reason: "Expired",
      message: `too old resource version: ${rvs[3]} (${rvs[4]})`,
    });
    expect(await watchEnded(old)).toBe(true);
  });

  it("serves a watch without a resourceVersion as resourceVersion=0, from the cache (v1.32 with WatchFromStorageWithoutResourceVersion off)", async () => {
    const c = await newCacher();
    await c.create(key("a"), pod("a"));
    const b = await c.create(key("b"), pod("b"));
    await cacheAt(c, b.metadata.resourceVersion as string);
    const etcdWatches = store.watchCalls;
    for (const resourceVersion of [undefined, ""]) {
      const w = await c.watch(prefix, { resourceVersion, predicate: everything, recursive: true });
      const initial = await nextEvents(w, 2);
      expect(initial.map((e) => [e.type, e.object.metadata.name])).toEqual([
        ["ADDED", "a"],
        ["ADDED", "b"],
      ]);
      w.stop();
    }
    expect(store.watchCalls).toBe(etcdWatches);
  });

  it("fans one etcd watch out to many watchers, each filtered by its own selector", async () => {
    const c = await newCacher();
    const watches = await Promise.all(
      Array.from({ length: 50 }, (_, i) =>
        c.watch(prefix, {
          resourceVersion: "0",
          predicate: i % 2 === 0 ? everything : newSelectionPredicate("app=web", ""),
          recursive: true,
        }),
      ),
    );
    for (let i = 0; i < 10; i++) await c.create(key(`p${i}`), pod(`p${i}`, { app: i < 5 ? "web" : "db" }));
    for (const [i, w] of watches.entries()) {
      const events = await nextEvents(w, i % 2 === 0 ? 10 : 5);
      const expected = Array.from({ length: i % 2 === 0 ? 10 : 5 }, (_, j) => `ADDED p${j}`);
      expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual(expected);
      w.stop();
    }
    expect(store.watchCalls).toBe(1);
    expect(c.watcherCount()).toBe(0);
  });

  it("terminates a watcher that stops reading, without holding up the others", async () => {
    const c = await newCacher({ watcherBufferSize: 5 });
    const a = await c.create(key("a"), pod("a"));
    const from = { resourceVersion: a.metadata.resourceVersion, predicate: everything, recursive: true };
    const stuck = await c.watch(prefix, from);
    const reader = await c.watch(prefix, from);
    let last = a;
    for (let i = 1; i <= 20; i++) {
      last = await bump(c, "a", i);
      // The reader keeps up as the events arrive; `stuck` never reads.
      const [ev] = await nextEvents(reader, 1);
      expect(ev.object.metadata.resourceVersion).toBe(last.metadata.resourceVersion);
    }
    expect(c.watcherCount()).toBe(1);
    expect(c.terminatedWatchers).toBe(1);
    expect(await watchEnded(stuck)).toBe(true);
    reader.stop();
  });

  it("hands each watcher the events of a round in one batch: a burst costs one hand-over, not one per event", async () => {
    const c = await newCacher({ minRoundIntervalMs: 400 });
    const first = await c.create(key("p0"), pod("p0"));
    await cacheAt(c, first.metadata.resourceVersion);
    const w = (await c.watch(prefix, {
      resourceVersion: first.metadata.resourceVersion,
      predicate: everything,
      recursive: true,
    })) as CacheWatcher;
    // A round has just gone out (p0's): the next five writes land within the interval and wait
    // for the next round together.
    for (let i = 1; i <= 5; i++) await c.create(key(`p${i}`), pod(`p${i}`));
    const batch = await w.nextBatch();
    expect(batch?.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      "ADDED p1",
      "ADDED p2",
      "ADDED p3",
      "ADDED p4",
      "ADDED p5",
    ]);
    w.stop();
  });

  it("fans out in slices: other work runs between them, and every watcher still gets every event in order", async () => {
    // A zero-length slice: one watcher per turn of the event loop.
    const c = await newCacher({ dispatchSliceMs: 0, minRoundIntervalMs: 0 });
    const n = 40;
    const watches = await Promise.all(
      Array.from({ length: n }, () =>
        c.watch(prefix, { resourceVersion: "0", predicate: everything, recursive: true }),
      ),
    );
    const received = new Array<number>(n).fill(0);
    const readers = watches.map(async (w, i) => {
      const events = await nextEvents(w, 3);
      received[i] = 3;
      return events.map((e) => `${e.type} ${e.object.metadata.name}`);
    });
    // Count, at each turn, the watchers that have their events: a fan-out that ran to the end
    // in one turn would show only 0 and then n.
    const seen = new Set<number>();
    let ticking = true;
    const tick = () => {
      seen.add(received.filter((r) => r > 0).length);
      if (ticking) setImmediate(tick);
    };
    tick();
    for (const name of ["a", "b", "c"]) await c.create(key(name), pod(name));
    for (const events of await Promise.all(readers))
      expect(events).toEqual(["ADDED a", "ADDED b", "ADDED c"]);
    ticking = false;
    expect([...seen].some((k) => k > 0 && k < n)).toBe(true);
    for (const w of watches) w.stop();
  });

  it("a bookmark never claims a resourceVersion whose event is still queued for the watcher", async () => {
    // Rounds at most every 300 ms, bookmarks due every 10 ms: bookmarks fall between the write
    // reaching the cache and its event reaching the watcher.
    const c = await newCacher({ minRoundIntervalMs: 300, bookmarkFrequencyMs: 10, bookmarkTickMs: 5 });
    const z = await c.create(key("z"), pod("z"));
    await cacheAt(c, z.metadata.resourceVersion);
    const w = await c.watch(prefix, {
      resourceVersion: z.metadata.resourceVersion,
      predicate: everything,
      recursive: true,
      allowWatchBookmarks: true,
    });
    await c.create(key("a"), pod("a"));
    for (let ev = (await nextEvents(w, 1))[0]; ev.type !== "ADDED"; ev = (await nextEvents(w, 1))[0]);
    // a's round has just gone out: b, written now, waits for the next one.
    const b = await c.create(key("b"), pod("b"));
    const seen: string[] = [];
    for (;;) {
      const [ev] = await nextEvents(w, 1);
      seen.push(`${ev.type}@${ev.object.metadata.resourceVersion}`);
      if (ev.type === "ADDED") break;
      expect(Number(ev.object.metadata.resourceVersion)).toBeLessThan(Number(b.metadata.resourceVersion));
    }
    expect(seen.at(-1)).toBe(`ADDED@${b.metadata.resourceVersion}`);
    expect(seen.length).toBeGreaterThan(1); // bookmarks did come while b was queued
    w.stop();
  });

  it("an object leaving a watcher's selector is DELETED for it, at the revision it left", async () => {
    const c = await newCacher();
    await c.create(key("a"), pod("a", { app: "web" }));
    const w = await c.watch(prefix, {
      resourceVersion: "0",
      predicate: newSelectionPredicate("app=web", ""),
      recursive: true,
    });
    const left = await c.guaranteedUpdate(key("a"), {}, (cur) => {
      const o = structuredClone(cur as KubeObject);
      o.metadata.labels = { app: "db" };
      return o;
    });
    const events = await nextEvents(w, 2);
    expect(summary(events)).toBe(
      `[ADDED a@${Number(left.metadata.resourceVersion) - 1}, DELETED a@${left.metadata.resourceVersion}]`,
    );
    expect(events[1].object.metadata.labels).toEqual({ app: "web" });
    w.stop();
  });

  it("sends BOOKMARKs at the bookmark frequency, and one 2 s before a watch's deadline", async () => {
    const c = await newCacher({ bookmarkFrequencyMs: 100, bookmarkTickMs: 20 });
    const a = await c.create(key("a"), pod("a"));
    await cacheAt(c, a.metadata.resourceVersion);
    const w = await c.watch(prefix, {
      resourceVersion: a.metadata.resourceVersion,
      predicate: everything,
      recursive: true,
      allowWatchBookmarks: true,
    });
    const [b1, b2] = await nextEvents(w, 2, 2000);
    expect([b1.type, b2.type]).toEqual(["BOOKMARK", "BOOKMARK"]);
    expect(b1.object.metadata.resourceVersion).toBe(a.metadata.resourceVersion);
    w.stop();

    const slow = await newCacher({ bookmarkFrequencyMs: 60_000, bookmarkTickMs: 20 });
    const started = Date.now();
    const nearDeadline = await slow.watch(prefix, {
      resourceVersion: "0",
      predicate: newSelectionPredicate("app=none", ""),
      recursive: true,
      allowWatchBookmarks: true,
      deadline: started + 2300,
    });
    const [bm] = await nextEvents(nearDeadline, 1, 2000);
    expect(bm.type).toBe("BOOKMARK");
    expect(Date.now() - started).toBeGreaterThanOrEqual(250);
    nearDeadline.stop();

    const none = await c.watch(prefix, { resourceVersion: "0", predicate: everything, recursive: true });
    await nextEvents(none, 1); // the ADDED of a; then nothing, since it did not ask for bookmarks
    expect(await watchEnded(none, 300)).toBe(false);
    none.stop();
  });

  // chapter 4: found by the informer's fault tests (client/tools/cache/informer-apiserver-faults.test.ts)
  it("a watch that starts while events wait for their round gets each of them once", async () => {
    // Rounds at most every 300 ms: b and c are in the ring, not yet handed to the watchers.
    const c = await newCacher({ minRoundIntervalMs: 300 });
    const a = await c.create(key("a"), pod("a"));
    const early = await c.watch(prefix, { resourceVersion: "0", predicate: everything, recursive: true });
    await nextEvents(early, 1); // a's round has gone out: the next one waits 300 ms
    await c.create(key("b"), pod("b"));
    const last = await c.create(key("c"), pod("c"));
    await cacheAt(c, last.metadata.resourceVersion);
    const w = await c.watch(prefix, {
      resourceVersion: a.metadata.resourceVersion,
      predicate: everything,
      recursive: true,
    });
    const d = await c.create(key("d"), pod("d"));
    const events = await nextEvents(w, 3);
    expect(summary(events)).toBe(
      `[ADDED b@${Number(last.metadata.resourceVersion) - 1}, ADDED c@${last.metadata.resourceVersion}, ADDED d@${d.metadata.resourceVersion}]`,
    );
    expect(await watchEnded(w, 400)).toBe(false); // and nothing after: no second b or c
    w.stop();
    early.stop();
  });
});

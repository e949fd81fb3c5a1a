import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { EtcdServer } from "../../store/etcdserver/server.ts";
import { nodeNameTriggerFunc } from "../registry/strategies/pods.ts";
import { nextEvents, pod, watchEnded } from "../testing/storage-suite.ts";
import { CacheWatcher } from "./cache-watcher.ts";
import { Cacher, type CacherOptions } from "./cacher.ts";
import { InProcessEtcdClient } from "./etcd-client.ts";
import { Etcd3Store } from "./etcd3-store.ts";
import { everything, newSelectionPredicate } from "./selection-predicate.ts";
import { type DispatchClock, maxBudgetMs, TimeBudget } from "./time-budget.ts";
import { suggestedWatchChannelSize, WatchCache, type WatchCacheEvent } from "./watch-cache.ts";

/** A clock that moves only when told to, and timers that fire only when told to. */
class FakeClock implements DispatchClock {
  t = 0;
  timers: { at: number; fn: () => void; stopped: boolean }[] = [];
  now = () => this.t;
  afterFunc(ms: number, fn: () => void) {
    const timer = { at: this.t + ms, fn, stopped: false };
    this.timers.push(timer);
    return {
      stop: () => {
        timer.stopped = true;
      },
    };
  }
  /** The timers not stopped nor fired. */
  pending() {
    return this.timers.filter((t) => !t.stopped);
  }
  /** Moves to `ms` later and fires the timers due by then. */
  advance(ms: number): void {
    this.t += ms;
    for (const timer of this.pending())
      if (timer.at <= this.t) {
        timer.stopped = true;
        timer.fn();
      }
  }
}

describe("TimeBudget (upstream's dispatchTimeoutBudget)", () => {
  it("starts empty, earns 50 ms per second, holds at most 100 ms, and hands it all out", () => {
    const clock = new FakeClock();
    const b = new TimeBudget(clock.now);
    expect(b.takeAvailable()).toBe(0);
    clock.t += 1000;
    expect(b.takeAvailable()).toBe(50);
    expect(b.takeAvailable()).toBe(0); // taken: empty until more time passes
    clock.t += 10_000;
    expect(b.takeAvailable()).toBe(maxBudgetMs);
  });

  it("gets back what a wait did not use, up to the maximum; an overrun gives nothing back", () => {
    const clock = new FakeClock();
    const b = new TimeBudget(clock.now);
    clock.t += 1000;
    const got = b.takeAvailable();
    b.returnUnused(got - 20);
    expect(b.takeAvailable()).toBe(30);
    b.returnUnused(-5);
    expect(b.takeAvailable()).toBe(0);
    b.returnUnused(500);
    expect(b.takeAvailable()).toBe(maxBudgetMs);
  });
});

describe("WatchCache sizing (upstream's eventFreshDuration rule)", () => {
  const obj = (rv: number): KubeObject => ({ metadata: { name: `o${rv}`, resourceVersion: String(rv) } });

  it("doubles a full ring whose oldest event is younger than 75 s, so a burst keeps its history", () => {
    const clock = new FakeClock();
    const c = new WatchCache({ lowerBoundCapacity: 4, upperBoundCapacity: 16, now: clock.now });
    c.replace([], 1);
    for (let rv = 2; rv <= 21; rv++) {
      clock.t += 100; // 10 events a second: all 20 within 75 s
      c.processEvent("ADDED", `/p/o${rv}`, obj(rv), rv);
    }
    expect(c.capacity).toBe(16);
    // The last 16 (6…21) kept; a watch from 5 resumes, one from 4 is told 410.
    expect(c.getAllEventsSince(5).map((e) => e.resourceVersion)).toEqual(
      Array.from({ length: 16 }, (_, i) => i + 6),
    );
    expect(() => c.getAllEventsSince(4)).toThrow(/too old resource version: 4 \(5\)/);
  });

  it("halves a full ring whose newest quarter is older than 75 s, down to the lower bound", () => {
    const clock = new FakeClock();
    const c = new WatchCache({ lowerBoundCapacity: 4, upperBoundCapacity: 16, now: clock.now });
    c.replace([], 1);
    let rv = 2;
    for (; rv <= 17; rv++) c.processEvent("ADDED", `/p/o${rv}`, obj(rv), rv); // a burst: 16
    expect(c.capacity).toBe(16);
    // Then a quiet resource: one event every 80 s.
    for (let i = 0; i < 8; i++, rv++) {
      clock.t += 80_000;
      c.processEvent("ADDED", `/p/o${rv}`, obj(rv), rv);
    }
    expect(c.capacity).toBe(4);
    expect(c.getAllEventsSince(rv - 5).map((e) => e.resourceVersion)).toEqual([
      rv - 4,
      rv - 3,
      rv - 2,
      rv - 1,
    ]);
  });

  it("a number is a fixed ring", () => {
    const c = new WatchCache(3);
    c.replace([], 1);
    for (let rv = 2; rv <= 10; rv++) c.processEvent("ADDED", `/p/o${rv}`, obj(rv), rv);
    expect(c.capacity).toBe(3);
  });

  it("suggests a watcher buffer of about one second of history: 10 to 1,000 (indexed), 10 (by trigger), 100 (no index)", () => {
    expect(suggestedWatchChannelSize(100, true, false)).toBe(10); // ceil(100 / 75) = 2 → at least 10
    expect(suggestedWatchChannelSize(51_200, true, false)).toBe(683);
    expect(suggestedWatchChannelSize(102_400, true, false)).toBe(1000);
    expect(suggestedWatchChannelSize(102_400, true, true)).toBe(10);
    expect(suggestedWatchChannelSize(102_400, false, false)).toBe(100);
  });
});

describe("CacheWatcher: blocked only when it leaves events untaken", () => {
  const ev = (rv: number): WatchCacheEvent => ({
    type: "ADDED",
    key: `/p/default/o${rv}`,
    object: { metadata: { name: `o${rv}`, namespace: "default", resourceVersion: String(rv) } },
    resourceVersion: rv,
  });
  const watcher = (taken: CacheWatcher[] = []) =>
    new CacheWatcher({
      key: "/p",
      recursive: true,
      predicate: everything,
      startRv: 0,
      bufferSize: 2,
      allowBookmarks: false,
      bookmarkFrequencyMs: 60_000,
      newFunc: () => ({ metadata: {} }),
      onStop: () => {},
      onTaken: (w) => taken.push(w),
    });

  it("a round bigger than the buffer is not an overflow when the handler took everything before it", async () => {
    const taken: CacheWatcher[] = [];
    const w = watcher(taken);
    expect(w.addAll([ev(1), ev(2), ev(3), ev(4), ev(5)])).toBe(true);
    expect((await w.nextBatch())?.length).toBe(5);
    expect(taken).toEqual([w]);
    expect(w.addAll([ev(6), ev(7), ev(8)])).toBe(true);
  });

  it("is blocked once events of an earlier round are still there and the buffer is over its size; none is lost", async () => {
    const w = watcher();
    expect(w.addAll([ev(1)])).toBe(true);
    expect(w.addAll([ev(2)])).toBe(true); // 2 of 2
    expect(w.addAll([ev(3)])).toBe(false); // 3 of 2, 1 and 2 untaken
    const batch = await w.nextBatch();
    expect(batch?.map((e) => e.object.metadata.resourceVersion)).toEqual(["1", "2", "3"]);
    expect(w.addAll([ev(4)])).toBe(true);
  });
});

describe("Cacher: the dispatch time budget", () => {
  const prefix = "/registry/pods";
  const key = (name: string) => `${prefix}/default/${name}`;
  const gr = { group: "", resource: "pods" };
  let server: EtcdServer;
  let store: Etcd3Store;
  let cachers: Cacher[];
  beforeEach(() => {
    server = new EtcdServer();
    store = new Etcd3Store({ client: new InProcessEtcdClient(server), groupResource: gr });
    cachers = [];
  });
  afterEach(async () => {
    for (const c of cachers) await c.close();
    await server.close();
  });
  async function newCacher(opts: Partial<CacherOptions>): Promise<Cacher> {
    const c = new Cacher({ storage: store, resourcePrefix: prefix, groupResource: gr, ...opts });
    cachers.push(c);
    await c.waitReady();
    return c;
  }
  const bump = (name: string, n: number) =>
    store.guaranteedUpdate(key(name), {}, (cur) => ({ ...(cur as KubeObject), n }));

  /**
   * A watcher (`stuck`, buffer 2) that never reads, and a reader that does; three writes, each
   * dispatched in its own round (the reader has it before the next write), block `stuck`.
   */
  async function blockOne(c: Cacher) {
    const a = await store.create(key("a"), pod("a"));
    const from = { resourceVersion: a.metadata.resourceVersion, predicate: everything, recursive: true };
    const stuck = (await c.watch(prefix, from)) as CacheWatcher;
    const reader = await c.watch(prefix, from);
    for (let i = 1; i <= 3; i++) {
      await bump("a", i);
      await nextEvents(reader, 1);
    }
    return { stuck, reader };
  }

  it("waits for a blocked watcher within the budget, and keeps it when its handler drains in time", async () => {
    const clock = new FakeClock();
    const c = await newCacher({ clock, watcherBufferSize: 2, minRoundIntervalMs: 0 });
    clock.advance(2000); // 100 ms earned (the most it holds)
    const { stuck, reader } = await blockOne(c);
    expect(clock.pending().map((t) => t.at - clock.t)).toEqual([maxBudgetMs]);
    // The next write waits, for everyone, until `stuck` drains.
    const fourth = bump("a", 4);
    clock.advance(40);
    expect(c.terminatedWatchers).toBe(0);
    expect((await stuck.nextBatch())?.length).toBe(3);
    await fourth;
    const [ev] = await nextEvents(reader, 1);
    expect((ev.object as KubeObject & { n: number }).n).toBe(4);
    expect(clock.pending()).toEqual([]); // the timer was stopped
    expect(c.terminatedWatchers).toBe(0);
    expect((await stuck.nextBatch())?.length).toBe(1);
    stuck.stop();
    reader.stop();
  });

  it("closes a watcher still blocked when the budget runs out, then serves the others again", async () => {
    const clock = new FakeClock();
    const c = await newCacher({ clock, watcherBufferSize: 2, minRoundIntervalMs: 0 });
    clock.advance(1000); // 50 ms earned
    const { stuck, reader } = await blockOne(c);
    expect(clock.pending().map((t) => t.at - clock.t)).toEqual([50]);
    clock.advance(50);
    expect(c.terminatedWatchers).toBe(1);
    expect(await watchEnded(stuck)).toBe(true);
    await bump("a", 4);
    const [ev] = await nextEvents(reader, 1);
    expect((ev.object as KubeObject & { n: number }).n).toBe(4);
    reader.stop();
  });

  it("with nothing in the budget, closes a blocked watcher at once", async () => {
    const clock = new FakeClock();
    const c = await newCacher({ clock, watcherBufferSize: 2, minRoundIntervalMs: 0 });
    const { stuck, reader } = await blockOne(c);
    expect(clock.pending()).toEqual([]);
    expect(c.terminatedWatchers).toBe(1);
    expect(await watchEnded(stuck)).toBe(true);
    reader.stop();
  });

  it("sizes each watcher's buffer by upstream's rule: ring / 75 for an informer of all pods, at most 10 for a kubelet's node watch, at most 100 without an index", async () => {
    const nodeSelector = newSelectionPredicate("", "spec.nodeName=n1", (o) => ({
      "spec.nodeName": String((o as { spec?: { nodeName?: string } }).spec?.nodeName ?? ""),
    }));
    const sizes = async (opts: Partial<CacherOptions>) => {
      const c = await newCacher(opts);
      const out: number[] = [];
      for (const predicate of [everything, nodeSelector]) {
        const w = (await c.watch(prefix, {
          resourceVersion: "0",
          predicate,
          recursive: true,
        })) as CacheWatcher;
        out.push(w.bufferSize);
        w.stop();
      }
      return out;
    };
    expect(await sizes({ indexedTrigger: nodeNameTriggerFunc })).toEqual([10, 10]); // a quiet ring: 100 events
    expect(await sizes({ indexedTrigger: nodeNameTriggerFunc, capacity: 30_000 })).toEqual([400, 10]);
    expect(await sizes({ capacity: 30_000 })).toEqual([100, 100]);
  });
});

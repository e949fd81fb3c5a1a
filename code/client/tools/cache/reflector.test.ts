import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/meta.ts";
import { mulberry32 } from "../../../testing/random.ts";
import { newStatusError } from "../../errors.ts";
import { expiredError, FakeControllerSource } from "../../testing/fake-controller-source.ts";
import { FakeClock } from "../../util/clock.ts";
import { ExponentialBackoffManager } from "../../util/wait/backoff.ts";
import { Cache } from "./cache.ts";
import type { ListerWatcher } from "./listwatch.ts";
import { Reflector } from "./reflector.ts";
import { metaNamespaceKeyFunc } from "./store.ts";

const cm = (name: string, data = "v"): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { namespace: "ns", name },
  data: { k: data },
});

const flush = () => new Promise<void>((r) => setImmediate(r));

/** Lets the reflector's promises run until `cond` holds (no time passes on the fake clock). */
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 200; i++) {
    if (cond()) return;
    await flush();
  }
  throw new Error(`never happened: ${what}`);
}

class RecordingStore extends Cache<KubeObject> {
  resyncs = 0;
  replaces = 0;
  constructor() {
    super(metaNamespaceKeyFunc);
  }
  override replace(list: KubeObject[], rv: string): void {
    this.replaces++;
    super.replace(list, rv);
  }
  override resync(): void {
    this.resyncs++;
  }
}

function sameAsSource(store: Cache<KubeObject>, source: FakeControllerSource): void {
  const mine = store.list().sort((a, b) => (metaNamespaceKeyFunc(a) < metaNamespaceKeyFunc(b) ? -1 : 1));
  expect(mine).toEqual(source.items());
}

function setup(
  opts: {
    resyncPeriodMs?: number;
    shouldResync?: () => boolean;
    before?: (source: FakeControllerSource) => void;
  } = {},
) {
  const clock = new FakeClock(1_000_000);
  const source = new FakeControllerSource({ kind: "ConfigMap", apiVersion: "v1" });
  opts.before?.(source);
  const store = new RecordingStore();
  const reflector = new Reflector(source, store, {
    clock,
    random: mulberry32(7),
    resyncPeriodMs: opts.resyncPeriodMs,
    shouldResync: opts.shouldResync,
  });
  const ctl = new AbortController();
  const done = reflector.run(ctl.signal);
  const stop = async () => {
    ctl.abort();
    await done;
  };
  return { clock, source, store, reflector, stop };
}

describe("Reflector", () => {
  it("lists in pages of 500 from resourceVersion 0, then watches from the list's resourceVersion", async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource();
    for (let i = 0; i < 1201; i++) source.add(cm(`c${String(i).padStart(4, "0")}`));
    const store = new RecordingStore();
    const ctl = new AbortController();
    const r = new Reflector(source, store, { clock, random: mulberry32(1) });
    const done = r.run(ctl.signal);
    try {
      await until(() => source.openWatches() === 1, "watch open");
      expect(source.listCalls.map((c) => [c.resourceVersion, c.limit, !!c.continue])).toEqual([
        ["0", 500, false],
        [undefined, 500, true],
        [undefined, 500, true],
      ]);
      sameAsSource(store, source);
      expect(r.lastSyncResourceVersion()).toBe("1201");
      const w = source.watchCalls[0];
      expect(w.resourceVersion).toBe("1201");
      expect(w.allowWatchBookmarks).toBe(true);
      expect(w.timeoutSeconds).toBeGreaterThanOrEqual(300);
      expect(w.timeoutSeconds).toBeLessThan(600);
    } finally {
      ctl.abort();
      await done;
    }
  });

  it("falls back to one full list when a continue token expires between pages", async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource();
    for (let i = 0; i < 1100; i++) source.add(cm(`c${String(i).padStart(4, "0")}`));
    let pages = 0;
    const lw: ListerWatcher = {
      list: async (o) => {
        const page = await source.list(o);
        // Writes and a compaction land after the first page: its token's snapshot is gone.
        if (++pages === 1) {
          source.delete(cm("c0000"));
          source.add(cm("late"));
          source.compact();
        }
        return page;
      },
      watch: (o) => source.watch(o),
    };
    const store = new RecordingStore();
    const ctl = new AbortController();
    const done = new Reflector(lw, store, { clock, random: mulberry32(2) }).run(ctl.signal);
    try {
      await until(() => source.openWatches() === 1, "watch open");
      expect(source.listCalls.map((c) => [c.resourceVersion, c.limit, !!c.continue])).toEqual([
        ["0", 500, false],
        [undefined, 500, true],
        ["0", undefined, false],
      ]);
      expect(store.replaces).toBe(1);
      sameAsSource(store, source);
    } finally {
      ctl.abort();
      await done;
    }
  });

  it("resumes a dropped watch from the last resourceVersion seen, bookmarks included, without relisting", async () => {
    const { clock, source, store, stop } = setup();
    try {
      source.add(cm("a"));
      await until(() => source.openWatches() === 1, "first watch");
      source.add(cm("b"));
      source.modify(cm("a", "2"));
      await until(() => store.listKeys().length === 2, "events applied");
      source.dropWatches();
      await until(() => source.watchCalls.length === 2, "re-watch");
      expect(source.watchCalls[1].resourceVersion).toBe("3");
      // Changes while the watch was down are replayed by the new watch.
      source.dropWatches();
      source.delete(cm("b"));
      clock.step(2000);
      await until(() => source.watchCalls.length === 3, "re-watch 2");
      await until(() => store.listKeys().length === 1, "delete replayed");
      // A bookmark moves the position although nothing changed for this watch's objects.
      source.add(cm("c"));
      await until(() => store.listKeys().length === 2, "c arrives");
      source.bookmark();
      await flush();
      source.dropWatches();
      await until(() => source.watchCalls.length === 4, "re-watch 3");
      expect(source.watchCalls[3].resourceVersion).toBe(source.resourceVersion);
      expect(source.listCalls.length).toBe(1);
      expect(store.replaces).toBe(1);
      sameAsSource(store, source);
    } finally {
      await stop();
    }
  });

  for (const how of ["an ERROR event", "a rejected watch"] as const) {
    it(`relists after a backoff when the watch's resourceVersion is compacted (${how}), ending equal to the source`, async () => {
      const { clock, source, store, stop } = setup();
      try {
        source.add(cm("a"));
        source.add(cm("b"));
        await until(() => source.openWatches() === 1, "watch");
        clock.step(5000);
        if (how === "an ERROR event") {
          source.expireWatches();
          source.delete(cm("a"));
          source.add(cm("c"));
          source.compact();
        } else {
          // The server refuses the re-watch outright (as an etcd-backed watch of a compacted
          // revision can); what changed meanwhile only a relist can bring.
          source.failNextWatch(expiredError("too old resource version: 2 (4)"));
          source.dropWatches();
          source.delete(cm("a"));
          source.add(cm("c"));
        }
        await until(() => clock.hasWaiters(), "backoff timer");
        expect(source.listCalls.length).toBe(1);
        clock.step(clock.nextDue()! - clock.now());
        await until(() => source.listCalls.length === 2, "relist");
        await until(() => store.replaces === 2, "replace");
        // The relist asks for the last resourceVersion seen; the source serves the current state.
        expect(source.listCalls[1].resourceVersion).toBe("2");
        sameAsSource(store, source);
        expect(store.listKeys().sort()).toEqual(["ns/b", "ns/c"]);
      } finally {
        await stop();
      }
    });
  }

  it('lists fresh (resourceVersion "") when a list at the last resourceVersion answers 410', async () => {
    const { clock, source, store, stop } = setup();
    try {
      source.add(cm("a"));
      await until(() => source.openWatches() === 1, "watch");
      clock.step(5000);
      source.failNextList(newStatusError(410, "too old"));
      source.expireWatches();
      await until(() => clock.hasWaiters(), "backoff");
      clock.step(clock.nextDue()! - clock.now());
      await until(() => source.listCalls.length === 3, "two lists");
      expect(source.listCalls.slice(1).map((c) => c.resourceVersion)).toEqual(["1", ""]);
      await until(() => source.openWatches() === 1, "watch again");
      sameAsSource(store, source);
    } finally {
      await stop();
    }
  });

  it("backs off between failed list attempts: 800 ms doubling, with jitter", async () => {
    const { clock, source, stop } = setup({
      before: (s) => {
        for (let i = 0; i < 4; i++) s.failNextList(newStatusError(500, "etcd is down"));
      },
    });
    try {
      const delays: number[] = [];
      for (let i = 0; i < 4; i++) {
        await until(() => clock.hasWaiters(), `backoff ${i}`);
        const d = clock.nextDue()! - clock.now();
        delays.push(d);
        clock.step(d);
        await until(() => source.listCalls.length === i + 2, `attempt ${i + 2}`);
      }
      for (const [i, d] of delays.entries()) {
        expect(d).toBeGreaterThanOrEqual(800 * 2 ** i);
        expect(d).toBeLessThan(1600 * 2 ** i);
      }
      await until(() => source.openWatches() === 1, "recovered");
    } finally {
      await stop();
    }
  });

  it("backs off and re-watches (no relist) when the watch answers 429", async () => {
    const { clock, source, stop } = setup();
    try {
      await until(() => source.openWatches() === 1, "watch");
      clock.step(5000);
      source.failNextWatch(newStatusError(429, "slow down", { retryAfterSeconds: 1 }));
      source.dropWatches();
      await until(() => clock.hasWaiters(), "backoff");
      clock.step(clock.nextDue()! - clock.now());
      await until(() => source.openWatches() === 1, "watch again");
      expect(source.watchCalls.length).toBe(3);
      expect(source.listCalls.length).toBe(1);
    } finally {
      await stop();
    }
  });

  it("re-watches from the last resourceVersion when the server ends a watch at its timeout", async () => {
    const clock = new FakeClock();
    const source = new FakeControllerSource({ clock });
    source.add(cm("a"));
    const store = new RecordingStore();
    const ctl = new AbortController();
    const done = new Reflector(source, store, { clock, random: mulberry32(9) }).run(ctl.signal);
    try {
      await until(() => source.openWatches() === 1, "watch");
      const timeout = source.watchCalls[0].timeoutSeconds!;
      clock.step(timeout * 1000 - 1);
      await flush();
      expect(source.watchCalls.length).toBe(1);
      clock.step(1);
      await until(() => source.watchCalls.length === 2, "re-watch after the timeout");
      expect(source.watchCalls[1].resourceVersion).toBe("1");
      expect(source.listCalls.length).toBe(1);
    } finally {
      ctl.abort();
      await done;
    }
  });

  it("relists after a very short empty watch (closed at once with no event), as upstream", async () => {
    const { clock, source, stop } = setup();
    try {
      await until(() => source.openWatches() === 1, "watch");
      source.dropWatches();
      await until(() => clock.hasWaiters(), "backoff");
      clock.step(clock.nextDue()! - clock.now());
      await until(() => source.listCalls.length === 2, "relist");
    } finally {
      await stop();
    }
  });

  it("calls store.resync every resync period while shouldResync says yes", async () => {
    let yes = true;
    const { clock, source, store, stop } = setup({ resyncPeriodMs: 30_000, shouldResync: () => yes });
    try {
      await until(() => source.openWatches() === 1, "watch");
      clock.step(30_000);
      clock.step(30_000);
      expect(store.resyncs).toBe(2);
      yes = false;
      clock.step(30_000);
      expect(store.resyncs).toBe(2);
    } finally {
      await stop();
    }
  });
});

describe("ExponentialBackoffManager", () => {
  it("doubles from 800 ms to a 30 s cap, and starts over after 2 quiet minutes", () => {
    const clock = new FakeClock();
    const b = new ExponentialBackoffManager({
      initialMs: 800,
      capMs: 30_000,
      resetMs: 120_000,
      factor: 2,
      jitter: 1,
      clock,
      random: () => 0,
    });
    const seq = Array.from({ length: 8 }, () => b.next());
    expect(seq).toEqual([800, 1600, 3200, 6400, 12800, 25600, 30000, 30000]);
    clock.step(120_001);
    expect(b.next()).toBe(800);
    const j = new ExponentialBackoffManager({
      initialMs: 800,
      capMs: 30_000,
      resetMs: 120_000,
      factor: 2,
      jitter: 1,
      clock,
      random: () => 0.5,
    });
    expect(j.next()).toBe(1200);
  });
});

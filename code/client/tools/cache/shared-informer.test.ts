import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/meta.ts";
import { mulberry32 } from "../../../testing/random.ts";
import { expiredError, FakeControllerSource } from "../../testing/fake-controller-source.ts";
import { FakeClock } from "../../util/clock.ts";
import { DeletedFinalStateUnknown } from "./delta-fifo.ts";
import { NamespaceIndex } from "./index.ts";
import { newSharedIndexInformer, type ResourceEventHandler, SharedIndexInformer } from "./shared-informer.ts";
import { metaNamespaceKeyFunc } from "./store.ts";

const cm = (name: string, data = "v", ns = "ns"): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { namespace: ns, name, managedFields: [{ manager: "kubectl" }] },
  data: { k: data },
});

const flush = () => new Promise<void>((r) => setImmediate(r));
async function until(cond: () => boolean, what: string): Promise<void> {
  for (let i = 0; i < 300; i++) {
    if (cond()) return;
    await flush();
  }
  throw new Error(`never happened: ${what}`);
}

/** A handler that records what it saw and replays it into its own view of the objects. */
class Recorder implements ResourceEventHandler {
  events: string[] = [];
  view = new Map<string, KubeObject>();
  problems: string[] = [];
  onAdd(obj: KubeObject, initial: boolean) {
    const k = metaNamespaceKeyFunc(obj);
    if (this.view.has(k)) this.problems.push(`add of known ${k}`);
    this.view.set(k, obj);
    this.events.push(`add ${obj.metadata.name}${initial ? " (initial)" : ""}`);
  }
  onUpdate(old: KubeObject, obj: KubeObject) {
    const k = metaNamespaceKeyFunc(obj);
    if (this.view.get(k)?.metadata.resourceVersion !== old.metadata.resourceVersion)
      this.problems.push(`stale old ${k}`);
    this.view.set(k, obj);
    this.events.push(
      `update ${obj.metadata.name}${old.metadata.resourceVersion === obj.metadata.resourceVersion ? " (sync)" : ""}`,
    );
  }
  onDelete(obj: KubeObject | DeletedFinalStateUnknown) {
    const k = obj instanceof DeletedFinalStateUnknown ? obj.key : metaNamespaceKeyFunc(obj);
    if (!this.view.delete(k)) this.problems.push(`delete of unknown ${k}`);
    this.events.push(`delete ${k}${obj instanceof DeletedFinalStateUnknown ? " (tombstone)" : ""}`);
  }
}

const sorted = (objs: Iterable<KubeObject>) =>
  [...objs].sort((a, b) => (metaNamespaceKeyFunc(a) < metaNamespaceKeyFunc(b) ? -1 : 1));

function setup(resyncMs = 0) {
  const clock = new FakeClock(1_000_000);
  const source = new FakeControllerSource({ kind: "ConfigMap", apiVersion: "v1" });
  const informer = newSharedIndexInformer(source, resyncMs, { clock, random: mulberry32(3) });
  const ctl = new AbortController();
  let done: Promise<void> | undefined;
  return {
    clock,
    source,
    informer,
    start: () => {
      done = informer.run(ctl.signal);
    },
    stop: async () => {
      ctl.abort();
      await done;
    },
  };
}

describe("SharedIndexInformer", () => {
  it("fills the indexer and gives every handler the same consistent sequence", async () => {
    const { source, informer, start, stop } = setup();
    const h1 = new Recorder();
    const h2 = new Recorder();
    informer.addEventHandler(h1);
    informer.addEventHandler(h2);
    source.add(cm("a"));
    source.add(cm("b", "v", "other"));
    try {
      expect(informer.hasSynced()).toBe(false);
      start();
      await until(() => informer.hasSynced(), "synced");
      source.modify(cm("a", "2"));
      source.delete(cm("b", "v", "other"));
      source.add(cm("c"));
      await until(() => h1.events.length === 5 && h2.events.length === 5, "events");
      expect(h1.events).toEqual([
        "add a (initial)",
        "add b (initial)",
        "update a",
        "delete other/b",
        "add c",
      ]);
      expect(h2.events).toEqual(h1.events);
      expect(sorted(informer.getIndexer().list())).toEqual(source.items());
      expect(sorted(h1.view.values())).toEqual(source.items());
      expect(h1.problems).toEqual([]);
      expect(informer.getIndexer().byIndex(NamespaceIndex, "ns").length).toBe(2);
    } finally {
      await stop();
    }
  });

  it("a blocked handler does not block another handler nor the cache", async () => {
    const { source, informer, start, stop } = setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slowSeen: string[] = [];
    informer.addEventHandler({
      onAdd: async (o) => {
        slowSeen.push(o.metadata.name!);
        await gate;
      },
    });
    const fast = new Recorder();
    informer.addEventHandler(fast);
    source.add(cm("a"));
    try {
      start();
      for (let i = 0; i < 50; i++) source.add(cm(`x${i}`));
      await until(() => fast.events.length === 51, "fast handler got everything");
      expect(informer.getIndexer().list().length).toBe(51);
      expect(slowSeen).toEqual(["a"]);
      release();
      await until(() => slowSeen.length === 51, "slow handler catches up");
      expect(slowSeen.slice(1)).toEqual(Array.from({ length: 50 }, (_, i) => `x${i}`));
    } finally {
      await stop();
    }
  });

  it("a registration's hasSynced waits for its handler to take in the initial list; late handlers get it replayed", async () => {
    const { source, informer, start, stop } = setup();
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    const slow = informer.addEventHandler({ onAdd: () => gate });
    source.add(cm("a"));
    source.add(cm("b"));
    try {
      start();
      await until(() => informer.hasSynced(), "informer synced");
      expect(slow.hasSynced()).toBe(false);
      release();
      await until(() => slow.hasSynced(), "registration synced");
      const late = new Recorder();
      const reg = informer.addEventHandler(late);
      await until(() => reg.hasSynced(), "late registration synced");
      expect(late.events.sort()).toEqual(["add a (initial)", "add b (initial)"]);
      source.add(cm("c"));
      await until(() => late.events.length === 3, "live event");
      expect(late.events[2]).toBe("add c");
    } finally {
      await stop();
    }
  });

  it("resyncs each handler at its own period; the informer ticks at the smallest", async () => {
    // An informer made with resync 0 cannot resync at all (determineResyncPeriod), so: 30 s.
    const { clock, source, informer, start, stop } = setup(30_000);
    const every10 = new Recorder();
    const every30 = new Recorder();
    const never = new Recorder();
    informer.addEventHandler(every10, 10_000);
    informer.addEventHandler(every30, 30_000);
    informer.addEventHandler(never, 0);
    source.add(cm("a"));
    source.add(cm("b"));
    try {
      start();
      await until(() => never.events.length === 2 && every10.events.length === 2, "initial");
      const syncs = (r: Recorder) => r.events.filter((e) => e.endsWith("(sync)")).length;
      for (let t = 1; t <= 3; t++) {
        clock.step(10_000);
        await until(() => syncs(every10) === 2 * t, `10 s handler resync ${t}`);
      }
      await until(() => syncs(every30) === 2, "30 s handler resync");
      expect(syncs(every30)).toBe(2);
      expect(syncs(never)).toBe(0);
      expect(every10.problems).toEqual([]);
    } finally {
      await stop();
    }
  });

  it("raises a handler's period below the check period to it once running, and to 1 s at least", async () => {
    const { clock, source, informer, start, stop } = setup(20_000);
    source.add(cm("a"));
    try {
      start();
      await until(() => informer.hasSynced(), "synced");
      const fast = new Recorder();
      informer.addEventHandler(fast, 5_000);
      await until(() => fast.events.length === 1, "initial");
      clock.step(5_000);
      await flush();
      await flush();
      expect(fast.events.length).toBe(1);
      clock.step(15_000);
      await until(() => fast.events.length === 2, "resync at 20 s");
      expect(fast.events[1]).toBe("update a (sync)");
    } finally {
      await stop();
    }
  });

  it("applies the transform before storing and before handlers see the object", async () => {
    const { source, informer, start, stop } = setup();
    informer.setTransform((o) => ({ ...o, metadata: { ...o.metadata, managedFields: undefined } }));
    const h = new Recorder();
    informer.addEventHandler(h);
    source.add(cm("a"));
    try {
      start();
      source.modify(cm("a", "2"));
      await until(() => h.events.length === 2, "events");
      expect(informer.getIndexer().getByKey("ns/a")?.metadata.managedFields).toBeUndefined();
      expect(h.view.get("ns/a")?.metadata.managedFields).toBeUndefined();
      expect(() => informer.setTransform((o) => o)).toThrow();
    } finally {
      await stop();
    }
  });

  it("tells handlers of a deletion it missed while not watching, as a DeletedFinalStateUnknown", async () => {
    const { clock, source, informer, start, stop } = setup();
    const h = new Recorder();
    informer.addEventHandler(h);
    source.add(cm("a"));
    source.add(cm("b"));
    try {
      start();
      await until(() => h.events.length === 2, "initial");
      clock.step(5_000);
      source.failNextWatch(expiredError("too old resource version"));
      source.dropWatches();
      source.delete(cm("a"));
      source.modify(cm("b", "2"));
      await until(() => clock.hasWaiters(), "backoff");
      clock.step(clock.nextDue()! - clock.now());
      await until(() => h.events.length === 4, "relist delivered");
      expect(h.events.slice(2).sort()).toEqual(["delete ns/a (tombstone)", "update b"]);
      expect(sorted(h.view.values())).toEqual(source.items());
      expect(h.problems).toEqual([]);
    } finally {
      await stop();
    }
  });

  it("removeEventHandler stops deliveries to that handler only", async () => {
    const { source, informer, start, stop } = setup();
    const kept = new Recorder();
    const removed = new Recorder();
    informer.addEventHandler(kept);
    const reg = informer.addEventHandler(removed);
    try {
      start();
      source.add(cm("a"));
      await until(() => removed.events.length === 1, "first");
      informer.removeEventHandler(reg);
      source.add(cm("b"));
      await until(() => kept.events.length === 2, "kept gets b");
      expect(removed.events).toEqual(["add a"]);
    } finally {
      await stop();
    }
  });

  it("an informer made without a resync period resyncs no handler (as upstream)", async () => {
    const { clock, source, informer, start, stop } = setup(0);
    const h = new Recorder();
    informer.addEventHandler(h, 10_000);
    source.add(cm("a"));
    try {
      start();
      await until(() => h.events.length === 1, "initial");
      clock.step(60_000);
      await flush();
      await flush();
      expect(h.events).toEqual(["add a (initial)"]);
    } finally {
      await stop();
    }
  });

  it("refuses handlers once stopped, and run twice is a no-op", async () => {
    const source = new FakeControllerSource();
    const informer = new SharedIndexInformer(source, { clock: new FakeClock() });
    const ctl = new AbortController();
    const done = informer.run(ctl.signal);
    await informer.run(ctl.signal);
    ctl.abort();
    await done;
    expect(informer.isStopped()).toBe(true);
    expect(() => informer.addEventHandler({})).toThrow(/stopped/);
  });
});

import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/meta.ts";
import { newStore } from "./cache.ts";
import {
  DeletedFinalStateUnknown,
  DeltaFIFO,
  type Deltas,
  dedupDeltas,
  deletionHandlingMetaNamespaceKeyFunc,
  ErrRequeue,
  FIFOClosedError,
  type KeyListerGetter,
} from "./delta-fifo.ts";
import { metaNamespaceKeyFunc } from "./store.ts";

const obj = (name: string, rv = "1", extra: Record<string, unknown> = {}): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { namespace: "ns", name, resourceVersion: rv },
  ...extra,
});

const types = (d: Deltas) => d.map((x) => x.type);

async function popAll(f: DeltaFIFO): Promise<Deltas[]> {
  const out: Deltas[] = [];
  while (f.listKeys().length > 0) out.push(await f.pop(() => {}));
  return out;
}

function known(objs: KubeObject[]): KeyListerGetter {
  const s = newStore(metaNamespaceKeyFunc);
  for (const o of objs) s.add(o);
  return s;
}

describe("DeltaFIFO", () => {
  it("keeps every delta of a key, in order, and pops keys in first-changed order", async () => {
    const f = new DeltaFIFO();
    f.add(obj("a"));
    f.add(obj("b"));
    f.update(obj("a", "2"));
    expect(f.listKeys()).toEqual(["ns/a", "ns/b"]);
    const [a, b] = await popAll(f);
    expect(types(a)).toEqual(["Added", "Updated"]);
    expect((a[1].object as KubeObject).metadata.resourceVersion).toBe("2");
    expect(types(b)).toEqual(["Added"]);
  });

  it("collapses two consecutive deletions into one, keeping the one with the real final state", () => {
    const real = { type: "Deleted" as const, object: obj("a", "9") };
    const tomb = { type: "Deleted" as const, object: new DeletedFinalStateUnknown("ns/a", obj("a", "5")) };
    expect(dedupDeltas([{ type: "Added", object: obj("a") }, real, { ...real }])).toHaveLength(2);
    expect(dedupDeltas([tomb, real])).toEqual([real]);
    expect(dedupDeltas([real, tomb])).toEqual([real]);
    // Not consecutive: both stay.
    expect(dedupDeltas([real, { type: "Added", object: obj("a") }])).toHaveLength(2);
  });

  it("drops a delete of something neither the queue nor knownObjects has", () => {
    const f = new DeltaFIFO({ knownObjects: known([obj("k")]) });
    f.delete(obj("unknown"));
    expect(f.listKeys()).toEqual([]);
    f.delete(obj("k"));
    expect(f.listKeys()).toEqual(["ns/k"]);
    const g = new DeltaFIFO();
    g.delete(obj("x"));
    expect(g.listKeys()).toEqual([]);
  });

  it("Replace queues Replaced for listed objects and tombstones for known ones the list lacks", async () => {
    const f = new DeltaFIFO({
      knownObjects: known([obj("stay"), obj("gone", "3")]),
      emitDeltaTypeReplaced: true,
    });
    f.replace([obj("stay", "4"), obj("new", "5")], "5");
    const got = new Map((await popAll(f)).map((d) => [deletionHandlingMetaNamespaceKeyFunc(d[0].object), d]));
    expect(types(got.get("ns/stay")!)).toEqual(["Replaced"]);
    expect(types(got.get("ns/new")!)).toEqual(["Replaced"]);
    const gone = got.get("ns/gone")!;
    expect(types(gone)).toEqual(["Deleted"]);
    const tomb = gone[0].object as DeletedFinalStateUnknown;
    expect(tomb).toBeInstanceOf(DeletedFinalStateUnknown);
    expect(tomb.key).toBe("ns/gone");
    expect(tomb.obj?.metadata.resourceVersion).toBe("3");
  });

  it("Replace emits Sync instead of Replaced when emitDeltaTypeReplaced is off", async () => {
    const f = new DeltaFIFO();
    f.replace([obj("a")], "1");
    expect(types((await popAll(f))[0])).toEqual(["Sync"]);
  });

  it("Replace tombstones a key queued but not listed with its newest queued state", async () => {
    const f = new DeltaFIFO({ knownObjects: known([]), emitDeltaTypeReplaced: true });
    f.add(obj("q", "7"));
    f.replace([], "8");
    const [d] = await popAll(f);
    expect(types(d)).toEqual(["Added", "Deleted"]);
    expect((d[1].object as DeletedFinalStateUnknown).obj?.metadata.resourceVersion).toBe("7");
  });

  it("hasSynced turns true only after the first Replace's items (tombstones included) are popped", async () => {
    const f = new DeltaFIFO({ knownObjects: known([obj("old")]), emitDeltaTypeReplaced: true });
    expect(f.hasSynced()).toBe(false);
    f.replace([obj("a"), obj("b")], "1");
    expect(f.hasSynced()).toBe(false);
    const seen: boolean[] = [];
    await f.pop((_, initial) => seen.push(initial));
    await f.pop((_, initial) => seen.push(initial));
    expect(f.hasSynced()).toBe(false);
    await f.pop((_, initial) => seen.push(initial));
    expect(f.hasSynced()).toBe(true);
    expect(seen).toEqual([true, true, true]);
    f.add(obj("c"));
    await f.pop((_, initial) => seen.push(initial));
    expect(seen.at(-1)).toBe(false);
    // A later Replace does not reset hasSynced.
    f.replace([obj("d")], "2");
    expect(f.hasSynced()).toBe(true);
  });

  it("hasSynced is true at once for a first Replace of nothing", () => {
    const f = new DeltaFIFO();
    f.replace([], "1");
    expect(f.hasSynced()).toBe(true);
  });

  it("resync queues Sync for known objects that have nothing queued", async () => {
    const f = new DeltaFIFO({ knownObjects: known([obj("a"), obj("b")]) });
    f.update(obj("a", "2"));
    f.resync();
    const got = await popAll(f);
    expect(got.map(types)).toEqual([["Updated"], ["Sync"]]);
    expect((got[1][0].object as KubeObject).metadata.name).toBe("b");
    // No knownObjects: nothing to resync.
    const g = new DeltaFIFO();
    g.resync();
    expect(g.listKeys()).toEqual([]);
  });

  it("pop re-queues an item when process throws ErrRequeue, unless the key was queued again", async () => {
    const f = new DeltaFIFO();
    f.add(obj("a"));
    f.add(obj("b"));
    await f.pop(() => {
      throw new ErrRequeue();
    });
    expect(f.listKeys()).toEqual(["ns/b", "ns/a"]);
    await expect(
      f.pop(() => {
        throw new ErrRequeue(new Error("try later"));
      }),
    ).rejects.toThrow("try later");
    expect(f.listKeys()).toEqual(["ns/a", "ns/b"]);
    // Another error: the item is dropped.
    await expect(
      f.pop(() => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    expect(f.listKeys()).toEqual(["ns/b"]);
  });

  it("pop waits for an item, and a close wakes it with FIFOClosedError once drained", async () => {
    const f = new DeltaFIFO();
    const p = f.pop(() => {});
    f.add(obj("a"));
    expect(types(await p)).toEqual(["Added"]);
    const q = f.pop(() => {});
    f.close();
    await expect(q).rejects.toBeInstanceOf(FIFOClosedError);
    expect(f.isClosed()).toBe(true);
  });

  it("applies the transformer to queued objects, but not to Sync or tombstones", async () => {
    const calls: string[] = [];
    const f = new DeltaFIFO({
      knownObjects: known([obj("k"), obj("gone")]),
      emitDeltaTypeReplaced: true,
      transformer: (o) => {
        calls.push(o.metadata.name!);
        return { ...o, metadata: { ...o.metadata, managedFields: undefined }, transformed: true };
      },
    });
    f.add(obj("a"));
    f.resync();
    f.replace([obj("k", "2")], "2");
    const got = await popAll(f);
    expect(calls.sort()).toEqual(["a", "k"]);
    const a = got.find((d) => (d[0].object as KubeObject).metadata?.name === "a")!;
    expect((a[0].object as KubeObject).transformed).toBe(true);
  });

  it("get returns a copy of the queued deltas", () => {
    const f = new DeltaFIFO();
    f.add(obj("a"));
    const d = f.get(obj("a"))!;
    d.push({ type: "Sync", object: obj("a") });
    expect(f.getByKey("ns/a")).toHaveLength(1);
    expect(f.list().map((o) => (o as KubeObject).metadata.name)).toEqual(["a"]);
  });
});

import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../code/api/meta.ts";
import {
  DeletedFinalStateUnknown,
  type Delta,
  type Deltas,
} from "../../../code/client/tools/cache/delta-fifo.ts";
import { dedupDeltas, replaceDeltas } from "./dedup-and-replace.ts";

const cm = (name: string, rv: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { namespace: "ns", name, resourceVersion: rv },
});
const del = (o: KubeObject): Delta => ({ type: "Deleted", object: o });
const tomb = (o: KubeObject): Delta => ({
  type: "Deleted",
  object: new DeletedFinalStateUnknown(`ns/${o.metadata.name}`, o),
});
const shape = (d: Deltas) =>
  d.map((x) =>
    x.object instanceof DeletedFinalStateUnknown
      ? `${x.type}:tombstone@${x.object.obj?.metadata.resourceVersion ?? "none"}`
      : `${x.type}@${x.object.metadata.resourceVersion}`,
  );

describe("dedupDeltas", () => {
  it("collapses two real deletions into the older one", () => {
    expect(
      shape(dedupDeltas([{ type: "Added", object: cm("a", "1") }, del(cm("a", "2")), del(cm("a", "3"))])),
    ).toEqual(["Added@1", "Deleted@2"]);
  });

  it("keeps the real deletion over a tombstone, whichever comes first", () => {
    expect(shape(dedupDeltas([tomb(cm("a", "1")), del(cm("a", "5"))]))).toEqual(["Deleted@5"]);
    expect(shape(dedupDeltas([del(cm("a", "5")), tomb(cm("a", "1"))]))).toEqual(["Deleted@5"]);
  });

  it("leaves every other pair alone: updates are news", () => {
    const ups: Deltas = [
      { type: "Updated", object: cm("a", "1") },
      { type: "Updated", object: cm("a", "2") },
    ];
    expect(dedupDeltas(ups)).toHaveLength(2);
    expect(dedupDeltas([{ type: "Added", object: cm("a", "1") }, del(cm("a", "2"))])).toHaveLength(2);
    expect(dedupDeltas([del(cm("a", "1")), { type: "Added", object: cm("a", "2") }])).toHaveLength(2);
    expect(dedupDeltas([del(cm("a", "1"))])).toHaveLength(1);
    expect(dedupDeltas([])).toEqual([]);
  });
});

describe("replaceDeltas", () => {
  it("appends Replaced for every listed object, new keys included", () => {
    const queued = new Map<string, Deltas>([["ns/a", [{ type: "Updated", object: cm("a", "2") }]]]);
    const out = replaceDeltas(queued, [cm("a", "3"), cm("b", "4")], new Map());
    expect(shape(out.get("ns/a")!)).toEqual(["Updated@2", "Replaced@3"]);
    expect(shape(out.get("ns/b")!)).toEqual(["Replaced@4"]);
    // The input is not changed.
    expect(queued.get("ns/a")).toHaveLength(1);
  });

  it("tombstones a known object the list lacks, with the cache's last state", () => {
    const out = replaceDeltas(
      new Map(),
      [cm("a", "9")],
      new Map([
        ["ns/gone", cm("gone", "3")],
        ["ns/a", cm("a", "1")],
      ]),
    );
    expect(shape(out.get("ns/gone")!)).toEqual(["Deleted:tombstone@3"]);
    expect(out.get("ns/gone")![0].object).toBeInstanceOf(DeletedFinalStateUnknown);
    expect((out.get("ns/gone")![0].object as DeletedFinalStateUnknown).key).toBe("ns/gone");
    expect(shape(out.get("ns/a")!)).toEqual(["Replaced@9"]);
  });

  it("tombstones a queued key the list lacks with its newest queued state, not the cache's older one", () => {
    const queued = new Map<string, Deltas>([["ns/q", [{ type: "Updated", object: cm("q", "7") }]]]);
    const out = replaceDeltas(queued, [], new Map([["ns/q", cm("q", "5")]]));
    expect(shape(out.get("ns/q")!)).toEqual(["Updated@7", "Deleted:tombstone@7"]);
  });

  it("unwraps a queued tombstone, and does not stack a second deletion", () => {
    const queued = new Map<string, Deltas>([["ns/t", [tomb(cm("t", "4"))]]]);
    const out = replaceDeltas(queued, [], new Map());
    expect(shape(out.get("ns/t")!)).toEqual(["Deleted:tombstone@4"]);
    const inner = (out.get("ns/t")![0].object as DeletedFinalStateUnknown).obj;
    expect(inner).not.toBeInstanceOf(DeletedFinalStateUnknown);
  });

  it("a relist scenario: replaying the queue onto the cache gives exactly the listed objects", () => {
    // The cache knew a, b, c; a was updated (queued), then the watch broke; meanwhile b was
    // deleted and d created. The relist lists a and c (changed) and d.
    const known = new Map([
      ["ns/a", cm("a", "1")],
      ["ns/b", cm("b", "2")],
      ["ns/c", cm("c", "3")],
    ]);
    const queued = new Map<string, Deltas>([["ns/a", [{ type: "Updated", object: cm("a", "4") }]]]);
    const listed = [cm("a", "4"), cm("c", "6"), cm("d", "7")];
    const out = replaceDeltas(queued, listed, known);
    const cache = new Map(known);
    for (const [key, deltas] of out) {
      for (const d of deltas) {
        if (d.type === "Deleted") cache.delete(key);
        else cache.set(key, d.object as KubeObject);
      }
    }
    expect([...cache.keys()].sort()).toEqual(["ns/a", "ns/c", "ns/d"]);
    expect([...cache.values()].map((o) => o.metadata.resourceVersion).sort()).toEqual(["4", "6", "7"]);
    expect(shape(out.get("ns/b")!)).toEqual(["Deleted:tombstone@2"]);
  });
});

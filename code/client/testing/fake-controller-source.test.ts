import { describe, expect, it } from "vitest";
import type { KubeObject, WatchEvent } from "../../api/meta.ts";
import { isResourceExpired, type StatusError } from "../errors.ts";
import type { Watch } from "../tools/cache/listwatch.ts";
import { FakeControllerSource } from "./fake-controller-source.ts";

const cm = (name: string, v = "1"): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { namespace: "ns", name },
  data: { v },
});

async function take(w: Watch, n: number): Promise<WatchEvent[]> {
  const out: WatchEvent[] = [];
  for await (const ev of w) {
    out.push(ev);
    if (out.length === n) break;
  }
  return out;
}

describe("FakeControllerSource", () => {
  it("bumps the resourceVersion on every write and hands out copies", async () => {
    const s = new FakeControllerSource();
    const a = cm("a");
    expect(s.add(a).metadata.resourceVersion).toBe("1");
    expect(a.metadata.resourceVersion).toBeUndefined();
    s.modify(cm("a", "2"));
    s.delete(cm("a"));
    expect(s.resourceVersion).toBe("3");
    const l = await s.list({});
    expect(l.items).toEqual([]);
    expect(l.metadata.resourceVersion).toBe("3");
    expect(() => s.modify(cm("a"))).toThrow(/not found/);
  });

  it("pages from one snapshot even while writes continue, and expires tokens on compaction", async () => {
    const s = new FakeControllerSource();
    for (const n of ["a", "b", "c", "d"]) s.add(cm(n));
    const p1 = await s.list({ limit: 2 });
    expect(p1.items.map((o) => o.metadata.name)).toEqual(["a", "b"]);
    s.delete(cm("c"));
    s.add(cm("e"));
    const p2 = await s.list({ limit: 2, continue: p1.metadata.continue });
    expect(p2.items.map((o) => o.metadata.name)).toEqual(["c", "d"]);
    expect(p2.metadata.continue).toBeUndefined();
    expect(p2.metadata.resourceVersion).toBe("4");
    s.compact();
    const err = await s.list({ limit: 2, continue: p1.metadata.continue }).catch((e: StatusError) => e);
    expect(isResourceExpired(err)).toBe(true);
  });

  it("replays changes after a resourceVersion, follows new ones, and answers 410 below the compaction", async () => {
    const s = new FakeControllerSource();
    s.add(cm("a"));
    s.add(cm("b"));
    const w = await s.watch({ resourceVersion: "1" });
    s.modify(cm("a", "2"));
    const evs = await take(w, 2);
    expect(evs.map((e) => [e.type, (e.object as KubeObject).metadata.resourceVersion])).toEqual([
      ["ADDED", "2"],
      ["MODIFIED", "3"],
    ]);
    w.stop();
    expect(s.openWatches()).toBe(0);
    s.compact();
    const old = await s.watch({ resourceVersion: "1" });
    const [e] = await take(old, 1);
    expect(e.type).toBe("ERROR");
    s.expireWatchByRejecting = true;
    await expect(s.watch({ resourceVersion: "1" })).rejects.toMatchObject({ code: 410 });
  });

  it("drops and expires open watches, and sends bookmarks only to watches that asked", async () => {
    const s = new FakeControllerSource();
    const plain = await s.watch({ resourceVersion: "0" });
    const withBookmarks = await s.watch({ resourceVersion: "0", allowWatchBookmarks: true });
    s.add(cm("a"));
    s.bookmark();
    s.dropWatches();
    const a: string[] = [];
    for await (const ev of plain) a.push(ev.type);
    const b: string[] = [];
    for await (const ev of withBookmarks) b.push(ev.type);
    expect(a).toEqual(["ADDED"]);
    expect(b).toEqual(["ADDED", "BOOKMARK"]);
    const w = await s.watch({ resourceVersion: "1" });
    s.expireWatches();
    const types: string[] = [];
    for await (const ev of w) types.push(ev.type);
    expect(types).toEqual(["ERROR"]);
  });
});

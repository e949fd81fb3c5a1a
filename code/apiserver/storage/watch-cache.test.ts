import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { isStatusError } from "../errors.ts";
import { WatchCache } from "./watch-cache.ts";

const obj = (name: string, rv: number): KubeObject => ({ metadata: { name, resourceVersion: String(rv) } });

function expiredMessage(f: () => unknown): string {
  try {
    f();
  } catch (e) {
    if (isStatusError(e) && e.status.code === 410) return e.status.message as string;
    throw e;
  }
  throw new Error("expected 410 Gone, reason Expired");
}

describe("WatchCache", () => {
  it("after a list, serves watches from the list's revision on, and nothing older", () => {
    const c = new WatchCache(3);
    c.replace([{ key: "/p/a", object: obj("a", 7) }], 10);
    expect(c.getAllEventsSince(10)).toEqual([]);
    expect(expiredMessage(() => c.getAllEventsSince(9))).toBe("too old resource version: 9 (10)");
    expect(c.getAllEventsSince(0).map((e) => [e.type, e.key])).toEqual([["ADDED", "/p/a"]]);
  });

  it("keeps the last `capacity` events; the oldest servable revision moves with them", () => {
    const c = new WatchCache(3);
    c.replace([], 10);
    for (let rv = 11; rv <= 15; rv++) c.processEvent("ADDED", `/p/o${rv}`, obj(`o${rv}`, rv), rv);
    // Kept: 13, 14, 15. A watch from 12 needs 13 onwards: still servable; from 11 it is not.
    expect(c.getAllEventsSince(12).map((e) => e.resourceVersion)).toEqual([13, 14, 15]);
    expect(c.getAllEventsSince(14).map((e) => e.resourceVersion)).toEqual([15]);
    expect(expiredMessage(() => c.getAllEventsSince(11))).toBe("too old resource version: 11 (12)");
    expect(c.list().map((x) => x.key)).toEqual(["/p/o11", "/p/o12", "/p/o13", "/p/o14", "/p/o15"]);
  });

  it("records the previous object of each change and removes deleted objects", () => {
    const c = new WatchCache();
    c.replace([], 1);
    c.processEvent("ADDED", "/p/a", obj("a", 2), 2);
    const modified = c.processEvent("MODIFIED", "/p/a", obj("a", 3), 3);
    expect(modified.prevObject?.metadata.resourceVersion).toBe("2");
    const deleted = c.processEvent("DELETED", "/p/a", obj("a", 4), 4);
    expect(deleted.prevObject?.metadata.resourceVersion).toBe("3");
    expect(c.get("/p/a")).toBeUndefined();
    expect(c.resourceVersion).toBe(4);
    c.setResourceVersion(3); // a stale bookmark never moves it back
    expect(c.resourceVersion).toBe(4);
  });

  it("lets a read wait until the cache reaches its resourceVersion", async () => {
    const c = new WatchCache();
    c.replace([], 5);
    const waiting = c.waitUntilFresh(6, 1000);
    c.setResourceVersion(6);
    await expect(waiting).resolves.toBeUndefined();
    await expect(c.waitUntilFresh(9, 20)).rejects.toMatchObject({
      status: { code: 504, message: "Timeout: Too large resource version: 9, current: 6" },
    });
  });
});

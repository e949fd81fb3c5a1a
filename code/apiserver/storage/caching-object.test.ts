import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { EtcdServer } from "../../store/etcdserver/server.ts";
import { Cacher } from "./cacher.ts";
import { CachingObject } from "./caching-object.ts";
import { InProcessEtcdClient } from "./etcd-client.ts";
import { Etcd3Store } from "./etcd3-store.ts";
import { everything, newSelectionPredicate } from "./selection-predicate.ts";
import { nextEvents, pod } from "./storage-suite.ts";

const prefix = "/registry/pods";
const key = (name: string) => `${prefix}/default/${name}`;
const gr = { group: "", resource: "pods" };

describe("CachingObject", () => {
  it("encodes a line once per (type, encoder) and hands every caller the same string", () => {
    const c = new CachingObject(pod("a", { app: "web" }));
    let calls = 0;
    const encode = (o: KubeObject) => {
      calls++;
      return { ...o, kind: "Pod" };
    };
    const first = c.watchLine("ADDED", "v1/Pod", encode);
    expect(c.watchLine("ADDED", "v1/Pod", encode)).toBe(first);
    expect(calls).toBe(1);
    expect(first.toString().endsWith("\n")).toBe(true);
    expect(JSON.parse(first.toString())).toEqual({
      type: "ADDED",
      object: { ...pod("a", { app: "web" }), kind: "Pod" },
    });
    // Another type or another encoder is another line.
    expect(JSON.parse(c.watchLine("MODIFIED", "v1/Pod", encode).toString()).type).toBe("MODIFIED");
    c.watchLine("ADDED", "v2/Pod", encode);
    expect(calls).toBe(3);
  });

  it("freezes the object all the way down, so a shared object cannot be changed", () => {
    const c = new CachingObject(pod("a", { app: "web" }));
    expect(() => {
      (c.object.metadata.labels as Record<string, string>).app = "db";
    }).toThrow(TypeError);
    expect(() => {
      c.object.metadata.name = "b";
    }).toThrow(TypeError);
    expect(c.object.metadata.labels).toEqual({ app: "web" });
  });
});

describe("Cacher fan-out shares one object and one encoding per event", () => {
  let server: EtcdServer;
  let cacher: Cacher;
  let storage: Etcd3Store;

  beforeEach(async () => {
    server = new EtcdServer();
    storage = new Etcd3Store({ client: new InProcessEtcdClient(server), groupResource: gr });
    cacher = new Cacher({ storage, resourcePrefix: prefix, groupResource: gr });
    await cacher.waitReady();
  });

  afterEach(async () => {
    await cacher.close();
    await server.close();
  });

  it("every watcher gets the same frozen object and CachingObject; reads still get copies", async () => {
    const all = await cacher.watch(prefix, { resourceVersion: "0", predicate: everything, recursive: true });
    const web = await cacher.watch(prefix, {
      resourceVersion: "0",
      predicate: newSelectionPredicate("app=web", ""),
      recursive: true,
    });
    const created = await cacher.create(key("a"), pod("a", { app: "web" }));
    const [ea] = await nextEvents(all, 1);
    const [ew] = await nextEvents(web, 1);
    expect(ea.type).toBe("ADDED");
    expect(ew.object).toBe(ea.object);
    expect(ew.cachingObject).toBeDefined();
    expect(ew.cachingObject).toBe(ea.cachingObject);
    expect(Object.isFrozen(ea.object.metadata)).toBe(true);
    expect(ea.object.metadata.resourceVersion).toBe(created.metadata.resourceVersion);

    // A read from the cache is the caller's to change; the shared object does not move.
    const got = (await cacher.get(key("a"), { resourceVersion: "0" })) as KubeObject;
    got.metadata.labels = { app: "changed" };
    expect(ea.object.metadata.labels).toEqual({ app: "web" });
    all.stop();
    web.stop();
  });

  it("an object leaving two watchers' selector: one stamped copy for both, the cached object untouched", async () => {
    const created = await cacher.create(key("a"), pod("a", { app: "web" }));
    const watchers = await Promise.all(
      [1, 2].map(() =>
        cacher.watch(prefix, {
          resourceVersion: created.metadata.resourceVersion,
          predicate: newSelectionPredicate("app=web", ""),
          recursive: true,
        }),
      ),
    );
    // From "0": first the cached object itself, as ADDED.
    const all = await cacher.watch(prefix, { resourceVersion: "0", predicate: everything, recursive: true });
    const [before] = await nextEvents(all, 1);
    const left = await cacher.guaranteedUpdate(key("a"), {}, (cur) => {
      const o = structuredClone(cur as KubeObject);
      o.metadata.labels = { app: "db" };
      return o;
    });
    const [d1] = await nextEvents(watchers[0], 1);
    const [d2] = await nextEvents(watchers[1], 1);
    const [m] = await nextEvents(all, 1);
    expect([d1.type, d2.type, m.type]).toEqual(["DELETED", "DELETED", "MODIFIED"]);
    expect(d2.object).toBe(d1.object);
    expect(d2.cachingObject).toBe(d1.cachingObject);
    // Sent as it was (still app=web), at the revision it left.
    expect(d1.object.metadata.labels).toEqual({ app: "web" });
    expect(d1.object.metadata.resourceVersion).toBe(left.metadata.resourceVersion);
    // The stamp went on a copy: the previous (cached, shared) object kept its own resourceVersion.
    expect(before.object.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(before.object.metadata.labels).toEqual({ app: "web" });
    expect(m.object.metadata.labels).toEqual({ app: "db" });
    for (const w of [...watchers, all]) w.stop();
  });
});

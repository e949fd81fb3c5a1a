import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../../code/api/meta.ts";
import { podSelectableFields } from "../../../code/apiserver/registry/strategies/pods.ts";
import { Cacher } from "../../../code/apiserver/storage/cacher.ts";
import { InProcessEtcdClient } from "../../../code/apiserver/storage/etcd-client.ts";
import { Etcd3Store } from "../../../code/apiserver/storage/etcd3-store.ts";
import type { SelectionPredicate, StorageWatchEvent } from "../../../code/apiserver/storage/interfaces.ts";
import { everything, newSelectionPredicate } from "../../../code/apiserver/storage/selection-predicate.ts";
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";
import { EtcdServer } from "../../../code/store/etcdserver/server.ts";
import { convertToWatchEvent } from "./watch-filter.ts";

/** The kubelet of node-1 watches `pods?fieldSelector=spec.nodeName=node-1`. */
const kubelet = (node: string) => newSelectionPredicate("", `spec.nodeName=${node}`, podSelectableFields);
/** A controller watching its pods by label. */
const byLabel = newSelectionPredicate("app=web", "");

interface PodSpec {
  node?: string;
  labels?: Record<string, string>;
  phase?: string;
}

function pod(name: string, rv: number, s: PodSpec = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace: "default",
      uid: `uid-${name}`,
      resourceVersion: String(rv),
      labels: s.labels ?? { app: "web" },
    },
    spec: { containers: [{ name: "c", image: "nginx" }], ...(s.node ? { nodeName: s.node } : {}) },
    status: { phase: s.phase ?? "Pending" },
  };
}

const nodeOf = (o: KubeObject) => (o.spec as { nodeName?: string } | undefined)?.nodeName;
const phaseOf = (o: KubeObject) => (o.status as { phase?: string } | undefined)?.phase;

function change(
  type: WatchCacheEvent["type"],
  rv: number,
  object: KubeObject,
  prevObject?: KubeObject,
): WatchCacheEvent {
  const ev: WatchCacheEvent = {
    type,
    key: `/registry/pods/default/${object.metadata.name}`,
    object,
    resourceVersion: rv,
  };
  if (prevObject) ev.prevObject = prevObject;
  return ev;
}

/** A deletion as the watch cache records it: the object as it was, at the deletion's resourceVersion. */
function deletion(rv: number, last: KubeObject): WatchCacheEvent {
  const object = structuredClone(last);
  object.metadata.resourceVersion = String(rv);
  return change("DELETED", rv, object, last);
}

/** "ADDED web@8 node-1": type, name, resourceVersion and node of what the watcher is sent. */
function label(out: StorageWatchEvent | undefined): string | undefined {
  if (!out) return undefined;
  const node = nodeOf(out.object);
  return `${out.type} ${out.object.metadata.name}@${out.object.metadata.resourceVersion}${node ? ` ${node}` : ""}`;
}

describe("convertToWatchEvent for the kubelet's watch (spec.nodeName=node-1)", () => {
  const node1 = kubelet("node-1");

  it("a pod created without a node is not the kubelet's business", () => {
    expect(convertToWatchEvent(change("ADDED", 5, pod("web", 5)), node1)).toBeUndefined();
  });

  it("the binding (an update for etcd) is ADDED for the kubelet: the pod enters its selection", () => {
    const out = convertToWatchEvent(
      change("MODIFIED", 8, pod("web", 8, { node: "node-1" }), pod("web", 5)),
      node1,
    );
    expect(label(out)).toBe("ADDED web@8 node-1");
  });

  it("a status update of a pod on node-1 is MODIFIED, with the new object", () => {
    const out = convertToWatchEvent(
      change(
        "MODIFIED",
        9,
        pod("web", 9, { node: "node-1", phase: "Running" }),
        pod("web", 8, { node: "node-1" }),
      ),
      node1,
    );
    expect(label(out)).toBe("MODIFIED web@9 node-1");
    expect(phaseOf(out!.object)).toBe("Running");
  });

  it("a pod created straight onto node-1 is ADDED", () => {
    expect(label(convertToWatchEvent(change("ADDED", 6, pod("static", 6, { node: "node-1" })), node1))).toBe(
      "ADDED static@6 node-1",
    );
  });

  it("deleting a pod on node-1 is DELETED, carrying the pod as it was, at the deletion's resourceVersion", () => {
    const last = pod("web", 9, { node: "node-1", phase: "Running" });
    const out = convertToWatchEvent(deletion(12, last), node1);
    expect(label(out)).toBe("DELETED web@12 node-1");
    expect(phaseOf(out!.object)).toBe("Running");
  });

  it("node-2's pods never reach node-1's kubelet: created, updated or deleted", () => {
    const on2 = pod("db", 7, { node: "node-2" });
    expect(convertToWatchEvent(change("ADDED", 7, on2), node1)).toBeUndefined();
    expect(
      convertToWatchEvent(
        change("MODIFIED", 10, pod("db", 10, { node: "node-2", phase: "Running" }), on2),
        node1,
      ),
    ).toBeUndefined();
    expect(convertToWatchEvent(deletion(11, on2), node1)).toBeUndefined();
  });

  it("the same binding is nothing for node-2's kubelet, and MODIFIED for a watch of every pod", () => {
    const bind = change("MODIFIED", 8, pod("web", 8, { node: "node-1" }), pod("web", 5));
    expect(convertToWatchEvent(bind, kubelet("node-2"))).toBeUndefined();
    expect(label(convertToWatchEvent(bind, everything))).toBe("MODIFIED web@8 node-1");
    expect(label(convertToWatchEvent(change("ADDED", 5, pod("web", 5)), everything))).toBe("ADDED web@5");
    const gone = pod("web", 8, { node: "node-1" });
    expect(label(convertToWatchEvent(deletion(9, gone), everything))).toBe("DELETED web@9 node-1");
  });
});

describe("convertToWatchEvent for a label selector (app=web)", () => {
  it("an object whose label is removed is DELETED for the watcher — sent as it was, label included", () => {
    const before = pod("web", 20, { labels: { app: "web", tier: "fe" } });
    const after = pod("web", 21, { labels: { tier: "fe" } });
    const out = convertToWatchEvent(change("MODIFIED", 21, after, before), byLabel);
    expect(label(out)).toBe("DELETED web@21");
    expect(out!.object.metadata.labels).toEqual({ app: "web", tier: "fe" });
  });

  it("an object that gains the label is ADDED; one that never had it is nothing", () => {
    const out = convertToWatchEvent(
      change(
        "MODIFIED",
        22,
        pod("api", 22, { labels: { app: "web" } }),
        pod("api", 3, { labels: { app: "api" } }),
      ),
      byLabel,
    );
    expect(label(out)).toBe("ADDED api@22");
    expect(
      convertToWatchEvent(
        change(
          "MODIFIED",
          23,
          pod("db", 23, { labels: { app: "db" } }),
          pod("db", 4, { labels: { app: "db" } }),
        ),
        byLabel,
      ),
    ).toBeUndefined();
  });

  it("never changes the cache's objects, which every other watcher shares", () => {
    const before = pod("web", 20);
    const after = pod("web", 21, { labels: { app: "other" } });
    const ev = change("MODIFIED", 21, after, before);
    const snapshot = structuredClone(ev);
    const out = convertToWatchEvent(ev, byLabel);
    expect(out?.type).toBe("DELETED");
    expect(ev).toEqual(snapshot);
    // …and what it hands out is the watcher's own copy.
    const kept = convertToWatchEvent(change("MODIFIED", 22, pod("web", 22), pod("web", 21)), byLabel);
    (kept!.object.metadata.labels as Record<string, string>).app = "changed by a client";
    expect(ev).toEqual(snapshot);
  });
});

describe("convertToWatchEvent serving watches from the real watch cache", () => {
  const prefix = "/registry/pods";
  const key = (name: string) => `${prefix}/default/${name}`;
  const gr = { group: "", resource: "pods" };
  let server: EtcdServer;
  let store: Etcd3Store;
  let cacher: Cacher;

  beforeEach(async () => {
    server = new EtcdServer();
    store = new Etcd3Store({ client: new InProcessEtcdClient(server), groupResource: gr });
    cacher = new Cacher({ storage: store, resourcePrefix: prefix, groupResource: gr });
    await cacher.waitReady();
  });

  afterEach(async () => {
    await cacher.close();
    await store.close();
    await server.close();
  });

  const create = (name: string, s: PodSpec) => {
    const p = pod(name, 0, s);
    delete p.metadata.resourceVersion;
    return store.create(key(name), p);
  };
  const update = (name: string, f: (p: KubeObject & { spec: Record<string, unknown> }) => void) =>
    store.guaranteedUpdate(key(name), {}, (cur) => {
      const p = cur as KubeObject & { spec: Record<string, unknown> };
      f(p);
      return p;
    });
  const rvOf = (o: KubeObject) => o.metadata.resourceVersion;

  /** The life of three pods, written to etcd; the watch cache hears of it through its etcd watch. */
  async function cluster(): Promise<{ from: number; rv: Record<string, string | undefined> }> {
    const from = Number(await store.currentResourceVersion());
    const rv: Record<string, string | undefined> = {};
    rv.createA = rvOf(await create("a", {}));
    rv.createB = rvOf(await create("b", { node: "node-2" }));
    rv.bindA = rvOf(await update("a", (p) => (p.spec.nodeName = "node-1")));
    rv.runA = rvOf(await update("a", (p) => (p.status = { phase: "Running" })));
    rv.createC = rvOf(await create("c", { node: "node-1" }));
    rv.runB = rvOf(await update("b", (p) => (p.status = { phase: "Running" })));
    rv.unlabelC = rvOf(await update("c", (p) => (p.metadata.labels = { app: "batch" })));
    rv.deleteA = rvOf(await store.delete(key("a")));
    rv.deleteB = rvOf(await store.delete(key("b")));
    rv.relabelC = rvOf(await update("c", (p) => (p.metadata.labels = { app: "web" })));
    await cacher.watchCache.waitUntilFresh(Number(rv.relabelC));
    return { from, rv };
  }

  /** What a watcher with `pred` is sent, replaying the real watch cache's events with your function. */
  function watch(from: number, pred: SelectionPredicate): StorageWatchEvent[] {
    return cacher.watchCache
      .getAllEventsSince(from)
      .map((ev) => convertToWatchEvent(ev, pred))
      .filter((e): e is StorageWatchEvent => e !== undefined);
  }

  it("each kubelet is sent exactly the life of its own node's pods", async () => {
    const { from, rv } = await cluster();
    expect(watch(from, kubelet("node-1")).map(label)).toEqual([
      `ADDED a@${rv.bindA} node-1`,
      `MODIFIED a@${rv.runA} node-1`,
      `ADDED c@${rv.createC} node-1`,
      `MODIFIED c@${rv.unlabelC} node-1`,
      `DELETED a@${rv.deleteA} node-1`,
      `MODIFIED c@${rv.relabelC} node-1`,
    ]);
    expect(watch(from, kubelet("node-2")).map(label)).toEqual([
      `ADDED b@${rv.createB} node-2`,
      `MODIFIED b@${rv.runB} node-2`,
      `DELETED b@${rv.deleteB} node-2`,
    ]);
    expect(watch(from, byLabel).map(label)).toEqual([
      `ADDED a@${rv.createA}`,
      `ADDED b@${rv.createB} node-2`,
      `MODIFIED a@${rv.bindA} node-1`,
      `MODIFIED a@${rv.runA} node-1`,
      `ADDED c@${rv.createC} node-1`,
      `MODIFIED b@${rv.runB} node-2`,
      `DELETED c@${rv.unlabelC} node-1`,
      `DELETED a@${rv.deleteA} node-1`,
      `DELETED b@${rv.deleteB} node-2`,
      `ADDED c@${rv.relabelC} node-1`,
    ]);
  });

  it("a client that applies the events to its cache holds, after each one, what a fresh list with its selector returns", async () => {
    const { from } = await cluster();
    for (const pred of [kubelet("node-1"), kubelet("node-2"), byLabel]) {
      const cache = new Map<string, KubeObject>();
      for (const ev of watch(from, pred)) {
        const name = ev.object.metadata.name as string;
        if (ev.type === "DELETED") {
          expect(cache.has(name), `DELETED ${name}, which the client never had`).toBe(true);
          cache.delete(name);
        } else {
          expect(cache.has(name), `${ev.type} ${name}`).toBe(ev.type === "MODIFIED");
          cache.set(name, ev.object);
        }
        // The list a client starting now, at this event's resourceVersion, would get.
        const list = await store.getList(prefix, {
          predicate: pred,
          recursive: true,
          resourceVersion: ev.object.metadata.resourceVersion,
          resourceVersionMatch: "Exact",
        });
        expect([...cache.values()].sort((x, y) => (x.metadata.name! < y.metadata.name! ? -1 : 1))).toEqual(
          list.items,
        );
      }
    }
  });

  it("leaves the watch cache's history as it was, for the next watcher to replay", async () => {
    const { from } = await cluster();
    const before = structuredClone(cacher.watchCache.getAllEventsSince(from));
    watch(from, kubelet("node-1"));
    watch(from, byLabel);
    expect(cacher.watchCache.getAllEventsSince(from)).toEqual(before);
  });
});

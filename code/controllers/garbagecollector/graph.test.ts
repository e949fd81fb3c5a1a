import { describe, expect, it } from "vitest";
import type { KubeObject, OwnerReference } from "../../api/meta.ts";
import type { APIResourceList, DiscoveryClient } from "../../client/discovery/discovery-client.ts";
import { ErrGroupDiscoveryFailed } from "../../client/discovery/discovery-client.ts";
import { newStatusError } from "../../client/errors.ts";
import { newForConfig } from "../../client/kubernetes/clientset.ts";
import type { SharedInformerFactory } from "../../client/tools/cache/informer-factory.ts";
import type { TypedRateLimitingInterface } from "../../client/util/workqueue/rate-limiting-queue.ts";
import { GarbageCollector } from "./garbage-collector.ts";
import type { Node, ObjectReference } from "./graph.ts";
import type { GraphEvent } from "./graph-builder.ts";

const cmGVK = { apiVersion: "v1", kind: "ConfigMap" };

function cm(
  name: string,
  uid: string,
  owners: OwnerReference[] = [],
  extra: Partial<KubeObject["metadata"]> = {},
) {
  return { metadata: { name, namespace: "default", uid, ownerReferences: owners, ...extra } } as KubeObject;
}
const ref = (name: string, uid: string, blockOwnerDeletion?: boolean): OwnerReference => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  name,
  uid,
  ...(blockOwnerDeletion !== undefined ? { blockOwnerDeletion } : {}),
});
const ev = (eventType: GraphEvent["eventType"], obj: KubeObject, oldObj?: KubeObject): GraphEvent => ({
  eventType,
  obj,
  oldObj,
  gvk: cmGVK,
});

/** Everything waiting in a queue now, by name (the queue is left empty). */
async function drain(q: TypedRateLimitingInterface<Node>): Promise<string[]> {
  const out: string[] = [];
  while (q.len() > 0) {
    const got = await q.get();
    if (got.shutdown) break;
    out.push(got.item.identity.name);
    q.forget(got.item);
    q.done(got.item);
  }
  return out.sort();
}

/** A collector whose API calls are stubs: `live` is the cluster as a GET would see it. */
function newTestGC(live: Map<string, KubeObject> = new Map()) {
  const gc = new GarbageCollector({
    client: newForConfig({ host: "http://127.0.0.1:1" }),
    discovery: {} as DiscoveryClient,
  });
  const calls: string[] = [];
  gc.ops.isNamespaced = () => true;
  gc.ops.getObject = async (r: ObjectReference) => {
    calls.push(`get ${r.name}`);
    const o = live.get(r.name);
    if (!o) throw newStatusError(404, `configmaps "${r.name}" not found`, { reason: "NotFound" });
    return o;
  };
  gc.ops.deleteObject = async (r, _rv, _owners, policy) => {
    calls.push(`delete ${r.name} ${policy}`);
  };
  gc.ops.patchObject = async (r, patch) => {
    calls.push(`patch ${r.name} ${JSON.stringify(patch)}`);
    return live.get(r.name) as KubeObject;
  };
  gc.ops.removeFinalizer = async (n, f) => {
    calls.push(`removeFinalizer ${n.identity.name} ${f}`);
  };
  const gb = gc.dependencyGraphBuilder;
  /** Applies the graph builder's pending events (virtual ones from the workers included). */
  const applyPending = async () => {
    while (gb.graphChanges.len() > 0) {
      const got = await gb.graphChanges.get();
      if (got.shutdown) break;
      gb.processGraphChange(got.item);
      gb.graphChanges.done(got.item);
    }
  };
  return { gc, gb, calls, applyPending };
}

describe("the graph, fed events by hand", () => {
  it("an owner seen after its dependent: a virtual node first, queued for a check, then observed", async () => {
    const { gc, gb } = newTestGC();
    gb.processGraphChange(ev("add", cm("child", "c1", [ref("parent", "p1")])));
    const virtual = gb.uidToNode.read("p1");
    expect(virtual?.virtual).toBe(true);
    expect(virtual?.identity).toEqual({
      apiVersion: "v1",
      kind: "ConfigMap",
      name: "parent",
      uid: "p1",
      namespace: "default",
    });
    expect([...(virtual?.dependents ?? [])].map((d) => d.identity.name)).toEqual(["child"]);
    expect(await drain(gc.attemptToDelete)).toEqual(["parent"]);

    gb.processGraphChange(ev("add", cm("parent", "p1")));
    const real = gb.uidToNode.read("p1");
    expect(real).toBe(virtual); // same coordinates: the node is kept, only marked observed
    expect(real?.isObserved()).toBe(true);
    expect(real?.dependents.size).toBe(1);
    expect(await drain(gc.attemptToDelete)).toEqual([]);
  });

  it("an owner observed under other coordinates than a dependent gave: that dependent is checked", async () => {
    const { gc, gb } = newTestGC();
    gb.processGraphChange(ev("add", cm("child", "c1", [ref("wrong-name", "p1")])));
    await drain(gc.attemptToDelete);
    gb.processGraphChange(ev("add", cm("parent", "p1")));
    expect(gb.uidToNode.read("p1")?.identity.name).toBe("parent");
    expect(await drain(gc.attemptToDelete)).toEqual(["child"]);
  });

  it("an owner deleted: its dependents are queued and it is remembered as absent", async () => {
    const { gc, gb } = newTestGC();
    gb.processGraphChange(ev("add", cm("parent", "p1")));
    gb.processGraphChange(ev("add", cm("a", "a1", [ref("parent", "p1")])));
    gb.processGraphChange(ev("add", cm("b", "b1", [ref("parent", "p1")])));
    gb.processGraphChange(ev("delete", cm("parent", "p1")));
    expect(gb.uidToNode.read("p1")).toBeUndefined();
    expect(await drain(gc.attemptToDelete)).toEqual(["a", "b"]);
    expect(gc.absentOwnerCache.has({ ...cmGVK, name: "parent", uid: "p1", namespace: "default" })).toBe(true);
  });

  it("an owner reference removed from a dependent removes the edge", async () => {
    const { gb } = newTestGC();
    gb.processGraphChange(ev("add", cm("parent", "p1")));
    gb.processGraphChange(ev("add", cm("a", "a1", [ref("parent", "p1")])));
    gb.processGraphChange(ev("update", cm("a", "a1", []), cm("a", "a1", [ref("parent", "p1")])));
    expect(gb.uidToNode.read("p1")?.dependents.size).toBe(0);
  });

  it("deletion with `orphan` goes to attemptToOrphan once; with `foregroundDeletion` the owner and its dependents to attemptToDelete", async () => {
    const { gc, gb } = newTestGC();
    gb.processGraphChange(ev("add", cm("parent", "p1")));
    gb.processGraphChange(ev("add", cm("a", "a1", [ref("parent", "p1", true)])));
    await drain(gc.attemptToDelete);
    const orphaning = cm("parent", "p1", [], {
      deletionTimestamp: "2026-01-01T00:00:00Z",
      finalizers: ["orphan"],
    });
    gb.processGraphChange(ev("update", orphaning, cm("parent", "p1")));
    expect(await drain(gc.attemptToOrphan)).toEqual(["parent"]);
    gb.processGraphChange(ev("update", orphaning, orphaning)); // no transition: nothing queued
    expect(await drain(gc.attemptToOrphan)).toEqual([]);

    const { gc: gc2, gb: gb2 } = newTestGC();
    gb2.processGraphChange(ev("add", cm("parent", "p1")));
    gb2.processGraphChange(ev("add", cm("a", "a1", [ref("parent", "p1", true)])));
    await drain(gc2.attemptToDelete);
    const fg = cm("parent", "p1", [], {
      deletionTimestamp: "2026-01-01T00:00:00Z",
      finalizers: ["foregroundDeletion"],
    });
    gb2.processGraphChange(ev("update", fg, cm("parent", "p1")));
    expect(gb2.uidToNode.read("p1")?.deletingDependents).toBe(true);
    expect(await drain(gc2.attemptToDelete)).toEqual(["a", "parent"]);
    // The dependent goes: the waiting owner is looked at again.
    gb2.processGraphChange(ev("delete", cm("a", "a1", [ref("parent", "p1", true)])));
    expect(await drain(gc2.attemptToDelete)).toEqual(["parent"]);
  });

  it("a cycle (a owns b, b owns a) is built, deleted and queued without looping", async () => {
    const { gc, gb } = newTestGC();
    gb.processGraphChange(ev("add", cm("a", "a1", [ref("b", "b1")])));
    gb.processGraphChange(ev("add", cm("b", "b1", [ref("a", "a1")])));
    expect(gb.uidToNode.read("a1")?.dependents.size).toBe(1);
    expect(gb.uidToNode.read("b1")?.dependents.size).toBe(1);
    await drain(gc.attemptToDelete);
    gb.processGraphChange(ev("delete", cm("a", "a1", [ref("b", "b1")])));
    expect(await drain(gc.attemptToDelete)).toEqual(["b"]);
    expect(gb.uidToNode.size).toBe(1);
  });
});

describe("attemptToDeleteItem, with the API calls stubbed", () => {
  it("an owner reference whose UID does not match the live owner is dangling: the dependent goes", async () => {
    const live = new Map([
      ["parent", cm("parent", "p-NEW")], // recreated under the same name
      ["child", cm("child", "c1", [ref("parent", "p-OLD")])],
    ]);
    const { gc, gb, calls } = newTestGC(live);
    gb.processGraphChange(ev("add", live.get("parent") as KubeObject));
    gb.processGraphChange(ev("add", live.get("child") as KubeObject));
    await gc.attemptToDeleteItem(gb.uidToNode.read("c1") as Node);
    expect(calls).toEqual(["get child", "get parent", "delete child Background"]);
    expect(gc.absentOwnerCache.has({ ...cmGVK, name: "parent", uid: "p-OLD", namespace: "default" })).toBe(
      true,
    );
  });

  it("one solid owner keeps the dependent; the dangling reference is patched away", async () => {
    const live = new Map([
      ["keep", cm("keep", "k1")],
      ["child", cm("child", "c1", [ref("keep", "k1"), ref("gone", "g1")])],
    ]);
    const { gc, gb, calls } = newTestGC(live);
    gb.processGraphChange(ev("add", live.get("keep") as KubeObject));
    gb.processGraphChange(ev("add", live.get("child") as KubeObject));
    await gc.attemptToDeleteItem(gb.uidToNode.read("c1") as Node);
    expect(calls).toEqual([
      "get child",
      "get keep",
      "get gone",
      'patch child {"metadata":{"ownerReferences":[{"$patch":"delete","uid":"g1"}],"uid":"c1"}}',
    ]);
  });

  it("a virtual owner that does not exist: a virtual delete event removes it and queues its dependents", async () => {
    const live = new Map([["child", cm("child", "c1", [ref("ghost", "x1")])]]);
    const { gc, gb, applyPending } = newTestGC(live);
    gb.processGraphChange(ev("add", live.get("child") as KubeObject));
    expect(await drain(gc.attemptToDelete)).toEqual(["ghost"]);
    expect(await gc.attemptToDeleteWorker(gb.uidToNode.read("x1") as Node)).toBe("forget");
    await applyPending();
    expect(gb.uidToNode.read("x1")).toBeUndefined();
    expect(await drain(gc.attemptToDelete)).toEqual(["child"]);
  });

  it("a foreground owner with no blocking dependent left loses its finalizer", async () => {
    const fg = cm("parent", "p1", [], {
      deletionTimestamp: "2026-01-01T00:00:00Z",
      finalizers: ["foregroundDeletion"],
    });
    const { gc, gb, calls } = newTestGC(new Map([["parent", fg]]));
    gb.processGraphChange(ev("add", fg));
    await gc.attemptToDeleteItem(gb.uidToNode.read("p1") as Node);
    expect(calls).toEqual(["get parent", "removeFinalizer parent foregroundDeletion"]);
  });

  it("a foreground cycle is broken: the dependent unblocks its references, then goes in foreground", async () => {
    const deleting = { deletionTimestamp: "2026-01-01T00:00:00Z", finalizers: ["foregroundDeletion"] };
    const a = cm("a", "a1", [ref("b", "b1", true)], deleting);
    const b = cm("b", "b1", [ref("a", "a1", true)]);
    const { gc, gb, calls } = newTestGC(
      new Map([
        ["a", a],
        ["b", b],
      ]),
    );
    gb.processGraphChange(ev("add", a));
    gb.processGraphChange(ev("add", b));
    // a waits for b (its dependent), and b's dependent a is deleting its dependents: b unblocks.
    await gc.attemptToDeleteItem(gb.uidToNode.read("b1") as Node);
    expect(calls).toEqual([
      "get b",
      "get a",
      'patch b {"metadata":{"ownerReferences":[{"uid":"a1","blockOwnerDeletion":false}],"uid":"b1"}}',
      "delete b Foreground",
    ]);
  });

  it("orphaning: every dependent's reference to the owner removed, then the finalizer", async () => {
    const { gc, gb, calls } = newTestGC();
    gb.processGraphChange(ev("add", cm("parent", "p1")));
    gb.processGraphChange(ev("add", cm("a", "a1", [ref("parent", "p1")])));
    expect(await gc.attemptToOrphanWorker(gb.uidToNode.read("p1") as Node)).toBe("forget");
    expect(calls).toEqual([
      'patch a {"metadata":{"ownerReferences":[{"$patch":"delete","uid":"p1"}],"uid":"a1"}}',
      "removeFinalizer parent orphan",
    ]);
  });
});

describe("rediscovery (Sync)", () => {
  const list = (groupVersion: string, ...names: string[]): APIResourceList => ({
    groupVersion,
    resources: names.map((n) => ({
      name: n,
      kind: n,
      namespaced: true,
      verbs: ["delete", "get", "list", "watch"],
    })),
  });

  it("adds monitors for new resources, keeps those of a group that failed discovery, drops removed ones", async () => {
    let answer: { result: APIResourceList[]; error?: ErrGroupDiscoveryFailed } = {
      result: [list("v1", "configmaps", "events"), list("example.com/v1", "widgets")],
    };
    const discovery = {
      serverPreferredResources: async () => answer,
      serverGroupsAndResources: async () => ({ result: { groups: [], lists: answer.result } }),
    } as unknown as DiscoveryClient;
    const removed: string[] = [];
    const factory = {
      informerFor: (r: { resource: string }) => ({
        addEventHandler: () => ({ hasSynced: () => true, resource: r.resource }),
        removeEventHandler: (reg: { resource: string }) => removed.push(reg.resource),
      }),
      start: () => {},
    } as unknown as SharedInformerFactory;
    const gc = new GarbageCollector({
      client: newForConfig({ host: "http://127.0.0.1:1" }),
      discovery,
      informerFactory: factory,
    });
    const monitored = () =>
      gc.dependencyGraphBuilder
        .monitoredResources()
        .map((r) => r.resource)
        .sort();
    const signal = new AbortController().signal;

    expect(await gc.resyncMonitors(signal)).toBe(true);
    expect(monitored()).toEqual(["configmaps", "widgets"]); // events are ignored
    expect(await gc.resyncMonitors(signal)).toBe(false); // nothing changed

    answer = {
      result: [list("v1", "configmaps", "gadgets")],
      error: new ErrGroupDiscoveryFailed(new Map([["example.com/v1", new Error("503")]])),
    };
    expect(await gc.resyncMonitors(signal)).toBe(true);
    expect(monitored()).toEqual(["configmaps", "gadgets", "widgets"]); // widgets kept through the outage

    answer = { result: [list("v1", "configmaps")] };
    expect(await gc.resyncMonitors(signal)).toBe(true);
    expect(monitored()).toEqual(["configmaps"]);
    expect(removed.sort()).toEqual(["gadgets", "widgets"]);
  });
});

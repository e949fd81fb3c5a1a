// The watch cache's index on spec.nodeName (indexed-watchers.ts), through the Cacher: a kubelet's
// watch sees its node's pods come and go, watches without one exact node see everything they
// match, and an event is offered to its node's watchers only — checked by counting each
// watcher's selector tests, with the index off (`dispatchByIndex: false`) as the control.
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { EtcdServer } from "../../store/etcdserver/server.ts";
import { nodeNameTriggerFunc, podSelectableFields } from "../registry/strategies/pods.ts";
import { nextEvents, pod } from "../testing/storage-suite.ts";
import { Cacher, type CacherOptions } from "./cacher.ts";
import { InProcessEtcdClient } from "./etcd-client.ts";
import { Etcd3Store } from "./etcd3-store.ts";
import type { SelectionPredicate, StorageWatchEvent, Watch } from "./interfaces.ts";
import { everything, newSelectionPredicate } from "./selection-predicate.ts";

const prefix = "/registry/pods";
const key = (name: string) => `${prefix}/default/${name}`;
const gr = { group: "", resource: "pods" };

let server: EtcdServer;
let cachers: Cacher[];

beforeEach(() => {
  server = new EtcdServer();
  cachers = [];
});

afterEach(async () => {
  for (const c of cachers) await c.close();
  await server.close();
});

async function newCacher(opts: Partial<CacherOptions> = {}): Promise<Cacher> {
  const storage = new Etcd3Store({ client: new InProcessEtcdClient(server), groupResource: gr });
  const c = new Cacher({
    storage,
    resourcePrefix: prefix,
    groupResource: gr,
    indexedTrigger: nodeNameTriggerFunc,
    minRoundIntervalMs: 0,
    ...opts,
  });
  cachers.push(c);
  await c.waitReady();
  return c;
}

const selector = (fieldSelector: string, labelSelector = "") =>
  newSelectionPredicate(labelSelector, fieldSelector, podSelectableFields);

const watch = (c: Cacher, predicate: SelectionPredicate) =>
  c.watch(prefix, { resourceVersion: "0", predicate, recursive: true });

const onNode = (name: string, node: string, labels: Record<string, string> = {}) =>
  pod(name, labels, { spec: { nodeName: node } });

/** Sets the pod's spec.nodeName (a binding; "moving" a pod is the same write). */
const setNode = (c: Cacher, name: string, node: string) =>
  c.guaranteedUpdate(key(name), {}, (cur) => {
    const o = structuredClone(cur as KubeObject) as KubeObject & { spec?: { nodeName?: string } };
    o.spec = { ...o.spec, nodeName: node };
    return o;
  });

const names = (events: StorageWatchEvent[]) => events.map((e) => `${e.type} ${e.object.metadata.name}`);

/** Reads events up to and including the one for `sentinel`: the exact list a watcher was sent. */
async function eventsUntil(w: Watch, sentinel: string): Promise<string[]> {
  const out: string[] = [];
  for (;;) {
    const [ev] = await nextEvents(w, 1, 10_000);
    out.push(`${ev.type} ${ev.object.metadata.name}`);
    if (ev.object.metadata.name === sentinel) return out;
  }
}

describe("the watch cache's index on spec.nodeName", () => {
  it("a node's watcher sees a pod ADDED when bound to it, and DELETED when it moves away or is deleted", async () => {
    const c = await newCacher();
    const node1 = await watch(c, selector("spec.nodeName=node-1"));
    const node2 = await watch(c, selector("spec.nodeName=node-2"));
    const unscheduled = await watch(c, selector("spec.nodeName="));

    await c.create(key("a"), pod("a")); // not bound yet
    await setNode(c, "a", "node-1"); // the binding: MODIFIED in the store
    await c.guaranteedUpdate(key("a"), {}, (cur) => ({
      ...(cur as KubeObject),
      status: { phase: "Running" },
    }));
    await setNode(c, "a", "node-2"); // moves: node-1 must still hear of it
    await c.create(key("b"), onNode("b", "node-1"));
    await c.delete(key("b")); // deleted: reaches the node it was on
    await c.create(key("end"), onNode("end", "node-1"));
    await c.create(key("end2"), onNode("end2", "node-2"));
    await c.create(key("end0"), pod("end0"));

    expect(await eventsUntil(node1, "end")).toEqual([
      "ADDED a",
      "MODIFIED a",
      "DELETED a",
      "ADDED b",
      "DELETED b",
      "ADDED end",
    ]);
    expect(await eventsUntil(node2, "end2")).toEqual(["ADDED a", "ADDED end2"]);
    expect(await eventsUntil(unscheduled, "end0")).toEqual(["ADDED a", "DELETED a", "ADDED end0"]);
  });

  it("watchers without one exact node (none, spec.nodeName!=x, labels) still get every event they match", async () => {
    const c = await newCacher();
    const all = await watch(c, everything);
    const notNode1 = await watch(c, selector("spec.nodeName!=node-1"));
    const web = await watch(c, selector("", "app=web"));
    const webOnNode1 = await watch(c, selector("spec.nodeName=node-1", "app=web"));

    await c.create(key("a"), onNode("a", "node-1", { app: "web" }));
    await c.create(key("b"), onNode("b", "node-2", { app: "web" }));
    await c.create(key("c"), onNode("c", "node-1", { app: "db" }));
    await setNode(c, "a", "node-2");
    await c.delete(key("c"));
    await c.create(key("end"), onNode("end", "node-3", { app: "web" }));

    expect(await eventsUntil(all, "end")).toEqual([
      "ADDED a",
      "ADDED b",
      "ADDED c",
      "MODIFIED a",
      "DELETED c",
      "ADDED end",
    ]);
    expect(await eventsUntil(notNode1, "end")).toEqual(["ADDED b", "ADDED a", "ADDED end"]);
    expect(await eventsUntil(web, "end")).toEqual(["ADDED a", "ADDED b", "MODIFIED a", "ADDED end"]);
    // Filed under node-1, and its label selector still applies.
    await c.create(key("end1"), onNode("end1", "node-1", { app: "web" }));
    expect(await eventsUntil(webOnNode1, "end1")).toEqual(["ADDED a", "DELETED a", "ADDED end1"]);
  });

  /** 100 node watchers whose selectors count their tests, and one watcher of everything. */
  async function nodeWatchers(c: Cacher) {
    const tests = new Array<number>(100).fill(0);
    const watches = await Promise.all(
      tests.map((_, i) => {
        const p = selector(`spec.nodeName=node-${i}`);
        return watch(c, {
          ...p,
          matches: (o) => {
            tests[i]++;
            return p.matches(o);
          },
        });
      }),
    );
    const informer = await watch(c, everything);
    let n = 0;
    /**
     * Waits until every event so far has been dispatched to everyone: a pod on a node nobody
     * watches (offered to the informer alone) reaches the informer only once the rounds before
     * its own are complete.
     */
    const settle = async () => {
      const sentinel = `sentinel-${n++}`;
      await c.create(key(sentinel), onNode(sentinel, "no-such-node"));
      await eventsUntil(informer, sentinel);
    };
    return { tests, watches, informer, settle };
  }

  it("offers an event only to the watchers of its node (and its previous node), not to all 100", async () => {
    const c = await newCacher();
    const { tests, watches, informer, settle } = await nodeWatchers(c);
    await c.create(key("a"), onNode("a", "node-7"));
    await settle();
    expect(names(await nextEvents(watches[7], 1))).toEqual(["ADDED a"]);
    expect(tests.flatMap((n, i) => (n > 0 ? [i] : []))).toEqual([7]);

    tests.fill(0);
    await setNode(c, "a", "node-42");
    await settle();
    expect(names(await nextEvents(watches[7], 1))).toEqual(["DELETED a"]);
    expect(names(await nextEvents(watches[42], 1))).toEqual(["ADDED a"]);
    expect(tests.flatMap((n, i) => (n > 0 ? [i] : []))).toEqual([7, 42]);

    // A watcher that stops leaves the index: node-42's next event is offered to no one else.
    watches[42].stop();
    tests.fill(0);
    await c.delete(key("a"));
    await settle();
    expect(tests.every((n) => n === 0)).toBe(true);
    expect(c.watcherCount()).toBe(100);
    for (const w of watches) w.stop();
    informer.stop();
  });

  it("the control: with the index off, every one of the 100 watchers tests the event", async () => {
    const c = await newCacher({ dispatchByIndex: false });
    const { tests, watches, informer, settle } = await nodeWatchers(c);
    await c.create(key("a"), onNode("a", "node-7"));
    await settle();
    expect(names(await nextEvents(watches[7], 1))).toEqual(["ADDED a"]);
    expect(tests.filter((n) => n > 0).length).toBe(100);
    for (const w of watches) w.stop();
    informer.stop();
  });
});

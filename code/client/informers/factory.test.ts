/**
 * The course informer against our API server, beside @kubernetes/client-node's informer on the
 * same server: a seeded run of creates, updates and deletes must leave both with the same cache
 * and both must have seen the same events in the same order (issue 13, "Proof": a second real
 * client for list/watch, as DESIGN.md's "Real parts" asks).
 */
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pod } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { mulberry32 } from "../../testing/random.ts";
import { type Clientset, newForConfig } from "../kubernetes/clientset.ts";
import { DeletedFinalStateUnknown } from "../tools/cache/delta-fifo.ts";
import { newSharedInformerFactory, Resources } from "./factory.ts";

const ns = "informers";
const pod = (name: string, v: number): Pod =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns, labels: { v: String(v) } },
    spec: { containers: [{ name: "c", image: "nginx" }] },
  }) as Pod;

type Seen = string; // "ADDED web-3 1234"
const seen = (type: string, o: { metadata?: { name?: string; resourceVersion?: string } }): Seen =>
  `${type} ${o.metadata?.name} ${o.metadata?.resourceVersion}`;

async function until(what: string, ok: () => boolean, ms = 15_000): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 20));
  }
}

describe("the course's SharedIndexInformer and client-node's informer on one API server", () => {
  let server: APIServer;
  let client: Clientset;
  const stop = new AbortController();
  // biome-ignore lint/suspicious/noExplicitAny: client-node's informer type is generic over its list call
  let theirs: any;

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url, qps: -1 });
    await client.coreV1.namespaces().create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
  });
  afterAll(async () => {
    stop.abort();
    await theirs?.stop?.();
    client?.closeIdleConnections();
    await server?.close();
  });

  it("ends with the same cache and the same event sequence (seeded)", async () => {
    const seed = Number(process.env.INFORMER_SEED ?? 20261201);
    const rand = mulberry32(seed);

    // Ours: the factory over the clientset, one handler recording what it is told.
    const factory = newSharedInformerFactory(client, 0, { namespace: ns });
    const informer = factory.informerFor(Resources.pods);
    const ours: Seen[] = [];
    informer.addEventHandler({
      onAdd: (o) => void ours.push(seen("ADDED", o)),
      onUpdate: (_old, o) => void ours.push(seen("MODIFIED", o)),
      onDelete: (o) =>
        void ours.push(o instanceof DeletedFinalStateUnknown ? `DELETED? ${o.key}` : seen("DELETED", o)),
    });
    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal);

    // Theirs: client-node's makeInformer on the same namespace.
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server: server.url, skipTLSVerify: true }],
      users: [{ name: "u" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    const core = kc.makeApiClient(CoreV1Api);
    theirs = makeInformer(kc, `/api/v1/namespaces/${ns}/pods`, () =>
      core.listNamespacedPod({ namespace: ns }),
    );
    const other: Seen[] = [];
    theirs.on("add", (o: V1Pod) => other.push(seen("ADDED", o)));
    theirs.on("update", (o: V1Pod) => other.push(seen("MODIFIED", o)));
    theirs.on("delete", (o: V1Pod) => other.push(seen("DELETED", o)));
    await theirs.start();

    // A seeded churn over 12 names: create, relabel (an update) or delete, one at a time.
    const live = new Map<string, number>();
    for (let i = 0; i < 120; i++) {
      const name = `p${Math.floor(rand() * 12)}`;
      const v = Math.floor(rand() * 1000);
      const pods = client.coreV1.pods(ns);
      if (!live.has(name)) {
        await pods.create(pod(name, v));
        live.set(name, v);
      } else if (rand() < 0.6) {
        const cur = await pods.get(name);
        cur.metadata.labels = { v: String(v) };
        await pods.update(cur);
        live.set(name, v);
      } else {
        await pods.delete(name, { gracePeriodSeconds: 0 });
        live.delete(name);
      }
    }

    // The truth is a fresh list; both caches must come to equal it.
    const truth = await client.coreV1.pods(ns).list();
    const want = truth.items
      .map((p: KubeObject) => `${p.metadata.name} ${p.metadata.resourceVersion}`)
      .sort();
    const oursNow = () =>
      informer
        .getIndexer()
        .list()
        .map((p) => `${p.metadata.name} ${p.metadata.resourceVersion}`)
        .sort();
    const theirsNow = () =>
      (theirs.list(ns) as V1Pod[]).map((p) => `${p.metadata?.name} ${p.metadata?.resourceVersion}`).sort();
    await until("both caches to equal a fresh list", () => {
      const a = oursNow();
      const b = theirsNow();
      return a.join() === want.join() && b.join() === want.join();
    });
    expect(oursNow(), `INFORMER_SEED=${seed}`).toEqual(want);
    expect(theirsNow(), `INFORMER_SEED=${seed}`).toEqual(want);
    await until("both to have heard every event", () => ours.length === other.length && ours.length >= 120);
    expect(ours, `INFORMER_SEED=${seed}`).toEqual(other);
    expect(ours.filter((s) => s.startsWith("DELETED?"))).toEqual([]);
  }, 60_000);
});

/**
 * The API's semantics on three storage backends: the embedded store (in process), our
 * chapter-1 etcd over gRPC, and a real etcd 3.4 started for the test. The same checks run on
 * each, so "works on our store" is also "works on etcd": AlreadyExists, NotFound, the update
 * conflict's message, paging with limit/continue, a watch from a resourceVersion whose field
 * selector an object enters and leaves, 410 after compaction, a bound pod's graceful delete and
 * finalizers.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  type Backend,
  embeddedBackend,
  ourEtcdBackend,
  realEtcdBackend,
} from "../../scripts/etcd-backends.ts";
import { describeWithTools } from "../../scripts/external-tools.ts";
import type { KubeObject } from "../api/meta.ts";
import { type APIServer, type APIServerOptions, startAPIServer } from "./server.ts";

// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON answers
type Json = any;

function runAPIChecks(startBackend: () => Promise<Backend>): void {
  let backend: Backend;
  let server: APIServer;
  /** Another API server on the same backend: no watch cache, compacting every 50 ms. */
  let compacting: APIServer;
  const start = (opts: APIServerOptions) =>
    startAPIServer({ insecurePort: 0, ...opts, etcdServers: backend.etcdServers });

  beforeAll(async () => {
    backend = await startBackend();
    server = await start({ compactionIntervalMs: 0 });
  }, 20_000);
  afterAll(async () => {
    await compacting?.close();
    await server?.close();
    await backend?.close();
  });

  async function call(method: string, path: string, body?: unknown, contentType = "application/json") {
    return callOn(server, method, path, body, contentType);
  }
  async function callOn(
    on: APIServer,
    method: string,
    path: string,
    body?: unknown,
    contentType = "application/json",
  ) {
    const res = await fetch(`${on.url}${path}`, {
      method,
      headers: body === undefined ? {} : { "Content-Type": contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { code: res.status, body: (await res.json()) as Json };
  }
  const namespace = (name: string) =>
    call("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } });

  it("create, AlreadyExists, get, NotFound", async () => {
    const cms = "/api/v1/namespaces/default/configmaps";
    const created = await call("POST", cms, configMap("one"));
    expect(created.code).toBe(201);
    expect(Number(created.body.metadata.resourceVersion)).toBeGreaterThan(0);
    const dup = await call("POST", cms, configMap("one"));
    expect(dup.code).toBe(409);
    expect(dup.body).toMatchObject({ reason: "AlreadyExists", message: 'configmaps "one" already exists' });
    const got = await call("GET", `${cms}/one`);
    expect(got.body.metadata).toMatchObject({
      uid: created.body.metadata.uid,
      resourceVersion: created.body.metadata.resourceVersion,
    });
    const missing = await call("GET", `${cms}/nope`);
    expect(missing.code).toBe(404);
    expect(missing.body).toMatchObject({
      reason: "NotFound",
      message: 'configmaps "nope" not found',
      details: { name: "nope", kind: "configmaps" },
    });
  });

  it("an update with a stale resourceVersion is 409 with upstream's message", async () => {
    const cms = "/api/v1/namespaces/default/configmaps";
    const created = (await call("POST", cms, configMap("u"))).body;
    const ok = await call("PUT", `${cms}/u`, { ...created, data: { k: "v2" } });
    expect(ok.code).toBe(200);
    expect(Number(ok.body.metadata.resourceVersion)).toBeGreaterThan(
      Number(created.metadata.resourceVersion),
    );
    const stale = await call("PUT", `${cms}/u`, { ...created, data: { k: "v3" } });
    expect(stale.code).toBe(409);
    expect(stale.body).toMatchObject({
      reason: "Conflict",
      message:
        'Operation cannot be fulfilled on configmaps "u": the object has been modified; please apply your changes to the latest version and try again',
    });
    expect((await call("GET", `${cms}/u`)).body.data.k).toBe("v2");
  });

  it("lists in pages with limit and continue, at one resourceVersion", async () => {
    await namespace("pages");
    const base = "/api/v1/namespaces/pages/configmaps";
    for (const n of ["a", "b", "c"]) await call("POST", base, configMap(n));
    const first = await call("GET", `${base}?limit=2`);
    expect(first.body.items.map(nameOf)).toEqual(["a", "b"]);
    expect(first.body.metadata.remainingItemCount).toBe(1);
    await call("POST", base, configMap("d")); // after the first page: not in the second
    const second = await call(
      "GET",
      `${base}?limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`,
    );
    expect(second.body.items.map(nameOf)).toEqual(["c"]);
    expect(second.body.metadata.continue).toBeUndefined();
    expect(second.body.metadata.resourceVersion).toBe(first.body.metadata.resourceVersion);
    expect((await call("GET", base)).body.items.map(nameOf)).toEqual(["a", "b", "c", "d"]);
  });

  it("a watch with a field selector sees an object enter (ADDED) and leave (DELETED), cached or not", async () => {
    const noCache = await start({ watchCache: false, compactionIntervalMs: 0 });
    try {
      // Writes go through the server watched: on the embedded backend each has its own store.
      for (const [on, ns] of [
        [server, "phases"],
        [noCache, "phases-uncached"],
      ] as const) {
        await callOn(on, "POST", "/api/v1/namespaces", {
          apiVersion: "v1",
          kind: "Namespace",
          metadata: { name: ns },
        });
        const base = `/api/v1/namespaces/${ns}/pods`;
        const list = await callOn(on, "GET", base);
        const selector = encodeURIComponent("status.phase=Running");
        const res = await fetch(
          `${on.url}${base}?watch=true&fieldSelector=${selector}&resourceVersion=${list.body.metadata.resourceVersion}`,
        );
        await callOn(on, "POST", base, pod("p")); // Pending: not selected
        await callOn(on, "POST", base, pod("q")); // never selected
        const merge = (path: string, patch: unknown) =>
          callOn(on, "PATCH", `${base}/${path}`, patch, "application/merge-patch+json");
        expect((await merge("p/status", { status: { phase: "Running" } })).code).toBe(200);
        await merge("p", { metadata: { labels: { seen: "yes" } } });
        const done = await merge("p/status", { status: { phase: "Succeeded" } });
        expect(done.code).toBe(200);
        await callOn(on, "DELETE", `${base}/q`);
        const events = await readEvents(res, 3);
        expect(events.map((e) => `${e.type} ${e.object.metadata.name} ${e.object.status.phase}`)).toEqual([
          "ADDED p Running",
          "MODIFIED p Running",
          "DELETED p Running",
        ]);
        expect(events[1].object.metadata.labels).toEqual({ seen: "yes" });
        // Leaving the selection: upstream sends the last state that matched, stamped with the
        // resourceVersion of the write that made it leave.
        expect(events[2].object.metadata.resourceVersion).toBe(done.body.metadata.resourceVersion);
        // Nothing about q, which never matched: the stream stays quiet.
        expect(await readEvents(res, 1, 300)).toEqual([]);
      }
    } finally {
      await noCache.close();
    }
  });

  it("a bound pod is deleted gracefully; gracePeriodSeconds=0 finishes it", async () => {
    const pods = "/api/v1/namespaces/default/pods";
    await call("POST", pods, pod("grace"));
    const bound = await call("POST", `${pods}/grace/binding`, {
      apiVersion: "v1",
      kind: "Binding",
      metadata: { name: "grace" },
      target: { name: "n1" },
    });
    expect(bound.code).toBe(201);
    const r = await call("DELETE", `${pods}/grace`);
    expect(r.code).toBe(200);
    expect(r.body.metadata.deletionTimestamp).toBeTruthy();
    expect(r.body.metadata.deletionGracePeriodSeconds).toBe(30);
    expect((await call("GET", `${pods}/grace`)).body.metadata.deletionTimestamp).toBe(
      r.body.metadata.deletionTimestamp,
    );
    expect((await call("DELETE", `${pods}/grace?gracePeriodSeconds=0`)).code).toBe(200);
    expect((await call("GET", `${pods}/grace`)).code).toBe(404);
  });

  it("finalizers hold a deleted object until the last one is removed", async () => {
    const cms = "/api/v1/namespaces/default/configmaps";
    await call("POST", cms, {
      ...configMap("fin"),
      metadata: { name: "fin", finalizers: ["example.com/hold"] },
    });
    expect((await call("DELETE", `${cms}/fin`)).code).toBe(200);
    const held = (await call("GET", `${cms}/fin`)).body;
    expect(held.metadata.deletionTimestamp).toBeTruthy();
    expect(held.metadata.deletionGracePeriodSeconds).toBe(0);
    const emptied = await call(
      "PATCH",
      `${cms}/fin`,
      { metadata: { finalizers: null } },
      "application/merge-patch+json",
    );
    expect(emptied.code).toBe(200);
    expect((await call("GET", `${cms}/fin`)).code).toBe(404);
  });

  it("a watch from a compacted resourceVersion is an ERROR event with 410 Gone, reason Expired", async () => {
    compacting = await start({ watchCache: false, compactionIntervalMs: 50 });
    // Through the compacting server: on the embedded backend each API server has its own store.
    const cms = "/api/v1/namespaces/default/configmaps";
    const old = (await callOn(compacting, "GET", cms)).body.metadata.resourceVersion;
    await callOn(compacting, "POST", cms, configMap("after-old"));
    await callOn(compacting, "POST", cms, configMap("after-old-2"));
    // The compactor runs on a timer: probe until a round has cut past `old` (until then the
    // watch replays the two creates, an ADDED first).
    let event: Json;
    for (let i = 0; i < 30; i++) {
      await new Promise((r) => setTimeout(r, 100));
      const res = await fetch(`${compacting.url}${cms}?watch=true&resourceVersion=${old}`);
      expect(res.status).toBe(200);
      [event] = await readEvents(res, 1);
      await res.body?.cancel();
      if (event?.type === "ERROR") break;
    }
    expect(event.type).toBe("ERROR");
    expect(event.object).toMatchObject({
      kind: "Status",
      code: 410,
      reason: "Expired",
      message: "The resourceVersion for the provided watch is too old.",
    });
    // A fresh list and a watch from its resourceVersion work as before.
    const fresh = (await callOn(compacting, "GET", cms)).body.metadata.resourceVersion;
    const again = await fetch(`${compacting.url}${cms}?watch=true&resourceVersion=${fresh}`);
    await callOn(compacting, "POST", cms, configMap("after-compaction"));
    const [added] = await readEvents(again, 1);
    expect(added).toMatchObject({ type: "ADDED", object: { metadata: { name: "after-compaction" } } });
  });
}

describe("API on the embedded store", () => {
  runAPIChecks(embeddedBackend);
});

describe("API over gRPC to our chapter-1 etcd", () => {
  runAPIChecks(ourEtcdBackend);
});

describeWithTools("API over gRPC to a real etcd", ["etcd"], (tools) => {
  runAPIChecks(() => realEtcdBackend(tools.etcd.path as string));
});

function configMap(name: string): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name }, data: { k: "v" } };
}

function pod(name: string): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: { containers: [{ name: "c", image: "nginx" }] },
  };
}

const nameOf = (o: KubeObject) => o.metadata.name;

/** Newline-delimited watch events until `n` arrived, the stream ended, or `timeoutMs` passed. */
async function readEvents(res: Response, n: number, timeoutMs = 3000): Promise<Json[]> {
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  const decoder = new TextDecoder();
  const events: Json[] = [];
  let buf = "";
  let timer: ReturnType<typeof setTimeout> | undefined;
  const timeout = new Promise<"timeout">((r) => {
    timer = setTimeout(() => r("timeout"), timeoutMs);
  });
  try {
    while (events.length < n) {
      const r = await Promise.race([reader.read(), timeout]);
      if (r === "timeout" || r.done) break;
      buf += decoder.decode(r.value, { stream: true });
      for (let nl = buf.indexOf("\n"); nl >= 0; nl = buf.indexOf("\n")) {
        events.push(JSON.parse(buf.slice(0, nl)));
        buf = buf.slice(nl + 1);
      }
    }
  } finally {
    clearTimeout(timer);
    reader.releaseLock();
  }
  return events;
}

/**
 * The official JavaScript client's informer against our API server: `@kubernetes/client-node`
 * lists, watches from the list's resourceVersion, keeps a cache, and relists when told its
 * resourceVersion is gone (410) — the contract every controller in later chapters relies on.
 *
 * What client-node 1.4 does (read from its `ListWatch`): it never asks for bookmarks (no
 * `allowWatchBookmarks`), though it takes a BOOKMARK's resourceVersion when one comes (shown
 * here with a `Watch` subclass that asks, as client-go's reflector does); it sets no
 * `timeoutSeconds`; a 410 (an ERROR event or an HTTP error) clears its resourceVersion so the
 * next round lists again; `stop()` then `start()` resumes from the resourceVersion it had —
 * which is how these tests make it resume from a version the server no longer has.
 */
import { CoreV1Api, KubeConfig, ListWatch, makeInformer, type V1Pod, Watch } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { KubeObject } from "../api/meta.ts";
import { type APIServer, startAPIServer } from "./server.ts";

// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON answers
type Json = any;

function kubeConfigFor(url: string): KubeConfig {
  const kc = new KubeConfig();
  kc.loadFromOptions({
    clusters: [{ name: "course", server: url, skipTLSVerify: true }],
    users: [{ name: "nobody" }],
    contexts: [{ name: "course", cluster: "course", user: "nobody" }],
    currentContext: "course",
  });
  return kc;
}

async function call(base: string, method: string, path: string, body?: unknown): Promise<Json> {
  const headers: Record<string, string> = {};
  if (body !== undefined) headers["Content-Type"] = "application/json";
  const res = await fetch(`${base}${path}`, {
    method,
    headers,
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const json = await res.json();
  if (res.status >= 300) throw new Error(`${method} ${path}: ${res.status} ${json.message}`);
  return json;
}

function pod(name: string, labels: Record<string, string> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels },
    spec: { containers: [{ name: "c", image: "nginx" }] },
  };
}

async function waitFor(what: string, cond: () => boolean, timeoutMs = 4000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!cond()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

/** makeInformer's answer is a ListWatch (its source says so), which also tells its resourceVersion. */
type PodInformer = ListWatch<V1Pod>;

/** An informer on one namespace's pods, recording every callback as `verb name`. */
function podInformer(url: string, namespace: string): { informer: PodInformer; seen: string[] } {
  const kc = kubeConfigFor(url);
  const api = kc.makeApiClient(CoreV1Api);
  const informer = makeInformer(kc, `/api/v1/namespaces/${namespace}/pods`, () =>
    api.listNamespacedPod({ namespace }),
  ) as PodInformer;
  const seen: string[] = [];
  informer.on("add", (p) => seen.push(`add ${p.metadata?.name}`));
  informer.on("update", (p) => seen.push(`update ${p.metadata?.name}`));
  informer.on("delete", (p) => seen.push(`delete ${p.metadata?.name}`));
  informer.on("error", (e) => seen.push(`error ${(e as Error)?.name ?? e}`));
  return { informer, seen };
}

/** name → resourceVersion, for comparing the informer's cache with the server's list. */
function versions(
  items: readonly { metadata?: { name?: string; resourceVersion?: string } }[],
): Record<string, string> {
  return Object.fromEntries(
    items.map((i) => [i.metadata?.name ?? "", i.metadata?.resourceVersion ?? ""]).sort(),
  );
}

async function serverVersions(url: string, namespace: string): Promise<Record<string, string>> {
  return versions((await call(url, "GET", `/api/v1/namespaces/${namespace}/pods`)).items);
}

/** The first event of a raw watch from `rv` (the server ends the stream after an ERROR). */
async function firstWatchEvent(url: string, namespace: string, rv: string): Promise<Json> {
  const controller = new AbortController();
  const res = await fetch(`${url}/api/v1/namespaces/${namespace}/pods?watch=true&resourceVersion=${rv}`, {
    signal: controller.signal,
  });
  const reader = (res.body as ReadableStream<Uint8Array>).getReader();
  let buf = "";
  while (!buf.includes("\n")) {
    const { value, done } = await reader.read();
    if (done) break;
    buf += new TextDecoder().decode(value);
  }
  controller.abort();
  return JSON.parse(buf.slice(0, buf.indexOf("\n")));
}

describe("client-node informer against the API server (watch cache on)", () => {
  let server: APIServer;
  const logs: string[] = [];
  beforeAll(async () => {
    // A fixed ring of 100 events (upstream's lower bound), so one test can outrun it; by default
    // the ring grows to keep 75 s of history.
    server = await startAPIServer({ insecurePort: 0, log: (l) => logs.push(l), watchCacheCapacity: 100 });
    await call(server.url, "POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "inf" },
    });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("lists, then watches: add, update and delete for writes made over HTTP", async () => {
    const base = "/api/v1/namespaces/inf/pods";
    await call(server.url, "POST", base, pod("before"));
    const { informer, seen } = podInformer(server.url, "inf");
    await informer.start();
    try {
      await waitFor("the listed pod", () => seen.includes("add before"));
      const p1 = await call(server.url, "POST", base, pod("p1"));
      await call(server.url, "PUT", `${base}/p1`, {
        ...p1,
        metadata: { ...p1.metadata, labels: { v: "2" } },
      });
      await call(server.url, "DELETE", `${base}/before`);
      await waitFor("the delete", () => seen.includes("delete before"));
      expect(seen).toEqual(["add before", "add p1", "update p1", "delete before"]);
      expect(informer.get("p1", "inf")?.metadata?.labels).toEqual({ v: "2" });
      expect(versions(informer.list("inf"))).toEqual(await serverVersions(server.url, "inf"));
    } finally {
      await informer.stop();
    }
    // The watch (logged when it closes) resumed from the list's resourceVersion, no bookmarks.
    await waitFor("the watch's log line", () => logs.some((l) => l.includes(`URI="${base}?watch=true`)));
    const watchLine = logs.find((l) => l.includes(`URI="${base}?watch=true`));
    expect(watchLine).toMatch(/URI="[^"?]+\?watch=true&resourceVersion=\d+"/);
  });

  it("client-node's Watch gets a BOOKMARK when asked, and a watch resumes from it", async () => {
    const kc = kubeConfigFor(server.url);
    const list = await call(server.url, "GET", "/api/v1/namespaces/inf/pods");
    const events: Json[] = [];
    let ended: unknown = "open";
    const watch = new Watch(kc);
    // Upstream sends a bookmark 2 s before the deadline at the latest: with 3 s, after ~1 s.
    const controller = await watch.watch(
      "/api/v1/namespaces/inf/pods",
      { allowWatchBookmarks: true, resourceVersion: list.metadata.resourceVersion, timeoutSeconds: 3 },
      (type, object) => events.push({ type, object }),
      (err) => {
        ended = err;
      },
    );
    await waitFor("a bookmark", () => events.some((e) => e.type === "BOOKMARK"));
    controller.abort();
    const bookmark = events.find((e) => e.type === "BOOKMARK");
    expect(bookmark.object).toMatchObject({ kind: "Pod", apiVersion: "v1" });
    const rv = bookmark.object.metadata.resourceVersion;
    expect(Number(rv)).toBeGreaterThanOrEqual(Number(list.metadata.resourceVersion));
    expect(ended).not.toBe("open");

    // Resuming from the bookmark replays nothing older, and sees what came after.
    await call(server.url, "POST", "/api/v1/namespaces/inf/pods", pod("after-bookmark"));
    const first = await firstWatchEvent(server.url, "inf", rv);
    expect(first.type).toBe("ADDED");
    expect(first.object.metadata.name).toBe("after-bookmark");
  });

  it("a ListWatch whose Watch asks for bookmarks moves its resourceVersion on and resumes from it", async () => {
    // What client-go's reflector asks for and client-node's ListWatch does not: bookmarks, and
    // a timeout after which the watch resumes. Everything else is client-node's own ListWatch.
    class BookmarkingWatch extends Watch {
      override watch(...[path, params, callback, done]: Parameters<Watch["watch"]>) {
        return super.watch(path, { ...params, allowWatchBookmarks: true, timeoutSeconds: 3 }, callback, done);
      }
    }
    await call(server.url, "POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "quiet" },
    });
    const base = "/api/v1/namespaces/quiet/pods";
    await call(server.url, "POST", base, pod("only"));
    const kc = kubeConfigFor(server.url);
    const api = kc.makeApiClient(CoreV1Api);
    const informer = new ListWatch<V1Pod>(
      base,
      new BookmarkingWatch(kc),
      () => api.listNamespacedPod({ namespace: "quiet" }),
      false,
    );
    await informer.start();
    let listRv = 0;
    try {
      await waitFor("the list", () => informer.list("quiet").length === 1);
      listRv = Number(informer.latestResourceVersion());
      // A pod elsewhere: nothing for this informer, but the pods' resourceVersion moves on.
      const elsewhere = await call(server.url, "POST", "/api/v1/namespaces/inf/pods", pod("elsewhere"));
      const elsewhereRv = Number(elsewhere.metadata.resourceVersion);
      expect(elsewhereRv).toBeGreaterThan(listRv);
      // Only a BOOKMARK can carry it to this informer.
      await waitFor("a bookmark", () => Number(informer.latestResourceVersion()) >= elsewhereRv);
      // The server ends the watch after 3 s; the ListWatch resumes from the bookmark's version.
      const watchLines = () => logs.filter((l) => l.includes(`URI="${base}?watch=true`));
      await waitFor("the first watch's end", () => watchLines().length === 1, 6000);
      expect(watchLines()[0]).toContain(`resourceVersion=${listRv}&`);
      // The resumed watch is logged when it ends: at its own 3 s timeout. Stopping the informer
      // before that could come before the resume was even sent (on a loaded machine), so wait.
      await waitFor(
        "the second watch's log line",
        () =>
          logs.some(
            (l) => l.includes(`URI="${base}?watch=true`) && !l.includes(`resourceVersion=${listRv}&`),
          ),
        10_000,
      );
    } finally {
      await informer.stop();
    }
    const resumed = logs.filter((l) => l.includes(`URI="${base}?watch=true`))[1];
    expect(Number(/resourceVersion=(\d+)/.exec(resumed)?.[1])).toBeGreaterThanOrEqual(
      Number(
        (await call(server.url, "GET", "/api/v1/namespaces/inf/pods/elsewhere")).metadata.resourceVersion,
      ),
    );
    expect(informer.list("quiet").map((p) => p.metadata?.name)).toEqual(["only"]);
  });

  it("relists after a 410 when the watch cache's ring no longer reaches its resourceVersion", async () => {
    await call(server.url, "POST", "/api/v1/namespaces", {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: "ring" },
    });
    const base = "/api/v1/namespaces/ring/pods";
    await call(server.url, "POST", base, pod("stays"));
    await call(server.url, "POST", base, pod("goes"));
    const { informer, seen } = podInformer(server.url, "ring");
    await informer.start();
    await waitFor("the list", () => informer.list("ring").length === 2);
    await informer.stop();
    const resumeFrom = informer.latestResourceVersion();

    // More pod events than the ring holds (100 here) while the informer is away.
    let obj = await call(server.url, "GET", `${base}/stays`);
    for (let i = 0; i < 105; i++) {
      obj = await call(server.url, "PUT", `${base}/stays`, {
        ...obj,
        metadata: { ...obj.metadata, labels: { n: String(i) } },
      });
    }
    await call(server.url, "DELETE", `${base}/goes`);
    await call(server.url, "POST", base, pod("new"));
    const probe = await firstWatchEvent(server.url, "ring", resumeFrom);
    expect(probe).toMatchObject({ type: "ERROR", object: { code: 410, reason: "Expired" } });
    expect(probe.object.message).toMatch(/^too old resource version: \d+ \(\d+\)$/);

    seen.length = 0;
    const listsBefore = logs.filter((l) => l.includes(`URI="${base}"`)).length;
    await informer.start();
    try {
      await waitFor("the relist", () => seen.includes("add new") && seen.includes("delete goes"));
      expect(seen.filter((s) => !s.startsWith("error")).sort()).toEqual([
        "add new",
        "delete goes",
        "update stays",
      ]);
      const lists = () => logs.filter((l) => l.includes(`URI="${base}"`)).length;
      await waitFor("the list's log line", () => lists() > listsBefore);
      expect(lists()).toBe(listsBefore + 1);
      expect(informer.get("stays", "ring")?.metadata?.labels).toEqual({ n: "104" });
      expect(versions(informer.list("ring"))).toEqual(await serverVersions(server.url, "ring"));
    } finally {
      await informer.stop();
    }
  });
});

describe("client-node informer against the API server (no watch cache, etcd compacted)", () => {
  it("resumes from a compacted resourceVersion, gets 410, lists again, ends with the server's state", async () => {
    // Watches go to etcd, whose history the compactor cuts every 50 ms.
    const logs: string[] = [];
    const server = await startAPIServer({
      insecurePort: 0,
      watchCache: false,
      compactionIntervalMs: 50,
      log: (l) => logs.push(l),
    });
    const base = "/api/v1/namespaces/default/pods";
    const { informer, seen } = podInformer(server.url, "default");
    try {
      await call(server.url, "POST", base, pod("a"));
      await call(server.url, "POST", base, pod("b"));
      await informer.start();
      await waitFor("the list", () => informer.list("default").length === 2);
      await informer.stop();
      const resumeFrom = informer.latestResourceVersion();

      // While the informer is away: changes, then two compactor rounds past them.
      const a = await call(server.url, "GET", `${base}/a`);
      await call(server.url, "PUT", `${base}/a`, { ...a, metadata: { ...a.metadata, labels: { x: "1" } } });
      await call(server.url, "DELETE", `${base}/b`);
      await call(server.url, "POST", base, pod("c"));
      // The compactor runs on a timer: probe until a round has cut past `resumeFrom` (until
      // then the watch replays the changes, an ADDED first).
      let probe = await firstWatchEvent(server.url, "default", resumeFrom);
      for (let i = 0; probe.type !== "ERROR" && i < 30; i++) {
        await new Promise((r) => setTimeout(r, 100));
        probe = await firstWatchEvent(server.url, "default", resumeFrom);
      }
      expect(probe).toMatchObject({
        type: "ERROR",
        object: { kind: "Status", code: 410, reason: "Expired" },
      });

      seen.length = 0;
      const at = logs.length;
      await informer.start();
      await waitFor("the relist", () => seen.includes("add c") && seen.includes("delete b"));
      expect(seen.filter((s) => !s.startsWith("error")).sort()).toEqual(["add c", "delete b", "update a"]);
      // On the wire: the resume from the old resourceVersion and one list (lines are logged when
      // a response closes, so their order is not the requests'; the new watch is still open).
      const uris = () => logs.slice(at).map((l) => /URI="([^"]+)"/.exec(l)?.[1] ?? "");
      await waitFor("both log lines", () => uris().length >= 2);
      expect(uris().sort()).toEqual([base, `${base}?watch=true&resourceVersion=${resumeFrom}`]);
      expect(informer.get("a", "default")?.metadata?.labels).toEqual({ x: "1" });
      expect(versions(informer.list("default"))).toEqual(await serverVersions(server.url, "default"));
    } finally {
      await informer.stop();
      await server.close();
    }
  });
});

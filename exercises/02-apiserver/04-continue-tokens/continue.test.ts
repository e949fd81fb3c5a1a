import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../../code/api/meta.ts";
import { isStatusError, type StatusError } from "../../../code/apiserver/errors.ts";
import { inconsistentContinue } from "../../../code/apiserver/storage/errors.ts";
import { InProcessEtcdClient } from "../../../code/apiserver/storage/etcd-client.ts";
import { Etcd3Store } from "../../../code/apiserver/storage/etcd3-store.ts";
import type { ListResult } from "../../../code/apiserver/storage/interfaces.ts";
import { everything } from "../../../code/apiserver/storage/selection-predicate.ts";
import { EtcdServer } from "../../../code/store/etcdserver/server.ts";
import {
  decodeContinue,
  ErrEmptyStartKey,
  ErrInvalidStartRV,
  ErrUnrecognizedEncodedVersion,
  encodeContinue,
  listPage,
} from "./continue.ts";

const prefix = "/registry/pods/";
/** A token exactly as given, built by hand from its JSON — not by the code under test. */
const token = (json: string) => Buffer.from(json, "utf8").toString("base64url");

describe("encodeContinue", () => {
  it("is byte for byte kube-apiserver's token: unpadded base64url of {v, rv, start}, start relative to the prefix", () => {
    // What kube-apiserver v1.32 sends for `GET /api/v1/pods?limit=…` ending at default/cache.
    expect(encodeContinue("/registry/pods/default/cache\x00", prefix, 17)).toBe(
      "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTcsInN0YXJ0IjoiZGVmYXVsdC9jYWNoZVx1MDAwMCJ9",
    );
    expect(encodeContinue("/registry/pods/kube-system/coredns-5d78c9869d-x2x9z\x00", prefix, 17)).toBe(
      "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTcsInN0YXJ0Ijoia3ViZS1zeXN0ZW0vY29yZWRucy01ZDc4Yzk4NjlkLXgyeDl6XHUwMDAwIn0",
    );
  });

  it("uses the URL-safe alphabet, so the token travels in ?continue= as it is", () => {
    const t = encodeContinue("/registry/pods/demo/~cache\x00", prefix, 17);
    expect(t).toBe("eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTcsInN0YXJ0IjoiZGVtby9-Y2FjaGVcdTAwMDAifQ");
    expect(encodeURIComponent(t)).toBe(t);
  });

  it("refuses a key that is not under the prefix (it could only name some other key)", () => {
    expect(encodeContinue("/registry/pods/a\x00", prefix, 17)).toBe(
      token('{"v":"meta.k8s.io/v1","rv":17,"start":"a\\u0000"}'),
    );
    expect(() => encodeContinue("/registry/secrets/default/db\x00", prefix, 17)).toThrow(Error);
    expect(() => encodeContinue("/registry/pod\x00", prefix, 17)).toThrow(Error);
  });
});

describe("decodeContinue", () => {
  it("gives back the key and revision a token was made for", () => {
    const key = "/registry/pods/kube-system/coredns-5d78c9869d-x2x9z\x00";
    expect(decodeContinue(encodeContinue(key, prefix, 4242), prefix)).toEqual({ key, rv: 4242 });
    expect(
      decodeContinue(token('{"v":"meta.k8s.io/v1","rv":17,"start":"default/cache\\u0000"}'), prefix),
    ).toEqual({
      key: "/registry/pods/default/cache\x00",
      rv: 17,
    });
  });

  it("accepts rv -1 (continue at the newest revision) and a start key with a leading /", () => {
    expect(
      decodeContinue(token('{"v":"meta.k8s.io/v1","rv":-1,"start":"/default/web\\u0000"}'), prefix),
    ).toEqual({
      key: "/registry/pods/default/web\x00",
      rv: -1,
    });
  });

  it("refuses a token of another version, with rv 0, or without a start key — in upstream's words", () => {
    expect(decodeContinue(token('{"v":"meta.k8s.io/v2","rv":17,"start":"a"}'), prefix)).toEqual({
      error: `${ErrUnrecognizedEncodedVersion} meta.k8s.io/v2`,
    });
    expect(decodeContinue(token('{"v":"meta.k8s.io/v1","rv":0,"start":"a"}'), prefix)).toEqual({
      error: ErrInvalidStartRV,
    });
    expect(decodeContinue(token('{"v":"meta.k8s.io/v1","rv":17}'), prefix)).toEqual({
      error: ErrEmptyStartKey,
    });
    expect(decodeContinue(token('{"v":"meta.k8s.io/v1","rv":17,"start":""}'), prefix)).toEqual({
      error: ErrEmptyStartKey,
    });
  });

  it("checks the version first, then rv, then start — as upstream does", () => {
    expect(decodeContinue(token('{"v":"meta.k8s.io/v2"}'), prefix)).toEqual({
      error: `${ErrUnrecognizedEncodedVersion} meta.k8s.io/v2`,
    });
    expect(decodeContinue(token("{}"), prefix)).toEqual({ error: `${ErrUnrecognizedEncodedVersion} ` });
    expect(decodeContinue(token('{"v":"meta.k8s.io/v1"}'), prefix)).toEqual({ error: ErrInvalidStartRV });
    expect(decodeContinue(token('{"v":"meta.k8s.io/v1","rv":0,"start":""}'), prefix)).toEqual({
      error: ErrInvalidStartRV,
    });
  });

  it("refuses what is not base64url, or not JSON", () => {
    // A good token in the standard alphabet ("+" for "-"), or with "=" padding: Go's RawURLEncoding
    // refuses both, though Buffer would read them.
    const good = "eyJ2IjoibWV0YS5rOHMuaW8vdjEiLCJydiI6MTcsInN0YXJ0IjoiZGVtby9-Y2FjaGVcdTAwMDAifQ";
    expect(decodeContinue(good, prefix)).toEqual({ key: "/registry/pods/demo/~cache\x00", rv: 17 });
    const standard = good.replace("-", "+");
    const padded = `${good}==`;
    for (const bad of ["%%%", "not a token!", token("{not json"), standard, padded]) {
      const r = decodeContinue(bad, prefix);
      expect(r, bad).toHaveProperty("error");
      expect((r as { error: string }).error.startsWith("continue key is not valid: "), bad).toBe(true);
    }
  });

  it("refuses a start key that a path clean would change: `..`, `.`, `//`, a trailing `/`", () => {
    for (const start of [
      "../secrets/default/db",
      "default/../../secrets",
      "./default/web",
      "default//web",
      "default/",
    ]) {
      expect(
        decodeContinue(token(JSON.stringify({ v: "meta.k8s.io/v1", rv: 17, start })), prefix),
        start,
      ).toEqual({
        error: `continue key is not valid: ${start}`,
      });
    }
  });

  it("keeps every start key under the prefix it is decoded for — even one that names another resource", () => {
    const forged = token('{"v":"meta.k8s.io/v1","rv":17,"start":"/registry/secrets/default/db"}');
    expect(decodeContinue(forged, prefix)).toEqual({
      key: "/registry/pods/registry/secrets/default/db",
      rv: 17,
    });
  });
});

describe("listPage on a real etcd client", () => {
  const gr = { group: "", resource: "pods" };
  let server: EtcdServer;
  let client: InProcessEtcdClient;
  let store: Etcd3Store;

  const pod = (ns: string, name: string): KubeObject => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns },
    spec: { containers: [{ name: "c", image: "nginx" }] },
  });
  const names = (l: ListResult) => l.items.map((o) => `${o.metadata.namespace}/${o.metadata.name}`);
  const create = (ns: string, name: string) => store.create(`${prefix}${ns}/${name}`, pod(ns, name));

  beforeEach(async () => {
    server = new EtcdServer();
    client = new InProcessEtcdClient(server);
    store = new Etcd3Store({ client: new InProcessEtcdClient(server), groupResource: gr });
    for (const [ns, name] of [
      ["default", "api"],
      ["default", "cache"],
      ["default", "db"],
      ["demo", "web-1"],
      ["demo", "web-2"],
      ["kube-system", "coredns"],
      ["kube-system", "etcd"],
    ]) {
      await create(ns, name);
    }
    // Not pods: a list of pods must never show these.
    await store.create("/registry/secrets/default/token", { ...pod("default", "token"), kind: "Secret" });
    await store.create("/registry/configmaps/default/cfg", { ...pod("default", "cfg"), kind: "ConfigMap" });
  });

  afterEach(async () => {
    await store.close();
    await server.close();
  });

  async function rejection(p: Promise<unknown>): Promise<StatusError> {
    const e = await p.then(
      () => undefined,
      (err: unknown) => err,
    );
    if (!isStatusError(e))
      throw new Error(`expected a Status error, got ${e === undefined ? "success" : String(e)}`);
    return e;
  }

  it("pages through every object once, in key order; the last page has no token", async () => {
    const p1 = await listPage(client, prefix, { limit: 3 });
    expect(names(p1)).toEqual(["default/api", "default/cache", "default/db"]);
    expect(p1.continue).toBeTruthy();
    expect(decodeContinue(p1.continue!, prefix)).toEqual({
      key: "/registry/pods/default/db\x00",
      rv: Number(p1.resourceVersion),
    });
    const p2 = await listPage(client, prefix, { limit: 3, continue: p1.continue });
    expect(names(p2)).toEqual(["demo/web-1", "demo/web-2", "kube-system/coredns"]);
    const p3 = await listPage(client, prefix, { limit: 3, continue: p2.continue });
    expect(names(p3)).toEqual(["kube-system/etcd"]);
    expect(p3.continue).toBeUndefined();
    for (const p of [p1, p2, p3]) {
      for (const o of p.items) expect(Number(o.metadata.resourceVersion)).toBeGreaterThan(0);
    }
    // Each object is at the revision of its own last write, not at the list's revision.
    for (const o of [...p1.items, ...p2.items, ...p3.items]) {
      const stored = await store.get(`${prefix}${o.metadata.namespace}/${o.metadata.name}`);
      expect(o.metadata.resourceVersion, o.metadata.name).toBe(stored?.metadata.resourceVersion);
      expect(o.metadata.resourceVersion, o.metadata.name).not.toBe(p1.resourceVersion);
    }
  });

  it("a last page that is exactly full has no token: etcd says whether more follows, not the page's size", async () => {
    const all = await listPage(client, prefix, { limit: 7 });
    expect(all.items).toHaveLength(7);
    expect(all.continue).toBeUndefined();
    const real = await store.getList(prefix, { predicate: everything, recursive: true, limit: 7 });
    expect(real.continue).toBeUndefined();
    const first = await listPage(client, prefix, { limit: 6 });
    const last = await listPage(client, prefix, { limit: 1, continue: first.continue });
    expect(names(last)).toEqual(["kube-system/etcd"]);
    expect(last.continue).toBeUndefined();
  });

  it("every page is read at the first page's revision: writes between pages are not seen", async () => {
    const p1 = await listPage(client, prefix, { limit: 3 });
    await create("kube-system", "scheduler"); // sorts last: would be on page 3
    await store.delete(`${prefix}demo/web-2`); // on page 2: still there at the first page's revision
    await create("default", "late"); // sorts before the token's key: never on a later page anyway
    const p2 = await listPage(client, prefix, { limit: 3, continue: p1.continue });
    const p3 = await listPage(client, prefix, { limit: 3, continue: p2.continue });
    expect([...names(p1), ...names(p2), ...names(p3)]).toEqual([
      "default/api",
      "default/cache",
      "default/db",
      "demo/web-1",
      "demo/web-2",
      "kube-system/coredns",
      "kube-system/etcd",
    ]);
    expect(p2.resourceVersion).toBe(p1.resourceVersion);
    expect(p3.resourceVersion).toBe(p1.resourceVersion);
    expect(decodeContinue(p2.continue!, prefix)).toMatchObject({ rv: Number(p1.resourceVersion) });
  });

  it("a page of one, repeatedly, still lists each object exactly once", async () => {
    const seen: string[] = [];
    let cont: string | undefined;
    for (let i = 0; i < 20; i++) {
      const p = await listPage(client, prefix, { limit: 1, continue: cont });
      seen.push(...names(p));
      cont = p.continue;
      if (!cont) break;
    }
    expect(seen).toEqual([
      "default/api",
      "default/cache",
      "default/db",
      "demo/web-1",
      "demo/web-2",
      "kube-system/coredns",
      "kube-system/etcd",
    ]);
  });

  it("its tokens and the real API server storage's are the same: each continues the other's list", async () => {
    const real = await store.getList(prefix, { predicate: everything, recursive: true, limit: 2 });
    const yours = await listPage(client, prefix, { limit: 2 });
    expect(yours.continue).toBe(real.continue);
    const next = await listPage(client, prefix, { limit: 3, continue: real.continue });
    expect(names(next)).toEqual(["default/db", "demo/web-1", "demo/web-2"]);
    const realNext = await store.getList(prefix, {
      predicate: everything,
      recursive: true,
      limit: 3,
      continue: next.continue,
    });
    expect(names(realNext)).toEqual(["kube-system/coredns", "kube-system/etcd"]);
  });

  it("a token that does not decode is 400 BadRequest `invalid continue token: …`", async () => {
    const err = await rejection(
      listPage(client, prefix, {
        limit: 3,
        continue: token('{"v":"meta.k8s.io/v1","rv":5,"start":"../secrets/"}'),
      }),
    );
    expect(err.status).toMatchObject({
      code: 400,
      reason: "BadRequest",
      message: "invalid continue token: continue key is not valid: ../secrets/",
    });
    const zero = await rejection(
      listPage(client, prefix, { limit: 3, continue: token('{"v":"meta.k8s.io/v1","rv":0,"start":"a"}') }),
    );
    expect(zero.status.message).toBe(`invalid continue token: ${ErrInvalidStartRV}`);
  });

  it("a forged token never reads outside the resource", async () => {
    const rv = Number(await store.currentResourceVersion());
    for (const start of ["/registry/configmaps", "/registry/a", "/registry/configmaps/default/cfg", "\x00"]) {
      const forged = token(JSON.stringify({ v: "meta.k8s.io/v1", rv, start }));
      const page = await listPage(client, prefix, { limit: 100, continue: forged }).catch((e: unknown) => {
        if (isStatusError(e) && e.status.code === 400) return undefined; // refusing is fine too
        throw e;
      });
      for (const o of page?.items ?? []) expect(o.kind, `start ${JSON.stringify(start)}`).toBe("Pod");
      expect(
        names(page ?? { items: [], resourceVersion: "" }),
        `start ${JSON.stringify(start)}`,
      ).not.toContain("default/token");
    }
  });

  it("a token whose revision was compacted is 410 Gone, reason Expired, with a fresh token that goes on at the newest revision", async () => {
    const p1 = await listPage(client, prefix, { limit: 3 });
    await create("kube-system", "scheduler");
    await client.compact(Number(await store.currentResourceVersion()));
    const err = await rejection(listPage(client, prefix, { limit: 3, continue: p1.continue }));
    expect(err.status).toMatchObject({ code: 410, reason: "Expired", message: inconsistentContinue });
    const fresh = err.status.metadata?.continue as string;
    expect(fresh).toBeTruthy();
    expect(decodeContinue(fresh, prefix)).toEqual({ key: "/registry/pods/default/db\x00", rv: -1 });
    // The client may accept an inconsistent list: the rest, as it is now.
    const rest = await listPage(client, prefix, { limit: 10, continue: fresh });
    expect(names(rest)).toEqual([
      "demo/web-1",
      "demo/web-2",
      "kube-system/coredns",
      "kube-system/etcd",
      "kube-system/scheduler",
    ]);
    expect(rest.resourceVersion).toBe(await store.currentResourceVersion());
  });
});

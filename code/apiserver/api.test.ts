import { readFile } from "node:fs/promises";
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

// The whole suite runs on each storage backend (bottom of the file): the embedded store, our
// chapter-1 etcd over gRPC, and a real etcd. `backend` and `server` belong to the suite running.
let backend: Backend;
let server: APIServer;
const logs: string[] = [];

/** An API server on the running suite's backend. */
function startServer(opts: APIServerOptions = {}): Promise<APIServer> {
  return startAPIServer({ insecurePort: 0, ...opts, etcdServers: backend.etcdServers });
}

/** A response body: whatever JSON the server sent, read freely by the assertions. */
// biome-ignore lint/suspicious/noExplicitAny: the tests read arbitrary JSON answers
type Json = any;

interface Answer {
  code: number;
  body: Json;
  headers: Headers;
}

async function call(
  method: string,
  path: string,
  body?: unknown,
  headers: Record<string, string> = {},
): Promise<Answer> {
  const init: RequestInit = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.body =
      typeof body === "string" || body instanceof Uint8Array ? (body as string) : JSON.stringify(body);
    (init.headers as Record<string, string>)["Content-Type"] ??= "application/json";
  }
  const res = await fetch(`${server.url}${path}`, init);
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = JSON.parse(text);
  } catch {}
  return { code: res.status, body: parsed, headers: res.headers };
}

const pods = "/api/v1/namespaces/default/pods";
const cms = "/api/v1/namespaces/default/configmaps";
const deployments = "/apis/apps/v1/namespaces/default/deployments";

function pod(name: string, extra: Partial<KubeObject> = {}): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, ...(extra.metadata ?? {}) },
    spec: { containers: [{ name: "c", image: "nginx" }] },
  };
}

function configMap(name: string, labels: Record<string, string> = {}, finalizers?: string[]): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, labels, finalizers }, data: { k: "v" } };
}

function deployment(name: string, replicas = 1): KubeObject {
  return {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      },
    },
  };
}

function apiSuite(startBackend: () => Promise<Backend>): void {
  beforeAll(async () => {
    backend = await startBackend();
    logs.length = 0;
    server = await startServer({ log: (l) => logs.push(l) });
  }, 20_000);
  afterAll(async () => {
    await server?.close();
    await backend?.close();
  });

  describe("create", () => {
    it("stores the object with server-set metadata and defaults, 201", async () => {
      const r = await call("POST", pods, pod("create-1"));
      expect(r.code).toBe(201);
      expect(r.body.metadata).toMatchObject({ name: "create-1", namespace: "default" });
      expect(r.body.metadata.uid).toMatch(/^[0-9a-f-]{36}$/);
      expect(r.body.metadata.creationTimestamp).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
      expect(Number(r.body.metadata.resourceVersion)).toBeGreaterThan(0);
      expect(r.body.spec.restartPolicy).toBe("Always"); // defaulted during decode
      expect(r.body.status.phase).toBe("Pending");
    });

    it("names from generateName with 5 characters of upstream's alphabet", async () => {
      const r = await call("POST", cms, {
        kind: "ConfigMap",
        apiVersion: "v1",
        metadata: { generateName: "gen-" },
      });
      expect(r.code).toBe(201);
      expect(r.body.metadata.name).toMatch(/^gen-[bcdfghjklmnpqrstvwxz2456789]{5}$/);
    });

    it("refuses a duplicate, a namespace mismatch, a missing name, a resourceVersion", async () => {
      await call("POST", cms, configMap("dup"));
      const dup = await call("POST", cms, configMap("dup"));
      expect(dup.code).toBe(409);
      expect(dup.body).toMatchObject({
        kind: "Status",
        reason: "AlreadyExists",
        message: 'configmaps "dup" already exists',
      });
      const ns = await call("POST", cms, { ...configMap("x"), metadata: { name: "x", namespace: "other" } });
      expect(ns.code).toBe(400);
      expect(ns.body.message).toBe(
        "the namespace of the provided object does not match the namespace sent on the request",
      );
      const noName = await call("POST", cms, { kind: "ConfigMap", apiVersion: "v1", metadata: {} });
      expect(noName.code).toBe(422);
      expect(noName.body.message).toContain(
        "metadata.name: Required value: name or generateName is required",
      );
      const rv = await call("POST", cms, {
        ...configMap("rv"),
        metadata: { name: "rv", resourceVersion: "5" },
      });
      // Upstream answers this 500 (a plain error from its etcd3 store); a client's mistake is a 400 here.
      expect(rv.code).toBe(400);
      expect(rv.body.message).toBe("resourceVersion should not be set on objects to be created");
    });

    it("reads YAML bodies; refuses unknown formats (415), wrong apiVersion (400), bad JSON (400)", async () => {
      const yaml = "apiVersion: v1\nkind: ConfigMap\nmetadata:\n  name: from-yaml\ndata:\n  a: b\n";
      const r = await call("POST", cms, yaml, { "Content-Type": "application/yaml" });
      expect(r.code).toBe(201);
      expect(r.body.data).toEqual({ a: "b" });
      const bad = await call("POST", cms, "hello", { "Content-Type": "text/plain" });
      expect(bad.code).toBe(415);
      expect(bad.body.reason).toBe("UnsupportedMediaType");
      const wrongVersion = await call("POST", cms, { ...configMap("w"), apiVersion: "v2" });
      expect(wrongVersion.code).toBe(400);
      expect(wrongVersion.body.message).toBe(
        "the API version in the data (v2) does not match the expected API version (v1)",
      );
      const badJSON = await call("POST", cms, "{not json", { "Content-Type": "application/json" });
      expect(badJSON.code).toBe(400);
    });

    it("reads protobuf bodies (kubectl create sends them)", async () => {
      const body = await readFile(new URL("./protobuf/testdata/configmap.pb", import.meta.url));
      const r = await call("POST", cms, new Uint8Array(body), {
        "Content-Type": "application/vnd.kubernetes.protobuf",
      });
      expect(r.code).toBe(201);
      expect(r.body).toMatchObject({
        kind: "ConfigMap",
        metadata: { name: "cm1" },
        data: { a: "b", c: "d" },
      });
    });

    it("refuses unknown fields with fieldValidation=Strict, warns by default", async () => {
      const body = { ...configMap("strict"), datta: { a: "b" } };
      const strict = await call("POST", `${cms}?fieldValidation=Strict`, body);
      expect(strict.code).toBe(400);
      // Upstream's create handler wraps the decoder's error (transformDecodeError).
      expect(strict.body.message).toBe(
        'ConfigMap in version "v1" cannot be handled as a ConfigMap: strict decoding error: unknown field "datta"',
      );
      const warn = await call("POST", cms, body);
      expect(warn.code).toBe(201);
      expect(warn.headers.get("warning")).toContain('unknown field \\"datta\\"');
      expect(warn.body.datta).toBeUndefined();
      const deep = await call("POST", `${pods}?fieldValidation=Strict`, {
        ...pod("deep"),
        spec: { containers: [{ name: "c", image: "nginx", imagePulPolicy: "Always" }] },
        metadata: { name: "deep", lables: { a: "b" } },
      });
      expect(deep.code).toBe(400);
      expect(deep.body.message).toBe(
        'Pod in version "v1" cannot be handled as a Pod: strict decoding error: unknown field "metadata.lables", unknown field "spec.containers[0].imagePulPolicy"',
      );
    });

    it("answers 413 for a body over 3 MiB", async () => {
      const big = { ...configMap("big"), data: { k: "x".repeat(3 * 1024 * 1024 + 10) } };
      const r = await call("POST", cms, big);
      expect(r.code).toBe(413);
      expect(r.body).toMatchObject({ kind: "Status", reason: "RequestEntityTooLarge", code: 413 });
    });
  });

  describe("dry run", () => {
    it("dryRun=All checks and answers as a write would, and writes nothing", async () => {
      const created = await call("POST", `${cms}?dryRun=All`, configMap("dry"));
      expect(created.code).toBe(201);
      expect(created.body.metadata.uid).toBeTruthy();
      expect((await call("GET", `${cms}/dry`)).code).toBe(404);
      await call("POST", cms, configMap("dry"));
      expect((await call("POST", `${cms}?dryRun=All`, configMap("dry"))).code).toBe(409);
      const patched = await call(
        "PATCH",
        `${cms}/dry?dryRun=All`,
        { data: { k: "changed" } },
        {
          "Content-Type": "application/merge-patch+json",
        },
      );
      expect(patched.body.data.k).toBe("changed");
      expect((await call("GET", `${cms}/dry`)).body.data.k).toBe("v");
      expect((await call("DELETE", `${cms}/dry?dryRun=All`)).code).toBe(200);
      expect((await call("GET", `${cms}/dry`)).code).toBe(200);
      const bad = await call("POST", `${cms}?dryRun=Some`, configMap("dry2"));
      expect(bad.code).toBe(422);
    });

    it("a dry run takes the real write's path: a graceful delete answers the marked pod, a PUT may create, nothing is stored", async () => {
      await call("POST", pods, pod("dry-grace"));
      await call("POST", `${pods}/dry-grace/binding`, {
        apiVersion: "v1",
        kind: "Binding",
        metadata: { name: "dry-grace" },
        target: { name: "n1" },
      });
      const marked = await call("DELETE", `${pods}/dry-grace?dryRun=All`);
      expect(marked.code).toBe(200);
      expect(marked.body.metadata.deletionGracePeriodSeconds).toBe(30);
      expect(marked.body.metadata.deletionTimestamp).toBeTruthy();
      const stored = (await call("GET", `${pods}/dry-grace`)).body;
      expect(stored.metadata.deletionTimestamp).toBeUndefined();

      const leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
      const lease = { apiVersion: "coordination.k8s.io/v1", kind: "Lease", metadata: { name: "dry-lease" } };
      const created = await call("PUT", `${leases}/dry-lease?dryRun=All`, lease);
      expect(created.code).toBe(201);
      expect(created.body.metadata.uid).toBeTruthy();
      expect((await call("GET", `${leases}/dry-lease`)).code).toBe(404);
    });
  });

  describe("routing", () => {
    it("404 for unknown paths and resources, 405 for methods a route does not take", async () => {
      for (const path of [
        "/nope",
        "/api/v1/namespaces/default/widgets",
        "/apis/apps/v1/pods",
        "/api/v1/pods/x",
      ]) {
        const r = await call("GET", path);
        expect(r.code, path).toBe(404);
        expect(r.body).toMatchObject({ kind: "Status", status: "Failure", code: 404 });
      }
      const r = await call("POST", "/api/v1/pods", pod("nowhere"));
      expect(r.code).toBe(405);
      expect(r.body.reason).toBe("MethodNotAllowed");
    });

    it("answers a malformed path with a 400, and keeps serving", async () => {
      const r = await call("GET", "/api/v1/namespaces/%zz/pods");
      expect(r.code).toBe(400);
      expect((await call("GET", "/healthz")).code).toBe(200);
    });

    it("serves discovery and health", async () => {
      expect((await call("GET", "/version")).body.minor).toBe("32");
      expect((await call("GET", "/healthz")).body).toBe("ok");
      const api = await call("GET", "/api/v1");
      expect(api.body.resources.map((r: { name: string }) => r.name)).toContain("pods/binding");
    });

    it("logs one line per request with verb, URI, latency and code", async () => {
      await call("GET", `${pods}/no-such-pod`);
      await new Promise((r) => setTimeout(r, 10));
      expect(logs.find((l) => l.includes("/pods/no-such-pod"))).toMatch(
        /^"HTTP" verb="GET" URI="\/api\/v1\/namespaces\/default\/pods\/no-such-pod" latency="[^"]+" userAgent="[^"]*" audit-ID="[0-9a-f-]{36}" srcIP="127\.0\.0\.1:\d+" resp=404$/,
      );
    });
  });

  describe("get and list", () => {
    it("gets one object; a missing one is upstream's 404", async () => {
      await call("POST", cms, configMap("g1"));
      expect((await call("GET", `${cms}/g1`)).body.metadata.name).toBe("g1");
      const missing = await call("GET", `${cms}/nope`);
      expect(missing.code).toBe(404);
      expect(missing.body).toMatchObject({
        reason: "NotFound",
        message: 'configmaps "nope" not found',
        details: { name: "nope", kind: "configmaps" },
      });
    });

    it("lists as <Kind>List with typed items; filters by label and field selectors", async () => {
      await call("POST", "/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "lists" },
      });
      const base = "/api/v1/namespaces/lists/configmaps";
      await call("POST", base, configMap("a", { tier: "web" }));
      await call("POST", base, configMap("b", { tier: "db" }));
      await call("POST", base, configMap("c", { tier: "web" }));
      const all = await call("GET", base);
      expect(all.body).toMatchObject({ kind: "ConfigMapList", apiVersion: "v1" });
      expect(all.body.items.map((i: KubeObject) => i.metadata.name)).toEqual(["a", "b", "c"]);
      expect(all.body.items[0]).toMatchObject({ kind: "ConfigMap", apiVersion: "v1" });
      expect(Number(all.body.metadata.resourceVersion)).toBeGreaterThan(0);
      const web = await call("GET", `${base}?labelSelector=${encodeURIComponent("tier=web")}`);
      expect(web.body.items.map((i: KubeObject) => i.metadata.name)).toEqual(["a", "c"]);
      const byName = await call("GET", `${base}?fieldSelector=metadata.name%3Db`);
      expect(byName.body.items.map((i: KubeObject) => i.metadata.name)).toEqual(["b"]);
      const badField = await call("GET", `${base}?fieldSelector=spec.nodeName%3Dn1`);
      expect(badField.code).toBe(400);
      expect(badField.body.message).toBe("field label not supported: spec.nodeName");
      const badLabel = await call("GET", `${base}?labelSelector=${encodeURIComponent("a in (")}`);
      expect(badLabel.code).toBe(400);
    });

    it("pages with limit and continue", async () => {
      const base = "/api/v1/namespaces/lists/configmaps";
      const first = await call("GET", `${base}?limit=2`);
      expect(first.body.items).toHaveLength(2);
      expect(first.body.metadata.continue).toBeTruthy();
      expect(first.body.metadata.remainingItemCount).toBe(1);
      const second = await call(
        "GET",
        `${base}?limit=2&continue=${encodeURIComponent(first.body.metadata.continue)}`,
      );
      expect(second.body.items.map((i: KubeObject) => i.metadata.name)).toEqual(["c"]);
      expect(second.body.metadata.continue).toBeUndefined();
    });

    it("lists pods across namespaces and by spec.nodeName", async () => {
      await call("POST", "/api/v1/namespaces/lists/pods", pod("on-node"));
      await call("POST", "/api/v1/namespaces/lists/pods/on-node/binding", {
        apiVersion: "v1",
        kind: "Binding",
        metadata: { name: "on-node" },
        target: { kind: "Node", name: "n7" },
      });
      const r = await call("GET", "/api/v1/pods?fieldSelector=spec.nodeName%3Dn7");
      expect(r.body.items.map((i: KubeObject) => `${i.metadata.namespace}/${i.metadata.name}`)).toEqual([
        "lists/on-node",
      ]);
    });

    it("answers a Table when asked, with the object as includeObject says", async () => {
      const accept = "application/json;as=Table;v=v1;g=meta.k8s.io,application/json";
      const t = await call("GET", "/api/v1/namespaces/lists/configmaps", undefined, { Accept: accept });
      expect(t.body).toMatchObject({ kind: "Table", apiVersion: "meta.k8s.io/v1" });
      expect(t.body.columnDefinitions.map((c: { name: string }) => c.name)).toEqual(["Name", "Data", "Age"]);
      expect(t.body.rows[0].cells[0]).toBe("a");
      expect(t.body.rows[0].object.kind).toBe("PartialObjectMetadata");
      const full = await call(
        "GET",
        "/api/v1/namespaces/lists/configmaps/a?includeObject=Object",
        undefined,
        {
          Accept: accept,
        },
      );
      expect(full.body.rows).toHaveLength(1);
      expect(full.body.rows[0].object.kind).toBe("ConfigMap");
    });
  });

  describe("update", () => {
    it("replaces with a current resourceVersion; a stale one is 409 Conflict", async () => {
      const created = (await call("POST", cms, configMap("u1"))).body;
      const next = { ...created, data: { k: "v2" } };
      const ok = await call("PUT", `${cms}/u1`, next);
      expect(ok.code).toBe(200);
      expect(ok.body.data.k).toBe("v2");
      expect(Number(ok.body.metadata.resourceVersion)).toBeGreaterThan(
        Number(created.metadata.resourceVersion),
      );
      const stale = await call("PUT", `${cms}/u1`, { ...created, data: { k: "v3" } });
      expect(stale.code).toBe(409);
      expect(stale.body.message).toBe(
        'Operation cannot be fulfilled on configmaps "u1": the object has been modified; please apply your changes to the latest version and try again',
      );
    });

    it("writes nothing for an update that changes nothing", async () => {
      const created = (await call("POST", cms, configMap("noop"))).body;
      const same = await call("PUT", `${cms}/noop`, created);
      expect(same.code).toBe(200);
      expect(same.body.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    });

    it("refuses a name that differs from the URL; 404 for a missing object", async () => {
      const r = await call("PUT", `${cms}/other`, configMap("u-name"));
      expect(r.code).toBe(400);
      expect(r.body.message).toBe(
        "the name of the object (u-name) does not match the name on the URL (other)",
      );
      const missing = await call("PUT", `${cms}/ghost`, configMap("ghost"));
      expect(missing.code).toBe(404);
    });

    it("creates on PUT where the strategy allows it (leases: 201), and leases need a resourceVersion", async () => {
      const leases = "/apis/coordination.k8s.io/v1/namespaces/default/leases";
      const lease = {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: "l1" },
        spec: { holderIdentity: "a" },
      };
      const created = await call("PUT", `${leases}/l1`, lease);
      expect(created.code).toBe(201);
      const unconditional = await call("PUT", `${leases}/l1`, { ...lease, spec: { holderIdentity: "b" } });
      expect(unconditional.code).toBe(422);
      expect(unconditional.body.message).toContain(
        "metadata.resourceVersion: Invalid value: 0x0: must be specified for an update",
      );
    });

    it("keeps status on the main resource and spec on /status", async () => {
      const created = (await call("POST", pods, pod("st"))).body;
      const withStatus = { ...created, status: { phase: "Running" } };
      const main = await call("PUT", `${pods}/st`, withStatus);
      expect(main.body.status.phase).toBe("Pending");
      const viaStatus = await call("PUT", `${pods}/st/status`, {
        ...main.body,
        spec: { ...main.body.spec, activeDeadlineSeconds: 5 },
        status: { phase: "Running" },
      });
      expect(viaStatus.code).toBe(200);
      expect(viaStatus.body.status.phase).toBe("Running");
      expect(viaStatus.body.spec.activeDeadlineSeconds).toBeUndefined();
    });
  });

  describe("patch", () => {
    it("applies merge, JSON and strategic merge patches; 415 for other types", async () => {
      await call("POST", deployments, deployment("p1"));
      const merge = await call(
        "PATCH",
        `${deployments}/p1`,
        { spec: { replicas: 3 } },
        {
          "Content-Type": "application/merge-patch+json",
        },
      );
      expect(merge.body.spec.replicas).toBe(3);
      const json = await call(
        "PATCH",
        `${deployments}/p1`,
        [{ op: "replace", path: "/spec/replicas", value: 4 }],
        {
          "Content-Type": "application/json-patch+json",
        },
      );
      expect(json.body.spec.replicas).toBe(4);
      const smp = await call(
        "PATCH",
        `${deployments}/p1`,
        { spec: { template: { spec: { containers: [{ name: "side", image: "busybox" }] } } } },
        { "Content-Type": "application/strategic-merge-patch+json" },
      );
      expect(smp.body.spec.template.spec.containers.map((c: { name: string }) => c.name).sort()).toEqual([
        "c",
        "side",
      ]);
      expect(smp.body.metadata.generation).toBe(4); // created 1, then one per spec change
      const other = await call("PATCH", `${deployments}/p1`, {}, { "Content-Type": "application/json" });
      expect(other.code).toBe(415);
      const apply = await call("PATCH", `${deployments}/p1`, "{}", {
        "Content-Type": "application/apply-patch+yaml",
      });
      expect(apply.code).toBe(422);
      expect(apply.body.message).toContain("fieldManager: Required value: is required for apply patch");
    });

    it("server-side apply: creates, records the manager, refuses another manager's field unless forced", async () => {
      const yaml = (replicas: number) =>
        `apiVersion: apps/v1\nkind: Deployment\nmetadata:\n  name: ssa\nspec:\n  replicas: ${replicas}\n  selector:\n    matchLabels: {app: ssa}\n  template:\n    metadata:\n      labels: {app: ssa}\n    spec:\n      containers:\n      - name: c\n        image: nginx\n`;
      const applyAs = (manager: string, replicas: number, force = false) =>
        call(
          "PATCH",
          `${deployments}/ssa?fieldManager=${manager}${force ? "&force=true" : ""}`,
          yaml(replicas),
          {
            "Content-Type": "application/apply-patch+yaml",
          },
        );
      const created = await applyAs("alice", 2);
      expect(created.code).toBe(201);
      expect(created.body.metadata.managedFields[0]).toMatchObject({ manager: "alice", operation: "Apply" });
      expect((await applyAs("alice", 3)).body.spec.replicas).toBe(3);
      const conflict = await applyAs("bob", 4);
      expect(conflict.code).toBe(409);
      expect(conflict.body.message).toContain('conflict with "alice"');
      const forced = await applyAs("bob", 4, true);
      expect(forced.code).toBe(200);
      expect(forced.body.spec.replicas).toBe(4);
    });

    it("records an Update entry for the writer of a create or patch, and none for a no-op", async () => {
      const created = await call("POST", `${cms}?fieldManager=maker`, configMap("mf"));
      expect(created.body.metadata.managedFields).toEqual([
        expect.objectContaining({ manager: "maker", operation: "Update", fieldsType: "FieldsV1" }),
      ]);
      const patched = await call(
        "PATCH",
        `${cms}/mf?fieldManager=patcher`,
        { data: { k: "v2" } },
        {
          "Content-Type": "application/merge-patch+json",
        },
      );
      expect(patched.body.metadata.managedFields.map((m: { manager: string }) => m.manager)).toEqual([
        "maker",
        "patcher",
      ]);
      const again = await call(
        "PATCH",
        `${cms}/mf?fieldManager=patcher`,
        { data: { k: "v2" } },
        {
          "Content-Type": "application/merge-patch+json",
        },
      );
      expect(again.body.metadata.resourceVersion).toBe(patched.body.metadata.resourceVersion);
    });

    it("patches /status without touching the spec, and 404s a missing object", async () => {
      const r = await call(
        "PATCH",
        `${deployments}/p1/status`,
        { status: { replicas: 9 }, spec: { replicas: 1 } },
        {
          "Content-Type": "application/merge-patch+json",
        },
      );
      expect(r.code).toBe(200);
      expect(r.body.status.replicas).toBe(9);
      expect(r.body.spec.replicas).toBe(4);
      const missing = await call(
        "PATCH",
        `${deployments}/ghost`,
        {},
        { "Content-Type": "application/merge-patch+json" },
      );
      expect(missing.code).toBe(404);
    });
  });

  describe("subresources", () => {
    it("scale: get, update and patch through autoscaling/v1 Scale", async () => {
      await call("POST", deployments, deployment("sc", 2));
      const s = await call("GET", `${deployments}/sc/scale`);
      expect(s.body).toMatchObject({ kind: "Scale", apiVersion: "autoscaling/v1", spec: { replicas: 2 } });
      expect(s.body.status.selector).toBe("app=sc");
      const put = await call("PUT", `${deployments}/sc/scale`, { ...s.body, spec: { replicas: 5 } });
      expect(put.body.spec.replicas).toBe(5);
      const stale = await call("PUT", `${deployments}/sc/scale`, { ...s.body, spec: { replicas: 6 } });
      expect(stale.code).toBe(409);
      const patched = await call(
        "PATCH",
        `${deployments}/sc/scale`,
        { spec: { replicas: 7 } },
        {
          "Content-Type": "application/merge-patch+json",
        },
      );
      expect(patched.body.spec.replicas).toBe(7);
      expect((await call("GET", `${deployments}/sc`)).body.spec.replicas).toBe(7);
      const negative = await call(
        "PATCH",
        `${deployments}/sc/scale`,
        { spec: { replicas: -1 } },
        {
          "Content-Type": "application/merge-patch+json",
        },
      );
      expect(negative.code).toBe(422);
    });

    it("binding sets spec.nodeName once; a second binding is 409", async () => {
      await call("POST", pods, pod("bind-me"));
      const binding = (node: string) => ({
        apiVersion: "v1",
        kind: "Binding",
        metadata: { name: "bind-me" },
        target: { name: node },
      });
      const first = await call("POST", `${pods}/bind-me/binding`, binding("n1"));
      expect(first.code).toBe(201);
      expect(first.body).toMatchObject({ kind: "Status", status: "Success" });
      const got = (await call("GET", `${pods}/bind-me`)).body;
      expect(got.spec.nodeName).toBe("n1");
      expect(got.status.conditions).toContainEqual(
        expect.objectContaining({ type: "PodScheduled", status: "True" }),
      );
      const second = await call("POST", `${pods}/bind-me/binding`, binding("n2"));
      expect(second.code).toBe(409);
      expect(second.body.message).toBe(
        'Operation cannot be fulfilled on pods/binding "bind-me": pod bind-me is already assigned to node "n1"',
      );
    });

    it("log goes to the kubelet of the pod's Node (chapter 7): none is a 404, no node yet a 204", async () => {
      const bound = await call("GET", `${pods}/bind-me/log`);
      expect(bound.code).toBe(404);
      expect(bound.body.message).toBe('nodes "n1" not found');
      const unbound = await fetch(`${server.url}${pods}/create-1/log`);
      expect(unbound.status).toBe(204);
      expect(await unbound.text()).toBe("");
    });

    it("selfsubjectaccessreviews say yes to everything (no authorization until chapter 3)", async () => {
      const r = await call("POST", "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews", {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        spec: { resourceAttributes: { verb: "create", resource: "pods" } },
      });
      expect(r.code).toBe(201);
      expect(r.body.status.allowed).toBe(true);
    });
  });

  describe("delete", () => {
    it("deletes at once: the object for pods, a Status for configmaps", async () => {
      await call("POST", pods, pod("d1"));
      const p = await call("DELETE", `${pods}/d1`);
      expect(p.code).toBe(200);
      expect(p.body).toMatchObject({ kind: "Pod", metadata: { name: "d1" } });
      expect((await call("GET", `${pods}/d1`)).code).toBe(404);
      await call("POST", cms, configMap("d2"));
      const c = await call("DELETE", `${cms}/d2`, {
        kind: "DeleteOptions",
        apiVersion: "v1",
        propagationPolicy: "Background",
      });
      expect(c.body).toMatchObject({
        kind: "Status",
        status: "Success",
        details: { name: "d2", kind: "configmaps" },
      });
      expect((await call("DELETE", `${cms}/d2`)).code).toBe(404);
    });

    it("a pod on a node is deleted gracefully; gracePeriodSeconds=0 finishes it", async () => {
      await call("POST", pods, pod("grace"));
      await call("POST", `${pods}/grace/binding`, {
        apiVersion: "v1",
        kind: "Binding",
        metadata: { name: "grace" },
        target: { name: "n1" },
      });
      const r = await call("DELETE", `${pods}/grace`);
      expect(r.code).toBe(200);
      expect(r.body.metadata.deletionTimestamp).toBeTruthy();
      expect(r.body.metadata.deletionGracePeriodSeconds).toBe(30);
      expect((await call("GET", `${pods}/grace`)).code).toBe(200);
      const again = await call("DELETE", `${pods}/grace`);
      expect(again.body.metadata.deletionGracePeriodSeconds).toBe(30);
      expect((await call("DELETE", `${pods}/grace?gracePeriodSeconds=0`)).code).toBe(200);
      expect((await call("GET", `${pods}/grace`)).code).toBe(404);
    });

    it("finalizers keep the object until an update removes the last one", async () => {
      await call("POST", cms, configMap("fin", {}, ["example.com/hold"]));
      const r = await call("DELETE", `${cms}/fin`);
      expect(r.code).toBe(200);
      const held = (await call("GET", `${cms}/fin`)).body;
      expect(held.metadata.deletionTimestamp).toBeTruthy();
      expect(held.metadata.deletionGracePeriodSeconds).toBe(0);
      const emptied = await call(
        "PATCH",
        `${cms}/fin`,
        { metadata: { finalizers: null } },
        {
          "Content-Type": "application/merge-patch+json",
        },
      );
      expect(emptied.code).toBe(200);
      expect((await call("GET", `${cms}/fin`)).code).toBe(404);
    });

    it("answers 202 Accepted when orphanDependents=false leaves the object waiting, 200 once it is gone", async () => {
      await call("POST", cms, configMap("accepted", {}, ["example.com/hold"]));
      const held = await call("DELETE", `${cms}/accepted`, {
        kind: "DeleteOptions",
        orphanDependents: false,
      });
      expect(held.code).toBe(202);
      await call("POST", cms, configMap("at-once"));
      const gone = await call("DELETE", `${cms}/at-once`, { kind: "DeleteOptions", orphanDependents: false });
      expect(gone.code).toBe(200);
    });

    it("checks preconditions and validates options", async () => {
      await call("POST", cms, configMap("pre"));
      const r = await call("DELETE", `${cms}/pre`, {
        kind: "DeleteOptions",
        apiVersion: "v1",
        preconditions: { uid: "nope" },
      });
      expect(r.code).toBe(409);
      expect(r.body.message).toContain("the UID in the precondition (nope) does not match the UID in record");
      const bad = await call("DELETE", `${cms}/pre?propagationPolicy=Sideways`);
      expect(bad.code).toBe(422);
    });

    it("deletecollection deletes what the selector matches", async () => {
      await call("POST", "/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "dc" },
      });
      const base = "/api/v1/namespaces/dc/configmaps";
      await call("POST", base, configMap("x1", { gone: "yes" }));
      await call("POST", base, configMap("x2", { gone: "yes" }));
      await call("POST", base, configMap("x3", { gone: "no" }));
      const r = await call("DELETE", `${base}?labelSelector=gone%3Dyes`);
      expect(r.code).toBe(200);
      expect(r.body.items.map((i: KubeObject) => i.metadata.name).sort()).toEqual(["x1", "x2"]);
      expect((await call("GET", base)).body.items.map((i: KubeObject) => i.metadata.name)).toEqual(["x3"]);
    });

    it("a namespace terminates, then goes once its finalizers are removed", async () => {
      await call("POST", "/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "bye" },
      });
      const r = await call("DELETE", "/api/v1/namespaces/bye");
      expect(r.body.status.phase).toBe("Terminating");
      const ns = (await call("GET", "/api/v1/namespaces/bye")).body;
      const fin = await call("PUT", "/api/v1/namespaces/bye/finalize", { ...ns, spec: { finalizers: [] } });
      expect(fin.code).toBe(200);
      await call("DELETE", "/api/v1/namespaces/bye");
      expect((await call("GET", "/api/v1/namespaces/bye")).code).toBe(404);
    });

    it("PUT .../finalize goes through the namespace finalize strategy: its validation, the stored status", async () => {
      const finalize = "/api/v1/namespaces/fin-strategy/finalize";
      await call("POST", "/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "fin-strategy" },
      });
      const ns = (await call("GET", "/api/v1/namespaces/fin-strategy")).body;

      // ValidateNamespaceFinalizeUpdate: every finalizer is a qualified name.
      const bad = await call("PUT", finalize, { ...ns, spec: { finalizers: ["kubernetes", "not a name"] } });
      expect(bad.code).toBe(422);
      expect(bad.body.reason).toBe("Invalid");
      expect(bad.body.message).toContain('spec.finalizers[1]: Invalid value: "not a name"');
      expect((await call("GET", "/api/v1/namespaces/fin-strategy")).body.spec.finalizers).toEqual([
        "kubernetes",
      ]);

      // PrepareForUpdate puts the stored status back and writes the rest of what was sent.
      const labels = { ...ns.metadata.labels, team: "a" };
      const ok = await call("PUT", finalize, {
        ...ns,
        metadata: { ...ns.metadata, labels },
        spec: { finalizers: ["example.com/wait"] },
        status: { phase: "Terminating" },
      });
      expect(ok.code).toBe(200);
      expect(ok.body.spec.finalizers).toEqual(["example.com/wait"]);
      expect(ok.body.status).toEqual({ phase: "Active" });
      expect(ok.body.metadata.labels).toEqual(labels);
    });
  });

  describe("watch", () => {
    /** Reads newline-delimited events from a streaming response until `n` arrived. */
    async function readEvents(res: Response, n: number): Promise<Json[]> {
      const reader = (res.body as ReadableStream<Uint8Array>).getReader();
      const decoder = new TextDecoder();
      let buf = "";
      const events: Json[] = [];
      while (events.length < n) {
        const { value, done } = await reader.read();
        if (done) break;
        buf += decoder.decode(value, { stream: true });
        let nl = buf.indexOf("\n");
        while (nl >= 0) {
          events.push(JSON.parse(buf.slice(0, nl)));
          buf = buf.slice(nl + 1);
          nl = buf.indexOf("\n");
        }
      }
      await reader.cancel();
      return events;
    }

    it("streams ADDED, MODIFIED, DELETED after the list's resourceVersion; headers come first", async () => {
      await call("POST", "/api/v1/namespaces", {
        apiVersion: "v1",
        kind: "Namespace",
        metadata: { name: "w" },
      });
      const base = "/api/v1/namespaces/w/configmaps";
      const list = await call("GET", base);
      const res = await fetch(
        `${server.url}${base}?watch=true&resourceVersion=${list.body.metadata.resourceVersion}`,
      );
      expect(res.status).toBe(200); // the headers arrived before any change
      expect(res.headers.get("content-type")).toBe("application/json");
      const created = (await call("POST", base, configMap("w1"))).body;
      await call("PUT", `${base}/w1`, { ...created, data: { k: "v2" } });
      await call("DELETE", `${base}/w1`);
      const events = await readEvents(res, 3);
      expect(events.map((e) => e.type)).toEqual(["ADDED", "MODIFIED", "DELETED"]);
      expect(events[0].object).toMatchObject({
        kind: "ConfigMap",
        apiVersion: "v1",
        metadata: { name: "w1" },
      });
      expect(events[1].object.data.k).toBe("v2");
    });

    it("sends a BOOKMARK before the deadline when asked (allowWatchBookmarks)", async () => {
      const res = await fetch(
        `${server.url}/api/v1/namespaces/w/configmaps?watch=true&allowWatchBookmarks=true&timeoutSeconds=3&resourceVersion=0`,
      );
      const events = (await res.text())
        .trim()
        .split("\n")
        .map((l) => JSON.parse(l));
      const bookmark = events.find((e) => e.type === "BOOKMARK");
      expect(bookmark?.object).toMatchObject({ kind: "ConfigMap", apiVersion: "v1" });
      expect(Number(bookmark?.object.metadata.resourceVersion)).toBeGreaterThan(0);
    });

    it("the legacy /watch/ path and Table events; timeoutSeconds ends the stream", async () => {
      const res = await fetch(`${server.url}/api/v1/watch/namespaces/w/configmaps?timeoutSeconds=1`, {
        headers: { Accept: "application/json;as=Table;v=v1;g=meta.k8s.io,application/json" },
      });
      await call("POST", "/api/v1/namespaces/w/configmaps", configMap("w2"));
      const events = await readEvents(res, 1);
      expect(events[0].type).toBe("ADDED");
      expect(events[0].object.kind).toBe("Table");
      expect(events[0].object.rows[0].cells[0]).toBe("w2");
      const started = Date.now();
      const again = await fetch(`${server.url}/api/v1/namespaces/w/configmaps?watch=1&timeoutSeconds=1`);
      await again.text(); // ends when the server closes the stream
      expect(Date.now() - started).toBeLessThan(5000);
    });
  });

  describe("watch from a compacted resourceVersion", () => {
    it("is an ERROR event carrying 410 Gone, reason Expired, not an HTTP error", async () => {
      // No watch cache, and etcd history compacted every 50 ms.
      const compacting = await startServer({ watchCache: false, compactionIntervalMs: 50 });
      try {
        for (let i = 0; i < 3; i++) {
          await fetch(`${compacting.url}/api/v1/namespaces/default/configmaps`, {
            method: "POST",
            headers: { "Content-Type": "application/json" },
            body: JSON.stringify(configMap(`c${i}`)),
          });
          await new Promise((r) => setTimeout(r, 120)); // two compactor rounds
        }
        const res = await fetch(
          `${compacting.url}/api/v1/namespaces/default/configmaps?watch=true&resourceVersion=2`,
        );
        expect(res.status).toBe(200);
        const text = await res.text(); // the server ends the stream after the error
        const event = JSON.parse(text.trim().split("\n")[0]);
        expect(event.type).toBe("ERROR");
        expect(event.object).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
      } finally {
        await compacting.close();
      }
    });
  });
}

describe("API on the embedded store", () => apiSuite(embeddedBackend));
describe("API over gRPC to our chapter-1 etcd", () => apiSuite(ourEtcdBackend));
describeWithTools("API over gRPC to a real etcd", ["etcd"], (tools) =>
  apiSuite(() => realEtcdBackend(tools.etcd.path as string)),
);

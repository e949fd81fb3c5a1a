import { createHash } from "node:crypto";
import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { serveDiscovery } from "./discovery.ts";
import { openAPIDocument, openAPIIndex } from "./openapi.ts";
import { resources } from "./resources.ts";

// biome-ignore lint/suspicious/noExplicitAny: the tests walk free-form OpenAPI JSON
type Obj = Record<string, any>;

function refsIn(node: unknown, out: string[] = []): string[] {
  if (Array.isArray(node)) for (const n of node) refsIn(n, out);
  else if (node && typeof node === "object") {
    for (const [k, v] of Object.entries(node)) {
      if (k === "$ref" && typeof v === "string") out.push(v);
      else refsIn(v, out);
    }
  }
  return out;
}

const gvs = [...new Set(resources.map((r) => `${r.group}|${r.version}`))].map(
  (s) => s.split("|") as [string, string],
);

describe("OpenAPI v3 documents", () => {
  it.each(gvs)("%s/%s: every $ref points at a schema of the same document", (group, version) => {
    const doc = openAPIDocument(group, version) as Obj;
    const schemas = doc.components.schemas as Obj;
    const missing = refsIn(doc)
      .map((r) => r.replace("#/components/schemas/", ""))
      .filter((name) => !schemas[name]);
    expect(missing).toEqual([]);
  });

  it("has, for every patchable kind, a PATCH with its GVK, fieldValidation in the query and strategic merge patch", () => {
    // What kubectl checks (cli-runtime supportsQueryParamV3, kubectl gvkSupportsPatchOpenAPIV3).
    for (const r of resources.filter((x) => x.verbs.includes("patch"))) {
      const doc = openAPIDocument(r.group, r.version) as Obj;
      const patches = Object.values(doc.paths as Obj)
        .map((p: Obj) => p.patch)
        .filter((op: Obj | undefined) => {
          const gvk = op?.["x-kubernetes-group-version-kind"];
          return gvk && gvk.group === r.group && gvk.version === r.version && gvk.kind === r.kind;
        });
      expect(patches.length, r.resource).toBeGreaterThan(0);
      for (const op of patches) {
        expect(
          op.parameters.some((p: Obj) => p.name === "fieldValidation" && p.in === "query"),
          r.resource,
        ).toBe(true);
        expect(Object.keys(op.requestBody.content)).toContain("application/strategic-merge-patch+json");
      }
    }
  });

  it("gives the access reviews a POST and nothing else", () => {
    const doc = openAPIDocument("authorization.k8s.io", "v1") as Obj;
    expect(doc.paths["/apis/authorization.k8s.io/v1/selfsubjectaccessreviews"]).toMatchObject({
      post: { operationId: "createAuthorizationV1SelfSubjectAccessReview", "x-kubernetes-action": "post" },
    });
    expect(Object.keys(doc.paths).sort()).toEqual([
      "/apis/authorization.k8s.io/v1/namespaces/{namespace}/localsubjectaccessreviews",
      "/apis/authorization.k8s.io/v1/selfsubjectaccessreviews",
      "/apis/authorization.k8s.io/v1/selfsubjectrulesreviews",
      "/apis/authorization.k8s.io/v1/subjectaccessreviews",
    ]);
    for (const path of Object.values(doc.paths) as Obj[]) {
      expect(path.post).toBeDefined();
      for (const verb of ["get", "put", "patch", "delete"]) expect(path[verb]).toBeUndefined();
    }
  });

  it("names operations and schemas as upstream", () => {
    const core = openAPIDocument("", "v1") as Obj;
    const item = core.paths["/api/v1/namespaces/{namespace}/pods/{name}"];
    expect(item.get.operationId).toBe("readCoreV1NamespacedPod");
    expect(item.patch.operationId).toBe("patchCoreV1NamespacedPod");
    expect(core.paths["/api/v1/pods"].get.operationId).toBe("listCoreV1PodForAllNamespaces");
    expect(core.paths["/api/v1/namespaces/{name}/status"].put.operationId).toBe(
      "replaceCoreV1NamespaceStatus",
    );
    expect(Object.keys(core.components.schemas)).toContain("io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta");
  });

  it("describes Pod with the patch extensions, required fields and Go shapes kubectl needs", () => {
    const s = (openAPIDocument("", "v1") as Obj).components.schemas as Obj;
    const pod = s["io.k8s.api.core.v1.Pod"];
    expect(pod["x-kubernetes-group-version-kind"]).toEqual([{ group: "", kind: "Pod", version: "v1" }]);
    expect(Object.keys(pod.properties)).toEqual(["apiVersion", "kind", "metadata", "spec", "status"]);
    expect(pod.properties.spec).toEqual({
      allOf: [{ $ref: "#/components/schemas/io.k8s.api.core.v1.PodSpec" }],
      default: {},
      description: "The desired behaviour of the pod.",
    });
    const spec = s["io.k8s.api.core.v1.PodSpec"];
    expect(spec.required).toEqual(["containers"]);
    expect(spec.properties.containers).toMatchObject({
      type: "array",
      items: { $ref: "#/components/schemas/io.k8s.api.core.v1.Container" },
      "x-kubernetes-patch-merge-key": "name",
      "x-kubernetes-patch-strategy": "merge",
    });
    expect(spec.properties.nodeSelector).toEqual({
      type: "object",
      additionalProperties: { type: "string" },
      description: "The pod only fits nodes whose labels include these.",
    });
    expect(spec.properties.terminationGracePeriodSeconds).toMatchObject({ type: "integer", format: "int64" });
    const container = s["io.k8s.api.core.v1.Container"];
    expect(container.required).toEqual(["name"]);
    expect(container.properties.ports["x-kubernetes-patch-merge-key"]).toBe("containerPort");
    // Embedded structs are flattened: a Probe has httpGet directly, as in JSON.
    expect(Object.keys(s["io.k8s.api.core.v1.Probe"].properties)).toContain("httpGet");
    // Upstream's v3 forms (kube-openapi: OpenAPIV3OneOfTypes).
    expect(s["io.k8s.apimachinery.pkg.util.intstr.IntOrString"]).toMatchObject({
      oneOf: [{ type: "integer" }, { type: "string" }],
      format: "int-or-string",
    });
    expect(s["io.k8s.apimachinery.pkg.api.resource.Quantity"]).toMatchObject({
      oneOf: [{ type: "string" }, { type: "number" }],
    });
    expect(
      s["io.k8s.apimachinery.pkg.apis.meta.v1.ObjectMeta"].properties.finalizers[
        "x-kubernetes-patch-strategy"
      ],
    ).toBe("merge");
    // Node and Endpoints have their messages too: typed schemas, not open objects.
    expect(s["io.k8s.api.core.v1.NodeSpec"].properties.taints).toMatchObject({ type: "array" });
    expect(s["io.k8s.api.core.v1.NodeStatus"].properties.conditions).toMatchObject({
      "x-kubernetes-patch-merge-key": "type",
    });
    expect(s["io.k8s.api.core.v1.EndpointAddress"].required).toEqual(["ip"]);
    expect(Object.values(s).some((x) => x["x-kubernetes-preserve-unknown-fields"])).toBe(false);
  });
});

describe("descriptions, for kubectl explain", () => {
  // Every schema and property of every served group version: what `kubectl explain` prints.
  const gvs = [...new Set(resources.map((r) => `${r.group}/${r.version}`))];
  it.each(gvs)("every kind, list and field of %s has a description", (gv) => {
    const [group, version] = gv.split("/");
    const doc = openAPIDocument(group, version) as {
      components: {
        schemas: Record<
          string,
          { description?: string; properties?: Record<string, { description?: string }> }
        >;
      };
    };
    const missing: string[] = [];
    for (const [name, schema] of Object.entries(doc.components.schemas)) {
      if (!schema.description) missing.push(name);
      for (const [field, p] of Object.entries(schema.properties ?? {}))
        if (!p.description) missing.push(`${name}.${field}`);
    }
    expect(missing).toEqual([]);
  });

  it("writes a wrapped .proto comment as one paragraph", () => {
    const s = (
      openAPIDocument("", "v1") as { components: { schemas: Record<string, { description: string }> } }
    ).components.schemas;
    const node = s["io.k8s.api.core.v1.Node"].description;
    expect(node).toMatch(/^Node is a worker machine/);
    expect(Object.values(s).filter((x) => x.description.includes("\n"))).toEqual([]);
  });
});

describe("serving /openapi/v3", () => {
  let server: Server;
  let base: string;
  beforeAll(async () => {
    server = createServer((req, res) => {
      if (!serveDiscovery(req, res)) {
        res.writeHead(404);
        res.end();
      }
    });
    await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
    base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

  it("indexes every group version with a URL whose hash is the document's hash", async () => {
    const index = await (await fetch(`${base}/openapi/v3`)).json();
    expect(index).toEqual(openAPIIndex());
    expect(Object.keys(index.paths).sort()).toEqual([
      "api/v1",
      "apis/admissionregistration.k8s.io/v1",
      "apis/apps/v1",
      "apis/authentication.k8s.io/v1",
      "apis/authorization.k8s.io/v1",
      "apis/coordination.k8s.io/v1",
      "apis/discovery.k8s.io/v1", // EndpointSlices
      "apis/policy/v1", // chapter 5: PodDisruptionBudgets
      "apis/rbac.authorization.k8s.io/v1",
      "apis/scheduling.k8s.io/v1",
    ]);
    const url = index.paths["apis/apps/v1"].serverRelativeURL as string;
    const res = await fetch(`${base}${url}`);
    expect(res.status).toBe(200);
    expect(res.headers.get("cache-control")).toBe("public, immutable");
    const text = await res.text();
    expect(url).toBe(
      `/openapi/v3/apis/apps/v1?hash=${createHash("sha512").update(text).digest("hex").toUpperCase()}`,
    );
    expect(JSON.parse(text).openapi).toBe("3.0.0");
  });

  it("answers an unknown document with 'not mine', and /openapi/v2 without definitions", async () => {
    expect((await fetch(`${base}/openapi/v3/apis/nope/v1`)).status).toBe(404);
    const v2 = await fetch(`${base}/openapi/v2`);
    expect(v2.status).toBe(200);
    expect(await v2.json()).toEqual({
      swagger: "2.0",
      info: { title: "Kubernetes", version: "v1.32.0" },
      paths: {},
      definitions: {},
    });
    const pb = await fetch(`${base}/openapi/v2`, {
      headers: { accept: "application/com.github.proto-openapi.spec.v2@v1.0+protobuf" },
    });
    expect(pb.headers.get("content-type")).toBe("application/com.github.proto-openapi.spec.v2.v1.0+protobuf");
    // gnostic's Document: 1 swagger "2.0", 2 info {1 title, 2 version}.
    const hex = (text: string) => Buffer.from(text).toString("hex");
    expect(Buffer.from(await pb.arrayBuffer()).toString("hex")).toBe(
      `0a03${hex("2.0")}1215` + `0a0a${hex("Kubernetes")}1207${hex("v1.32.0")}`,
    );
  });
});

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import {
  aggregatedDiscovery,
  aggregatedMediaType,
  apiResourceList,
  negotiateDiscovery,
  serveDiscovery,
  storageVersionHash,
} from "./discovery.ts";
import { resources } from "./resources.ts";

// kubectl v1.32's Accept for /api and /apis (client-go discovery_client.go, acceptDiscoveryFormats).
const kubectlAccept =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList,application/json";

let server: Server;
let base: string;

beforeAll(async () => {
  server = createServer((req, res) => {
    if (!serveDiscovery(req, res)) {
      res.writeHead(404, { "Content-Type": "text/plain" });
      res.end("not discovery");
    }
  });
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  base = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));

describe("the resource table", () => {
  it("has unique (group, version, resource) and (group, version, kind)", () => {
    const gvr = resources.map((r) => `${r.group}/${r.version}/${r.resource}`);
    const gvk = resources.map((r) => `${r.group}/${r.version}/${r.kind}`);
    expect(new Set(gvr).size).toBe(gvr.length);
    expect(new Set(gvk).size).toBe(gvk.length);
  });

  it("gives services and namespaces no deletecollection, as v1.32", () => {
    for (const name of ["services", "namespaces"]) {
      expect(resources.find((r) => r.resource === name)?.verbs).toEqual([
        "create",
        "delete",
        "get",
        "list",
        "patch",
        "update",
        "watch",
      ]);
    }
  });

  it("serves selfsubjectaccessreviews as create-only and not stored", () => {
    const ssar = resources.find((r) => r.resource === "selfsubjectaccessreviews");
    expect(ssar).toMatchObject({
      group: "authorization.k8s.io",
      verbs: ["create"],
      namespaced: false,
      stored: false,
    });
  });
});

describe("storageVersionHash", () => {
  it("matches the values a real v1.32 API server publishes", () => {
    expect(storageVersionHash("", "v1", "Pod")).toBe("xPOwRZ+Yhw8=");
    expect(storageVersionHash("", "v1", "ConfigMap")).toBe("qFsyl6wFWjQ=");
    expect(storageVersionHash("", "v1", "Namespace")).toBe("Q3oi5N2YM8M=");
    expect(storageVersionHash("apps", "v1", "Deployment")).toBe("8aSe+NMegvE=");
  });
});

describe("negotiateDiscovery", () => {
  it("prefers aggregated v2 in kubectl's order, then v2beta1, then plain JSON", () => {
    expect(negotiateDiscovery(kubectlAccept, true)).toEqual({ aggregated: "v2" });
    const beta = kubectlAccept.split(",").slice(1).join(",");
    expect(negotiateDiscovery(beta, true)).toEqual({ aggregated: "v2beta1" });
    expect(negotiateDiscovery("application/json, */*", true)).toEqual({ aggregated: false });
    expect(negotiateDiscovery(undefined, true)).toEqual({ aggregated: false });
    // Parameters in another order, with spaces, are the same media type.
    expect(
      negotiateDiscovery("application/json; as=APIGroupDiscoveryList;v=v2;g=apidiscovery.k8s.io", true),
    ).toEqual({
      aggregated: "v2",
    });
  });

  it("honours q weights and refuses what it cannot serve with 406", () => {
    const accept = `application/json;q=0.5,application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList`;
    expect(negotiateDiscovery(accept, true)).toEqual({ aggregated: "v2beta1" });
    const refused = negotiateDiscovery("application/vnd.kubernetes.protobuf", true);
    expect(refused).toMatchObject({ code: 406, reason: "NotAcceptable" });
    // A group version's resource list has no aggregated form: only the plain JSON can answer.
    expect(negotiateDiscovery(kubectlAccept, false)).toEqual({ aggregated: false });
  });
});

describe("document bodies", () => {
  it("lists resources then their subresources, sorted, with the scale subresource's own group", () => {
    const list = apiResourceList("apps", "v1");
    const names = list.resources.map((r) => r.name);
    expect(names).toEqual([
      "deployments",
      "deployments/scale",
      "deployments/status",
      "replicasets",
      "replicasets/scale",
      "replicasets/status",
    ]);
    expect(list.resources[1]).toEqual({
      name: "deployments/scale",
      singularName: "",
      namespaced: true,
      group: "autoscaling",
      version: "v1",
      kind: "Scale",
      verbs: ["get", "patch", "update"],
    });
    expect(list.resources[0]).toMatchObject({
      shortNames: ["deploy"],
      categories: ["all"],
      storageVersionHash: "8aSe+NMegvE=",
    });
  });

  it("gives a virtual resource no storageVersionHash", () => {
    const ssar = apiResourceList("authorization.k8s.io", "v1").resources.find(
      (r) => r.name === "selfsubjectaccessreviews",
    );
    expect(ssar).toEqual({
      name: "selfsubjectaccessreviews",
      singularName: "selfsubjectaccessreview",
      namespaced: false,
      kind: "SelfSubjectAccessReview",
      verbs: ["create"],
    });
  });

  it("aggregates /api as the one unnamed core group and /apis as the named groups in priority order", () => {
    const core = aggregatedDiscovery(true, "v2");
    expect(core.items.map((g) => g.metadata)).toEqual([{ creationTimestamp: null }]);
    const pods = core.items[0].versions[0].resources.find((r) => r.resource === "pods");
    expect(pods).toMatchObject({
      responseKind: { group: "", version: "v1", kind: "Pod" },
      scope: "Namespaced",
      singularResource: "pod",
      shortNames: ["po"],
      categories: ["all"],
    });
    expect(pods?.subresources?.map((s) => s.subresource)).toEqual([
      "binding",
      "eviction",
      "exec",
      "log",
      "status",
    ]);
    const named = aggregatedDiscovery(false, "v2beta1");
    expect(named.apiVersion).toBe("apidiscovery.k8s.io/v2beta1");
    expect(named.items.map((g) => g.metadata.name)).toEqual([
      "apps",
      "authentication.k8s.io",
      "authorization.k8s.io",
      "policy", // chapter 5: PodDisruptionBudgets
      "rbac.authorization.k8s.io",
      "admissionregistration.k8s.io",
      "scheduling.k8s.io",
      "coordination.k8s.io",
      "discovery.k8s.io", // EndpointSlices (16200)
    ]);
  });
});

describe("serveDiscovery over HTTP", () => {
  it("answers /version with minor 32 (the kubectl dispatcher picks its binary from it)", async () => {
    const res = await fetch(`${base}/version?timeout=5s`);
    expect(res.status).toBe(200);
    expect(await res.json()).toMatchObject({ major: "1", minor: "32", gitVersion: "v1.32.0" });
  });

  it("answers kubectl's Accept with the aggregated form and echoes the media type kubectl checks", async () => {
    for (const path of ["/api", "/apis"]) {
      const res = await fetch(`${base}${path}?timeout=32s`, { headers: { Accept: kubectlAccept } });
      expect(res.status).toBe(200);
      expect(res.headers.get("content-type")).toBe(aggregatedMediaType("v2"));
      expect(res.headers.get("vary")).toBe("Accept");
      const body = await res.json();
      expect(body.kind).toBe("APIGroupDiscoveryList");
      // A second request with the ETag gets 304 and no body.
      const again = await fetch(`${base}${path}`, {
        headers: { Accept: kubectlAccept, "If-None-Match": res.headers.get("etag") ?? "" },
      });
      expect(again.status).toBe(304);
    }
  });

  it("answers plain JSON with the unaggregated documents", async () => {
    const api = await fetch(`${base}/api`, { headers: { Accept: "application/json, */*" } });
    expect(api.headers.get("content-type")).toBe("application/json");
    expect(await api.json()).toMatchObject({ kind: "APIVersions", versions: ["v1"] });
    const apis = await (await fetch(`${base}/apis`)).json();
    expect(apis.kind).toBe("APIGroupList");
    expect(apis.groups[0]).toEqual({
      name: "apps",
      versions: [{ groupVersion: "apps/v1", version: "v1" }],
      preferredVersion: { groupVersion: "apps/v1", version: "v1" },
    });
    const v1 = await (await fetch(`${base}/api/v1`)).json();
    expect(v1.groupVersion).toBe("v1");
    expect(v1.resources.map((r: { name: string }) => r.name)).toContain("namespaces/finalize");
    const group = await (await fetch(`${base}/apis/scheduling.k8s.io`)).json();
    expect(group).toMatchObject({ kind: "APIGroup", name: "scheduling.k8s.io" });
  });

  it("returns 406 with a Status for an Accept it cannot serve", async () => {
    const res = await fetch(`${base}/apis`, { headers: { Accept: "application/vnd.kubernetes.protobuf" } });
    expect(res.status).toBe(406);
    expect(await res.json()).toMatchObject({ kind: "Status", reason: "NotAcceptable", code: 406 });
  });

  it("leaves every other path to the caller", async () => {
    for (const path of ["/api/v1/namespaces", "/apis/apps/v2", "/apis/nope", "/healthz", "/api/v2"]) {
      const res = await fetch(`${base}${path}`);
      expect([path, res.status, await res.text()]).toEqual([path, 404, "not discovery"]);
    }
  });
});

import { createServer, type Server } from "node:http";
import type { AddressInfo } from "node:net";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { newForConfig } from "../kubernetes/clientset.ts";
import { ErrGroupDiscoveryFailed, newDiscoveryClientForClientset } from "./discovery-client.ts";
import { filteredBy, groupVersionResources, supportsAllVerbs } from "./helper.ts";

describe("DiscoveryClient against our API server (aggregated discovery)", () => {
  let server: APIServer;
  const logged: string[] = [];
  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0, log: (line) => logged.push(line) });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("reads the groups and resources from /api and /apis alone, the core group first", async () => {
    logged.length = 0;
    const dc = newDiscoveryClientForClientset(newForConfig({ host: server.url }));
    const { result, error } = await dc.serverGroupsAndResources();
    expect(error).toBeUndefined();
    expect(result.groups[0]).toMatchObject({ name: "", preferredVersion: { version: "v1" } });
    expect(result.groups.map((g) => g.name)).toContain("apps");
    const core = result.lists.find((l) => l.groupVersion === "v1");
    expect(core?.resources.find((r) => r.name === "pods")).toMatchObject({ kind: "Pod", namespaced: true });
    expect(core?.resources.map((r) => r.name)).toContain("pods/status");
    // Aggregated: no request per group version followed the two root ones.
    const uris = logged.flatMap((l) => /URI="([^"]+)"/.exec(l)?.[1] ?? []);
    expect(uris.sort()).toEqual(["/api", "/apis"]);
  });

  it("ServerPreferredResources: top-level resources only; filtered to the deletable and watchable", async () => {
    const dc = newDiscoveryClientForClientset(newForConfig({ host: server.url }));
    const { result } = await dc.serverPreferredResources();
    const gvrs = groupVersionResources(filteredBy(supportsAllVerbs(["delete", "list", "watch"]), result));
    const names = gvrs.map((r) => `${r.group}/${r.version}/${r.resource}`);
    expect(names).toContain("apps/v1/replicasets");
    expect(names).toContain("/v1/configmaps");
    expect(names.some((n) => n.includes("/status"))).toBe(false);
    // selfsubjectaccessreviews can only be created: filtered out.
    expect(names.some((n) => n.endsWith("selfsubjectaccessreviews"))).toBe(false);
  });
});

describe("DiscoveryClient against a server without aggregated discovery", () => {
  let http: Server;
  let url: string;
  const requested: string[] = [];
  const list = (groupVersion: string, resources: object[]) => ({
    kind: "APIResourceList",
    groupVersion,
    resources,
  });
  const res = (name: string, kind: string, verbs = ["delete", "get", "list", "watch"]) => ({
    name,
    kind,
    namespaced: true,
    verbs,
  });
  beforeAll(async () => {
    http = createServer((req, rsp) => {
      requested.push(`${req.url} ${req.headers.accept}`);
      const send = (code: number, body: unknown) => {
        rsp.writeHead(code, { "Content-Type": "application/json" });
        rsp.end(JSON.stringify(body));
      };
      // An old server: it ignores the aggregated Accept and answers the old forms.
      if (req.url === "/api") return send(200, { kind: "APIVersions", versions: ["v1"] });
      if (req.url === "/apis")
        return send(200, {
          kind: "APIGroupList",
          groups: [
            {
              name: "widgets.example.com",
              versions: [
                { groupVersion: "widgets.example.com/v2", version: "v2" },
                { groupVersion: "widgets.example.com/v1", version: "v1" },
              ],
              preferredVersion: { groupVersion: "widgets.example.com/v2", version: "v2" },
            },
            {
              name: "metrics.example.com",
              versions: [{ groupVersion: "metrics.example.com/v1beta1", version: "v1beta1" }],
              preferredVersion: { groupVersion: "metrics.example.com/v1beta1", version: "v1beta1" },
            },
          ],
        });
      if (req.url === "/api/v1") return send(200, list("v1", [res("configmaps", "ConfigMap")]));
      if (req.url === "/apis/widgets.example.com/v2")
        return send(200, list("widgets.example.com/v2", [res("widgets", "Widget")]));
      if (req.url === "/apis/widgets.example.com/v1")
        return send(
          200,
          list("widgets.example.com/v1", [
            res("widgets", "Widget"),
            res("gadgets", "Gadget"),
            res("widgets/status", "Widget"),
          ]),
        );
      return send(503, {
        kind: "Status",
        apiVersion: "v1",
        status: "Failure",
        message: "the server is currently unable to handle the request",
        reason: "ServiceUnavailable",
        code: 503,
      });
    });
    await new Promise<void>((r) => http.listen(0, "127.0.0.1", r));
    url = `http://127.0.0.1:${(http.address() as AddressInfo).port}`;
  });
  afterAll(async () => {
    await new Promise((r) => http.close(r));
  });

  it("walks /api, /apis and every group version; a failing one makes the answer partial, not empty", async () => {
    const dc = newDiscoveryClientForClientset(newForConfig({ host: url }));
    const { result, error } = await dc.serverPreferredResources();
    expect(requested[0]).toMatch(
      /^\/api application\/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList,/,
    );
    expect(error).toBeInstanceOf(ErrGroupDiscoveryFailed);
    expect([...(error?.groups.keys() ?? [])]).toEqual(["metrics.example.com/v1beta1"]);
    expect(error?.message).toBe(
      "unable to retrieve the complete list of server APIs: metrics.example.com/v1beta1: the server is currently unable to handle the request",
    );
    // widgets from the preferred v2; gadgets only v1 has, so from v1; no subresource.
    expect(result.map((l) => [l.groupVersion, l.resources.map((r) => r.name)])).toEqual([
      ["v1", ["configmaps"]],
      ["widgets.example.com/v2", ["widgets"]],
      ["widgets.example.com/v1", ["gadgets"]],
    ]);
  });

  it("ServerResourcesForGroupVersion reads one group version", async () => {
    const dc = newDiscoveryClientForClientset(newForConfig({ host: url }));
    const l = await dc.serverResourcesForGroupVersion("widgets.example.com/v1");
    expect(l.resources.map((r) => r.name)).toEqual(["widgets", "gadgets", "widgets/status"]);
    await expect(dc.serverResourcesForGroupVersion("metrics.example.com/v1beta1")).rejects.toMatchObject({
      code: 503,
    });
  });
});

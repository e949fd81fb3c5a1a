import { describe, expect, it } from "vitest";
import { newRequestInfo } from "./request-info.ts";

const pick = (method: string, url: string) => {
  const i = newRequestInfo(method, url);
  return [
    i.isResourceRequest,
    i.verb,
    i.apiGroup,
    i.apiVersion,
    i.namespace,
    i.resource,
    i.name,
    i.subresource,
  ];
};

describe("newRequestInfo", () => {
  it("reads verbs from the method, the name and ?watch", () => {
    expect(pick("GET", "/api/v1/namespaces/default/pods")).toEqual([
      true,
      "list",
      "",
      "v1",
      "default",
      "pods",
      "",
      "",
    ]);
    expect(pick("GET", "/api/v1/namespaces/default/pods?watch=true")[1]).toBe("watch");
    expect(pick("GET", "/api/v1/namespaces/default/pods?watch=1")[1]).toBe("watch");
    expect(pick("GET", "/api/v1/namespaces/default/pods?watch=false")[1]).toBe("list");
    expect(pick("GET", "/api/v1/namespaces/default/pods/web")[1]).toBe("get");
    expect(pick("HEAD", "/api/v1/namespaces/default/pods/web")[1]).toBe("get");
    expect(pick("POST", "/api/v1/namespaces/default/pods")[1]).toBe("create");
    expect(pick("PUT", "/api/v1/namespaces/default/pods/web")[1]).toBe("update");
    expect(pick("PATCH", "/api/v1/namespaces/default/pods/web")[1]).toBe("patch");
    expect(pick("DELETE", "/api/v1/namespaces/default/pods/web")[1]).toBe("delete");
    expect(pick("DELETE", "/api/v1/namespaces/default/pods")[1]).toBe("deletecollection");
  });

  it("reads ?watch as upstream's query decoding does: only 0 and false (any case) are false", () => {
    for (const v of ["yes", "f", "", "TRUE"]) {
      expect(pick("GET", `/api/v1/pods?watch=${v}`)[1], `watch=${v}`).toBe("watch");
    }
    for (const v of ["0", "FALSE", "False"]) {
      expect(pick("GET", `/api/v1/pods?watch=${v}`)[1], `watch=${v}`).toBe("list");
    }
  });

  it("reads groups, subresources and cluster-wide lists", () => {
    expect(pick("GET", "/apis/apps/v1/namespaces/ns1/deployments/web/scale")).toEqual([
      true,
      "get",
      "apps",
      "v1",
      "ns1",
      "deployments",
      "web",
      "scale",
    ]);
    expect(pick("GET", "/api/v1/pods")).toEqual([true, "list", "", "v1", "", "pods", "", ""]);
    expect(pick("GET", "/api/v1/nodes/n1/status")).toEqual([
      true,
      "get",
      "",
      "v1",
      "",
      "nodes",
      "n1",
      "status",
    ]);
  });

  it("treats namespaces as cluster-scoped, with their status and finalize subresources", () => {
    expect(pick("GET", "/api/v1/namespaces")).toEqual([true, "list", "", "v1", "", "namespaces", "", ""]);
    expect(pick("GET", "/api/v1/namespaces/foo")).toEqual([
      true,
      "get",
      "",
      "v1",
      "foo",
      "namespaces",
      "foo",
      "",
    ]);
    expect(pick("PUT", "/api/v1/namespaces/foo/finalize")).toEqual([
      true,
      "update",
      "",
      "v1",
      "foo",
      "namespaces",
      "foo",
      "finalize",
    ]);
    expect(pick("PUT", "/api/v1/namespaces/foo/status")[7]).toBe("status");
  });

  it("reads the legacy /watch/ prefix", () => {
    expect(pick("GET", "/api/v1/watch/namespaces/default/pods")).toEqual([
      true,
      "watch",
      "",
      "v1",
      "default",
      "pods",
      "",
      "",
    ]);
    expect(pick("GET", "/apis/apps/v1/watch/deployments")[1]).toBe("watch");
    expect(pick("GET", "/api/v1/watch/namespaces/default/pods/web")[1]).toBe("watch");
  });

  it("leaves non-resource paths alone, verb = lower-case method", () => {
    for (const path of [
      "/version",
      "/healthz",
      "/api",
      "/apis",
      "/api/v1",
      "/apis/apps",
      "/apis/apps/v1",
      "/openapi/v3",
    ]) {
      const i = newRequestInfo("GET", path);
      expect(i.isResourceRequest, path).toBe(false);
      expect(i.verb).toBe("get");
    }
    expect(newRequestInfo("GET", "/api/v1/watch").isResourceRequest).toBe(false);
  });
});

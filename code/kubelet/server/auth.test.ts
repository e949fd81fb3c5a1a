import type { IncomingMessage } from "node:http";
import { describe, expect, it } from "vitest";
import { forbiddenMessage, getRequestAttributes } from "./auth.ts";

const user = { name: "kube-apiserver-kubelet-client", groups: ["system:masters"] };
const req = (method: string, url: string) => ({ method, url }) as IncomingMessage;

describe("getRequestAttributes (upstream's nodeAuthorizerAttributesGetter)", () => {
  it("maps the HTTP method to the verb: a WebSocket exec is a GET, SPDY's a POST", () => {
    expect(getRequestAttributes(user, req("GET", "/exec/default/web/web?command=ls"), "node-1").verb).toBe(
      "get",
    );
    expect(getRequestAttributes(user, req("POST", "/exec/default/web/web"), "node-1").verb).toBe("create");
    expect(getRequestAttributes(user, req("PUT", "/x"), "node-1").verb).toBe("update");
    expect(getRequestAttributes(user, req("PATCH", "/x"), "node-1").verb).toBe("patch");
    expect(getRequestAttributes(user, req("DELETE", "/x"), "node-1").verb).toBe("delete");
  });

  it("is nodes/proxy on this node, except the stats, metrics and logs paths", () => {
    const sub = (url: string) => getRequestAttributes(user, req("GET", url), "node-1").subresource;
    expect(getRequestAttributes(user, req("GET", "/containerLogs/default/web/web"), "node-1")).toEqual({
      user,
      verb: "get",
      apiVersion: "v1",
      resource: "nodes",
      subresource: "proxy",
      name: "node-1",
      path: "/containerLogs/default/web/web",
    });
    expect(sub("/pods")).toBe("proxy");
    expect(sub("/stats")).toBe("stats");
    expect(sub("/stats/summary")).toBe("stats");
    expect(sub("/statsx")).toBe("proxy"); // a subpath, not a prefix
    expect(sub("/metrics/cadvisor")).toBe("metrics");
    expect(sub("/logs/")).toBe("log");
  });

  it("says who was refused what, in the auth filter's words", () => {
    const attrs = getRequestAttributes(
      { name: "system:node:node-1", groups: [] },
      req("GET", "/pods"),
      "node-1",
    );
    expect(forbiddenMessage(attrs)).toBe(
      "Forbidden (user=system:node:node-1, verb=get, resource=nodes, subresource(s)=[proxy])\n",
    );
  });
});

import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/meta.ts";
import type { UserInfo } from "../../authn/user.ts";
import type { Attributes } from "../authorizer.ts";
import { Graph } from "./graph.ts";
import { NodeAuthorizer } from "./node-authorizer.ts";
import { nodeIdentity } from "./node-identifier.ts";

const nodeA: UserInfo = { name: "system:node:node-a", groups: ["system:nodes", "system:authenticated"] };

function attrs(over: Partial<Attributes>, user = nodeA): Attributes {
  return {
    user,
    verb: "get",
    isResourceRequest: true,
    path: "",
    namespace: "default",
    apiGroup: "",
    apiVersion: "v1",
    resource: "secrets",
    subresource: "",
    name: "",
    ...over,
  };
}

function authorizer(): NodeAuthorizer {
  const g = new Graph();
  const pod = (name: string, nodeName: string, secret: string, sa: string): KubeObject => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { namespace: "default", name, uid: name },
    spec: {
      nodeName,
      serviceAccountName: sa,
      containers: [{ name: "c", envFrom: [{ configMapRef: { name: `${secret}-cm` } }] }],
      volumes: [{ name: "v", secret: { secretName: secret } }],
    },
  });
  g.addPod(pod("web-a", "node-a", "mine", "sa-a"));
  g.addPod(pod("web-b", "node-b", "theirs", "sa-b"));
  return new NodeAuthorizer(g);
}

const noRelationship = {
  decision: "noOpinion",
  reason: "no relationship found between node 'node-a' and this object",
};

describe("node identity", () => {
  it("needs both the name prefix and the group", () => {
    expect(nodeIdentity(nodeA)).toEqual({ isNode: true, nodeName: "node-a" });
    expect(nodeIdentity({ name: "system:node:node-a", groups: [] }).isNode).toBe(false);
    expect(nodeIdentity({ name: "kubelet", groups: ["system:nodes"] }).isNode).toBe(false);
    expect(nodeIdentity({ name: "system:node:", groups: ["system:nodes"] })).toEqual({
      isNode: true,
      nodeName: "",
    });
  });
});

describe("the Node authorizer", () => {
  it("has no opinion on users that are not nodes, and refuses a node with no name", async () => {
    const az = authorizer();
    expect(
      await az.authorize(attrs({ name: "mine" }, { name: "jane", groups: ["system:authenticated"] })),
    ).toEqual({
      decision: "noOpinion",
      reason: "",
    });
    expect(
      await az.authorize(attrs({ name: "mine" }, { name: "system:node:", groups: ["system:nodes"] })),
    ).toEqual({
      decision: "noOpinion",
      reason: 'unknown node for user "system:node:"',
    });
  });

  it("lets a node get the secrets and configmaps of its pods, and no others", async () => {
    const az = authorizer();
    expect((await az.authorize(attrs({ name: "mine" }))).decision).toBe("allow");
    expect((await az.authorize(attrs({ resource: "configmaps", name: "mine-cm" }))).decision).toBe("allow");
    expect(await az.authorize(attrs({ name: "theirs" }))).toEqual(noRelationship);
    expect(await az.authorize(attrs({ name: "nobody-uses-this" }))).toEqual(noRelationship);
  });

  it("allows list and watch of one named secret, not of all secrets, and never writes", async () => {
    const az = authorizer();
    expect((await az.authorize(attrs({ verb: "watch", name: "mine" }))).decision).toBe("allow");
    expect(await az.authorize(attrs({ verb: "list" }))).toEqual({
      decision: "noOpinion",
      reason: "No Object name found",
    });
    expect(await az.authorize(attrs({ verb: "list", namespace: "" }))).toEqual({
      decision: "noOpinion",
      reason: "can only read namespaced object of this type",
    });
    expect(await az.authorize(attrs({ verb: "update", name: "mine" }))).toEqual({
      decision: "noOpinion",
      reason: "can only read resources of this type",
    });
  });

  it("lets a node mint tokens only for its pods' service accounts", async () => {
    const az = authorizer();
    const token = (name: string, over: Partial<Attributes> = {}) =>
      az.authorize(
        attrs({ verb: "create", resource: "serviceaccounts", subresource: "token", name, ...over }),
      );
    expect((await token("sa-a")).decision).toBe("allow");
    expect(await token("sa-b")).toEqual(noRelationship);
    expect(await token("sa-a", { subresource: "" })).toEqual({
      decision: "noOpinion",
      reason: "can only create token subresource of serviceaccount",
    });
    expect(await token("sa-a", { verb: "get" })).toEqual({
      decision: "noOpinion",
      reason: "can only create tokens for individual service accounts",
    });
  });

  it("reads only its own Node, and leaves Node writes to NodeRestriction", async () => {
    const az = authorizer();
    const node = (verb: string, name: string, subresource = "") =>
      az.authorize(attrs({ verb, resource: "nodes", namespace: "", name, subresource }));
    expect((await node("get", "node-a")).decision).toBe("allow");
    expect(await node("get", "node-b")).toEqual({
      decision: "noOpinion",
      reason: "node 'node-a' cannot read 'node-b', only its own Node object",
    });
    expect(await node("list", "")).toEqual({
      decision: "noOpinion",
      reason: "node 'node-a' cannot read all nodes, only its own Node object",
    });
    expect((await node("update", "node-b")).decision).toBe("allow");
    expect((await node("patch", "node-b", "status")).decision).toBe("allow");
    expect((await node("delete", "node-a")).decision).toBe("noOpinion");
  });

  it("lists pods only scoped to its node, and gets only its own pods", async () => {
    const az = authorizer();
    const pods = (over: Partial<Attributes>) =>
      az.authorize(attrs({ resource: "pods", namespace: "", ...over }));
    expect((await pods({ verb: "list", fieldSelector: "spec.nodeName=node-a" })).decision).toBe("allow");
    expect(
      (await pods({ verb: "watch", fieldSelector: "status.phase!=Failed,spec.nodeName==node-a" })).decision,
    ).toBe("allow");
    expect(await pods({ verb: "list", fieldSelector: "spec.nodeName=node-b" })).toEqual({
      decision: "noOpinion",
      reason: "can only list/watch pods with spec.nodeName field selector",
    });
    expect(await pods({ verb: "list" })).toEqual({
      decision: "noOpinion",
      reason: "can only list/watch pods with spec.nodeName field selector",
    });
    expect((await pods({ namespace: "default", name: "web-a" })).decision).toBe("allow");
    expect(await pods({ namespace: "default", name: "web-b" })).toEqual(noRelationship);
    expect((await pods({ verb: "update", subresource: "status", name: "web-b" })).decision).toBe("allow");
    expect((await pods({ verb: "create", subresource: "eviction", name: "web-b" })).decision).toBe("allow");
    expect((await pods({ verb: "create", subresource: "binding", name: "web-b" })).decision).toBe(
      "noOpinion",
    );
    expect((await pods({ verb: "update", name: "web-a" })).decision).toBe("noOpinion");
  });

  it("keeps a node to its own Lease in kube-node-lease", async () => {
    const az = authorizer();
    const lease = (verb: string, namespace: string, name: string) =>
      az.authorize(attrs({ verb, apiGroup: "coordination.k8s.io", resource: "leases", namespace, name }));
    expect((await lease("update", "kube-node-lease", "node-a")).decision).toBe("allow");
    expect((await lease("create", "kube-node-lease", "")).decision).toBe("allow");
    expect(await lease("update", "kube-node-lease", "node-b")).toEqual({
      decision: "noOpinion",
      reason: "can only access node lease with the same name as the requesting node",
    });
    expect(await lease("get", "default", "node-a")).toEqual({
      decision: "noOpinion",
      reason: 'can only access leases in the "kube-node-lease" system namespace',
    });
    expect(await lease("list", "kube-node-lease", "")).toEqual({
      decision: "noOpinion",
      reason: "can only get, create, update, patch, or delete a node lease",
    });
  });

  it("judges everything else by the static node rules", async () => {
    const az = authorizer();
    expect((await az.authorize(attrs({ verb: "create", resource: "events", name: "" }))).decision).toBe(
      "allow",
    );
    expect((await az.authorize(attrs({ verb: "watch", resource: "services", namespace: "" }))).decision).toBe(
      "allow",
    );
    expect((await az.authorize(attrs({ verb: "delete", resource: "services", name: "x" }))).decision).toBe(
      "noOpinion",
    );
    expect(
      (await az.authorize(attrs({ verb: "list", apiGroup: "apps", resource: "deployments", namespace: "" })))
        .decision,
    ).toBe("noOpinion");
    expect(
      (await az.authorize(attrs({ isResourceRequest: false, verb: "get", path: "/healthz" }))).decision,
    ).toBe("noOpinion");
  });

  it("cannot list a node's rules", async () => {
    const az = authorizer();
    expect(await az.rulesFor(nodeA, "default")).toMatchObject({
      incomplete: true,
      evaluationError: "node authorizer does not support user rule resolution",
    });
  });
});

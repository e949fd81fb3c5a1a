import { describe, expect, it } from "vitest";
import type { PolicyRule } from "../../../code/api/rbac.ts";
import type { Attributes } from "../../../code/apiserver/authz/authorizer.ts";
import { aggregatedRules } from "../../../code/apiserver/authz/rbac/aggregation.ts";
import { bootstrapClusterRoles } from "../../../code/apiserver/authz/rbac/bootstrap-policy.ts";
import { ruleAllows } from "./rule-allows.ts";

const user = { name: "jane", groups: ["system:authenticated"] };
const res = (verb: string, group: string, resource: string, more: Partial<Attributes> = {}): Attributes => ({
  user,
  verb,
  isResourceRequest: true,
  path: "",
  namespace: "default",
  apiGroup: group,
  apiVersion: "v1",
  resource,
  subresource: "",
  name: "",
  ...more,
});
const url = (verb: string, path: string): Attributes => ({
  ...res(verb, "", ""),
  isResourceRequest: false,
  path,
  namespace: "",
});

describe("verbs and groups", () => {
  const rule: PolicyRule = {
    verbs: ["get", "list"],
    apiGroups: ["", "apps"],
    resources: ["pods", "deployments"],
  };
  it("allows a listed verb in a listed group", () => {
    expect(ruleAllows(res("get", "", "pods"), rule)).toBe(true);
    expect(ruleAllows(res("list", "apps", "deployments"), rule)).toBe(true);
  });
  it("refuses another verb, another group or another resource", () => {
    expect(ruleAllows(res("delete", "", "pods"), rule)).toBe(false);
    expect(ruleAllows(res("get", "batch", "pods"), rule)).toBe(false);
    expect(ruleAllows(res("get", "", "secrets"), rule)).toBe(false);
  });
  it("lets * stand for any verb, group or resource", () => {
    expect(
      ruleAllows(res("escalate", "rbac.authorization.k8s.io", "roles"), {
        verbs: ["*"],
        apiGroups: ["*"],
        resources: ["*"],
      }),
    ).toBe(true);
    expect(
      ruleAllows(res("delete", "apps", "deployments"), {
        verbs: ["*"],
        apiGroups: ["apps"],
        resources: ["deployments"],
      }),
    ).toBe(true);
    expect(
      ruleAllows(res("get", "batch", "jobs"), { verbs: ["get"], apiGroups: ["*"], resources: ["jobs"] }),
    ).toBe(true);
    expect(ruleAllows(res("get", "", "nodes"), { verbs: ["get"], apiGroups: [""], resources: ["*"] })).toBe(
      true,
    );
  });
});

describe("subresources", () => {
  it("does not let a resource's rule reach its subresources", () => {
    const pods: PolicyRule = { verbs: ["get", "create"], apiGroups: [""], resources: ["pods"] };
    expect(ruleAllows(res("get", "", "pods", { subresource: "log", name: "web" }), pods)).toBe(false);
    expect(ruleAllows(res("create", "", "pods", { subresource: "exec", name: "web" }), pods)).toBe(false);
  });
  it("allows a subresource named as resource/subresource", () => {
    const logs: PolicyRule = { verbs: ["get"], apiGroups: [""], resources: ["pods/log"] };
    expect(ruleAllows(res("get", "", "pods", { subresource: "log", name: "web" }), logs)).toBe(true);
    expect(ruleAllows(res("get", "", "pods", { name: "web" }), logs)).toBe(false);
  });
  it("lets */sub match that subresource of every resource, and nothing without one", () => {
    const scale: PolicyRule = { verbs: ["update"], apiGroups: ["apps"], resources: ["*/scale"] };
    expect(
      ruleAllows(res("update", "apps", "deployments", { subresource: "scale", name: "web" }), scale),
    ).toBe(true);
    expect(
      ruleAllows(res("update", "apps", "replicasets", { subresource: "scale", name: "web" }), scale),
    ).toBe(true);
    expect(
      ruleAllows(res("update", "apps", "deployments", { subresource: "status", name: "web" }), scale),
    ).toBe(false);
    expect(ruleAllows(res("update", "apps", "deployments", { name: "web" }), scale)).toBe(false);
  });
  it("lets * match subresources too", () => {
    expect(
      ruleAllows(res("get", "", "pods", { subresource: "log", name: "w" }), {
        verbs: ["get"],
        apiGroups: [""],
        resources: ["*"],
      }),
    ).toBe(true);
  });
});

describe("resourceNames", () => {
  const named: PolicyRule = {
    verbs: ["get", "list", "update"],
    apiGroups: [""],
    resources: ["configmaps"],
    resourceNames: ["app-config"],
  };
  it("allows only the named objects", () => {
    expect(ruleAllows(res("get", "", "configmaps", { name: "app-config" }), named)).toBe(true);
    expect(ruleAllows(res("update", "", "configmaps", { name: "other" }), named)).toBe(false);
  });
  it("never allows a request without a name (list, create)", () => {
    expect(ruleAllows(res("list", "", "configmaps"), named)).toBe(false);
  });
  it("treats an empty list as every name", () => {
    expect(ruleAllows(res("get", "", "configmaps", { name: "x" }), { ...named, resourceNames: [] })).toBe(
      true,
    );
  });
});

describe("non-resource URLs", () => {
  const rule: PolicyRule = { verbs: ["get"], nonResourceURLs: ["/healthz", "/apis/*"] };
  it("matches a path exactly", () => {
    expect(ruleAllows(url("get", "/healthz"), rule)).toBe(true);
    expect(ruleAllows(url("get", "/healthz/etcd"), rule)).toBe(false);
    expect(ruleAllows(url("post", "/healthz"), rule)).toBe(false);
  });
  it("reads a trailing * as a prefix", () => {
    expect(ruleAllows(url("get", "/apis/apps/v1"), rule)).toBe(true);
    expect(ruleAllows(url("get", "/apis/"), rule)).toBe(true);
    expect(ruleAllows(url("get", "/apis"), rule)).toBe(false);
    expect(ruleAllows(url("get", "/api/v1"), rule)).toBe(false);
  });
  it("lets * alone match every path", () => {
    expect(ruleAllows(url("get", "/metrics"), { verbs: ["*"], nonResourceURLs: ["*"] })).toBe(true);
  });
  it("keeps URL rules and resource rules apart", () => {
    expect(ruleAllows(res("get", "", "pods"), rule)).toBe(false);
    expect(ruleAllows(url("get", "/healthz"), { verbs: ["*"], apiGroups: ["*"], resources: ["*"] })).toBe(
      false,
    );
  });
});

describe("over the cluster's real default roles", () => {
  const roles = bootstrapClusterRoles();
  const byName = (n: string) => roles.find((r) => r.metadata.name === n) as (typeof roles)[number];
  const view = aggregatedRules(byName("view"), roles);
  const anyAllows = (rules: readonly PolicyRule[], a: Attributes) => rules.some((r) => ruleAllows(a, r));

  it("view reads pods and their logs, and no secrets", () => {
    expect(anyAllows(view, res("list", "", "pods"))).toBe(true);
    expect(anyAllows(view, res("get", "", "pods", { subresource: "log", name: "web" }))).toBe(true);
    expect(anyAllows(view, res("get", "", "secrets", { name: "token" }))).toBe(false);
    expect(anyAllows(view, res("create", "", "pods", { subresource: "exec", name: "web" }))).toBe(false);
    expect(anyAllows(view, res("get", "apps", "deployments", { subresource: "scale", name: "web" }))).toBe(
      true,
    );
  });
  it("system:discovery opens /apis/* and system:public-info-viewer only the health and version paths", () => {
    expect(anyAllows(byName("system:discovery").rules ?? [], url("get", "/apis/apps/v1"))).toBe(true);
    const info = byName("system:public-info-viewer").rules ?? [];
    expect(anyAllows(info, url("get", "/healthz"))).toBe(true);
    expect(anyAllows(info, url("get", "/apis"))).toBe(false);
  });
  it("the scheduler renews only its own lease", () => {
    const scheduler = byName("system:kube-scheduler").rules ?? [];
    const lease = (name: string) =>
      res("update", "coordination.k8s.io", "leases", { namespace: "kube-system", name });
    expect(anyAllows(scheduler, lease("kube-scheduler"))).toBe(true);
    expect(anyAllows(scheduler, lease("kube-controller-manager"))).toBe(false);
  });
});

import { describe, expect, it } from "vitest";
import type { PolicyRule } from "../../../api/rbac.ts";
import type { Attributes } from "../authorizer.ts";
import { compactRules, compactString, covers } from "./policy-comparator.ts";
import { ruleAllows } from "./rule.ts";

const jane = { name: "jane", groups: ["system:authenticated"] };
const res = (verb: string, resource: string, extra: Partial<Attributes> = {}): Attributes => ({
  user: jane,
  verb,
  isResourceRequest: true,
  path: "",
  namespace: "default",
  apiGroup: "",
  apiVersion: "v1",
  resource,
  subresource: "",
  name: "",
  ...extra,
});
const url = (verb: string, path: string): Attributes => ({
  ...res(verb, ""),
  isResourceRequest: false,
  path,
  namespace: "",
});

describe("ruleAllows", () => {
  it("matches verbs, groups and resources, with * for any", () => {
    const r: PolicyRule = { verbs: ["get", "list"], apiGroups: [""], resources: ["pods"] };
    expect(ruleAllows(res("get", "pods"), r)).toBe(true);
    expect(ruleAllows(res("delete", "pods"), r)).toBe(false);
    expect(ruleAllows(res("get", "pods", { apiGroup: "apps" }), r)).toBe(false);
    expect(ruleAllows(res("get", "secrets"), r)).toBe(false);
    expect(
      ruleAllows(res("delete", "deployments", { apiGroup: "apps" }), {
        verbs: ["*"],
        apiGroups: ["*"],
        resources: ["*"],
      }),
    ).toBe(true);
  });

  it("treats a subresource as its own permission, and */sub as every resource's", () => {
    const pods: PolicyRule = { verbs: ["get"], apiGroups: [""], resources: ["pods"] };
    expect(ruleAllows(res("get", "pods", { subresource: "log", name: "web" }), pods)).toBe(false);
    expect(
      ruleAllows(res("get", "pods", { subresource: "log", name: "web" }), {
        ...pods,
        resources: ["pods/log"],
      }),
    ).toBe(true);
    const anyScale: PolicyRule = { verbs: ["update"], apiGroups: ["apps"], resources: ["*/scale"] };
    expect(
      ruleAllows(res("update", "deployments", { apiGroup: "apps", subresource: "scale" }), anyScale),
    ).toBe(true);
    expect(ruleAllows(res("update", "deployments", { apiGroup: "apps" }), anyScale)).toBe(false);
    expect(
      ruleAllows(res("update", "deployments", { apiGroup: "apps", subresource: "status" }), anyScale),
    ).toBe(false);
  });

  it("limits to resourceNames, which a request without a name never matches", () => {
    const r: PolicyRule = {
      verbs: ["get", "list"],
      apiGroups: [""],
      resources: ["configmaps"],
      resourceNames: ["app"],
    };
    expect(ruleAllows(res("get", "configmaps", { name: "app" }), r)).toBe(true);
    expect(ruleAllows(res("get", "configmaps", { name: "other" }), r)).toBe(false);
    expect(ruleAllows(res("list", "configmaps"), r)).toBe(false);
  });

  it("matches non-resource URLs exactly, by a trailing * prefix, or by *", () => {
    const r: PolicyRule = { verbs: ["get"], nonResourceURLs: ["/healthz", "/apis/*"] };
    expect(ruleAllows(url("get", "/healthz"), r)).toBe(true);
    expect(ruleAllows(url("get", "/healthz/etcd"), r)).toBe(false);
    expect(ruleAllows(url("get", "/apis/apps/v1"), r)).toBe(true);
    expect(ruleAllows(url("get", "/apis"), r)).toBe(false);
    expect(ruleAllows(url("post", "/healthz"), r)).toBe(false);
    expect(ruleAllows(url("get", "/anything"), { verbs: ["get"], nonResourceURLs: ["*"] })).toBe(true);
    // A URL rule never allows a resource request, nor a resource rule a URL.
    expect(ruleAllows(res("get", "pods"), r)).toBe(false);
    expect(ruleAllows(url("get", "/healthz"), { verbs: ["*"], apiGroups: ["*"], resources: ["*"] })).toBe(
      false,
    );
  });
});

describe("covers (the escalation check's comparison)", () => {
  it("is covered atom by atom, across several owner rules", () => {
    const owner: PolicyRule[] = [
      { verbs: ["get"], apiGroups: [""], resources: ["pods"] },
      { verbs: ["list"], apiGroups: [""], resources: ["pods"] },
    ];
    expect(covers(owner, [{ verbs: ["get", "list"], apiGroups: [""], resources: ["pods"] }])).toEqual([
      true,
      [],
    ]);
    const [ok, missing] = covers(owner, [
      { verbs: ["get", "delete"], apiGroups: [""], resources: ["pods", "secrets"] },
    ]);
    expect(ok).toBe(false);
    expect(missing.map(compactString)).toEqual([
      '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get"]}',
      '{APIGroups:[""], Resources:["secrets"], Verbs:["delete"]}',
    ]);
    expect(compactRules(missing).map(compactString)).toContain(
      '{APIGroups:[""], Resources:["secrets"], Verbs:["get" "delete"]}',
    );
  });

  it("covers a name only from an unnamed rule or one with that name; never an unnamed atom from a named rule", () => {
    const named: PolicyRule = {
      verbs: ["get"],
      apiGroups: [""],
      resources: ["secrets"],
      resourceNames: ["a"],
    };
    expect(covers([named], [{ ...named }])[0]).toBe(true);
    expect(covers([named], [{ ...named, resourceNames: ["b"] }])[0]).toBe(false);
    expect(covers([named], [{ verbs: ["get"], apiGroups: [""], resources: ["secrets"] }])[0]).toBe(false);
    expect(covers([{ verbs: ["get"], apiGroups: [""], resources: ["secrets"] }], [named])[0]).toBe(true);
  });

  it("lets * and */sub and a trailing URL * cover what they match", () => {
    expect(
      covers(
        [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
        [{ verbs: ["escalate"], apiGroups: ["x"], resources: ["y/z"] }],
      )[0],
    ).toBe(true);
    expect(
      covers(
        [{ verbs: ["get"], apiGroups: ["apps"], resources: ["*/scale"] }],
        [{ verbs: ["get"], apiGroups: ["apps"], resources: ["deployments/scale"] }],
      )[0],
    ).toBe(true);
    expect(
      covers(
        [{ verbs: ["get"], apiGroups: ["apps"], resources: ["*/scale"] }],
        [{ verbs: ["get"], apiGroups: ["apps"], resources: ["deployments"] }],
      )[0],
    ).toBe(false);
    expect(
      covers(
        [{ verbs: ["get"], nonResourceURLs: ["/apis/*"] }],
        [{ verbs: ["get"], nonResourceURLs: ["/apis/apps"] }],
      )[0],
    ).toBe(true);
    expect(
      covers(
        [{ verbs: ["get"], nonResourceURLs: ["/apis/*"] }],
        [{ verbs: ["get"], nonResourceURLs: ["/api"] }],
      )[0],
    ).toBe(false);
  });
});

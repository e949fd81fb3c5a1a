import { describe, expect, it } from "vitest";
import type { ClusterRole, PolicyRule } from "../../../code/api/rbac.ts";
import { aggregatedRules } from "../../../code/apiserver/authz/rbac/aggregation.ts";
import { bootstrapClusterRoles } from "../../../code/apiserver/authz/rbac/bootstrap-policy.ts";
import { covers } from "./covers.ts";

const pods = (...verbs: string[]): PolicyRule => ({ verbs, apiGroups: [""], resources: ["pods"] });

describe("atoms", () => {
  it("covers a rule from two owner rules that each hold part of it", () => {
    expect(covers([pods("get"), pods("list")], [pods("get", "list")])).toEqual([true, []]);
  });
  it("reports what is missing atom by atom, in breakdown order", () => {
    expect(
      covers([pods("get")], [{ verbs: ["get", "delete"], apiGroups: ["", "apps"], resources: ["pods"] }]),
    ).toEqual([
      false,
      [
        { verbs: ["delete"], apiGroups: [""], resources: ["pods"] },
        { verbs: ["get"], apiGroups: ["apps"], resources: ["pods"] },
        { verbs: ["delete"], apiGroups: ["apps"], resources: ["pods"] },
      ],
    ]);
  });
  it("breaks names and URLs into atoms too", () => {
    const [, missing] = covers(
      [],
      [
        { verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: ["a", "b"] },
        { verbs: ["get", "post"], nonResourceURLs: ["/metrics"] },
      ],
    );
    expect(missing).toEqual([
      { verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: ["a"] },
      { verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: ["b"] },
      { verbs: ["get"], nonResourceURLs: ["/metrics"] },
      { verbs: ["post"], nonResourceURLs: ["/metrics"] },
    ]);
  });
  it("covers nothing from nothing, and an empty grant from anything", () => {
    expect(covers([], [pods("get")])[0]).toBe(false);
    expect(covers([], [])).toEqual([true, []]);
  });
});

describe("wildcards", () => {
  it("lets * cover any verb, group and resource", () => {
    expect(
      covers(
        [{ verbs: ["*"], apiGroups: ["*"], resources: ["*"] }],
        [{ verbs: ["escalate"], apiGroups: ["rbac.authorization.k8s.io"], resources: ["roles"] }],
      )[0],
    ).toBe(true);
    expect(covers([{ verbs: ["*"], apiGroups: [""], resources: ["pods"] }], [pods("delete")])[0]).toBe(true);
    expect(covers([{ verbs: ["get"], apiGroups: [""], resources: ["*"] }], [pods("get")])[0]).toBe(true);
  });
  it("lets */sub cover that subresource of any resource, and not the resource", () => {
    const scale: PolicyRule = { verbs: ["get"], apiGroups: ["apps"], resources: ["*/scale"] };
    expect(
      covers([scale], [{ verbs: ["get"], apiGroups: ["apps"], resources: ["deployments/scale"] }])[0],
    ).toBe(true);
    expect(covers([scale], [{ verbs: ["get"], apiGroups: ["apps"], resources: ["deployments"] }])[0]).toBe(
      false,
    );
    expect(covers([pods("get")], [{ verbs: ["get"], apiGroups: [""], resources: ["pods/log"] }])[0]).toBe(
      false,
    );
  });
  it("lets a URL ending in * cover the URLs it starts", () => {
    const apis: PolicyRule = { verbs: ["get"], nonResourceURLs: ["/apis/*"] };
    expect(covers([apis], [{ verbs: ["get"], nonResourceURLs: ["/apis/apps/v1"] }])[0]).toBe(true);
    expect(covers([apis], [{ verbs: ["get"], nonResourceURLs: ["/apis/*"] }])[0]).toBe(true);
    expect(covers([apis], [{ verbs: ["get"], nonResourceURLs: ["/api"] }])[0]).toBe(false);
    expect(
      covers(
        [{ verbs: ["get"], nonResourceURLs: ["/healthz"] }],
        [{ verbs: ["get"], nonResourceURLs: ["/healthz/etcd"] }],
      )[0],
    ).toBe(false);
  });
});

describe("resource names", () => {
  const one: PolicyRule = { verbs: ["get"], apiGroups: [""], resources: ["secrets"], resourceNames: ["a"] };
  it("covers a named atom from an unnamed rule or one with that name", () => {
    expect(covers([{ verbs: ["get"], apiGroups: [""], resources: ["secrets"] }], [one])[0]).toBe(true);
    expect(covers([one], [one])[0]).toBe(true);
    expect(covers([one], [{ ...one, resourceNames: ["b"] }])[0]).toBe(false);
  });
  it("never covers an unnamed atom (every name) from a named rule", () => {
    expect(covers([one], [{ verbs: ["get"], apiGroups: [""], resources: ["secrets"] }])[0]).toBe(false);
  });
});

describe("the cluster's real default roles", () => {
  const roles = bootstrapClusterRoles();
  // Fill the aggregated roles as the aggregation loop does: view, then edit, then admin.
  const filled = new Map<string, ClusterRole>(roles.map((r) => [r.metadata.name as string, r]));
  for (const name of ["view", "edit", "admin"]) {
    const role = filled.get(name) as ClusterRole;
    filled.set(name, { ...role, rules: aggregatedRules(role, [...filled.values()]) });
  }
  const rules = (name: string) => filled.get(name)?.rules ?? [];

  it("admin covers edit, edit covers view, and not the other way round", () => {
    expect(covers(rules("admin"), rules("edit"))[0]).toBe(true);
    expect(covers(rules("edit"), rules("view"))[0]).toBe(true);
    const [ok, missing] = covers(rules("edit"), rules("admin"));
    expect(ok).toBe(false);
    expect(missing).toContainEqual({
      verbs: ["create"],
      apiGroups: ["rbac.authorization.k8s.io"],
      resources: ["rolebindings"],
    });
    expect(covers(rules("view"), rules("edit"))[0]).toBe(false);
  });
  it("cluster-admin covers every default role", () => {
    for (const role of filled.values())
      expect(covers(rules("cluster-admin"), role.rules ?? [])[0], role.metadata.name).toBe(true);
  });
  it("the scheduler may not grant a lease it holds only by name", () => {
    const grant: PolicyRule = {
      verbs: ["update"],
      apiGroups: ["coordination.k8s.io"],
      resources: ["leases"],
    };
    expect(covers(rules("system:kube-scheduler"), [grant])[0]).toBe(false);
    expect(covers(rules("system:kube-scheduler"), [{ ...grant, resourceNames: ["kube-scheduler"] }])[0]).toBe(
      true,
    );
  });
});

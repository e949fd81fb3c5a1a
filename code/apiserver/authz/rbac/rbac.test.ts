import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/meta.ts";
import type { Attributes } from "../authorizer.ts";
import { newAuthorizer, parseAuthorizationModes, validateAuthorizationModes } from "../config.ts";
import { aggregatedRules } from "./aggregation.ts";
import { bootstrapClusterRoleBindings, bootstrapClusterRoles } from "./bootstrap-policy.ts";
import { confirmNoEscalation } from "./escalation.ts";
import { RBACIndex } from "./index.ts";
import { RBACAuthorizer } from "./rbac.ts";
import { computeReconciledBinding, computeReconciledRole } from "./reconcile.ts";

const meta = (name: string, namespace?: string) => ({ name, ...(namespace ? { namespace } : {}) });
const clusterRole = (name: string, rules: unknown[]): KubeObject => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind: "ClusterRole",
  metadata: meta(name),
  rules,
});
const binding = (
  kind: string,
  name: string,
  role: string,
  subjects: unknown[],
  namespace?: string,
): KubeObject => ({
  apiVersion: "rbac.authorization.k8s.io/v1",
  kind,
  metadata: meta(name, namespace),
  roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: role },
  subjects,
});
const user = (name: string) => ({ kind: "User", apiGroup: "rbac.authorization.k8s.io", name });
const listPods = (u: { name: string; groups: string[] }, namespace: string): Attributes => ({
  user: u,
  verb: "list",
  isResourceRequest: true,
  path: "",
  namespace,
  apiGroup: "",
  apiVersion: "v1",
  resource: "pods",
  subresource: "",
  name: "",
});
const jane = { name: "jane", groups: ["system:authenticated"] };

function policy(): RBACIndex {
  const index = new RBACIndex();
  index.apply(
    "clusterroles",
    "ADDED",
    clusterRole("pod-reader", [{ verbs: ["get", "list"], apiGroups: [""], resources: ["pods"] }]),
  );
  return index;
}

describe("the RBAC authorizer", () => {
  it("allows from a ClusterRoleBinding with upstream's reason, and abstains otherwise", async () => {
    const index = policy();
    const rbac = new RBACAuthorizer(index);
    expect(await rbac.authorize(listPods(jane, "default"))).toEqual({ decision: "noOpinion", reason: "" });
    index.apply(
      "clusterrolebindings",
      "ADDED",
      binding("ClusterRoleBinding", "x", "pod-reader", [user("jane")]),
    );
    expect(await rbac.authorize(listPods(jane, "default"))).toEqual({
      decision: "allow",
      reason: 'RBAC: allowed by ClusterRoleBinding "x" of ClusterRole "pod-reader" to User "jane"',
    });
    index.apply(
      "clusterrolebindings",
      "DELETED",
      binding("ClusterRoleBinding", "x", "pod-reader", [user("jane")]),
    );
    expect((await rbac.authorize(listPods(jane, "default"))).decision).toBe("noOpinion");
  });

  it("grants a RoleBinding's rules in its namespace only; names a service account as name/namespace", async () => {
    const index = policy();
    const rbac = new RBACAuthorizer(index);
    index.apply(
      "rolebindings",
      "ADDED",
      binding("RoleBinding", "rb", "pod-reader", [{ kind: "ServiceAccount", name: "robot" }], "team"),
    );
    const robot = { name: "system:serviceaccount:team:robot", groups: ["system:serviceaccounts"] };
    expect(await rbac.authorize(listPods(robot, "team"))).toEqual({
      decision: "allow",
      reason:
        'RBAC: allowed by RoleBinding "rb/team" of ClusterRole "pod-reader" to ServiceAccount "robot/team"',
    });
    expect((await rbac.authorize(listPods(robot, "other"))).decision).toBe("noOpinion");
    expect((await rbac.authorize(listPods(robot, ""))).decision).toBe("noOpinion");
  });

  it("says which role is missing", async () => {
    const index = policy();
    index.apply("clusterrolebindings", "ADDED", binding("ClusterRoleBinding", "x", "nope", [user("jane")]));
    expect(await new RBACAuthorizer(index).authorize(listPods(jane, "default"))).toEqual({
      decision: "noOpinion",
      reason: 'RBAC: clusterrole.rbac.authorization.k8s.io "nope" not found',
    });
  });

  it("reads only the bindings of the user's name and groups (the index), not every binding", async () => {
    const index = policy();
    for (let i = 0; i < 2000; i++) {
      index.apply(
        "rolebindings",
        "ADDED",
        binding("RoleBinding", `b${i}`, "pod-reader", [user(`user-${i}`)], `ns-${i % 50}`),
      );
      index.apply(
        "clusterrolebindings",
        "ADDED",
        binding("ClusterRoleBinding", `c${i}`, "pod-reader", [user(`other-${i}`)]),
      );
    }
    index.apply(
      "rolebindings",
      "ADDED",
      binding("RoleBinding", "mine", "pod-reader", [user("jane")], "ns-7"),
    );
    index.apply(
      "rolebindings",
      "ADDED",
      binding(
        "RoleBinding",
        "groupwide",
        "pod-reader",
        [{ kind: "Group", apiGroup: "rbac.authorization.k8s.io", name: "system:authenticated" }],
        "ns-8",
      ),
    );
    const rbac = new RBACAuthorizer(index);
    index.visited = 0;
    expect((await rbac.authorize(listPods(jane, "ns-7"))).decision).toBe("allow");
    expect(index.visited).toBe(1);
    index.visited = 0;
    expect((await rbac.authorize(listPods(jane, "ns-9"))).decision).toBe("noOpinion");
    expect(index.visited).toBe(0);
    index.visited = 0;
    expect((await rbac.authorize(listPods(jane, "ns-8"))).decision).toBe("allow");
    expect(index.visited).toBe(1);
  });

  it("moves a binding's index keys when its subjects change", async () => {
    const index = policy();
    const rbac = new RBACAuthorizer(index);
    index.apply(
      "clusterrolebindings",
      "ADDED",
      binding("ClusterRoleBinding", "x", "pod-reader", [user("jane")]),
    );
    index.apply(
      "clusterrolebindings",
      "MODIFIED",
      binding("ClusterRoleBinding", "x", "pod-reader", [user("bob")]),
    );
    expect((await rbac.authorize(listPods(jane, "default"))).decision).toBe("noOpinion");
    expect((await rbac.authorize(listPods({ name: "bob", groups: [] }, "default"))).decision).toBe("allow");
  });
});

describe("the escalation check's message", () => {
  it("lists the rules the requester does not hold, in upstream's words", () => {
    const index = policy();
    index.apply(
      "clusterrolebindings",
      "ADDED",
      binding("ClusterRoleBinding", "x", "pod-reader", [user("jane")]),
    );
    const rbac = new RBACAuthorizer(index);
    expect(
      confirmNoEscalation(
        jane,
        "default",
        [{ verbs: ["get"], apiGroups: [""], resources: ["pods"] }],
        rbac.resolver,
      ),
    ).toBeUndefined();
    expect(
      confirmNoEscalation(
        jane,
        "default",
        [{ verbs: ["get", "delete"], apiGroups: ["", "apps"], resources: ["pods"] }],
        rbac.resolver,
      ),
    ).toBe(
      'user "jane" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n' +
        '{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}\n' +
        '{APIGroups:["apps"], Resources:["pods"], Verbs:["get" "delete"]}',
    );
  });
});

describe("authorization modes", () => {
  it("defaults to AlwaysAllow and refuses unknown, repeated and unbuilt modes", () => {
    expect(parseAuthorizationModes("")).toEqual(["AlwaysAllow"]);
    expect(parseAuthorizationModes("Node,RBAC")).toEqual(["Node", "RBAC"]);
    expect(validateAuthorizationModes(["RBAC", "Magic"])).toEqual([
      'authorization-mode "Magic" is not a valid mode',
    ]);
    expect(validateAuthorizationModes(["RBAC", "RBAC"])).toEqual([
      'authorization-mode "RBAC,RBAC" has mode specified more than once',
    ]);
    expect(() => newAuthorizer(["Node"], {})).toThrow("authorization-mode Node needs the node graph");
  });

  it("asks in order: the first opinion wins; system:masters before any", async () => {
    const index = policy();
    const rbac = new RBACAuthorizer(index);
    const denyFirst = newAuthorizer(["AlwaysDeny", "RBAC"], { rbac }).authorizer;
    expect(await denyFirst.authorize(listPods(jane, "default"))).toEqual({
      decision: "noOpinion",
      reason: "Everything is forbidden.",
    });
    const allowAfter = newAuthorizer(["RBAC", "AlwaysAllow"], { rbac }).authorizer;
    expect((await allowAfter.authorize(listPods(jane, "default"))).decision).toBe("allow");
    const admin = { name: "admin", groups: ["system:masters"] };
    expect(
      (await newAuthorizer(["AlwaysDeny"], {}).authorizer.authorize(listPods(admin, "x"))).decision,
    ).toBe("allow");
  });
});

describe("the bootstrap policy", () => {
  it("binds system:masters to cluster-admin and the public info to everyone", () => {
    const bindings = bootstrapClusterRoleBindings();
    const subjectsOf = (n: string) =>
      bindings.find((b) => b.metadata.name === n)?.subjects?.map((s) => `${s.kind}:${s.name}`);
    expect(subjectsOf("cluster-admin")).toEqual(["Group:system:masters"]);
    expect(subjectsOf("system:public-info-viewer")).toEqual([
      "Group:system:authenticated",
      "Group:system:unauthenticated",
    ]);
    expect(subjectsOf("system:kube-scheduler")).toEqual(["User:system:kube-scheduler"]);
    expect(subjectsOf("system:node")).toBeUndefined();
  });

  it("aggregates view into edit into admin", () => {
    const roles = bootstrapClusterRoles();
    const byName = (n: string) => roles.find((r) => r.metadata.name === n) as (typeof roles)[number];
    const view = { ...byName("view"), rules: aggregatedRules(byName("view"), roles) };
    expect(view.rules).toEqual(byName("system:aggregate-to-view").rules);
    const withView = roles.map((r) => (r.metadata.name === "view" ? view : r));
    const edit = aggregatedRules(byName("edit"), withView);
    expect(edit).toEqual([...(byName("system:aggregate-to-edit").rules ?? []), ...view.rules]);
  });

  it("reconciles by adding what is missing, keeping what was added, and leaving autoupdate=false alone", () => {
    const expected = bootstrapClusterRoles().find(
      (r) => r.metadata.name === "system:basic-user",
    ) as ReturnType<typeof bootstrapClusterRoles>[number];
    const extra = { verbs: ["get"], apiGroups: [""], resources: ["nodes"] };
    const existing = { ...structuredClone(expected), rules: [extra] };
    const r = computeReconciledRole(existing, expected);
    expect(r.operation).toBe("update");
    expect(r.role.rules?.[0]).toEqual(extra);
    expect(r.role.rules).toHaveLength(4); // extra, then the three atoms it lacked
    expect(computeReconciledRole(expected, expected).operation).toBe("none");
    existing.metadata.annotations = { "rbac.authorization.kubernetes.io/autoupdate": "false" };
    expect(computeReconciledRole(existing, expected).protected).toBe(true);
    const b = bootstrapClusterRoleBindings()[0];
    expect(
      computeReconciledBinding({ ...structuredClone(b), roleRef: { ...b.roleRef, name: "view" } }, b)
        .operation,
    ).toBe("recreate");
  });
});

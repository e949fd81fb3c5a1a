import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../../scripts/external-tools.ts";
import type { UserInfo } from "../../authn/user.ts";
import { type APIServer, startAPIServer } from "../../server.ts";
import { runKubectl } from "../../testing/kubectl-env.ts";
import { startTokenProxy, type TokenProxy } from "../../testing/token-proxy.ts";

// A small test authenticator: bearer tokens → users. kubectl sends no token over plain HTTP,
// so each identity gets a token proxy (testing/token-proxy.ts) in front of the server.
const users: Record<string, UserInfo> = {
  admin: { name: "kubernetes-admin", groups: ["system:masters", "system:authenticated"] },
  jane: { name: "jane", groups: ["system:authenticated"] },
  bob: { name: "bob", groups: ["system:authenticated"] },
};

describeWithTools("RBAC through the real kubectl", ["kubectl"], () => {
  let server: APIServer;
  let dir: string;
  const proxies: Record<string, TokenProxy> = {};

  beforeAll(async () => {
    server = await startAPIServer({
      insecurePort: 0,
      authorizationModes: ["RBAC"],
      authenticator: {
        async authenticateRequest(req) {
          const token = (req.headers.authorization ?? "").replace(/^Bearer /, "");
          return users[token] ? { user: users[token] } : null;
        },
      },
    });
    for (const who of Object.keys(users)) proxies[who] = await startTokenProxy(server.url, who);
    dir = await mkdtemp(join(tmpdir(), "rbac-kubectl-"));
  });
  afterAll(async () => {
    for (const p of Object.values(proxies)) await p.close();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** kubectl as `who`; resolves with its output and exit code (never rejects). */
  const kubectl = (who: string, args: string[], stdin?: string) =>
    runKubectl(
      { ...process.env, HOME: dir, KUBECONFIG: join(dir, "none"), KUBECACHEDIR: join(dir, `cache-${who}`) },
      ["--server", proxies[who].url, "-n", "default", ...args],
      stdin,
    );

  /** The index follows the stores' watches: wait until `can-i` gives the answer (no time limit but the test's). */
  async function untilCanI(who: string, args: string[], answer: "yes" | "no"): Promise<void> {
    for (;;) {
      const r = await kubectl(who, ["auth", "can-i", ...args]);
      if (r.out.trim() === answer) return;
      await new Promise((res) => setTimeout(res, 50));
    }
  }

  it("forbids with upstream's message, then allows through a RoleBinding", async () => {
    const denied = await kubectl("jane", ["get", "pods"]);
    expect(denied.code).toBe(1);
    expect(denied.err).toContain(
      'Error from server (Forbidden): pods is forbidden: User "jane" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    expect((await kubectl("jane", ["auth", "can-i", "list", "pods"])).out.trim()).toBe("no");
    expect(
      (await kubectl("admin", ["create", "rolebinding", "jane-view", "--clusterrole=view", "--user=jane"]))
        .code,
    ).toBe(0);
    await untilCanI("jane", ["list", "pods"], "yes");
    const allowed = await kubectl("jane", ["get", "pods"]);
    expect(allowed.code).toBe(0);
    expect(allowed.err).toContain("No resources found in default namespace.");
    // view is namespaced through the binding: nothing in another namespace, nothing to write.
    expect((await kubectl("jane", ["auth", "can-i", "list", "pods", "-n", "kube-system"])).out.trim()).toBe(
      "no",
    );
    const write = await kubectl("jane", ["auth", "can-i", "create", "pods"]);
    expect([write.out.trim(), write.code]).toEqual(["no", 1]);
  });

  it("prints bindings as upstream (NAME ROLE AGE, wide USERS GROUPS SERVICEACCOUNTS)", async () => {
    const r = await kubectl("admin", [
      "get",
      "clusterrolebinding",
      "system:public-info-viewer",
      "-o",
      "wide",
    ]);
    expect(r.out.split("\n")[0]).toMatch(/^NAME\s+ROLE\s+AGE\s+USERS\s+GROUPS\s+SERVICEACCOUNTS$/);
    expect(r.out).toContain("ClusterRole/system:public-info-viewer");
    expect(r.out).toContain("system:authenticated, system:unauthenticated");
    const roles = await kubectl("admin", ["get", "clusterroles", "cluster-admin"]);
    expect(roles.out.split("\n")[0]).toMatch(/^NAME\s+CREATED AT$/);
  });

  it("lists what a user may do (can-i --list)", async () => {
    const r = await kubectl("bob", ["auth", "can-i", "--list"]);
    expect(r.code).toBe(0);
    expect(r.out).toMatch(/selfsubjectaccessreviews\.authorization\.k8s\.io\s+\[\]\s+\[\]\s+\[create\]/);
    expect(r.out).toMatch(/\[\/healthz\]\s+\[\]\s+\[get\]/);
    expect(r.out).not.toContain("pods");
  });

  it("answers a SubjectAccessReview about another user", async () => {
    const sar = JSON.stringify({
      apiVersion: "authorization.k8s.io/v1",
      kind: "SubjectAccessReview",
      spec: {
        user: "jane",
        groups: ["system:authenticated"],
        resourceAttributes: { verb: "get", resource: "pods", namespace: "default" },
      },
    });
    const r = await kubectl("admin", ["create", "-f", "-", "-o", "json"], sar);
    expect(r.code).toBe(0);
    expect(JSON.parse(r.out).status).toEqual({
      allowed: true,
      reason: 'RBAC: allowed by RoleBinding "jane-view/default" of ClusterRole "view" to User "jane"',
    });
    const refused = await kubectl("bob", ["create", "-f", "-"], sar);
    expect(refused.err).toContain(
      'subjectaccessreviews.authorization.k8s.io is forbidden: User "bob" cannot create resource "subjectaccessreviews"',
    );
  });

  it("refuses an escalation, and allows it with bind or escalate", async () => {
    // bob may manage roles and bindings in default, but holds no other rights.
    await kubectl("admin", [
      "create",
      "clusterrole",
      "rbac-manager",
      "--verb=get,list,create,update,delete",
      "--resource=roles,rolebindings",
    ]);
    await kubectl("admin", ["create", "rolebinding", "bob-rbac", "--clusterrole=rbac-manager", "--user=bob"]);
    await untilCanI("bob", ["create", "roles"], "yes");

    const role = await kubectl("bob", ["create", "role", "pod-killer", "--verb=delete", "--resource=pods"]);
    expect(role.code).toBe(1);
    expect(role.err).toContain(
      'roles.rbac.authorization.k8s.io "pod-killer" is forbidden: user "bob" (groups=["system:authenticated"]) is attempting to grant RBAC permissions not currently held:\n{APIGroups:[""], Resources:["pods"], Verbs:["delete"]}',
    );
    const bind = await kubectl("bob", [
      "create",
      "rolebinding",
      "bob-admin",
      "--clusterrole=cluster-admin",
      "--user=bob",
    ]);
    expect(bind.code).toBe(1);
    expect(bind.err).toContain('rolebindings.rbac.authorization.k8s.io "bob-admin" is forbidden: user "bob"');

    // A role bob's rules already cover is fine without any special verb.
    expect(
      (await kubectl("bob", ["create", "role", "role-reader", "--verb=get", "--resource=roles"])).code,
    ).toBe(0);

    // Given bind on edit and escalate on roles, both go through.
    await kubectl("admin", [
      "create",
      "clusterrole",
      "delegator",
      "--verb=bind",
      "--resource=clusterroles",
      "--resource-name=edit",
    ]);
    await kubectl("admin", ["create", "role", "escalator", "--verb=escalate", "--resource=roles"]);
    await kubectl("admin", [
      "create",
      "rolebinding",
      "bob-delegator",
      "--clusterrole=delegator",
      "--user=bob",
    ]);
    await kubectl("admin", ["create", "rolebinding", "bob-escalator", "--role=escalator", "--user=bob"]);
    await untilCanI("bob", ["escalate", "roles"], "yes");
    await untilCanI("bob", ["bind", "clusterroles/edit"], "yes");
    expect(
      (await kubectl("bob", ["create", "role", "pod-killer", "--verb=delete", "--resource=pods"])).code,
    ).toBe(0);
    expect(
      (await kubectl("bob", ["create", "rolebinding", "jane-edit", "--clusterrole=edit", "--user=jane"]))
        .code,
    ).toBe(0);
    // bind on edit is not bind on cluster-admin.
    expect(
      (
        await kubectl("bob", [
          "create",
          "rolebinding",
          "bob-admin",
          "--clusterrole=cluster-admin",
          "--user=bob",
        ])
      ).code,
    ).toBe(1);
  });

  it("refuses to change a binding's roleRef", async () => {
    const r = await kubectl("admin", [
      "patch",
      "rolebinding",
      "jane-view",
      "--type=merge",
      "-p",
      '{"roleRef":{"name":"edit"}}',
    ]);
    expect(r.code).toBe(1);
    expect(r.err).toContain("roleRef: Invalid value:");
    expect(r.err).toContain("cannot change roleRef");
  });
});

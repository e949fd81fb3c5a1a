/**
 * A kubelet's view of the API, through kubectl: bearer tokens map to `system:node:node-a` and
 * `system:node:node-b` (a test authenticator; certificates are another chapter's), the Node
 * authorizer runs in front of a stand-in for RBAC, and NodeRestriction is the one admission
 * plugin. Two nodes, a pod on each, a secret for each pod.
 *
 * The stand-in for RBAC allows every request of a user that is not a node (the admin setting
 * things up) and every non-resource request (discovery, as system:discovery would) — and has no
 * opinion on a node's resource requests, so what a node may do here is what the Node authorizer
 * alone grants, as with upstream's `--authorization-mode=Node,RBAC` and no extra bindings.
 *
 * kubectl sends no credentials over plain HTTP (kubernetes/kubectl#744: client-go sets the
 * bearer token only for TLS connections), so kubectl talks to a TLS front — a self-signed
 * certificate, `--insecure-skip-tls-verify` — that forwards every request, Authorization header
 * included, to the insecure port. Serving HTTPS itself is another part of this chapter.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { type IncomingMessage, request } from "node:http";
import { createServer as createHTTPSServer, type Server as HTTPSServer } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../../scripts/external-tools.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { encodeCertPEM, encodePrivateKeyPEM, newCertificateAuthority } from "../../../pki/pki-helpers.ts";
import { defaultOnPlugins } from "../../admission/plugins.ts";
import type { Authenticator } from "../../authn/authenticator.ts";
import type { UserInfo } from "../../authn/user.ts";
import { type APIServer, startAPIServer } from "../../server.ts";
import { runKubectl } from "../../testing/kubectl-env.ts";
import type { Attributes, Authorizer, AuthorizerResult } from "../authorizer.ts";
import { newNodeAuthorizer } from "./node-authorizer.ts";
import { nodeIdentity } from "./node-identifier.ts";

const users: Record<string, UserInfo> = {
  "admin-token": { name: "admin", groups: ["system:masters", "system:authenticated"] },
  "node-a-token": { name: "system:node:node-a", groups: ["system:nodes", "system:authenticated"] },
  "node-b-token": { name: "system:node:node-b", groups: ["system:nodes", "system:authenticated"] },
};

const tokenAuthenticator: Authenticator = {
  async authenticateRequest(req: IncomingMessage) {
    const header = req.headers.authorization ?? "";
    if (!header.startsWith("Bearer ")) return null;
    const user = users[header.slice("Bearer ".length)];
    if (!user) throw new Error("invalid bearer token");
    return { user };
  },
};

/** Upstream's union authorizer: the first allow or deny wins; reasons of the others are joined. */
function union(...authorizers: Authorizer[]): Authorizer {
  return {
    async authorize(a: Attributes): Promise<AuthorizerResult> {
      const reasons: string[] = [];
      for (const az of authorizers) {
        const r = await az.authorize(a);
        if (r.decision !== "noOpinion") return r;
        if (r.reason) reasons.push(r.reason);
      }
      return { decision: "noOpinion", reason: reasons.join("\n") };
    },
  };
}

const rbacStandIn: Authorizer = {
  async authorize(a) {
    if (!nodeIdentity(a.user).isNode || !a.isResourceRequest) return { decision: "allow", reason: "" };
    return { decision: "noOpinion", reason: "" };
  },
};

/** An HTTPS listener that hands every request to `target` unchanged (streams included). */
async function tlsFront(target: string): Promise<{ url: string; server: HTTPSServer }> {
  const { cert, key } = await newCertificateAuthority("localhost", "ECDSA-P256", new Date());
  const server = createHTTPSServer(
    { cert: encodeCertPEM(cert), key: encodePrivateKeyPEM(key) },
    (req, res) => {
      const upstream = request(`${target}${req.url}`, { method: req.method, headers: req.headers }, (up) => {
        res.writeHead(up.statusCode ?? 502, up.headers);
        up.pipe(res);
      });
      upstream.on("error", () => res.destroy());
      req.pipe(upstream);
    },
  );
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  return { url: `https://127.0.0.1:${(server.address() as AddressInfo).port}`, server };
}

describeWithTools("a kubelet's requests through the Node authorizer and NodeRestriction", ["kubectl"], () => {
  let server: APIServer;
  let front: HTTPSServer | undefined;
  let nodeAuthz: ReturnType<typeof newNodeAuthorizer>;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  async function api(
    token: string,
    method: string,
    path: string,
    body?: unknown,
  ): Promise<{ code: number; json: KubeObject }> {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: {
        Authorization: `Bearer ${token}`,
        "Content-Type": method === "PATCH" ? "application/merge-patch+json" : "application/json",
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { code: res.status, json: (await res.json()) as KubeObject };
  }

  async function admin(method: string, path: string, body?: unknown): Promise<KubeObject> {
    const r = await api("admin-token", method, path, body);
    expect(r.code, `${method} ${path}: ${JSON.stringify(r.json)}`).toBeLessThan(300);
    return r.json;
  }

  const pod = (name: string, nodeName: string, secret: string) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: {
      nodeName,
      containers: [{ name: "c", image: "nginx" }],
      volumes: [{ name: "creds", secret: { secretName: secret } }],
    },
  });

  /** The graph follows the registry a moment later: wait until it shows what the test just wrote. */
  async function graphShows(node: string, secret: string, present: boolean): Promise<void> {
    for (let i = 0; i < 200; i++) {
      if (nodeAuthz.graph.hasPathFrom(node, "secret", "default", secret).found === present) return;
      await new Promise((r) => setTimeout(r, 25));
    }
    throw new Error(`the graph never showed ${node} ${present ? "with" : "without"} secret ${secret}`);
  }

  beforeAll(async () => {
    server = await startAPIServer({
      insecurePort: 0,
      authenticator: tokenAuthenticator,
      authorizerFromStores: (stores) => {
        nodeAuthz = newNodeAuthorizer(stores);
        return union(nodeAuthz, rbacStandIn);
      },
      // NodeRestriction alone: the other default plugins (ServiceAccount, PodSecurity, …) are
      // other sections' business, and would ask more of the pods this test creates.
      admission: { enablePlugins: ["NodeRestriction"], disablePlugins: [...defaultOnPlugins] },
    });
    for (const n of ["node-a", "node-b"]) {
      await admin("POST", "/api/v1/nodes", { apiVersion: "v1", kind: "Node", metadata: { name: n } });
    }
    for (const s of ["a-secret", "b-secret"]) {
      await admin("POST", "/api/v1/namespaces/default/secrets", {
        apiVersion: "v1",
        kind: "Secret",
        metadata: { name: s },
        stringData: { password: s },
      });
    }
    await admin("POST", "/api/v1/namespaces/default/pods", pod("web-a", "node-a", "a-secret"));
    await admin("POST", "/api/v1/namespaces/default/pods", pod("web-b", "node-b", "b-secret"));
    await graphShows("node-a", "a-secret", true);
    await graphShows("node-b", "b-secret", true);

    const tls = await tlsFront(server.url);
    front = tls.server;
    dir = await mkdtemp(join(tmpdir(), "node-authz-test-"));
    const kubeconfig = join(dir, "kubeconfig");
    await writeFile(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        "clusters:",
        `- cluster: {server: "${tls.url}", insecure-skip-tls-verify: true}`,
        "  name: mini",
        "contexts:",
        "- context: {cluster: mini, user: kubelet, namespace: default}",
        "  name: mini",
        "current-context: mini",
        "users:",
        "- name: kubelet",
        "  user: {}",
        "",
      ].join("\n"),
    );
    env = { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, "cache"), HOME: dir };
  });
  afterAll(async () => {
    nodeAuthz?.stop();
    front?.closeAllConnections();
    front?.close();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  /** kubectl as one of the nodes (`--token`); resolves with output and exit code. */
  const kubectl = (token: string, args: string[], stdin?: string) =>
    runKubectl(env, [`--token=${token}`, ...args], stdin);

  it("refuses a kubelet touching another node's Node object, with NodeRestriction's message", async () => {
    // A create carries no name in the URL: the authorizer must allow it, admission sees the body.
    const node = JSON.stringify({ apiVersion: "v1", kind: "Node", metadata: { name: "node-b" } });
    const r = await kubectl("node-a-token", ["create", "-f", "-"], node);
    expect(r.code).toBe(1);
    expect(r.err).toBe(
      'Error from server (Forbidden): error when creating "STDIN": nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"\n',
    );
    // What a kubelet sends to report status, aimed at the wrong node.
    const status = await api("node-a-token", "PATCH", "/api/v1/nodes/node-b/status", {
      status: { phase: "Running" },
    });
    expect(status.code).toBe(403);
    expect(status.json.message).toBe(
      'nodes "node-b" is forbidden: node "node-a" is not allowed to modify node "node-b"',
    );
    // Reading it is refused earlier, by the authorizer, by name (so `kubectl patch`, which reads first, stops there).
    const get = await kubectl("node-a-token", ["get", "node", "node-b"]);
    expect(get.err).toBe(
      `Error from server (Forbidden): nodes "node-b" is forbidden: User "system:node:node-a" cannot get resource "nodes" in API group "" at the cluster scope: node 'node-a' cannot read 'node-b', only its own Node object\n`,
    );
  });

  it("lets a kubelet label its own Node, but not with a restricted label", async () => {
    const ok = await kubectl("node-a-token", ["label", "node", "node-a", "example.com/rack=r1"]);
    expect(ok.err).toBe("");
    expect(ok.out).toBe("node/node-a labeled\n");
    const bad = await kubectl("node-a-token", [
      "label",
      "node",
      "node-a",
      "node-restriction.kubernetes.io/pci=true",
    ]);
    expect(bad.err).toBe(
      'Error from server (Forbidden): nodes "node-a" is forbidden: is not allowed to modify labels: node-restriction.kubernetes.io/pci\n',
    );
  });

  it("refuses a secret used only by another node's pod, and allows its own pod's secret", async () => {
    const theirs = await kubectl("node-a-token", ["get", "secret", "b-secret"]);
    expect(theirs.code).toBe(1);
    expect(theirs.err).toBe(
      `Error from server (Forbidden): secrets "b-secret" is forbidden: User "system:node:node-a" cannot get resource "secrets" in API group "" in the namespace "default": no relationship found between node 'node-a' and this object\n`,
    );
    const mine = await kubectl("node-a-token", [
      "get",
      "secret",
      "a-secret",
      "-o",
      "jsonpath={.metadata.name}",
    ]);
    expect(mine).toEqual({ out: "a-secret", err: "", code: 0 });
    // No node may list secrets: the graph answers about one named object only.
    const list = await kubectl("node-a-token", ["get", "secrets"]);
    expect(list.err).toBe(
      `Error from server (Forbidden): secrets is forbidden: User "system:node:node-a" cannot list resource "secrets" in API group "" in the namespace "default": No Object name found\n`,
    );
  });

  it("lets a kubelet watch one named secret of its pods, as the kubelet's secret manager does", async () => {
    const one = await api(
      "node-a-token",
      "GET",
      "/api/v1/namespaces/default/secrets?fieldSelector=metadata.name%3Da-secret",
    );
    expect(one.code).toBe(200);
    expect((one.json.items as KubeObject[]).map((s) => s.metadata.name)).toEqual(["a-secret"]);
    const other = await api(
      "node-a-token",
      "GET",
      "/api/v1/namespaces/default/secrets?fieldSelector=metadata.name%3Db-secret",
    );
    expect(other.code).toBe(403);
  });

  it("lists the pods of its own node only", async () => {
    const mine = await kubectl("node-a-token", [
      "get",
      "pods",
      "-A",
      "--field-selector",
      "spec.nodeName=node-a",
      "-o",
      "name",
    ]);
    expect(mine).toEqual({ out: "pod/web-a\n", err: "", code: 0 });
    const all = await kubectl("node-a-token", ["get", "pods", "-A"]);
    expect(all.err).toBe(
      `Error from server (Forbidden): pods is forbidden: User "system:node:node-a" cannot list resource "pods" in API group "" at the cluster scope: can only list/watch pods with spec.nodeName field selector\n`,
    );
  });

  it("updates the status of its own pod, not of another node's pod", async () => {
    // The kubelet's status manager PATCHes pods/status without reading it first (a node may not
    // get pods/status, so `kubectl patch --subresource=status` is refused at its first GET).
    const running = { status: { phase: "Running" } };
    const mine = await api("node-a-token", "PATCH", "/api/v1/namespaces/default/pods/web-a/status", running);
    expect(mine.code).toBe(200);
    expect((mine.json.status as { phase: string }).phase).toBe("Running");
    const theirs = await api(
      "node-a-token",
      "PATCH",
      "/api/v1/namespaces/default/pods/web-b/status",
      running,
    );
    expect(theirs.code).toBe(403);
    expect(theirs.json.message).toBe(
      'pods "web-b" is forbidden: node "node-a" can only update pod status for pods with spec.nodeName set to itself',
    );
    const viaKubectl = await kubectl("node-a-token", [
      "patch",
      "pod",
      "web-a",
      "--subresource=status",
      "--type=merge",
      "-p",
      "{}",
    ]);
    expect(viaKubectl.err).toBe(
      `Error from server (Forbidden): pods "web-a" is forbidden: User "system:node:node-a" cannot get resource "pods/status" in API group "" in the namespace "default"\n`,
    );
  });

  it("renews its own Lease in kube-node-lease, not another node's", async () => {
    const lease = (name: string) => ({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name },
      spec: { holderIdentity: name },
    });
    const path = "/apis/coordination.k8s.io/v1/namespaces/kube-node-lease/leases";
    expect((await api("node-a-token", "POST", path, lease("node-a"))).code).toBe(201);
    const theirs = await api("node-a-token", "POST", path, lease("node-b"));
    expect(theirs.code).toBe(403);
    expect(theirs.json.message).toBe(
      'leases.coordination.k8s.io "node-b" is forbidden: can only access node lease with the same name as the requesting node',
    );
  });

  it("moves a secret's grant with its pod: deleted here, recreated on the other node", async () => {
    await admin("DELETE", "/api/v1/namespaces/default/pods/web-a?gracePeriodSeconds=0");
    await graphShows("node-a", "a-secret", false);
    expect((await kubectl("node-a-token", ["get", "secret", "a-secret"])).code).toBe(1);

    await admin("POST", "/api/v1/namespaces/default/pods", pod("web-a", "node-b", "a-secret"));
    await graphShows("node-b", "a-secret", true);
    const moved = await kubectl("node-b-token", ["get", "secret", "a-secret", "-o", "name"]);
    expect(moved).toEqual({ out: "secret/a-secret\n", err: "", code: 0 });
    expect((await kubectl("node-a-token", ["get", "secret", "a-secret"])).code).toBe(1);
  });
});

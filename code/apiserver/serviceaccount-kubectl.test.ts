import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { type IncomingMessage, request } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import { ensurePKI } from "../pki/certs.ts";
import type { Authenticator } from "./authn/authenticator.ts";
import { registryTokenGetter } from "./authn/serviceaccount/getter.ts";
import { newServiceAccountAuthenticator } from "./authn/serviceaccount/jwt.ts";
import { AllAuthenticated, SystemPrivilegedGroup, type UserInfo } from "./authn/user.ts";
import type { Attributes, Authorizer } from "./authz/authorizer.ts";
import { type APIServer, startAPIServer } from "./server.ts";
import { kubectlOK, runKubectl } from "./testing/kubectl-env.ts";
import { serviceAccountConfigForPKI } from "./testing/service-account-tokens.ts";

const issuer = "https://kubernetes.default.svc.cluster.local";

/** Two static bearer tokens for the test's people (the token file is another engineer's). */
const people: Record<string, UserInfo> = {
  "admin-token": { name: "admin", groups: [SystemPrivilegedGroup] },
  "bob-token": { name: "bob", groups: [] },
};
const staticTokens: Authenticator = {
  async authenticateRequest(req) {
    const token = /^Bearer (.+)$/.exec(req.headers.authorization ?? "")?.[1];
    const user = token ? people[token] : undefined;
    return user ? { user: structuredClone(user) } : null;
  },
};

/** union + AuthenticatedGroupAdder, as the authentication config composes them upstream. */
function union(...authenticators: Authenticator[]): Authenticator {
  return {
    async authenticateRequest(req: IncomingMessage) {
      for (const a of authenticators) {
        const res = await a.authenticateRequest(req);
        if (res) return { ...res, user: { ...res.user, groups: [...res.user.groups, AllAuthenticated] } };
      }
      return null;
    },
  };
}

/**
 * The test's authorizer (RBAC is another engineer's): masters may do anything; everyone
 * authenticated may read discovery; bob may impersonate jane and the group dev; jane and
 * service accounts may list pods. It remembers who made each resource request.
 */
const seen: UserInfo[] = [];
const authorizer: Authorizer = {
  async authorize(a: Attributes) {
    const allow = { decision: "allow" as const, reason: "" };
    const no = { decision: "noOpinion" as const, reason: "" };
    if (a.isResourceRequest && a.verb !== "impersonate") seen.push(a.user);
    if (a.user.groups.includes(SystemPrivilegedGroup)) return allow;
    if (!a.isResourceRequest) return allow;
    if (a.verb === "impersonate") {
      const ok =
        a.user.name === "bob" &&
        ((a.resource === "users" && a.name === "jane") || (a.resource === "groups" && a.name === "dev"));
      return ok ? allow : no;
    }
    const reader = a.user.name === "jane" || a.user.groups.includes("system:serviceaccounts");
    return reader && a.resource === "pods" && (a.verb === "list" || a.verb === "get") ? allow : no;
  },
};

/**
 * kubectl sends a token only over TLS (client-go's IsConfigTransportTLS), and HTTPS is another
 * engineer's: a small TLS front that passes every request, headers as sent, to our HTTP port.
 */
async function tlsFront(target: string, cert: string, key: string): Promise<Server> {
  const front = createServer({ cert, key }, (req, res) => {
    const upstream = request(
      new URL(req.url ?? "/", target),
      { method: req.method, headers: req.rawHeaders },
      (answer) => {
        res.writeHead(answer.statusCode ?? 502, answer.rawHeaders);
        answer.pipe(res);
      },
    );
    upstream.on("error", () => res.destroy());
    req.pipe(upstream);
  });
  await new Promise<void>((resolve) => front.listen(0, "127.0.0.1", resolve));
  return front;
}

/** kubectl's 401: on the first request (discovery, when its cache is cold) or on the request itself. */
function expectUnauthorized(r: { code: number; err: string }): void {
  expect(r.code).toBe(1);
  expect(r.err).toMatch(
    /You must be logged in to the server \(Unauthorized\)|the server has asked for the client to provide credentials/,
  );
}

const claimsOf = (token: string) => JSON.parse(Buffer.from(token.split(".")[1], "base64url").toString());

describeWithTools("service-account tokens and impersonation, driven by the real kubectl", ["kubectl"], () => {
  let server: APIServer;
  let front: Server | undefined;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "satoken-test-"));
    // The PKI command's layout: sa.key signs, sa.pub verifies, read as kube-apiserver's flags read them.
    const pki = await ensurePKI({ dir: join(dir, "pki") });
    if (!("layout" in pki)) throw pki;
    const { layout } = pki;
    const config = serviceAccountConfigForPKI(layout, issuer);
    server = await startAPIServer({
      insecurePort: 0,
      authorizer,
      serviceAccountTokens: config.tokens,
      authenticatorFromStores: (stores) =>
        union(
          newServiceAccountAuthenticator({ ...config.authentication, getter: registryTokenGetter(stores) }),
          staticTokens,
        ),
    });
    const [cert, key] = await Promise.all([
      readFile(layout.apiServerCert, "utf8"),
      readFile(layout.apiServerKey, "utf8"),
    ]);
    front = await tlsFront(server.url, cert, key);
    const url = `https://127.0.0.1:${(front.address() as AddressInfo).port}`;
    const kubeconfig = join(dir, "kubeconfig");
    await writeFile(
      kubeconfig,
      [
        "apiVersion: v1",
        "kind: Config",
        `clusters: [{name: mini, cluster: {server: "${url}", certificate-authority: "${layout.caCert}"}}]`,
        "contexts: [{name: mini, context: {cluster: mini, user: admin, namespace: default}}]",
        "current-context: mini",
        "users: [{name: admin, user: {token: admin-token}}]",
        "",
      ].join("\n"),
    );
    env = { ...process.env, KUBECONFIG: kubeconfig, KUBECACHEDIR: join(dir, "cache"), HOME: dir };
  });
  afterAll(async () => {
    if (front) {
      const f = front;
      await new Promise<void>((resolve) => {
        f.close(() => resolve());
        f.closeAllConnections();
      });
    }
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubectl = (args: string[]) => runKubectl(env, args);
  const ok = (args: string[], stdin?: string) => kubectlOK(env, args, stdin);
  /** The user the server saw for the last resource request of `args`. */
  async function whoami(args: string[]): Promise<UserInfo | undefined> {
    seen.length = 0;
    await ok(args);
    return seen.at(-1);
  }

  it("refuses a request with no credential we know (401)", async () => {
    expectUnauthorized(await kubectl(["get", "pods", "--token=nobody"]));
  });

  it("kubectl create token: a bound JWT for the ServiceAccount that works until the ServiceAccount is deleted", async () => {
    // Upstream the controller-manager's serviceaccounts controller creates `default` in each namespace.
    await ok(["create", "serviceaccount", "default"]);
    const uid = (await ok(["get", "serviceaccount", "default", "-o", "jsonpath={.metadata.uid}"])).trim();
    const token = (await ok(["create", "token", "default", "-n", "default"])).trim();

    const claims = claimsOf(token);
    expect(claims).toMatchObject({
      aud: [issuer],
      iss: issuer,
      sub: "system:serviceaccount:default:default",
      "kubernetes.io": { namespace: "default", serviceaccount: { name: "default", uid } },
    });
    expect(claims.exp - claims.iat).toBe(3600);
    expect(claims.nbf).toBe(claims.iat);

    expect(await whoami(["get", "pods", `--token=${token}`])).toEqual({
      name: "system:serviceaccount:default:default",
      uid,
      groups: ["system:serviceaccounts", "system:serviceaccounts:default", AllAuthenticated],
      extra: { "authentication.kubernetes.io/credential-id": [`JTI=${claims.jti}`] },
    });

    await ok(["delete", "serviceaccount", "default"]);
    expectUnauthorized(await kubectl(["get", "pods", `--token=${token}`]));

    // The same name again is a new identity: the old token stays refused.
    await ok(["create", "serviceaccount", "default"]);
    expectUnauthorized(await kubectl(["get", "pods", `--token=${token}`]));
    const fresh = (await ok(["create", "token", "default"])).trim();
    expect((await kubectl(["get", "pods", `--token=${fresh}`])).code).toBe(0);
  });

  it("--duration and --audience: the lifetime's bounds, and a token for another audience is no good here", async () => {
    await ok(["create", "serviceaccount", "builder"]);
    const long = claimsOf((await ok(["create", "token", "builder", "--duration=2h"])).trim());
    expect(long.exp - long.iat).toBe(7200);

    const short = await kubectl(["create", "token", "builder", "--duration=5m"]);
    expect(short.code).toBe(1);
    expect(short.err.trim()).toBe(
      'error: failed to create token: TokenRequest.authentication.k8s.io "" is invalid: spec.expirationSeconds: Invalid value: 300: may not specify a duration less than 10 minutes',
    );

    const vault = (await ok(["create", "token", "builder", "--audience=vault"])).trim();
    expect(claimsOf(vault).aud).toEqual(["vault"]);
    expectUnauthorized(await kubectl(["get", "pods", `--token=${vault}`]));

    const missing = await kubectl(["create", "token", "nobody"]);
    expect(missing.err.trim()).toBe('error: failed to create token: serviceaccounts "nobody" not found');
  });

  it("--bound-object-kind Pod: the token names the pod, and dies with it", async () => {
    await ok(["create", "serviceaccount", "web"]);
    const pod = JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "web-1" },
      spec: { serviceAccountName: "web", containers: [{ name: "c", image: "nginx" }] },
    });
    await ok(["create", "-f", "-"], pod);
    const podUID = (await ok(["get", "pod", "web-1", "-o", "jsonpath={.metadata.uid}"])).trim();
    const token = (
      await ok(["create", "token", "web", "--bound-object-kind=Pod", "--bound-object-name=web-1"])
    ).trim();
    expect(claimsOf(token)["kubernetes.io"].pod).toEqual({ name: "web-1", uid: podUID });
    const user = await whoami(["get", "pods", `--token=${token}`]);
    expect(user?.extra).toMatchObject({
      "authentication.kubernetes.io/pod-name": ["web-1"],
      "authentication.kubernetes.io/pod-uid": [podUID],
    });

    // Another ServiceAccount cannot bind a token to web's pod.
    const other = await kubectl([
      "create",
      "token",
      "builder",
      "--bound-object-kind=Pod",
      "--bound-object-name=web-1",
    ]);
    expect(other.err.trim()).toBe(
      'error: failed to create token: cannot bind token for serviceaccount "builder" to pod running with different serviceaccount name.',
    );

    await ok(["delete", "pod", "web-1"]);
    expectUnauthorized(await kubectl(["get", "pods", `--token=${token}`]));
  });

  it("kubectl --as --as-group: allowed when every attribute may be impersonated, denied with upstream's message", async () => {
    expect(await whoami(["get", "pods", "--token=bob-token", "--as=jane", "--as-group=dev"])).toEqual({
      name: "jane",
      groups: ["dev", AllAuthenticated],
      extra: {},
    });
    // Without impersonation bob may not list pods.
    const plain = await kubectl(["get", "pods", "--token=bob-token"]);
    expect(plain.err.trim()).toBe(
      'Error from server (Forbidden): pods is forbidden: User "bob" cannot list resource "pods" in API group "" in the namespace "default"',
    );
    const masters = await kubectl([
      "get",
      "pods",
      "--token=bob-token",
      "--as=jane",
      "--as-group=system:masters",
    ]);
    expect(masters.code).toBe(1);
    expect(masters.err.trim()).toBe(
      'Error from server (Forbidden): groups "system:masters" is forbidden: User "bob" cannot impersonate resource "groups" in API group "" at the cluster scope',
    );
    const mallory = await kubectl(["get", "pods", "--token=bob-token", "--as=mallory"]);
    expect(mallory.err.trim()).toBe(
      'Error from server (Forbidden): users "mallory" is forbidden: User "bob" cannot impersonate resource "users" in API group "" at the cluster scope',
    );
  });
});

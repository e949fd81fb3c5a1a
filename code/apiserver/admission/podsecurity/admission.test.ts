/**
 * PodSecurity through the API server: enforce refuses with upstream's 403, warn answers with a
 * Warning header (kubectl prints it), controllers are warned and never refused, a namespace
 * label change warns about the pods already there, bad labels are a 422.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeWithTools } from "../../../../scripts/external-tools.ts";
import { type APIServer, startAPIServer } from "../../server.ts";
import { plainKubectlEnv, runKubectl } from "../../testing/kubectl-env.ts";

const restrictedMessage =
  'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
  'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
  'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
  'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")';

const pod = (name: string, securityContext?: object) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "c", image: "nginx", ...(securityContext ? { securityContext } : {}) }] },
});

const deployment = (name: string) => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name },
  spec: {
    selector: { matchLabels: { app: name } },
    template: { metadata: { labels: { app: name } }, spec: pod(name).spec },
  },
});

/** Upstream's Warning header values, decoded as kubectl decodes them. */
function warnings(res: Response): string[] {
  const raw = res.headers.get("warning");
  if (!raw) return [];
  return [
    ...Buffer.from(raw, "latin1")
      .toString("utf8")
      .matchAll(/299 - "((?:[^"\\]|\\.)*)"/g),
  ].map((m) => m[1].replace(/\\(.)/g, "$1"));
}

describe("PodSecurity admission through the API server", () => {
  let server: APIServer;
  const send = (method: string, path: string, body?: unknown, contentType = "application/json") =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { "Content-Type": contentType },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  const namespace = (name: string, labels: Record<string, string>) =>
    send("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name, labels } });

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0, admission: {} });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("enforce refuses a pod with upstream's 403 and stores nothing; a compliant pod is created", async () => {
    expect((await namespace("locked", { "pod-security.kubernetes.io/enforce": "restricted" })).status).toBe(
      201,
    );
    const res = await send("POST", "/api/v1/namespaces/locked/pods", pod("web"));
    expect(res.status).toBe(403);
    const status = await res.json();
    expect(status).toMatchObject({
      kind: "Status",
      reason: "Forbidden",
      code: 403,
      message: `pods "web" is forbidden: violates PodSecurity "restricted:latest": ${restrictedMessage}`,
      details: { name: "web", kind: "pods" },
    });
    expect(warnings(res)).toEqual([]);
    expect((await send("GET", "/api/v1/namespaces/locked/pods/web")).status).toBe(404);
    const fine = pod("fine", {
      allowPrivilegeEscalation: false,
      runAsNonRoot: true,
      capabilities: { drop: ["ALL"] },
      seccompProfile: { type: "RuntimeDefault" },
    });
    expect((await send("POST", "/api/v1/namespaces/locked/pods", fine)).status).toBe(201);
  });

  it("a pinned version is named in the message", async () => {
    await namespace("pinned", {
      "pod-security.kubernetes.io/enforce": "baseline",
      "pod-security.kubernetes.io/enforce-version": "v1.32",
    });
    const res = await send("POST", "/api/v1/namespaces/pinned/pods", pod("root", { privileged: true }));
    expect((await res.json()).message).toBe(
      'pods "root" is forbidden: violates PodSecurity "baseline:v1.32": privileged (container "c" must not set securityContext.privileged=true)',
    );
  });

  it("warn admits the pod and returns the warning", async () => {
    await namespace("warned", { "pod-security.kubernetes.io/warn": "restricted" });
    const res = await send("POST", "/api/v1/namespaces/warned/pods", pod("web"));
    expect(res.status).toBe(201);
    expect(warnings(res)).toEqual([`would violate PodSecurity "restricted:latest": ${restrictedMessage}`]);
  });

  it("a deployment is warned, never refused, even where pods are enforced", async () => {
    await namespace("strict", {
      "pod-security.kubernetes.io/enforce": "restricted",
      "pod-security.kubernetes.io/warn": "restricted",
    });
    const res = await send("POST", "/apis/apps/v1/namespaces/strict/deployments", deployment("web"));
    expect(res.status).toBe(201);
    expect(warnings(res)).toEqual([`would violate PodSecurity "restricted:latest": ${restrictedMessage}`]);
    // Enforce alone: no warning for the controller (warn is privileged there).
    const quiet = await send("POST", "/apis/apps/v1/namespaces/locked/deployments", deployment("web"));
    expect(quiet.status).toBe(201);
    expect(warnings(quiet)).toEqual([]);
  });

  it("tightening a namespace's enforce label warns about the pods already there", async () => {
    await namespace("open", {});
    for (const name of ["a", "b", "c"]) await send("POST", "/api/v1/namespaces/open/pods", pod(name));
    await send("POST", "/api/v1/namespaces/open/pods", pod("p", { privileged: true }));
    const res = await send(
      "PATCH",
      "/api/v1/namespaces/open",
      { metadata: { labels: { "pod-security.kubernetes.io/enforce": "baseline" } } },
      "application/merge-patch+json",
    );
    expect(res.status).toBe(200);
    expect(warnings(res)).toEqual([
      'existing pods in namespace "open" violate the new PodSecurity enforce level "baseline:latest"',
      "p: privileged",
    ]);
    const stricter = await send(
      "PATCH",
      "/api/v1/namespaces/open",
      { metadata: { labels: { "pod-security.kubernetes.io/enforce": "restricted" } } },
      "application/merge-patch+json",
    );
    expect(warnings(stricter)).toEqual([
      'existing pods in namespace "open" violate the new PodSecurity enforce level "restricted:latest"',
      "a (and 2 other pods): allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile",
      "p: privileged, allowPrivilegeEscalation != false, unrestricted capabilities, runAsNonRoot != true, seccompProfile",
    ]);
    // Relaxing warns about nothing; the pods were never touched.
    const relaxed = await send(
      "PATCH",
      "/api/v1/namespaces/open",
      { metadata: { labels: { "pod-security.kubernetes.io/enforce": "privileged" } } },
      "application/merge-patch+json",
    );
    expect(warnings(relaxed)).toEqual([]);
    expect((await send("GET", "/api/v1/namespaces/open/pods/p")).status).toBe(200);
  });

  it("a namespace with a bad label is not created (422)", async () => {
    const res = await namespace("typo", { "pod-security.kubernetes.io/enforce": "strict" });
    expect(res.status).toBe(422);
    expect(await res.json()).toMatchObject({
      reason: "Invalid",
      code: 422,
      message:
        'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
    });
  });

  it("status writes are not judged", async () => {
    const res = await send(
      "PATCH",
      "/api/v1/namespaces/locked/pods/fine/status",
      { status: { phase: "Running" } },
      "application/merge-patch+json",
    );
    expect(res.status).toBe(200);
  });
});

describeWithTools("kubectl against PodSecurity", ["kubectl"], () => {
  let server: APIServer;
  let dir: string;
  let env: NodeJS.ProcessEnv;

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0, admission: {} });
    dir = await mkdtemp(join(tmpdir(), "kubectl-podsecurity-"));
    env = await plainKubectlEnv(dir, server.url);
  });
  afterAll(async () => {
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubectl = (args: string[], stdin?: string) => runKubectl(env, args, stdin);

  it("prints the warning, and the refusal", async () => {
    expect((await kubectl(["create", "namespace", "team"])).code).toBe(0);
    const label = await kubectl(["label", "namespace", "team", "pod-security.kubernetes.io/warn=restricted"]);
    expect(label.out).toBe("namespace/team labeled\n");
    const run = await kubectl(["run", "web", "-n", "team", "--image=nginx"]);
    expect(run.code).toBe(0);
    expect(run.out).toBe("pod/web created\n");
    expect(run.err).toBe(
      'Warning: would violate PodSecurity "restricted:latest": allowPrivilegeEscalation != false (container "web" must set securityContext.allowPrivilegeEscalation=false), unrestricted capabilities (container "web" must set securityContext.capabilities.drop=["ALL"]), runAsNonRoot != true (pod or container "web" must set securityContext.runAsNonRoot=true), seccompProfile (pod or container "web" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")\n',
    );
    const enforce = await kubectl([
      "label",
      "namespace",
      "team",
      "pod-security.kubernetes.io/enforce=baseline",
    ]);
    expect(enforce.code).toBe(0);
    const manifest = JSON.stringify({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "host", namespace: "team" },
      spec: { hostNetwork: true, containers: [{ name: "c", image: "nginx" }] },
    });
    const refused = await kubectl(["apply", "-f", "-"], manifest);
    expect(refused.code).toBe(1);
    expect(refused.err).toBe(
      'Error from server (Forbidden): error when creating "STDIN": pods "host" is forbidden: violates PodSecurity "baseline:latest": host namespaces (hostNetwork=true)\n',
    );
  });
});

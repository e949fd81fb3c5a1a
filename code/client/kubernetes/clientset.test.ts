/**
 * The client against our API server over HTTPS, authenticated by the client certificates of the
 * course's PKI (code/pki, as `npm run pki` makes them), loaded from the generated kubeconfig.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { CoreV1Api, KubeConfig } from "@kubernetes/client-node";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { findTool } from "../../../scripts/external-tools.ts";
import type { Pod } from "../../api/core.ts";
import type { KubeObject, WatchEvent } from "../../api/meta.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { kubectlOK } from "../../apiserver/testing/kubectl-env.ts";
import { ensurePKI, type PKILayout } from "../../pki/certs.ts";
import { PKIError } from "../../pki/errors.ts";
import {
  isAlreadyExists,
  isConflict,
  isForbidden,
  isNotFound,
  isResourceExpired,
  StatusError,
} from "../errors.ts";
import { MergePatchType } from "../rest/request.ts";
import { newListWatchFromClient } from "../tools/cache/listwatch.ts";
import { buildConfigFromFlags } from "../tools/clientcmd/client-config.ts";
import { type Clientset, newForConfig } from "./clientset.ts";

const kubectl = findTool("kubectl");

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

const pod = (name: string, labels: Record<string, string> = {}): Pod =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, labels },
    spec: { containers: [{ name: "c", image: "nginx" }] },
  }) as Pod;

async function rejection(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    if (e instanceof StatusError) return e;
    throw e;
  }
  throw new Error("expected the call to fail");
}

describe("Clientset against the API server over HTTPS with the PKI's client certificates", () => {
  let dir: string;
  let layout: PKILayout;
  let server: APIServer;
  let admin: Clientset;

  const kubeconfigOf = (id: string) => layout.identities.find((i) => i.id === id)?.kubeconfig as string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "client-rest-"));
    const port = await freePort();
    const pki = await ensurePKI({
      dir,
      server: `https://127.0.0.1:${port}`,
      encryptionAlgorithm: "ECDSA-P256",
    });
    if (pki instanceof PKIError) throw pki;
    layout = pki.layout;
    server = await startAPIServer({
      securePort: port,
      secureServing: { tlsCertFile: layout.apiServerCert, tlsPrivateKeyFile: layout.apiServerKey },
      authentication: { clientCAFile: layout.caCert },
      authorizationModes: ["RBAC"],
    });
    // Raised from the defaults (5/10) so the test is not paced by the client's own rate limit.
    admin = newForConfig({ ...buildConfigFromFlags("", kubeconfigOf("admin")), qps: 1000, burst: 1000 });
  });
  afterAll(async () => {
    admin?.closeIdleConnections();
    await server?.close();
    await rm(dir, { recursive: true, force: true });
  });

  it("creates, gets, updates, patches and deletes a pod", async () => {
    const pods = admin.coreV1.pods("default");
    const created = await pods.create(pod("web-1", { app: "web" }));
    expect(created.metadata.uid).toBeTruthy();
    const got = await pods.get("web-1");
    expect(got.metadata.resourceVersion).toBe(created.metadata.resourceVersion);

    got.metadata.labels = { ...got.metadata.labels, tier: "front" };
    const updated = await pods.update(got);
    expect(updated.metadata.labels).toEqual({ app: "web", tier: "front" });

    const patched = await pods.patch("web-1", MergePatchType, { metadata: { annotations: { note: "hi" } } });
    expect(patched.metadata.annotations).toEqual({ note: "hi" });

    await pods.delete("web-1", { gracePeriodSeconds: 0 });
    expect(isNotFound(await rejection(pods.get("web-1")))).toBe(true);
  });

  it("writes status through the status subresource only", async () => {
    const pods = admin.coreV1.pods("default");
    const p = await pods.create(pod("status-1"));
    p.status = { phase: "Running" };
    p.spec.containers[0].image = "ignored-by-status";
    const s = await pods.updateStatus(p);
    expect(s.status?.phase).toBe("Running");
    expect(s.spec.containers[0].image).toBe("nginx");
    const patched = await pods.patch(
      "status-1",
      MergePatchType,
      { status: { phase: "Succeeded" } },
      {},
      "status",
    );
    expect(patched.status?.phase).toBe("Succeeded");
  });

  it("lists a page at a time with limit and continue", async () => {
    await admin.coreV1.namespaces().create({ metadata: { name: "paging" } } as never);
    const pods = admin.coreV1.pods("paging");
    for (let i = 0; i < 5; i++) await pods.create(pod(`p-${i}`));
    const names: string[] = [];
    let cont: string | undefined;
    let pages = 0;
    do {
      const page = await pods.list({ limit: 2, continue: cont });
      pages++;
      names.push(...page.items.map((p) => p.metadata.name as string));
      cont = page.metadata.continue;
    } while (cont);
    expect(pages).toBe(3);
    expect(names).toEqual(["p-0", "p-1", "p-2", "p-3", "p-4"]);
  });

  it("watches from a list's resourceVersion and stop() ends the iterator", async () => {
    const pods = admin.coreV1.pods("default");
    const list = await pods.list();
    const w = await pods.watch({ resourceVersion: list.metadata.resourceVersion, allowWatchBookmarks: true });
    await pods.create(pod("watched"));
    await pods.patch("watched", MergePatchType, { metadata: { labels: { seen: "yes" } } });
    const seen: string[] = [];
    for await (const e of w) {
      if (e.type === "BOOKMARK") continue;
      seen.push(`${e.type} ${(e.object as KubeObject).metadata.name}`);
      if (seen.length === 2) w.stop();
    }
    expect(seen).toEqual(["ADDED watched", "MODIFIED watched"]);
  });

  it("is a ListerWatcher for the reflector (newListWatchFromClient)", async () => {
    const lw = newListWatchFromClient(admin.coreV1.restClient, "pods", "paging", {
      fieldSelector: "metadata.name=p-3",
    });
    const list = await lw.list({});
    expect(list.items.map((p) => p.metadata.name)).toEqual(["p-3"]);
    const w = await lw.watch({ resourceVersion: list.metadata.resourceVersion });
    await admin.coreV1.pods("paging").patch("p-3", MergePatchType, { metadata: { labels: { a: "b" } } });
    await admin.coreV1.pods("paging").patch("p-2", MergePatchType, { metadata: { labels: { a: "b" } } });
    await admin.coreV1.pods("paging").patch("p-3", MergePatchType, { metadata: { labels: { a: "c" } } });
    const events: WatchEvent[] = [];
    for await (const e of w) {
      events.push(e);
      if (events.length === 2) w.stop();
    }
    expect(events.map((e) => (e.object as KubeObject).metadata.labels?.a)).toEqual(["b", "c"]);
  });

  it("reaches any resource through resource(gvr) and binds a pod (pods/binding)", async () => {
    const leases = admin.resource(
      { group: "coordination.k8s.io", version: "v1", resource: "leases" },
      "kube-node-lease",
    );
    const l = await leases.create({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name: "n1" },
      spec: { holderIdentity: "n1" },
    });
    expect(l.metadata.uid).toBeTruthy();
    await admin.coreV1
      .nodes()
      .create({ apiVersion: "v1", kind: "Node", metadata: { name: "node-1" } } as never);
    const pods = admin.coreV1.pods("default");
    await pods.create(pod("to-bind"));
    await pods.bind({
      apiVersion: "v1",
      kind: "Binding",
      metadata: { name: "to-bind" },
      target: { apiVersion: "v1", kind: "Node", name: "node-1" },
    } as never);
    expect((await pods.get("to-bind")).spec.nodeName).toBe("node-1");
  });

  it("sees what @kubernetes/client-node sees with the same kubeconfig (same user, same objects)", async () => {
    const kc = new KubeConfig();
    kc.loadFromFile(kubeconfigOf("admin"));
    const theirs = await kc.makeApiClient(CoreV1Api).listNamespacedPod({ namespace: "paging" });
    const ours = await admin.coreV1.pods("paging").list();
    expect(ours.items.map((p) => [p.metadata.name, p.metadata.resourceVersion])).toEqual(
      theirs.items.map((p) => [p.metadata?.name, p.metadata?.resourceVersion]),
    );
    const review = { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview", metadata: {} };
    const whoami = await admin
      .resource({ group: "authentication.k8s.io", version: "v1", resource: "selfsubjectreviews" })
      .create(review as never);
    // The certificate's CN, and the kubeconfig user both clients picked.
    const userInfo = (whoami as unknown as { status: { userInfo: { username: string } } }).status.userInfo;
    expect(userInfo.username).toBe("kubernetes-admin");
    expect(kc.getCurrentUser()?.name).toBe("kubernetes-admin");
  });

  it.skipIf(!kubectl.path)(
    `kubectl with the same kubeconfig lists the same pods${kubectl.path ? "" : ` [SKIPPED: kubectl not found — install: ${kubectl.install}]`}`,
    async () => {
      const out = await kubectlOK(
        process.env,
        ["--kubeconfig", kubeconfigOf("admin"), "get", "pods", "-n", "paging", "-o", "json"],
        { kubectl: kubectl.path },
      );
      const theirs = JSON.parse(out).items as KubeObject[];
      const ours = await admin.coreV1.pods("paging").list();
      expect(ours.items.map((p) => [p.metadata.name, p.metadata.uid])).toEqual(
        theirs.map((p) => [p.metadata.name, p.metadata.uid]),
      );
    },
  );

  it("surfaces 404, 409 and 403 as StatusErrors with the server's reason and message", async () => {
    const pods = admin.coreV1.pods("default");
    const missing = await rejection(pods.get("nope"));
    expect(missing).toMatchObject({ code: 404, reason: "NotFound" });
    expect(missing.message).toBe('pods "nope" not found');

    await pods.create(pod("dup"));
    const dup = await rejection(pods.create(pod("dup")));
    expect(isAlreadyExists(dup)).toBe(true);
    expect(dup.message).toBe('pods "dup" already exists');

    const stale = await pods.get("dup");
    await pods.patch("dup", MergePatchType, { metadata: { labels: { v: "2" } } });
    const conflict = await rejection(pods.update(stale));
    expect(isConflict(conflict)).toBe(true);
    expect(conflict.code).toBe(409);
    expect(conflict.message).toContain("the object has been modified");

    // The scheduler's certificate (system:kube-scheduler) may not create namespaces.
    const scheduler = newForConfig(buildConfigFromFlags("", kubeconfigOf("kube-scheduler")));
    try {
      const denied = await rejection(
        scheduler.coreV1.namespaces().create({ metadata: { name: "x" } } as never),
      );
      expect(isForbidden(denied)).toBe(true);
      expect(denied.code).toBe(403);
      expect(denied.message).toContain('User "system:kube-scheduler" cannot create resource "namespaces"');
    } finally {
      scheduler.closeIdleConnections();
    }
  });
});

describe("410 Expired from a compacted continue token", () => {
  it("is a StatusError a reflector recognises (isResourceExpired)", async () => {
    const server = await startAPIServer({ insecurePort: 0, watchCache: false, compactionIntervalMs: 50 });
    const cs = newForConfig({ host: server.url });
    try {
      const cms = cs.coreV1.configMaps("default");
      for (let i = 0; i < 3; i++) await cms.create({ metadata: { name: `c${i}` } } as never);
      const first = await cms.list({ limit: 1 });
      const token = first.metadata.continue as string;
      expect(token).toBeTruthy();
      // Write on, until the compactor has passed the token's revision.
      let err: StatusError | undefined;
      for (let i = 0; i < 200 && !err; i++) {
        await cms.patch("c0", MergePatchType, { data: { i: String(i) } });
        await new Promise((r) => setTimeout(r, 20));
        err = await cms.list({ limit: 1, continue: token }).then(
          () => undefined,
          (e) => e as StatusError,
        );
      }
      expect(err).toBeInstanceOf(StatusError);
      expect(err?.code).toBe(410);
      expect(isResourceExpired(err)).toBe(true);
      expect(err?.status.message).toMatch(/continue/);
    } finally {
      cs.closeIdleConnections();
      await server.close();
    }
  });
});

/**
 * The serviceaccounts and namespace controllers against our real API server over HTTPS, with the
 * PKI's `kube-controller-manager` identity and `--use-service-account-credentials` (each
 * controller as kube-system/<its account>, authorized by the bootstrap RBAC policy alone),
 * driven by the real kubectl as `admin`. The API server's own default-account stand-in is off,
 * so every `default` account here is the controller's.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { kubectlOK, runKubectl } from "../apiserver/testing/kubectl-env.ts";
import { serviceAccountConfigForPKI } from "../apiserver/testing/service-account-tokens.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../client/tools/clientcmd/client-config.ts";
import { FakeClock } from "../client/util/clock.ts";
import { ensurePKI, type PKILayout } from "../pki/certs.ts";
import { PKIError } from "../pki/errors.ts";
import { dynamicControllerClientBuilder } from "./client-builder.ts";
import { type RunningControllerManager, startControllerManager } from "./controller-manager.ts";

async function freePort(): Promise<number> {
  const s = createServer();
  await new Promise<void>((r) => s.listen(0, "127.0.0.1", r));
  const port = (s.address() as { port: number }).port;
  await new Promise((r) => s.close(r));
  return port;
}

/** Polls `check` until it returns something other than undefined; fails after `timeoutMs`. */
async function eventually<T>(
  check: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 20_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  for (;;) {
    try {
      const v = await check();
      if (v !== undefined) return v;
    } catch (e) {
      last = e;
    }
    if (Date.now() > deadline)
      throw new Error(`timed out waiting for ${what}${last ? `: ${String(last)}` : ""}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describeWithTools("the controller-manager's controllers, driven by the real kubectl", ["kubectl"], () => {
  let dir: string;
  let layout: PKILayout;
  let server: APIServer;
  let client: Clientset;
  let manager: RunningControllerManager;
  let env: NodeJS.ProcessEnv;
  const logs: string[] = [];
  let seenDelays: number[] = [];
  // Token renewal: the builder reads the tokens' expiry on this clock, moved by the last test.
  const tokenClock = new FakeClock(Date.now());
  let tokenRequests = 0;

  const kubeconfigOf = (id: string) => layout.identities.find((i) => i.id === id)?.kubeconfig as string;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), "kcm-test-"));
    const port = await freePort();
    const pki = await ensurePKI({
      dir,
      server: `https://127.0.0.1:${port}`,
      encryptionAlgorithm: "ECDSA-P256",
    });
    if (pki instanceof PKIError) throw pki;
    layout = pki.layout;
    const sa = serviceAccountConfigForPKI(layout);
    server = await startAPIServer({
      securePort: port,
      secureServing: { tlsCertFile: layout.apiServerCert, tlsPrivateKeyFile: layout.apiServerKey },
      authentication: { clientCAFile: layout.caCert, serviceAccounts: sa.authentication },
      serviceAccountTokens: sa.tokens,
      authorizationModes: ["RBAC"],
      // The default plugins: NamespaceLifecycle and ServiceAccount among them.
      admission: {},
      defaultServiceAccountsStandIn: false,
      log: (line) => {
        if (
          /verb="CREATE" URI="\/api\/v1\/namespaces\/kube-system\/serviceaccounts\/[^/]+\/token"/.test(line)
        )
          tokenRequests++;
      },
    });
    const config = {
      ...buildConfigFromFlags("", kubeconfigOf("kube-controller-manager")),
      qps: 200,
      burst: 200,
    };
    client = newForConfig(config);
    manager = await startControllerManager({
      client,
      clientFor: dynamicControllerClientBuilder(client, config, { clock: tokenClock }),
      controllers: ["*"],
      config: {
        namespaceControllerTestOptions: {
          deletionGracePeriodMs: 0,
          remainingDelayMs: (estimate) => {
            seenDelays.push(estimate);
            return 200;
          },
        },
      },
      log: (line) => logs.push(line),
    });
    expect(await manager.synced).toBe(true);
    env = {
      ...process.env,
      KUBECONFIG: kubeconfigOf("admin"),
      KUBECACHEDIR: join(dir, "kube-cache"),
      HOME: dir,
    };
  });
  afterAll(async () => {
    await manager?.stop();
    client?.closeIdleConnections();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  const kubectl = (...args: string[]) => runKubectl(env, args);
  const ok = (...args: string[]) => kubectlOK(env, args);
  const uidOf = async (ns: string) => {
    const r = await kubectl("get", "serviceaccount", "default", "-n", ns, "-o", "jsonpath={.metadata.uid}");
    return r.code === 0 && r.out ? r.out : undefined;
  };

  it("starts its controllers and logs them as upstream does", () => {
    expect(manager.started).toEqual([
      "serviceaccount-controller",
      "namespace-controller",
      "replicaset-controller",
      "resourcequota-controller",
      "deployment-controller",
      "garbage-collector-controller",
      "disruption-controller", // chapter 5
      "endpoints-controller", // chapter 7
      "endpointslice-controller",
      "node-lifecycle-controller",
      "taint-eviction-controller",
    ]);
    expect(logs).toContain('"Started controller" controller="namespace-controller"');
    expect(logs).toContain('"Waiting for caches to sync" controller="service account"');
  });

  it("a new namespace gets its default ServiceAccount, and gets it back after a delete", async () => {
    await ok("create", "namespace", "team-a");
    const first = await eventually(() => uidOf("team-a"), "default in team-a");
    await ok("delete", "serviceaccount", "default", "-n", "team-a");
    const second = await eventually(async () => {
      const uid = await uidOf("team-a");
      return uid && uid !== first ? uid : undefined;
    }, "default back in team-a");
    expect(second).not.toBe(first);
    // The system namespaces too: the stand-in is off, so these are the controller's.
    expect(await eventually(() => uidOf("kube-system"), "default in kube-system")).toBeTruthy();
    // Each controller ran as its own ServiceAccount.
    const accounts = await ok("get", "serviceaccounts", "-n", "kube-system", "-o", "name");
    expect(accounts).toContain("serviceaccount/service-account-controller");
    expect(accounts).toContain("serviceaccount/namespace-controller");
    expect(accounts).toContain("serviceaccount/generic-garbage-collector");
  });

  it("runs the ReplicaSet controller as its own ServiceAccount: a ReplicaSet gets its pods", async () => {
    await ok("create", "namespace", "apps");
    await eventually(() => uidOf("apps"), "default in apps"); // the pods need it (admission)
    const manifest = join(dir, "rs.json");
    await writeFile(
      manifest,
      JSON.stringify({
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        metadata: { name: "web", namespace: "apps" },
        spec: {
          replicas: 2,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: { containers: [{ name: "c", image: "nginx" }] },
          },
        },
      }),
    );
    await ok("create", "-f", manifest);
    const owned = await eventually(async () => {
      const pods = JSON.parse(await ok("get", "pods", "-n", "apps", "-l", "app=web", "-o", "json")) as {
        items: { metadata: { ownerReferences?: { kind: string; name: string; controller?: boolean }[] } }[];
      };
      return pods.items.length === 2 ? pods.items : undefined;
    }, "two pods of the ReplicaSet");
    for (const p of owned)
      expect(p.metadata.ownerReferences).toEqual([
        expect.objectContaining({ kind: "ReplicaSet", name: "web", controller: true }),
      ]);
    const accounts = await ok("get", "serviceaccounts", "-n", "kube-system", "-o", "name");
    expect(accounts).toContain("serviceaccount/replicaset-controller");
  });

  // resource quota controller: its role (list/watch everything, update resourcequotas/status) suffices.
  it("runs the resource quota controller as its own ServiceAccount: a quota gets its usage", async () => {
    await ok("create", "quota", "count", "-n", "apps", "--hard=count/pods=10");
    await eventually(async () => {
      const q = JSON.parse(await ok("get", "quota", "count", "-n", "apps", "-o", "json"));
      return q.status?.used?.["count/pods"] === "2" ? true : undefined;
    }, "the quota's usage of the ReplicaSet's two pods");
    const accounts = await ok("get", "serviceaccounts", "-n", "kube-system", "-o", "name");
    expect(accounts).toContain("serviceaccount/resourcequota-controller");
  });

  it("runs the Deployment controller as its own ServiceAccount: a Deployment gets its ReplicaSet", async () => {
    await ok("create", "deployment", "api", "-n", "apps", "--image=nginx", "--replicas=2");
    const rs = await eventually(async () => {
      const out = await ok("get", "replicasets", "-n", "apps", "-l", "app=api", "-o", "json");
      const items = (
        JSON.parse(out) as { items: { spec: { replicas: number }; metadata: { name: string } }[] }
      ).items;
      return items.length === 1 && items[0].spec.replicas === 2 ? items[0] : undefined;
    }, "the Deployment's ReplicaSet");
    expect(rs.metadata.name).toMatch(/^api-[bcdfghjklmnpqrstvwxz2456789]+$/);
    const accounts = await ok("get", "serviceaccounts", "-n", "kube-system", "-o", "name");
    expect(accounts).toContain("serviceaccount/deployment-controller");
  });

  // chapter 7: the Endpoints controller as endpoint-controller (its role writes endpoints only).
  it("runs the Endpoints controller as its own ServiceAccount: a Service's Endpoints list its ready pods", async () => {
    await ok(
      "create",
      "service",
      "clusterip",
      "web",
      "-n",
      "apps",
      "--tcp=80:8080",
      "--clusterip=10.96.0.80",
    );
    const names = (await ok("get", "pods", "-n", "apps", "-l", "app=web", "-o", "name")).trim().split("\n");
    // What the pods' kubelet would write: Running, an IP, Ready (the first one only).
    for (const [i, name] of names.entries()) {
      const status = {
        phase: "Running",
        podIP: `10.244.0.${i + 10}`,
        podIPs: [{ ip: `10.244.0.${i + 10}` }],
        conditions: [{ type: "Ready", status: i === 0 ? "True" : "False" }],
      };
      await ok(
        "patch",
        name,
        "-n",
        "apps",
        "--subresource=status",
        "--type=merge",
        "-p",
        JSON.stringify({ status }),
      );
    }
    const shown = await eventually(async () => {
      const out = await ok("get", "endpoints", "web", "-n", "apps");
      return out.includes("10.244.0.10:8080") ? out : undefined;
    }, "the Endpoints of web");
    // kubectl's ENDPOINTS column lists ready addresses only.
    expect(shown).not.toContain("10.244.0.11");
    const ep = JSON.parse(await ok("get", "endpoints", "web", "-n", "apps", "-o", "json"));
    expect(ep.subsets[0].notReadyAddresses.map((a: { ip: string }) => a.ip)).toEqual(["10.244.0.11"]);
    const accounts = await ok("get", "serviceaccounts", "-n", "kube-system", "-o", "name");
    expect(accounts).toContain("serviceaccount/endpoint-controller");
    // The EndpointSlice controller, as its own account too: describe reads its slices.
    const described = await eventually(async () => {
      const out = await ok("describe", "service", "web", "-n", "apps");
      return /^Endpoints:[ \t]+10\.244\.0\.10:8080$/m.test(out) ? out : undefined;
    }, "the EndpointSlices of web");
    expect(described).not.toContain("10.244.0.11");
    expect(await ok("get", "serviceaccounts", "-n", "kube-system", "-o", "name")).toContain(
      "serviceaccount/endpointslice-controller",
    );
    expect(accounts).toContain("serviceaccount/node-controller");
  });

  it("kubectl delete namespace empties it, shows why it waits in its conditions, then it goes", async () => {
    await ok("create", "namespace", "doomed");
    await eventually(() => uidOf("doomed"), "default in doomed"); // the pod needs it (admission)
    await ok("create", "configmap", "plain", "-n", "doomed", "--from-literal=a=b");
    await ok("create", "secret", "generic", "s", "-n", "doomed", "--from-literal=k=v");
    await ok("run", "web", "--image=nginx", "-n", "doomed");
    // A configmap held by a finalizer nobody removes: the namespace must wait for it.
    await ok(
      "patch",
      "configmap",
      "plain",
      "-n",
      "doomed",
      "--type=merge",
      "-p",
      '{"metadata":{"finalizers":["example.com/hold"]}}',
    );
    seenDelays = [];
    await ok("delete", "namespace", "doomed", "--wait=false");

    type NS = {
      status: {
        phase: string;
        conditions?: { type: string; status: string; reason: string; message: string }[];
      };
    };
    const waiting = await eventually(async () => {
      const ns = JSON.parse(await ok("get", "namespace", "doomed", "-o", "json")) as NS;
      const c = ns.status.conditions?.find((x) => x.type === "NamespaceFinalizersRemaining");
      return c?.status === "True" ? ns : undefined;
    }, "the namespace's conditions");
    expect(waiting.status.phase).toBe("Terminating");
    const byType = Object.fromEntries((waiting.status.conditions ?? []).map((c) => [c.type, c]));
    expect(byType.NamespaceContentRemaining).toMatchObject({
      status: "True",
      reason: "SomeResourcesRemain",
      message: "Some resources are remaining: configmaps. has 1 resource instances",
    });
    expect(byType.NamespaceFinalizersRemaining).toMatchObject({
      status: "True",
      reason: "SomeFinalizerRemain",
      message: "Some finalizers are remaining: example.com/hold in 1 resource instances",
    });
    expect(byType.NamespaceDeletionDiscoveryFailure).toMatchObject({
      status: "False",
      reason: "ResourcesDiscovered",
    });
    expect(byType.NamespaceDeletionContentFailure).toMatchObject({
      status: "False",
      reason: "ContentDeleted",
    });
    // Everything else is gone already, the default account included (and not made again).
    const rest = await ok("get", "pods,secrets,serviceaccounts", "-n", "doomed", "-o", "name");
    expect(rest.trim()).toBe("");
    const describe = await ok("describe", "namespace", "doomed");
    expect(describe).toContain("SomeFinalizerRemain");
    // A finalizer's wait: upstream's 15 s estimate (the test's requeue is shortened).
    // (the pass that wrote the conditions may not have requeued yet: wait for it)
    await eventually(async () => (seenDelays.includes(15) ? true : undefined), "a requeue after 15 s");

    // The finalizer done: the configmap goes, then the namespace.
    await ok(
      "patch",
      "configmap",
      "plain",
      "-n",
      "doomed",
      "--type=merge",
      "-p",
      '{"metadata":{"finalizers":null}}',
    );
    await eventually(async () => {
      const r = await kubectl("get", "namespace", "doomed");
      return r.code !== 0 && r.err.includes("NotFound") ? true : undefined;
    }, "the namespace to be gone");
  });

  // Token renewal (DynamicControllerClientBuilder): past 80 % of the hour, the next request renews.
  it("renews a controller's token before it expires, and the controller keeps working", async () => {
    const before = tokenRequests;
    expect(before).toBeGreaterThanOrEqual(4); // one per controller at start
    tokenClock.step(47 * 60_000); // still inside the first token's 48 minutes (less the 10 s)
    await ok("scale", "replicaset", "web", "-n", "apps", "--replicas=3");
    await eventually(async () => {
      const pods = JSON.parse(await ok("get", "pods", "-n", "apps", "-l", "app=web", "-o", "json"));
      return pods.items.length === 3 ? true : undefined;
    }, "a third pod");
    expect(tokenRequests).toBe(before);
    tokenClock.step(60_000); // 48 minutes: the replicaset controller's next request renews
    await ok("scale", "replicaset", "web", "-n", "apps", "--replicas=4");
    await eventually(async () => {
      const pods = JSON.parse(await ok("get", "pods", "-n", "apps", "-l", "app=web", "-o", "json"));
      return pods.items.length === 4 ? true : undefined;
    }, "a fourth pod, created with the renewed token");
    expect(tokenRequests).toBeGreaterThan(before);
  });
});

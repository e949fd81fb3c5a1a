/**
 * Whole-cluster scenarios of pods and what surrounds them, driven by the real kubectl against the
 * cluster of processes (kube-apiserver, kube-controller-manager, kube-scheduler, two kubelets with
 * the process runtime): a Service's Endpoints and EndpointSlice following a pod's readiness;
 * `kubectl logs -f` and `kubectl exec`; a run-to-completion pod; a namespace deleted with what it
 * holds.
 * Each scenario is written from the upstream e2e test named in its title.
 *
 * @upstream kubernetes/kubernetes test/e2e/network/endpointslice.go ("should create Endpoints and EndpointSlices for Pods matching a Service")
 * @upstream kubernetes/kubernetes test/e2e/kubectl/kubectl.go (Kubectl logs; Simple pod: exec, command exit codes)
 * @upstream kubernetes/kubernetes test/e2e/common/node/runtime.go ("when starting a container that exits should run with the expected status")
 * @upstream kubernetes/kubernetes test/e2e/apimachinery/namespace.go (ensurePodsAreRemovedWhenNamespaceIsDeleted, ensureServicesAreRemovedWhenNamespaceIsDeleted)
 * @chapter 08-cluster
 */
import { spawn } from "node:child_process";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import type { Endpoints, Pod } from "../api/core.ts";
import type { EndpointSlice } from "../api/discovery.ts";
import { LocalCluster } from "../cmd/testing/local-cluster.ts";
import { stopChild, track } from "../testing/child-process.ts";
import { type Framework, inNamespace } from "./framework.ts";

describeWithTools("e2e: Services, logs, exec, completion and namespaces through kubectl", ["kubectl"], () => {
  let cluster: LocalCluster;

  beforeAll(async () => {
    // Each controller with its own service account, as kubeadm starts kube-controller-manager:
    // the controller-manager's own identity may not create pods (upstream's RBAC bootstrap policy).
    cluster = await LocalCluster.start({
      nodes: ["node-1", "node-2"],
      controllerManagerArgs: ["--use-service-account-credentials"],
    });
  }, 300_000);

  afterAll(async () => {
    await cluster?.close();
  }, 120_000);

  const isReady = (p: Pod) =>
    p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

  it(
    "[sig-network] EndpointSlice should create Endpoints and EndpointSlices for Pods matching a Service; a pod leaves them while its readiness probe fails (test/e2e/network/endpointslice.go)",
    () =>
      inNamespace(cluster, "endpoints", async (f) => {
        await f.apply({
          apiVersion: "apps/v1",
          kind: "Deployment",
          metadata: { name: "web" },
          spec: {
            replicas: 2,
            selector: { matchLabels: { app: "web" } },
            template: {
              metadata: { labels: { app: "web" } },
              spec: {
                containers: [
                  {
                    name: "web",
                    image: "course/web:1.0",
                    ports: [{ containerPort: 8080 }],
                    readinessProbe: { httpGet: { path: "/readyz", port: 8080 }, periodSeconds: 1 },
                  },
                ],
              },
            },
          },
        });
        expect(await f.kubectl("expose", "deployment", "web", "--port=80", "--target-port=8080")).toBe(
          "service/web exposed\n",
        );
        await f.kubectl("rollout", "status", "deployment/web", "--timeout=240s");
        const pods = (await cluster.admin.coreV1.pods(f.ns).list({ labelSelector: "app=web" })).items.filter(
          isReady,
        );
        expect(pods).toHaveLength(2);
        const ips = pods.map((p) => p.status?.podIP ?? "").sort();
        const [victim, other] = pods;
        const victimIP = victim.status?.podIP ?? "";

        /** Where each pod IP is, in the Endpoints and in the Service's EndpointSlices. */
        const state = async () => {
          const ep = await cluster.admin
            .resource<Endpoints>({ group: "", version: "v1", resource: "endpoints" }, f.ns)
            .get("web");
          const slices = await cluster.admin
            .resource<EndpointSlice>(
              { group: "discovery.k8s.io", version: "v1", resource: "endpointslices" },
              f.ns,
            )
            .list({ labelSelector: "kubernetes.io/service-name=web" });
          const endpoints = slices.items.flatMap((s) => s.endpoints ?? []);
          return {
            ready: (ep.subsets ?? []).flatMap((s) => (s.addresses ?? []).map((a) => a.ip)).sort(),
            notReady: (ep.subsets ?? []).flatMap((s) => (s.notReadyAddresses ?? []).map((a) => a.ip)).sort(),
            sliceReady: endpoints
              .filter((e) => e.conditions?.ready === true)
              .flatMap((e) => e.addresses)
              .sort(),
            sliceNotReady: endpoints
              .filter((e) => e.conditions?.ready === false)
              .flatMap((e) => e.addresses)
              .sort(),
            ports: slices.items.flatMap((s) => (s.ports ?? []).map((p) => p.port)),
          };
        };
        const until = (what: string, want: { ready: string[]; notReady: string[] }) =>
          f.eventually(what, async () => {
            const s = await state();
            const same = (a: string[], b: string[]) => JSON.stringify(a) === JSON.stringify([...b].sort());
            return same(s.ready, want.ready) &&
              same(s.notReady, want.notReady) &&
              same(s.sliceReady, want.ready) &&
              same(s.sliceNotReady, want.notReady)
              ? s
              : undefined;
          });

        const all = await until("both pods in the Endpoints and the EndpointSlice", {
          ready: ips,
          notReady: [],
        });
        expect(all.ports).toEqual([8080]);
        const shown = await f.kubectl("get", "endpoints", "web");
        for (const ip of ips) expect(shown).toContain(`${ip}:8080`);

        // The web image answers /readyz with 503 while /tmp/unready exists.
        await f.kubectl("exec", victim.metadata.name ?? "", "--", "touch", "/tmp/unready");
        await until("the unready pod moved to notReady", {
          ready: [other.status?.podIP ?? ""],
          notReady: [victimIP],
        });
        expect(await f.kubectl("get", "endpoints", "web")).not.toContain(victimIP);
        const unready = await cluster.admin.coreV1.pods(f.ns).get(victim.metadata.name ?? "");
        expect(unready.status?.phase).toBe("Running");
        expect(unready.status?.containerStatuses?.[0]?.restartCount).toBe(0);

        await f.kubectl("exec", victim.metadata.name ?? "", "--", "rm", "/tmp/unready");
        await until("the pod back among the ready addresses", { ready: ips, notReady: [] });
      }),
    600_000,
  );

  /** `kubectl run` of a pod, then waits for it Running. */
  async function runPod(f: Framework, name: string, image: string, args: string[]): Promise<Pod> {
    await f.kubectl("run", name, `--image=${image}`, "--restart=Never", "--", ...args);
    await f.kubectl("wait", "--for=condition=Ready", `pod/${name}`, "--timeout=240s");
    return cluster.admin.coreV1.pods(f.ns).get(name);
  }

  it(
    "[sig-cli] Kubectl client Kubectl logs should be able to retrieve and filter logs; logs -f follows (test/e2e/kubectl/kubectl.go)",
    () =>
      inNamespace(cluster, "logs", async (f) => {
        // course/worker prints one line a second: "worker: <n>/<total>".
        await runPod(f, "logs-generator", "course/worker:1.0", ["--seconds=600"]);
        const first = await f.eventually("two progress lines", async () => {
          const out = await f.kubectl("logs", "logs-generator");
          return out.includes("worker: 2/600") ? out : undefined;
        });
        expect(first.split("\n")[0]).toBe("worker: working for 600 s");
        // --tail=1 starts at the last line then; a line written meanwhile follows it, as upstream's
        // ReadLogs (which seeks to the tail's start, then reads to the end of the file).
        const lastSeen = Number(/worker: (\d+)\/600\n$/.exec(first)?.[1]);
        const tail = (await f.kubectl("logs", "logs-generator", "--tail=1")).split("\n").slice(0, -1);
        expect(tail.length).toBeGreaterThan(0);
        const from = Number(/^worker: (\d+)\/600$/.exec(tail[0])?.[1]);
        expect(from).toBeGreaterThanOrEqual(lastSeen);
        expect(tail).toEqual(tail.map((_, i) => `worker: ${from + i}/600`));
        expect(await f.kubectl("logs", "logs-generator", "--limit-bytes=1")).toBe("w");

        const follower = track(
          spawn(
            "kubectl",
            [
              `--kubeconfig=${cluster.adminKubeconfig}`,
              `--namespace=${f.ns}`,
              "logs",
              "-f",
              "logs-generator",
              "--tail=1",
            ],
            { stdio: ["ignore", "pipe", "pipe"] },
          ),
        );
        try {
          let out = "";
          follower.stdout.on("data", (d: Buffer) => {
            out += d.toString();
          });
          const start = await f.eventually(
            "the tail line",
            async () => /^worker: (\d+)\/600\n/.exec(out) ?? undefined,
          );
          const n = Number(start[1]);
          // Lines written after kubectl started arrive on the same stream, in order.
          await f.eventually(
            `line ${n + 2} streamed`,
            async () => out.includes(`worker: ${n + 2}/600\n`),
            120_000,
          );
          expect(out.startsWith(`worker: ${n}/600\nworker: ${n + 1}/600\nworker: ${n + 2}/600\n`)).toBe(true);
          expect(follower.exitCode).toBeNull(); // still following
        } finally {
          await stopChild(follower);
        }
      }),
    600_000,
  );

  it(
    "[sig-cli] Kubectl client Simple pod should support exec; should return command exit codes (test/e2e/kubectl/kubectl.go)",
    () =>
      inNamespace(cluster, "exec", async (f) => {
        await runPod(f, "httpd", "course/web:1.0", []);
        expect(await f.kubectl("exec", "httpd", "--", "echo", "running", "in", "container")).toBe(
          "running in container\n",
        );
        expect(await f.kubectl("exec", "httpd", "--", "/bin/sh", "-c", "exit 0")).toBe("");
        const failing = await f.tryKubectl("exec", "httpd", "--", "/bin/sh", "-c", "exit 42");
        expect(failing.code).toBe(42);
        const missing = await f.tryKubectl("exec", "httpd", "--", "cat", "/no/such/file");
        expect(missing.code).toBe(1);
        expect(missing.stderr).toContain("/no/such/file");
        // The command ran in the container: a file it writes is the container's.
        await f.kubectl("exec", "httpd", "--", "/bin/sh", "-c", "echo hello > /tmp/greeting");
        expect(await f.kubectl("exec", "httpd", "--", "cat", "/tmp/greeting")).toBe("hello\n");
      }),
    600_000,
  );

  it(
    "[sig-node] Container Runtime blackbox test when starting a container that exits should run with the expected status (test/e2e/common/node/runtime.go)",
    () =>
      inNamespace(cluster, "completion", async (f) => {
        await f.kubectl("run", "done", "--image=course/worker:1.0", "--restart=Never", "--", "--seconds=2");
        await f.kubectl(
          "run",
          "failed",
          "--image=course/worker:1.0",
          "--restart=Never",
          "--",
          "--seconds=1",
          "--exit-code=3",
        );
        await f.kubectl("wait", "--for=jsonpath={.status.phase}=Succeeded", "pod/done", "--timeout=240s");
        await f.kubectl("wait", "--for=jsonpath={.status.phase}=Failed", "pod/failed", "--timeout=240s");
        await f.kubectl("wait", "--for=condition=Ready=false", "pod/done", "pod/failed", "--timeout=60s");

        const done = await cluster.admin.coreV1.pods(f.ns).get("done");
        const status = done.status?.containerStatuses?.[0];
        expect(status?.restartCount).toBe(0);
        expect(status?.ready).toBe(false);
        expect(status?.state?.terminated).toMatchObject({ exitCode: 0, reason: "Completed" });
        expect(done.status?.conditions?.find((c) => c.type === "Ready")).toMatchObject({
          status: "False",
          reason: "PodCompleted",
        });
        expect(await f.kubectl("logs", "done")).toContain("worker: done, exit 0\n");

        const failed = await cluster.admin.coreV1.pods(f.ns).get("failed");
        expect(failed.status?.containerStatuses?.[0]?.state?.terminated).toMatchObject({
          exitCode: 3,
          reason: "Error",
        });
        expect(failed.status?.containerStatuses?.[0]?.restartCount).toBe(0);
      }),
    600_000,
  );

  it(
    "[sig-api-machinery] Namespaces [Serial] should ensure that all pods are removed when a namespace is deleted; should ensure that all services are removed when a namespace is deleted (test/e2e/apimachinery/namespace.go)",
    () =>
      inNamespace(cluster, "nsdeletetest", async (f) => {
        // A pod that takes its grace period to stop (SIGTERM ignored): the namespace is seen Terminating.
        await f.apply({
          apiVersion: "v1",
          kind: "Pod",
          metadata: { name: "test-pod" },
          spec: {
            terminationGracePeriodSeconds: 4,
            containers: [{ name: "nginx", image: "course/sleeper:1.0", args: ["--ignore-sigterm"] }],
          },
        });
        await f.kubectl("create", "service", "clusterip", "test-service", "--tcp=80:80");
        await f.kubectl("create", "configmap", "test-configmap", "--from-literal=key=value");
        await f.kubectl("wait", "--for=condition=Ready", "pod/test-pod", "--timeout=240s");

        expect(await f.kubectl("delete", "namespace", f.ns, "--wait=false")).toBe(
          `namespace "${f.ns}" deleted\n`,
        );
        const terminating = await f.eventually(
          "the namespace Terminating with its pod still there",
          async () => {
            const ns = await cluster.admin.coreV1.namespaces().get(f.ns);
            const pods = await cluster.admin.coreV1.pods(f.ns).list();
            return ns.status?.phase === "Terminating" && pods.items.length > 0 ? ns : undefined;
          },
        );
        expect(terminating.metadata.deletionTimestamp).toBeTruthy();
        expect(terminating.spec?.finalizers).toEqual(["kubernetes"]);
        // Nothing new may be made in a namespace being deleted.
        const refused = await f.tryKubectl("create", "configmap", "late");
        expect(refused.code).not.toBe(0);
        expect(refused.stderr).toContain(
          `configmaps "late" is forbidden: unable to create new content in namespace ${f.ns} because it is being terminated`,
        );

        await f.kubectl("wait", "--for=delete", `namespace/${f.ns}`, "--timeout=240s");
        const gone = await cluster.kubectl(["get", "namespace", f.ns]);
        expect(gone.stderr).toContain(`namespaces "${f.ns}" not found`);
        expect((await cluster.admin.coreV1.pods(f.ns).list()).items).toEqual([]);
        expect((await cluster.admin.coreV1.services(f.ns).list()).items).toEqual([]);
        expect((await cluster.admin.coreV1.configMaps(f.ns).list()).items).toEqual([]);
      }),
    600_000,
  );
});

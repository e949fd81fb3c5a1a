/**
 * Whole-cluster scenarios of the workload controllers, driven by the real kubectl against the
 * cluster of processes (kube-apiserver, kube-controller-manager, kube-scheduler, two kubelets with
 * the process runtime): a Deployment created, scaled, rolled to a new image and rolled back; a
 * ReplicaSet replacing a deleted pod and a released one; and the garbage collector's three
 * propagation policies as `kubectl delete --cascade` sends them.
 * Each scenario is written from the upstream e2e test named in its title.
 *
 * @upstream kubernetes/kubernetes test/e2e/apps/deployment.go (testRollingUpdateDeployment, "should run the lifecycle of a Deployment")
 * @upstream kubernetes/kubernetes test/cmd/apps.sh (run_deployment_tests: kubectl rollout undo)
 * @upstream kubernetes/kubernetes test/e2e/apps/replica_set.go (testRSAdoptMatchingAndReleaseNotMatching)
 * @upstream kubernetes/kubernetes test/e2e/apimachinery/garbage_collector.go
 * @chapter 08-cluster
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import type { ReplicaSet } from "../api/apps.ts";
import type { Pod } from "../api/core.ts";
import { LocalCluster } from "../cmd/testing/local-cluster.ts";
import { type Framework, inNamespace } from "./framework.ts";

const REVISION = "deployment.kubernetes.io/revision";

describeWithTools("e2e: Deployments, ReplicaSets and garbage collection through kubectl", ["kubectl"], () => {
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

  const liveRunning = (pods: Pod[]) =>
    pods.filter((p) => !p.metadata.deletionTimestamp && p.status?.phase === "Running");
  const podsOf = async (f: Framework, selector: string) =>
    (await cluster.admin.coreV1.pods(f.ns).list({ labelSelector: selector })).items;
  const replicaSetsOf = async (f: Framework, selector: string) =>
    (await cluster.admin.appsV1.replicaSets(f.ns).list({ labelSelector: selector })).items;

  it(
    "[sig-apps] Deployment RollingUpdateDeployment should delete old pods and create new ones; should run the lifecycle of a Deployment; kubectl rollout undo (test/e2e/apps/deployment.go, test/cmd/apps.sh)",
    () =>
      inNamespace(cluster, "deployment", async (f) => {
        // A user's commands: create, wait for the rollout, scale.
        await f.kubectl("create", "deployment", "web", "--image=course/web:1.0", "--replicas=2");
        expect(await f.kubectl("rollout", "status", "deployment/web", "--timeout=240s")).toContain(
          'deployment "web" successfully rolled out',
        );
        expect(await f.kubectl("scale", "deployment/web", "--replicas=3")).toBe(
          "deployment.apps/web scaled\n",
        );
        await f.kubectl("rollout", "status", "deployment/web", "--timeout=240s");
        const first = await cluster.admin.appsV1.deployments(f.ns).get("web");
        expect(first.status).toMatchObject({ replicas: 3, readyReplicas: 3, updatedReplicas: 3 });
        expect(first.metadata.annotations?.[REVISION]).toBe("1");
        const [rs1] = await replicaSetsOf(f, "app=web");
        const oldPods = new Set(liveRunning(await podsOf(f, "app=web")).map((p) => p.metadata.name));
        expect(oldPods.size).toBe(3);

        // The rolling update (upstream: the new ReplicaSet takes over, every old pod is deleted).
        await f.kubectl("set", "image", "deployment/web", "web=course/web:latest");
        await f.kubectl("rollout", "status", "deployment/web", "--timeout=240s");
        const sets = await f.eventually("the old ReplicaSet scaled to 0", async () => {
          const all = await replicaSetsOf(f, "app=web");
          return all.length === 2 && all.every((rs) => rs.status?.replicas === rs.spec.replicas)
            ? all
            : undefined;
        });
        const byRevision = Object.fromEntries(sets.map((rs) => [rs.metadata.annotations?.[REVISION], rs]));
        expect(byRevision["1"].metadata.name).toBe(rs1.metadata.name);
        expect(byRevision["1"].spec.replicas).toBe(0);
        expect(byRevision["2"].spec.replicas).toBe(3);
        expect(byRevision["2"].spec.template.spec.containers[0].image).toBe("course/web:latest");
        const newPods = await f.eventually("only the new pods left", async () => {
          const pods = await podsOf(f, "app=web");
          return pods.length === 3 && liveRunning(pods).length === 3 ? pods : undefined;
        });
        for (const p of newPods) {
          expect(oldPods.has(p.metadata.name)).toBe(false);
          expect(p.spec.containers[0].image).toBe("course/web:latest");
          expect(p.metadata.ownerReferences?.[0]?.name).toBe(byRevision["2"].metadata.name);
        }

        // kubectl rollout undo: revision 1's template comes back as revision 3, in its old ReplicaSet.
        expect(await f.kubectl("rollout", "undo", "deployment/web")).toBe(
          "deployment.apps/web rolled back\n",
        );
        await f.kubectl("rollout", "status", "deployment/web", "--timeout=240s");
        const undone = await cluster.admin.appsV1.deployments(f.ns).get("web");
        expect(undone.spec.template.spec.containers[0].image).toBe("course/web:1.0");
        expect(undone.metadata.annotations?.[REVISION]).toBe("3");
        const back = await f.eventually("revision 1's ReplicaSet back at 3 and the other at 0", async () => {
          const all = await replicaSetsOf(f, "app=web");
          const r1 = all.find((rs) => rs.metadata.name === rs1.metadata.name);
          const r2 = all.find((rs) => rs.metadata.name !== rs1.metadata.name);
          return all.length === 2 && r1?.status?.readyReplicas === 3 && r2?.status?.replicas === 0
            ? r1
            : undefined;
        });
        expect(back.metadata.annotations?.[REVISION]).toBe("3");
        expect(back.metadata.annotations?.["deployment.kubernetes.io/revision-history"]).toBe("1");
        const history = await f.kubectl("rollout", "history", "deployment/web");
        expect(history).toMatch(/^2\s+<none>$/m);
        expect(history).toMatch(/^3\s+<none>$/m);
        expect(history).not.toMatch(/^1\s+/m);
        await f.eventually("the pods of revision 1's template again", async () => {
          const pods = await podsOf(f, "app=web");
          return pods.length === 3 &&
            liveRunning(pods).length === 3 &&
            pods.every((p) => p.spec.containers[0].image === "course/web:1.0")
            ? pods
            : undefined;
        });
      }),
    600_000,
  );

  /** A ReplicaSet of `replicas` sleepers labelled name=<name>, applied with kubectl. */
  const sleeperReplicaSet = (name: string, replicas: number, podSpec: Record<string, unknown> = {}) => ({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { name } },
      template: {
        metadata: { labels: { name } },
        spec: {
          terminationGracePeriodSeconds: 1,
          containers: [{ name: "app", image: "course/sleeper:1.0" }],
          ...podSpec,
        },
      },
    },
  });

  it(
    "[sig-apps] ReplicaSet should adopt matching pods on creation and release no longer matching pods; a deleted pod is replaced (test/e2e/apps/replica_set.go)",
    () =>
      inNamespace(cluster, "replicaset", async (f) => {
        await f.apply(sleeperReplicaSet("pod-adoption-release", 3));
        const running = () =>
          f.eventually("3 running pods of the ReplicaSet", async () => {
            const pods = liveRunning(await podsOf(f, "name=pod-adoption-release"));
            return pods.length === 3 ? pods : undefined;
          });
        const before = await running();
        const rs = await cluster.admin.appsV1.replicaSets(f.ns).get("pod-adoption-release");
        for (const p of before) {
          expect(p.metadata.ownerReferences).toEqual([
            expect.objectContaining({ kind: "ReplicaSet", uid: rs.metadata.uid, controller: true }),
          ]);
        }

        // Self-healing: a pod deleted by a user is replaced by a new one.
        const victim = before[0].metadata.name ?? "";
        expect(await f.kubectl("delete", "pod", victim)).toBe(`pod "${victim}" deleted\n`);
        const healed = await running();
        expect(healed.map((p) => p.metadata.name)).not.toContain(victim);
        expect(healed.filter((p) => !before.some((b) => b.metadata.name === p.metadata.name))).toHaveLength(
          1,
        );

        // Release: a pod whose labels no longer match loses its controller reference and is replaced.
        const released = healed[0].metadata.name ?? "";
        await f.kubectl("label", "pod", released, "name=not-matching", "--overwrite");
        await f.eventually("the released pod without its ownerReference", async () => {
          const p = await cluster.admin.coreV1.pods(f.ns).get(released);
          return (p.metadata.ownerReferences ?? []).length === 0 ? p : undefined;
        });
        const after = await running();
        expect(after.map((p) => p.metadata.name)).not.toContain(released);
        const got = await cluster.admin.appsV1.replicaSets(f.ns).get("pod-adoption-release");
        expect(got.spec.replicas).toBe(3);
      }),
    600_000,
  );

  /** `kubectl create deployment` and its rollout; returns its ReplicaSet. */
  async function runningDeployment(f: Framework, name: string, replicas: number): Promise<ReplicaSet> {
    await f.kubectl("create", "deployment", name, "--image=course/sleeper:1.0", `--replicas=${replicas}`);
    await f.kubectl("rollout", "status", `deployment/${name}`, "--timeout=240s");
    const sets = await replicaSetsOf(f, `app=${name}`);
    expect(sets).toHaveLength(1);
    return sets[0];
  }

  it(
    "[sig-api-machinery] Garbage collector should delete RS created by deployment when not orphaning (test/e2e/apimachinery/garbage_collector.go)",
    () =>
      inNamespace(cluster, "gc-background", async (f) => {
        await runningDeployment(f, "background", 2);
        expect(await f.kubectl("delete", "deployment", "background", "--cascade=background")).toBe(
          'deployment.apps "background" deleted\n',
        );
        await f.eventually("the ReplicaSet and its pods collected", async () => {
          const sets = await replicaSetsOf(f, "app=background");
          const pods = await podsOf(f, "app=background");
          return sets.length === 0 && pods.length === 0;
        });
      }),
    600_000,
  );

  it(
    "[sig-api-machinery] Garbage collector should orphan RS created by deployment when deleteOptions.PropagationPolicy is Orphan; should orphan pods created by rc if delete options say so (test/e2e/apimachinery/garbage_collector.go)",
    () =>
      inNamespace(cluster, "gc-orphan", async (f) => {
        const rs = await runningDeployment(f, "orphan", 2);
        await f.kubectl("delete", "deployment", "orphan", "--cascade=orphan");
        const orphaned = await f.eventually("the ReplicaSet orphaned", async () => {
          const got = await cluster.admin.appsV1.replicaSets(f.ns).get(rs.metadata.name ?? "");
          return (got.metadata.ownerReferences ?? []).length === 0 ? got : undefined;
        });
        expect(orphaned.metadata.uid).toBe(rs.metadata.uid);
        expect(orphaned.metadata.finalizers ?? []).toEqual([]);
        await expect(cluster.admin.appsV1.deployments(f.ns).get("orphan")).rejects.toThrow(/not found/);

        // The same one level down: the ReplicaSet goes, its pods stay without an owner.
        const pods = liveRunning(await podsOf(f, "app=orphan"));
        expect(pods).toHaveLength(2);
        await f.kubectl("delete", "replicaset", rs.metadata.name ?? "", "--cascade=orphan");
        await f.eventually("the pods orphaned and the ReplicaSet gone", async () => {
          const now = await podsOf(f, "app=orphan");
          const sets = await replicaSetsOf(f, "app=orphan");
          return sets.length === 0 && now.every((p) => (p.metadata.ownerReferences ?? []).length === 0)
            ? now
            : undefined;
        });
        const left = liveRunning(await podsOf(f, "app=orphan"));
        expect(left.map((p) => p.metadata.uid).sort()).toEqual(pods.map((p) => p.metadata.uid).sort());
      }),
    600_000,
  );

  it(
    "[sig-api-machinery] Garbage collector should keep the rc around until all its pods are deleted if the deleteOptions says so (test/e2e/apimachinery/garbage_collector.go)",
    () =>
      inNamespace(cluster, "gc-foreground", async (f) => {
        // Pods that take a few seconds to stop (SIGTERM ignored, killed after their grace period):
        // long enough to see the owner waiting for them.
        await f.apply(
          sleeperReplicaSet("foreground", 2, {
            terminationGracePeriodSeconds: 4,
            containers: [{ name: "app", image: "course/sleeper:1.0", args: ["--ignore-sigterm"] }],
          }),
        );
        await f.eventually("2 running pods", async () => {
          const pods = liveRunning(await podsOf(f, "name=foreground"));
          return pods.length === 2 ? pods : undefined;
        });
        // Every moment seen while kubectl waits: does the owner exist, and how many pods.
        const seen: { owner: ReplicaSet | undefined; pods: number }[] = [];
        let deleting = true;
        const watching = (async () => {
          while (deleting) {
            const owner = await cluster.admin.appsV1
              .replicaSets(f.ns)
              .get("foreground")
              .catch(() => undefined);
            const pods = (await podsOf(f, "name=foreground")).length;
            seen.push({ owner, pods });
            await new Promise((r) => setTimeout(r, 100));
          }
        })();
        // kubectl waits (--wait defaults to true) until the owner is gone.
        const out = await f.kubectl("delete", "replicaset", "foreground", "--cascade=foreground");
        deleting = false;
        await watching;
        expect(out).toBe('replicaset.apps "foreground" deleted\n');
        expect(await podsOf(f, "name=foreground")).toEqual([]);
        const waiting = seen.filter((s) => s.owner?.metadata.deletionTimestamp && s.pods > 0);
        expect(waiting.length).toBeGreaterThan(0);
        for (const s of waiting) expect(s.owner?.metadata.finalizers).toContain("foregroundDeletion");
        // Never the owner gone while a dependent remains.
        expect(seen.filter((s) => !s.owner && s.pods > 0)).toEqual([]);
      }),
    600_000,
  );
});

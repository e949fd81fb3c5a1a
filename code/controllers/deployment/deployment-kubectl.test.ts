/**
 * The Deployment controller (with the ReplicaSet controller, in one controller-manager) against
 * our API server over HTTP, driven by the real kubectl: a rollout, `kubectl set image` as a
 * rolling update held within maxSurge / maxUnavailable at every observed state, `rollout status`,
 * `history`, `undo`, `pause` / `resume`, `restart`, the history limit, and Recreate.
 * There is no kubelet before chapter 7: a stand-in marks new pods Running and Ready with
 * `kubectl patch pod --subresource=status`.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import type { Deployment, ReplicaSet } from "../../api/apps.ts";
import type { Pod } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { plainKubectlEnv, runKubectl } from "../../apiserver/testing/kubectl-env.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { newListWatchFromClient } from "../../client/tools/cache/listwatch.ts";
import { newSharedIndexInformer } from "../../client/tools/cache/shared-informer.ts";
import { waitFor } from "../../testing/wait-for.ts";
import { isPodReady } from "../active-pods.ts";
import { type RunningControllerManager, startControllerManager } from "../controller-manager.ts";

const deploymentJSON = (name: string, spec: Record<string, unknown>) =>
  JSON.stringify({
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name },
    spec: {
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "c", image: "nginx:1" }] },
      },
      ...spec,
    },
  });

/** One observed moment: the pods of an app that are not terminating, and how many are ready. */
interface Observed {
  active: number;
  ready: number;
  byRS: Map<string, number>;
}

describeWithTools("the Deployment controller driven by kubectl", ["kubectl"], () => {
  let server: APIServer;
  let dir: string;
  let env: NodeJS.ProcessEnv;
  let client: Clientset;
  let manager: RunningControllerManager;
  const stop = new AbortController();
  const running: Promise<void>[] = [];
  const observers: ((pods: Pod[]) => void)[] = [];
  const errors: string[] = [];

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    dir = await mkdtemp(join(tmpdir(), "deployctl-test-"));
    env = await plainKubectlEnv(dir, server.url);
    client = newForConfig({ host: server.url, qps: -1 });
    manager = await startControllerManager({
      client,
      controllers: ["replicaset-controller", "deployment-controller"],
      resyncMs: 0,
      log: (line) => {
        // Two errors are upstream's normal races, retried by the queue: a write on a stale copy
        // (Conflict) and a create of the new ReplicaSet before the informer has delivered it
        // (AlreadyExists: upstream's getNewReplicaSet also returns an error when its lister lacks it).
        const race = line.includes("the object has been modified") || line.includes("already exists");
        if (line.startsWith("error syncing") && !race) errors.push(line);
      },
    });
    expect(await manager.synced).toBe(true);

    // The test's own view of the pods: every watch event is one observed state.
    const pods = newSharedIndexInformer(
      newListWatchFromClient(client.coreV1.restClient, "pods", "default"),
      0,
    );
    const notify = () => {
      const all = pods.getIndexer().list() as Pod[];
      for (const o of observers) o(all);
    };
    pods.addEventHandler({ onAdd: notify, onUpdate: notify, onDelete: notify });
    running.push(pods.run(stop.signal));

    // The kubelet stand-in: every pod not yet ready is made Running and Ready through kubectl.
    running.push(
      (async () => {
        while (!stop.signal.aborted) {
          const waiting = (pods.getIndexer().list() as Pod[]).filter(
            (p) => !p.metadata.deletionTimestamp && !isPodReady(p),
          );
          if (waiting.length > 0) {
            const now = new Date().toISOString().replace(/\.\d+Z$/, "Z");
            const status = {
              status: {
                phase: "Running",
                conditions: [{ type: "Ready", status: "True", lastTransitionTime: now }],
              },
            };
            await runKubectl(env, [
              "patch",
              "pod",
              ...waiting.map((p) => p.metadata.name ?? ""),
              "--subresource=status",
              "-p",
              JSON.stringify(status),
            ]);
          }
          await new Promise((r) => setTimeout(r, 50));
        }
      })(),
    );
  });

  afterAll(async () => {
    stop.abort();
    await Promise.all(running);
    await manager?.stop();
    await server?.close();
    if (dir) await rm(dir, { recursive: true, force: true });
  });

  async function ok(...args: string[]): Promise<string> {
    const r = await runKubectl(env, args);
    expect(r.code, `kubectl ${args.join(" ")}: ${r.err}`).toBe(0);
    return r.out;
  }
  async function apply(json: string): Promise<void> {
    const file = join(dir, `m-${Math.random().toString(36).slice(2)}.json`);
    await writeFile(file, json);
    await ok("apply", "-f", file);
  }
  const getDeployment = (name: string) => client.appsV1.deployments("default").get(name);
  async function replicaSetsOf(d: Deployment): Promise<ReplicaSet[]> {
    const list = await client.appsV1.replicaSets("default").list({ labelSelector: `app=${d.metadata.name}` });
    return list.items.filter((rs) => rs.metadata.ownerReferences?.[0]?.uid === d.metadata.uid);
  }
  /** Records every observed state of app=<name> until the returned function is called. */
  function observe(app: string): () => Observed[] {
    const seen: Observed[] = [];
    const o = (all: Pod[]) => {
      const mine = all.filter((p) => p.metadata.labels?.app === app && !p.metadata.deletionTimestamp);
      const byRS = new Map<string, number>();
      for (const p of mine) {
        const rs = p.metadata.ownerReferences?.[0]?.name ?? "";
        byRS.set(rs, (byRS.get(rs) ?? 0) + 1);
      }
      seen.push({ active: mine.length, ready: mine.filter(isPodReady).length, byRS });
    };
    observers.push(o);
    return () => {
      observers.splice(observers.indexOf(o), 1);
      return seen;
    };
  }
  const revisionOf = (o: KubeObject) => o.metadata.annotations?.["deployment.kubernetes.io/revision"];

  it("creates web-<hash> owned by the Deployment; rollout status waits for it and says so as upstream", async () => {
    await apply(
      deploymentJSON("web", {
        replicas: 3,
        // 25% of 3 rounds up to 1 surge pod; 34% of 3 rounds down to 1 unavailable pod.
        strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: "25%", maxUnavailable: "34%" } },
      }),
    );
    const out = await ok("rollout", "status", "deployment/web", "--timeout=20s");
    expect(out.trim().split("\n").at(-1)).toBe('deployment "web" successfully rolled out');
    const d = await getDeployment("web");
    const [rs] = await replicaSetsOf(d);
    const hash = rs.metadata.labels?.["pod-template-hash"] ?? "";
    expect(hash).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(rs.metadata.name).toBe(`web-${hash}`);
    expect(rs.spec.selector.matchLabels).toEqual({ app: "web", "pod-template-hash": hash });
    const pods = await client.coreV1.pods("default").list({ labelSelector: `pod-template-hash=${hash}` });
    expect(pods.items).toHaveLength(3);
    expect(rs.metadata.ownerReferences).toEqual([
      expect.objectContaining({ kind: "Deployment", name: "web", uid: d.metadata.uid, controller: true }),
    ]);
    expect(rs.metadata.annotations).toMatchObject({
      "deployment.kubernetes.io/revision": "1",
      "deployment.kubernetes.io/desired-replicas": "3",
      "deployment.kubernetes.io/max-replicas": "4",
    });
    expect(revisionOf(d)).toBe("1");
    expect(d.status).toMatchObject({
      observedGeneration: d.metadata.generation,
      replicas: 3,
      updatedReplicas: 3,
      readyReplicas: 3,
      availableReplicas: 3,
    });
    const byType = Object.fromEntries((d.status?.conditions ?? []).map((c) => [c.type, c]));
    expect(byType.Available).toMatchObject({
      status: "True",
      reason: "MinimumReplicasAvailable",
      message: "Deployment has minimum availability.",
    });
    expect(byType.Progressing).toMatchObject({
      status: "True",
      reason: "NewReplicaSetAvailable",
      message: `ReplicaSet "${rs.metadata.name}" has successfully progressed.`,
    });
  });

  it("kubectl set image rolls out with never more than 3+1 pods nor fewer than 3-1 ready, at every observed state", async () => {
    const seen = observe("web");
    await ok("set", "image", "deployment/web", "c=nginx:2");
    await ok("annotate", "deployment/web", "kubernetes.io/change-cause=image nginx:2");
    const out = await ok("rollout", "status", "deployment/web", "--timeout=20s");
    const states = seen();
    expect(out).toContain('deployment "web" successfully rolled out');
    expect(states.length).toBeGreaterThan(5);
    // Both ReplicaSets had pods at once: it was a rolling update, not a replacement.
    expect(states.some((s) => s.byRS.size === 2)).toBe(true);
    expect(Math.max(...states.map((s) => s.active))).toBeLessThanOrEqual(4);
    expect(Math.min(...states.map((s) => s.ready))).toBeGreaterThanOrEqual(2);

    const d = await getDeployment("web");
    expect(revisionOf(d)).toBe("2");
    const sets = await replicaSetsOf(d);
    expect(sets.map((rs) => [revisionOf(rs), rs.spec.replicas]).sort()).toEqual([
      ["1", 0],
      ["2", 3],
    ]);
  });

  it("kubectl rollout history lists the revisions with their change-cause, and shows one", async () => {
    const out = await ok("rollout", "history", "deployment/web");
    expect(out).toMatch(/^REVISION\s+CHANGE-CAUSE$/m);
    expect(out).toMatch(/^1\s+<none>$/m);
    expect(out).toMatch(/^2\s+image nginx:2$/m);
    const one = await ok("rollout", "history", "deployment/web", "--revision=1");
    expect(one).toContain("deployment.apps/web with revision #1");
    expect(one).toMatch(/Image:\s+nginx:1/);
  });

  it("kubectl rollout undo brings revision 1's template back as revision 3, reusing its ReplicaSet", async () => {
    const missing = await runKubectl(env, ["rollout", "undo", "deployment/web", "--to-revision=9"]);
    expect(missing.code).not.toBe(0);
    expect(missing.err).toContain("unable to find specified revision 9 in history");
    expect(await ok("rollout", "undo", "deployment/web")).toBe("deployment.apps/web rolled back\n");
    await ok("rollout", "status", "deployment/web", "--timeout=20s");
    const d = await getDeployment("web");
    expect(d.spec.template.spec.containers[0].image).toBe("nginx:1");
    expect(revisionOf(d)).toBe("3");
    const sets = await replicaSetsOf(d);
    expect(sets).toHaveLength(2);
    const back = sets.find((rs) => revisionOf(rs) === "3");
    expect(back?.spec.replicas).toBe(3);
    expect(back?.metadata.annotations?.["deployment.kubernetes.io/revision-history"]).toBe("1");
    const history = await ok("rollout", "history", "deployment/web");
    expect(history).toMatch(/^2\s+image nginx:2$/m);
    expect(history).toMatch(/^3\s+/m);
    expect(history).not.toMatch(/^1\s+/m);
  });

  it("paused: a new image makes no ReplicaSet but a scale applies; resumed, it rolls out", async () => {
    expect(await ok("rollout", "pause", "deployment/web")).toBe("deployment.apps/web paused\n");
    await waitFor("the paused condition", async () => {
      const c = (await getDeployment("web")).status?.conditions?.find((x) => x.type === "Progressing");
      return c?.reason === "DeploymentPaused" ? c : undefined;
    }).then((c) => expect(c).toMatchObject({ status: "Unknown", message: "Deployment is paused" }));
    await ok("set", "image", "deployment/web", "c=nginx:3");
    await ok("scale", "deployment/web", "--replicas=4");
    // Once the scale is seen, the image change (an earlier generation) was seen too.
    const d = await waitFor("the scale while paused", async () => {
      const d = await getDeployment("web");
      return (d.status?.observedGeneration ?? 0) >= (d.metadata.generation ?? 0) && d.status?.replicas === 4
        ? d
        : undefined;
    });
    expect(await replicaSetsOf(d)).toHaveLength(2);
    expect(await ok("rollout", "resume", "deployment/web")).toBe("deployment.apps/web resumed\n");
    await ok("rollout", "status", "deployment/web", "--timeout=20s");
    const after = await getDeployment("web");
    expect(after.spec.template.spec.containers[0].image).toBe("nginx:3");
    expect(after.status).toMatchObject({ replicas: 4, updatedReplicas: 4, availableReplicas: 4 });
    expect(await replicaSetsOf(after)).toHaveLength(3);
  });

  it("kubectl rollout restart makes a new revision; revisionHistoryLimit 1 keeps one old ReplicaSet", async () => {
    expect(await ok("rollout", "restart", "deployment/web")).toBe("deployment.apps/web restarted\n");
    await ok("rollout", "status", "deployment/web", "--timeout=20s");
    const d = await getDeployment("web");
    expect(d.spec.template.metadata?.annotations?.["kubectl.kubernetes.io/restartedAt"]).toBeTruthy();
    expect(revisionOf(d)).toBe("5");
    await ok("patch", "deployment/web", "-p", '{"spec":{"revisionHistoryLimit":1}}');
    const sets = await waitFor("the history trimmed to one old ReplicaSet", async () => {
      const sets = await replicaSetsOf(d);
      return sets.length === 2 ? sets : undefined;
    });
    expect(sets.map(revisionOf).sort()).toEqual(["4", "5"]);
  });

  it("a rollout whose pods never become ready passes its progress deadline; rollout status fails as upstream", async () => {
    // The kubelet stand-in watches only "default": pods elsewhere never become ready.
    await ok("create", "namespace", "stuck");
    const manifest = JSON.parse(deploymentJSON("slow", { replicas: 1, progressDeadlineSeconds: 1 }));
    manifest.metadata.namespace = "stuck";
    await apply(JSON.stringify(manifest));
    const r = await runKubectl(env, ["rollout", "status", "deployment/slow", "-n", "stuck", "--timeout=20s"]);
    expect(r.code).not.toBe(0);
    expect(r.err).toContain('error: deployment "slow" exceeded its progress deadline');
    const d = await client.appsV1.deployments("stuck").get("slow");
    const byType = Object.fromEntries((d.status?.conditions ?? []).map((c) => [c.type, c]));
    expect(byType.Progressing).toMatchObject({
      status: "False",
      reason: "ProgressDeadlineExceeded",
      message: expect.stringMatching(/^ReplicaSet "slow-\w+" has timed out progressing\.$/),
    });
    expect(byType.Available).toMatchObject({
      status: "False",
      reason: "MinimumReplicasUnavailable",
      message: "Deployment does not have minimum availability.",
    });
  });

  it("kubectl scale in the middle of a stuck rollout shares the new replicas out by size (proportional scaling)", async () => {
    // In "stuck" no pod becomes ready: with maxUnavailable 0 the rollout stops at old 4, new 1.
    const manifest = JSON.parse(
      deploymentJSON("mid", {
        replicas: 4,
        strategy: { type: "RollingUpdate", rollingUpdate: { maxSurge: 1, maxUnavailable: 0 } },
      }),
    );
    manifest.metadata.namespace = "stuck";
    await apply(JSON.stringify(manifest));
    const sizes = async () => {
      const d = await client.appsV1.deployments("stuck").get("mid");
      const list = await client.appsV1.replicaSets("stuck").list({ labelSelector: "app=mid" });
      return list.items
        .map((rs): unknown[] => [
          revisionOf(rs),
          rs.spec.replicas,
          rs.metadata.annotations?.["deployment.kubernetes.io/max-replicas"],
        ])
        .concat([["deployment", d.status?.observedGeneration === d.metadata.generation, undefined]])
        .sort((a, b) => String(a[0]).localeCompare(String(b[0])));
    };
    const is = (want: unknown[][]) => async () => {
      const got = await sizes();
      return JSON.stringify(got) === JSON.stringify(want) ? got : undefined;
    };
    await waitFor(
      "one ReplicaSet of 4",
      is([
        ["1", 4, "5"],
        ["deployment", true, undefined],
      ]),
    );
    await ok("set", "image", "deployment/mid", "-n", "stuck", "c=nginx:2");
    await waitFor(
      "the rollout stuck at 4 + 1",
      is([
        ["1", 4, "5"],
        ["2", 1, "5"],
        ["deployment", true, undefined],
      ]),
    );
    await ok("scale", "deployment/mid", "-n", "stuck", "--replicas=8");
    // 8 + 1 surge = 9 to share: 4 × 9 / 5 = 7.2 → 7, 1 × 9 / 5 = 1.8 → 2.
    await waitFor(
      "the proportional scale",
      is([
        ["1", 7, "9"],
        ["2", 2, "9"],
        ["deployment", true, undefined],
      ]),
    );
  });

  it("Recreate: no new pod while an old one exists, then all new", async () => {
    await apply(deploymentJSON("db", { replicas: 2, strategy: { type: "Recreate" } }));
    await ok("rollout", "status", "deployment/db", "--timeout=20s");
    const seen = observe("db");
    await ok("set", "image", "deployment/db", "c=postgres:2");
    await ok("rollout", "status", "deployment/db", "--timeout=20s");
    const states = seen();
    expect(states.some((s) => s.active === 0)).toBe(true);
    expect(states.every((s) => s.byRS.size <= 1)).toBe(true);
    const d = await getDeployment("db");
    expect(d.status).toMatchObject({ replicas: 2, updatedReplicas: 2, availableReplicas: 2 });
    expect(errors).toEqual([]);
  });
});

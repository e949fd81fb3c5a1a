/**
 * The disruption controller inside the controller-manager, against our API server over HTTP:
 * an integer minAvailable counts the matching pods; maxUnavailable takes its total from the
 * Deployment's replicas (through its ReplicaSet), not from the pods that exist; a pod whose
 * controller is of a kind we do not serve makes the sync fail safe (SyncFailed, 0 allowed);
 * and a pod turning Ready moves the count without a resync.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pod } from "../../api/core.ts";
import type { PodDisruptionBudget } from "../../api/policy.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { type RunningControllerManager, startControllerManager } from "../controller-manager.ts";
import { podDisruptionBudgets } from "./disruption.ts";

/** Polls `check` until it returns something other than undefined; fails after 20 s with the last value. */
async function eventually<T>(what: string, check: () => Promise<T | undefined>): Promise<T> {
  const deadline = Date.now() + 20_000;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 100));
  }
}

describe("the disruption controller", () => {
  let server: APIServer;
  let manager: RunningControllerManager;
  let client: Clientset;
  const logs: string[] = [];
  const ns = "default";
  const pdbs = () => client.resource<PodDisruptionBudget>(podDisruptionBudgets, ns);

  const createPod = async (
    name: string,
    labels: Record<string, string>,
    owner?: Pod["metadata"]["ownerReferences"],
  ) =>
    client.coreV1.pods(ns).create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, labels, ...(owner ? { ownerReferences: owner } : {}) },
      spec: { containers: [{ name: "c", image: "nginx" }] },
    } as Pod);
  const makeReady = async (name: string) => {
    const pod = await client.coreV1.pods(ns).get(name);
    pod.status = {
      ...pod.status,
      phase: "Running",
      conditions: [{ type: "Ready", status: "True", lastTransitionTime: "2024-01-01T00:00:00Z" }],
    };
    await client.coreV1.pods(ns).updateStatus(pod);
  };
  const createPdb = (name: string, spec: PodDisruptionBudget["spec"]) =>
    pdbs().create({ apiVersion: "policy/v1", kind: "PodDisruptionBudget", metadata: { name }, spec });
  /** The status once the controller has observed generation `gen` and `pred` holds. */
  const statusWhen = (name: string, pred: (p: PodDisruptionBudget) => boolean) =>
    eventually(`${name}'s status`, async () => {
      const p = await pdbs().get(name);
      return p.status?.observedGeneration === p.metadata.generation && pred(p) ? p : undefined;
    });

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url, qps: -1 });
    manager = await startControllerManager({
      client,
      controllers: ["disruption-controller"],
      log: (line) => logs.push(line),
    });
    expect(await manager.synced).toBe(true);
  });

  afterAll(async () => {
    await manager?.stop();
    await server?.close();
  });

  it("an integer minAvailable counts the matching pods; a pod turning Ready adds one", async () => {
    await createPod("web-1", { app: "web" });
    await createPod("web-2", { app: "web" });
    await createPod("other", { app: "other" });
    await makeReady("web-1");
    await createPdb("web", { minAvailable: 1, selector: { matchLabels: { app: "web" } } });
    // 2 pods match, 1 is Ready: healthy 1 − desired 1 = 0 allowed.
    const before = await statusWhen("web", (p) => p.status?.currentHealthy === 1);
    expect(before.status).toMatchObject({ expectedPods: 2, desiredHealthy: 1, disruptionsAllowed: 0 });
    expect(before.status?.conditions).toEqual([
      expect.objectContaining({
        type: "DisruptionAllowed",
        status: "False",
        reason: "InsufficientPods",
        observedGeneration: 1,
      }),
    ]);
    await makeReady("web-2");
    // healthy 2 − desired 1 = 1 allowed; the condition turns True.
    const after = await statusWhen("web", (p) => p.status?.currentHealthy === 2);
    expect(after.status).toMatchObject({ expectedPods: 2, desiredHealthy: 1, disruptionsAllowed: 1 });
    expect(after.status?.conditions?.[0]).toMatchObject({ status: "True", reason: "SufficientPods" });
    // A spec change bumps the generation; the controller catches up: minAvailable 2 → 0 allowed.
    await pdbs().update({ ...after, spec: { ...after.spec, minAvailable: 2 } });
    const raised = await statusWhen("web", (p) => p.metadata.generation === 2);
    expect(raised.status).toMatchObject({ observedGeneration: 2, desiredHealthy: 2, disruptionsAllowed: 0 });
  });

  it("maxUnavailable takes the Deployment's replicas as the total, through its ReplicaSet", async () => {
    const d = await client.appsV1.deployments(ns).create({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "api" },
      spec: {
        replicas: 4,
        selector: { matchLabels: { app: "api" } },
        template: {
          metadata: { labels: { app: "api" } },
          spec: { containers: [{ name: "c", image: "nginx" }] },
        },
      },
    });
    const rs = await client.appsV1.replicaSets(ns).create({
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {
        name: "api-1",
        ownerReferences: [
          { apiVersion: "apps/v1", kind: "Deployment", name: "api", uid: d.metadata.uid!, controller: true },
        ],
      },
      spec: {
        replicas: 2,
        selector: { matchLabels: { app: "api" } },
        template: {
          metadata: { labels: { app: "api" } },
          spec: { containers: [{ name: "c", image: "nginx" }] },
        },
      },
    });
    const owner = [
      { apiVersion: "apps/v1", kind: "ReplicaSet", name: "api-1", uid: rs.metadata.uid!, controller: true },
    ];
    for (const name of ["api-a", "api-b", "api-c"]) {
      await createPod(name, { app: "api" }, owner);
      await makeReady(name);
    }
    await createPdb("api", { maxUnavailable: "50%", selector: { matchLabels: { app: "api" } } });
    // expected = the Deployment's 4 (not the RS's 2, nor the 3 pods); ceil(50% × 4) = 2 may be
    // unavailable, so desired = 4 − 2 = 2; healthy 3 − 2 = 1 allowed.
    // The controller's pod informer may see the PDB before the last pod's Ready status (a loaded
    // machine): wait for the status that counts all three, then check every figure.
    const s = await statusWhen("api", (p) => p.status?.expectedPods === 4 && p.status?.currentHealthy === 3);
    expect(s.status).toMatchObject({
      expectedPods: 4,
      desiredHealthy: 2,
      currentHealthy: 3,
      disruptionsAllowed: 1,
    });
  });

  it("a pod whose controller we cannot scale fails safe: 0 allowed, SyncFailed with the reason", async () => {
    await createPod("db-0", { app: "db" }, [
      { apiVersion: "apps/v1", kind: "StatefulSet", name: "db", uid: "0000-db", controller: true },
    ]);
    await makeReady("db-0");
    await createPdb("db", { minAvailable: "50%", selector: { matchLabels: { app: "db" } } });
    const p = await eventually("db's SyncFailed", async () => {
      const got = await pdbs().get("db");
      return got.status?.conditions?.[0]?.reason === "SyncFailed" ? got : undefined;
    });
    expect(p.status?.disruptionsAllowed).toBe(0);
    expect(p.status?.conditions?.[0]).toMatchObject({
      type: "DisruptionAllowed",
      status: "False",
      message: 'found no controllers for pod "db-0"',
    });
  });
});

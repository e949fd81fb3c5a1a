// The rollout steps without a server: the sync functions over a fake client and ReplicaSet cache,
// with a tiny world that plays the ReplicaSet controller and the kubelet between syncs (pods
// become available a random number of steps later). Seeded: DEPLOYMENT_SEED=<n> replays one run.
import { describe, expect, it } from "vitest";
import type { Deployment, ReplicaSet } from "../../api/apps.ts";
import { newStatusError } from "../../client/errors.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import type { NamespaceLister } from "../../client/tools/cache/listers.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { mulberry32 } from "../../testing/random.ts";
import { progressingStatus, stuckDeploymentDelay } from "./progress.ts";
import { rolloutRolling } from "./rolling.ts";
import { checkPausedConditions, type DeploymentSyncContext, getNewReplicaSet, scale } from "./sync.ts";
import {
  getAvailableReplicaCountForReplicaSets,
  getReplicaCountForReplicaSets,
  maxSurge,
  maxUnavailable,
  RevisionAnnotation,
} from "./util/deployment-util.ts";

const t0 = Date.parse("2026-01-01T00:00:00Z");

/** A fake API: ReplicaSets in a map, Deployment status writes kept; `creates` can be made to fail. */
function fakeWorld(d: Deployment, clock = new FakeClock(t0)) {
  const sets = new Map<string, ReplicaSet>();
  let uid = 0;
  const events: string[] = [];
  let failCreate: ((rs: ReplicaSet) => Error | undefined) | undefined;
  const deployment = { current: structuredClone(d) };
  const rsClient = {
    async create(rs: ReplicaSet) {
      const err = failCreate?.(rs);
      if (err) throw err;
      if (sets.has(rs.metadata.name ?? "")) throw newStatusError(409, "exists", { reason: "AlreadyExists" });
      const created = structuredClone(rs);
      created.metadata.uid = `uid-${++uid}`;
      created.metadata.creationTimestamp = new Date(t0 + uid * 1000).toISOString();
      created.metadata.generation = 1;
      created.status = { replicas: 0, observedGeneration: 1 };
      sets.set(created.metadata.name ?? "", created);
      return structuredClone(created);
    },
    async update(rs: ReplicaSet) {
      const stored = { ...structuredClone(rs), status: sets.get(rs.metadata.name ?? "")?.status };
      stored.metadata.generation = (stored.metadata.generation ?? 1) + 1;
      sets.set(rs.metadata.name ?? "", stored);
      return structuredClone(stored);
    },
    async delete(name: string) {
      sets.delete(name);
      return {};
    },
  };
  const dClient = {
    async updateStatus(obj: Deployment) {
      deployment.current = structuredClone(obj);
      return structuredClone(obj);
    },
  };
  const client = {
    appsV1: { replicaSets: () => rsClient, deployments: () => dClient },
  } as unknown as Clientset;
  const lister = {
    get: (name: string) => sets.get(name),
    list: () => [...sets.values()],
  } as unknown as NamespaceLister<ReplicaSet>;
  const dc: DeploymentSyncContext = {
    client,
    rsLister: () => lister,
    clock,
    recorder: (_o, _t, reason, message) => events.push(`${reason}: ${message}`),
    enqueueAfter: (_d, ms) => events.push(`enqueueAfter ${ms}`),
    enqueueRateLimited: () => events.push("enqueueRateLimited"),
  };
  return {
    dc,
    sets,
    events,
    deployment,
    clock,
    failCreate: (f: typeof failCreate) => {
      failCreate = f;
    },
  };
}

const deployment = (
  replicas: number,
  maxSurgeV: number | string,
  maxUnavailableV: number | string,
): Deployment => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default", uid: "d-uid", generation: 2 },
  spec: {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: { metadata: { labels: { app: "web" } }, spec: { containers: [{ name: "c", image: "v2" }] } },
    strategy: {
      type: "RollingUpdate",
      rollingUpdate: { maxSurge: maxSurgeV, maxUnavailable: maxUnavailableV },
    },
    progressDeadlineSeconds: 600,
    revisionHistoryLimit: 10,
  },
  status: { observedGeneration: 1 },
});

const oldReplicaSet = (replicas: number): ReplicaSet => ({
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: {
    name: "web-old",
    namespace: "default",
    uid: "uid-old",
    creationTimestamp: new Date(t0 - 3600_000).toISOString(),
    annotations: { [RevisionAnnotation]: "1", "deployment.kubernetes.io/desired-replicas": String(replicas) },
    ownerReferences: [
      { apiVersion: "apps/v1", kind: "Deployment", name: "web", uid: "d-uid", controller: true },
    ],
    generation: 1,
  },
  spec: {
    replicas,
    selector: { matchLabels: { app: "web", "pod-template-hash": "old" } },
    template: {
      metadata: { labels: { app: "web", "pod-template-hash": "old" } },
      spec: { containers: [{ name: "c", image: "v1" }] },
    },
  },
  status: { replicas, readyReplicas: replicas, availableReplicas: replicas, observedGeneration: 1 },
});

const percentOrInt = (rand: () => number, max: number) =>
  rand() < 0.5 ? Math.floor(rand() * (max + 1)) : `${Math.floor(rand() * 101)}%`;

describe("a rolling update, step by step (seeded)", () => {
  const seeds = process.env.DEPLOYMENT_SEED ? [Number(process.env.DEPLOYMENT_SEED)] : [...Array(60).keys()];

  it("never asks for more than replicas + maxSurge, never drops available below replicas − maxUnavailable, and completes", async () => {
    for (const seed of seeds) {
      const rand = mulberry32(seed);
      const replicas = 1 + Math.floor(rand() * 10);
      let surge = percentOrInt(rand, 3);
      const unavailable = percentOrInt(rand, 3);
      // Validation refuses 0 and 0.
      if ((surge === 0 || surge === "0%") && (unavailable === 0 || unavailable === "0%")) surge = 1;
      const d = deployment(replicas, surge, unavailable);
      const w = fakeWorld(d);
      w.sets.set("web-old", oldReplicaSet(replicas));
      const max = replicas + maxSurge(d);
      const min = replicas - maxUnavailable(d);
      const where = `seed ${seed}: replicas ${replicas}, maxSurge ${surge}, maxUnavailable ${unavailable}`;
      let steps = 0;
      for (; steps < 200; steps++) {
        const current = structuredClone(w.deployment.current);
        await rolloutRolling(w.dc, current, [...w.sets.values()]);
        const all = [...w.sets.values()];
        expect(getReplicaCountForReplicaSets(all), where).toBeLessThanOrEqual(max);
        // The world: the ReplicaSet controller deletes unavailable pods first; new pods come up later.
        for (const rs of all) {
          const spec = rs.spec.replicas ?? 0;
          const prev = rs.status?.availableReplicas ?? 0;
          const up = prev >= spec ? spec : Math.min(spec, prev + Math.floor(rand() * 3));
          rs.status = {
            replicas: spec,
            readyReplicas: up,
            availableReplicas: up,
            observedGeneration: rs.metadata.generation,
          };
        }
        expect(getAvailableReplicaCountForReplicaSets(all), where).toBeGreaterThanOrEqual(min);
        const s = w.deployment.current.status;
        if (s?.conditions?.some((c) => c.type === "Progressing" && c.reason === "NewReplicaSetAvailable"))
          break;
      }
      expect(steps, `${where}: did not complete`).toBeLessThan(200);
      const byName = [...w.sets.values()].map((rs) => [
        rs.metadata.name === "web-old" ? "old" : "new",
        rs.spec.replicas,
      ]);
      expect(byName.sort(), where).toEqual([
        ["new", replicas],
        ["old", 0],
      ]);
    }
  });
});

describe("the new ReplicaSet", () => {
  it("is created as <name>-<hash>, owned, revision max+1, and reported NewReplicaSetCreated", async () => {
    const w = fakeWorld(deployment(3, 1, 1));
    w.sets.set("web-old", oldReplicaSet(3));
    const d = structuredClone(w.deployment.current);
    const rs = await getNewReplicaSet(
      w.dc,
      d,
      [...w.sets.values()],
      [w.sets.get("web-old") as ReplicaSet],
      true,
    );
    const hash = rs?.metadata.labels?.["pod-template-hash"];
    expect(rs?.metadata.name).toBe(`web-${hash}`);
    expect(rs?.spec.replicas).toBe(1);
    expect(rs?.metadata.ownerReferences?.[0]).toMatchObject({
      kind: "Deployment",
      uid: "d-uid",
      controller: true,
    });
    expect(rs?.metadata.annotations?.[RevisionAnnotation]).toBe("2");
    expect(w.deployment.current.metadata.annotations?.[RevisionAnnotation]).toBe("2");
    expect(w.deployment.current.status?.conditions).toEqual([
      {
        type: "Progressing",
        status: "True",
        reason: "NewReplicaSetCreated",
        message: `Created new replica set "${rs?.metadata.name}"`,
        lastUpdateTime: "2026-01-01T00:00:00Z",
        lastTransitionTime: "2026-01-01T00:00:00Z",
      },
    ]);
    expect(w.events).toEqual([`ScalingReplicaSet: Scaled up replica set ${rs?.metadata.name} from 0 to 1`]);
  });

  it("an existing new ReplicaSet gets the Deployment's minReadySeconds and annotations, then the Deployment its revision", async () => {
    const w = fakeWorld(deployment(3, 1, 1));
    const first = await getNewReplicaSet(w.dc, structuredClone(w.deployment.current), [], [], true);
    const d = structuredClone(w.deployment.current);
    d.spec.minReadySeconds = 5;
    d.metadata.annotations = { ...d.metadata.annotations, "kubernetes.io/change-cause": "why" };
    const updated = await getNewReplicaSet(w.dc, d, [...w.sets.values()], [], false);
    expect(updated?.metadata.name).toBe(first?.metadata.name);
    expect(updated?.spec.minReadySeconds).toBe(5);
    expect(updated?.metadata.annotations?.["kubernetes.io/change-cause"]).toBe("why");
    expect(w.sets.size).toBe(1);
  });

  it("a name taken by a ReplicaSet with another template bumps collisionCount, and the next hash differs", async () => {
    const w = fakeWorld(deployment(3, 1, 1));
    const d = structuredClone(w.deployment.current);
    const first = await getNewReplicaSet(w.dc, structuredClone(d), [], [], true);
    // Someone else's ReplicaSet now holds that name.
    const squatter = w.sets.get(first?.metadata.name ?? "") as ReplicaSet;
    squatter.metadata.ownerReferences = [];
    squatter.spec.template.spec.containers[0].image = "other";
    await expect(getNewReplicaSet(w.dc, d, [], [], true)).rejects.toThrow("exists");
    expect(w.deployment.current.status?.collisionCount).toBe(1);
    const second = await getNewReplicaSet(w.dc, structuredClone(w.deployment.current), [], [], true);
    expect(second?.metadata.name).not.toBe(first?.metadata.name);
  });

  it("a failed create says so in Progressing (ReplicaSetCreateError) and in an event", async () => {
    const w = fakeWorld(deployment(3, 1, 1));
    w.failCreate(() => newStatusError(403, "quota exceeded", { reason: "Forbidden" }));
    const d = structuredClone(w.deployment.current);
    await expect(getNewReplicaSet(w.dc, d, [], [], true)).rejects.toThrow("quota exceeded");
    const c = w.deployment.current.status?.conditions?.[0];
    expect(c).toMatchObject({ type: "Progressing", status: "False", reason: "ReplicaSetCreateError" });
    expect(c?.message).toMatch(/^Failed to create new replica set "web-\w+": quota exceeded$/);
    expect(w.events[0]).toMatch(/^ReplicaSetCreateError: Failed to create new replica set/);
  });
});

describe("a scale in the middle of a rollout (proportional scaling)", () => {
  it("shares 10 more replicas by size, largest first, leftovers to the largest", async () => {
    const d = deployment(20, 3, 2);
    const w = fakeWorld(d);
    const old = oldReplicaSet(7);
    old.metadata.annotations = { ...old.metadata.annotations, "deployment.kubernetes.io/max-replicas": "13" };
    w.sets.set("web-old", old);
    const cur = await getNewReplicaSet(w.dc, structuredClone(d), [], [old], true);
    const newRS = w.sets.get(cur?.metadata.name ?? "") as ReplicaSet;
    newRS.spec.replicas = 6;
    newRS.metadata.annotations = {
      ...newRS.metadata.annotations,
      "deployment.kubernetes.io/max-replicas": "13",
    };
    await scale(w.dc, structuredClone(d), newRS, [old]);
    expect(w.sets.get("web-old")?.spec.replicas).toBe(12);
    expect(w.sets.get(newRS.metadata.name ?? "")?.spec.replicas).toBe(11);
    // Every ReplicaSet now knows the size it was made for.
    for (const rs of w.sets.values())
      expect(rs.metadata.annotations).toMatchObject({
        "deployment.kubernetes.io/desired-replicas": "20",
        "deployment.kubernetes.io/max-replicas": "23",
      });
  });
});

describe("the Progressing condition on an injected clock", () => {
  const base = {
    observedGeneration: 2,
    replicas: 4,
    updatedReplicas: 1,
    readyReplicas: 3,
    availableReplicas: 3,
  };
  const withCond = (reason: string, at: string, status: "True" | "Unknown" = "True"): Deployment => {
    const d = deployment(3, 1, 1);
    d.status = {
      ...base,
      conditions: [{ type: "Progressing", status, reason, lastUpdateTime: at, lastTransitionTime: at }],
    };
    return d;
  };
  const rs = { metadata: { name: "web-abc" } } as ReplicaSet;

  it("progress moves lastUpdateTime and keeps lastTransitionTime", () => {
    const d = withCond("NewReplicaSetCreated", "2026-01-01T00:00:00Z");
    const s = progressingStatus(
      d,
      rs,
      { ...base, updatedReplicas: 2, conditions: d.status?.conditions },
      t0 + 5000,
    );
    expect(s.conditions?.[0]).toEqual({
      type: "Progressing",
      status: "True",
      reason: "ReplicaSetUpdated",
      message: 'ReplicaSet "web-abc" is progressing.',
      lastUpdateTime: "2026-01-01T00:00:05Z",
      lastTransitionTime: "2026-01-01T00:00:00Z",
    });
  });

  it("no progress: unchanged until the deadline, ProgressDeadlineExceeded after it", () => {
    const d = withCond("ReplicaSetUpdated", "2026-01-01T00:00:00Z");
    const same = { ...base, conditions: d.status?.conditions };
    expect(progressingStatus(d, rs, same, t0 + 600_000).conditions?.[0].reason).toBe("ReplicaSetUpdated");
    expect(progressingStatus(d, rs, same, t0 + 601_000).conditions?.[0]).toMatchObject({
      status: "False",
      reason: "ProgressDeadlineExceeded",
      message: 'ReplicaSet "web-abc" has timed out progressing.',
      lastTransitionTime: "2026-01-01T00:10:01Z",
    });
    // And it is looked at again when the deadline falls due (+1 s by the caller), not before.
    expect(stuckDeploymentDelay(d, same, t0 + 100_000)).toBe(500_000);
    expect(stuckDeploymentDelay(d, same, t0 + 599_500)).toBe(0);
  });

  it("complete: NewReplicaSetAvailable, and then no more checks", () => {
    const d = withCond("ReplicaSetUpdated", "2026-01-01T00:00:00Z");
    const done = {
      ...base,
      replicas: 3,
      updatedReplicas: 3,
      availableReplicas: 3,
      conditions: d.status?.conditions,
    };
    const s = progressingStatus(d, rs, done, t0 + 9000);
    expect(s.conditions?.[0]).toMatchObject({
      status: "True",
      reason: "NewReplicaSetAvailable",
      message: 'ReplicaSet "web-abc" has successfully progressed.',
    });
    expect(stuckDeploymentDelay(d, done, t0 + 9000)).toBe(-1);
  });

  it("paused: no progress estimate at all; pause and resume are Unknown conditions", async () => {
    const d = withCond("ReplicaSetUpdated", "2026-01-01T00:00:00Z");
    d.spec.paused = true;
    const same = { ...base, conditions: d.status?.conditions };
    expect(progressingStatus(d, rs, same, t0 + 10_000_000).conditions?.[0].reason).toBe("ReplicaSetUpdated");

    const w = fakeWorld(d);
    w.clock.setTime(t0 + 60_000);
    await checkPausedConditions(w.dc, structuredClone(d));
    expect(w.deployment.current.status?.conditions?.[0]).toMatchObject({
      status: "Unknown",
      reason: "DeploymentPaused",
      message: "Deployment is paused",
      lastTransitionTime: "2026-01-01T00:01:00Z",
    });
    const resumed = structuredClone(w.deployment.current);
    resumed.spec.paused = false;
    w.clock.setTime(t0 + 120_000);
    await checkPausedConditions(w.dc, resumed);
    expect(w.deployment.current.status?.conditions?.[0]).toMatchObject({
      status: "Unknown",
      reason: "DeploymentResumed",
      message: "Deployment is resumed",
      // Same status (Unknown): the transition time stays.
      lastTransitionTime: "2026-01-01T00:01:00Z",
      lastUpdateTime: "2026-01-01T00:02:00Z",
    });
  });
});

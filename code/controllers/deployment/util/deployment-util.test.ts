import { describe, expect, it } from "vitest";
import type { Deployment, ReplicaSet } from "../../../api/apps.ts";
import { computeHash, safeEncodeString, sortBySizeNewer, sortBySizeOlder } from "./controller-utils.ts";
import {
  DesiredReplicasAnnotation,
  deploymentTimedOut,
  equalIgnoreHash,
  findActiveOrLatest,
  findNewReplicaSet,
  getReplicaSetProportion,
  isSaturated,
  MaxReplicasAnnotation,
  maxRevision,
  maxSurge,
  maxUnavailable,
  newRSNewReplicas,
  RevisionAnnotation,
  RevisionHistoryAnnotation,
  resolveFenceposts,
  setDeploymentCondition,
  setNewReplicaSetAnnotations,
  sortByRevision,
} from "./deployment-util.ts";

const template = (image = "nginx:1") => ({
  metadata: { labels: { app: "web" } },
  spec: { containers: [{ name: "c", image }] },
});

const deployment = (replicas: number, strategy: Deployment["spec"]["strategy"] = {}): Deployment => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name: "web", namespace: "default", uid: "d-uid", generation: 1 },
  spec: {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: template(),
    strategy: { type: "RollingUpdate", ...strategy },
    progressDeadlineSeconds: 600,
  },
});

const replicaSet = (
  name: string,
  replicas: number,
  o: { created?: string; annotations?: Record<string, string>; available?: number; image?: string } = {},
): ReplicaSet => ({
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: {
    name,
    namespace: "default",
    uid: `${name}-uid`,
    creationTimestamp: o.created ?? "2026-01-01T00:00:00Z",
    annotations: o.annotations ?? {},
  },
  spec: {
    replicas,
    selector: { matchLabels: { app: "web" } },
    template: template(o.image),
  },
  status: { replicas, availableReplicas: o.available ?? replicas },
});

describe("maxSurge and maxUnavailable (ResolveFenceposts)", () => {
  it("rounds surge up and unavailable down, percentages of replicas", () => {
    expect(resolveFenceposts("25%", "25%", 10)).toEqual({ surge: 3, unavailable: 2 });
    expect(resolveFenceposts("25%", "34%", 3)).toEqual({ surge: 1, unavailable: 1 });
    expect(resolveFenceposts(2, "50%", 5)).toEqual({ surge: 2, unavailable: 2 });
  });

  it("makes unavailable 1 when both round to 0, so the rollout can move", () => {
    expect(resolveFenceposts("0%", "10%", 3)).toEqual({ surge: 0, unavailable: 1 });
    expect(resolveFenceposts(0, 0, 3)).toEqual({ surge: 0, unavailable: 1 });
  });

  it("refuses a string that is not a percentage", () => {
    expect(() => resolveFenceposts("3", 0, 3)).toThrow("string is not a percentage");
  });

  it("is 0 for Recreate, and unavailable never exceeds replicas", () => {
    expect(maxSurge(deployment(4, { type: "Recreate" }))).toBe(0);
    expect(maxUnavailable(deployment(4, { type: "Recreate" }))).toBe(0);
    expect(maxUnavailable(deployment(2, { rollingUpdate: { maxUnavailable: 5, maxSurge: 0 } }))).toBe(2);
    expect(maxUnavailable(deployment(0))).toBe(0);
    // Defaults (25% / 25%) when the strategy has no rollingUpdate.
    expect(maxSurge(deployment(4))).toBe(1);
    expect(maxUnavailable(deployment(4))).toBe(1);
  });
});

describe("how far the new ReplicaSet may grow (NewRSNewReplicas)", () => {
  it("up to replicas + maxSurge in all, never above replicas; Recreate: all at once", () => {
    const d = deployment(3, { rollingUpdate: { maxSurge: 1, maxUnavailable: 1 } });
    const newRS = replicaSet("web-new", 0);
    expect(newRSNewReplicas(d, [replicaSet("web-old", 3), newRS], newRS)).toBe(1);
    expect(
      newRSNewReplicas(d, [replicaSet("web-old", 2), replicaSet("web-new", 1)], replicaSet("web-new", 1)),
    ).toBe(2);
    expect(
      newRSNewReplicas(d, [replicaSet("web-old", 0), replicaSet("web-new", 3)], replicaSet("web-new", 3)),
    ).toBe(3);
    expect(newRSNewReplicas(deployment(3, { type: "Recreate" }), [newRS], newRS)).toBe(3);
  });
});

describe("proportional scaling (GetReplicaSetProportion)", () => {
  it("shares a scale-up by the size each ReplicaSet was made for, capped by what is left", () => {
    // 10 → 20 replicas mid-rollout, maxSurge 3: 13 pods may become 23.
    const d = deployment(20, { rollingUpdate: { maxSurge: 3, maxUnavailable: 2 } });
    const annotations = { [MaxReplicasAnnotation]: "13", [DesiredReplicasAnnotation]: "10" };
    const old = replicaSet("web-old", 7, { annotations });
    const cur = replicaSet("web-new", 6, { annotations, created: "2026-01-01T00:01:00Z" });
    const [first, second] = sortBySizeNewer([cur, old]);
    expect(first.metadata.name).toBe("web-old");
    const p1 = getReplicaSetProportion(first, d, 10, 0);
    const p2 = getReplicaSetProportion(second, d, 10, p1);
    // 7 × 23 / 13 = 12.4 → +5; 6 × 23 / 13 = 10.6 → +5.
    expect([p1, p2]).toEqual([5, 5]);
    expect(getReplicaSetProportion(second, d, 10, 9)).toBe(1);
  });

  it("scaling to zero takes everything; an empty ReplicaSet gets nothing", () => {
    expect(getReplicaSetProportion(replicaSet("a", 4), deployment(0), -7, 0)).toBe(-4);
    expect(getReplicaSetProportion(replicaSet("a", 0), deployment(5), 3, 0)).toBe(0);
  });

  it("equal sizes: newer first when growing, older first when shrinking", () => {
    const older = replicaSet("b-older", 2, { created: "2026-01-01T00:00:00Z" });
    const newer = replicaSet("a-newer", 2, { created: "2026-01-01T00:05:00Z" });
    expect(sortBySizeNewer([older, newer]).map((r) => r.metadata.name)).toEqual(["a-newer", "b-older"]);
    expect(sortBySizeOlder([newer, older]).map((r) => r.metadata.name)).toEqual(["b-older", "a-newer"]);
  });

  it("finds the only active ReplicaSet, or the newest when none is active, or none when several are", () => {
    const a = replicaSet("a", 0, { created: "2026-01-01T00:00:00Z" });
    const b = replicaSet("b", 0, { created: "2026-01-01T00:02:00Z" });
    expect(findActiveOrLatest(undefined, [a, b])?.metadata.name).toBe("b");
    expect(findActiveOrLatest(replicaSet("n", 3), [a, b])?.metadata.name).toBe("n");
    expect(findActiveOrLatest(replicaSet("n", 3), [replicaSet("o", 1)])).toBeUndefined();
  });

  it("is saturated only with every replica, the right annotation and all available", () => {
    const d = deployment(3);
    expect(isSaturated(d, replicaSet("n", 3, { annotations: { [DesiredReplicasAnnotation]: "3" } }))).toBe(
      true,
    );
    expect(isSaturated(d, replicaSet("n", 3, { annotations: { [DesiredReplicasAnnotation]: "2" } }))).toBe(
      false,
    );
    expect(
      isSaturated(d, replicaSet("n", 3, { annotations: { [DesiredReplicasAnnotation]: "3" }, available: 2 })),
    ).toBe(false);
  });
});

describe("revisions", () => {
  it("the new ReplicaSet is the one with the template, whatever its hash label", () => {
    const d = deployment(3);
    const rs = replicaSet("web-x", 3);
    rs.spec.template.metadata = { labels: { app: "web", "pod-template-hash": "x" } };
    expect(equalIgnoreHash(rs.spec.template, d.spec.template)).toBe(true);
    expect(findNewReplicaSet(d, [replicaSet("web-y", 0, { image: "nginx:0" }), rs])?.metadata.name).toBe(
      "web-x",
    );
  });

  it("a new ReplicaSet gets max + 1, the Deployment's annotations and its replica annotations", () => {
    const d = deployment(4);
    d.metadata.annotations = {
      "kubernetes.io/change-cause": "v2",
      [RevisionAnnotation]: "9",
      "kubectl.kubernetes.io/last-applied-configuration": "{}",
    };
    const old = [replicaSet("a", 0, { annotations: { [RevisionAnnotation]: "2" } })];
    const rs = replicaSet("b", 0);
    expect(setNewReplicaSetAnnotations(d, rs, String(maxRevision(old) + 1), false)).toBe(true);
    expect(rs.metadata.annotations).toEqual({
      "kubernetes.io/change-cause": "v2",
      [RevisionAnnotation]: "3",
      [DesiredReplicasAnnotation]: "4",
      [MaxReplicasAnnotation]: "5",
    });
    // Again: nothing changes.
    expect(setNewReplicaSetAnnotations(d, rs, "3", true)).toBe(false);
  });

  it("a ReplicaSet brought back by a rollback keeps the revisions it had", () => {
    const d = deployment(1);
    const rs = replicaSet("a", 1, { annotations: { [RevisionAnnotation]: "1" } });
    setNewReplicaSetAnnotations(d, rs, "3", true);
    expect(rs.metadata.annotations?.[RevisionAnnotation]).toBe("3");
    expect(rs.metadata.annotations?.[RevisionHistoryAnnotation]).toBe("1");
    setNewReplicaSetAnnotations(d, rs, "5", true);
    expect(rs.metadata.annotations?.[RevisionHistoryAnnotation]).toBe("1,3");
    // A revision is never lowered.
    expect(setNewReplicaSetAnnotations(d, rs, "4", true)).toBe(false);
    // The history is capped in characters, dropping the oldest first.
    setNewReplicaSetAnnotations(d, rs, "7", true, 4);
    expect(rs.metadata.annotations?.[RevisionHistoryAnnotation]).toBe("3,5");
  });

  it("sorts by revision, and skips what does not parse when taking the max", () => {
    const sets = [
      replicaSet("c", 0, { annotations: { [RevisionAnnotation]: "10" } }),
      replicaSet("a", 0, { annotations: { [RevisionAnnotation]: "2" } }),
      replicaSet("b", 0, { annotations: { [RevisionAnnotation]: "x" } }),
    ];
    expect(maxRevision(sets)).toBe(10);
    expect(sortByRevision(sets.slice(0, 2)).map((r) => r.metadata.name)).toEqual(["a", "c"]);
  });
});

describe("the pod-template hash (ComputeHash)", () => {
  it("is stable, ignores key order, changes with the template and with collisionCount", () => {
    const a = computeHash(template());
    expect(a).toMatch(/^[bcdfghjklmnpqrstvwxz2456789]+$/);
    expect(
      computeHash({
        spec: { containers: [{ image: "nginx:1", name: "c" }] },
        metadata: { labels: { app: "web" } },
      }),
    ).toBe(a);
    expect(computeHash(template("nginx:2"))).not.toBe(a);
    expect(computeHash(template(), 1)).not.toBe(a);
    expect(computeHash(template(), 1)).not.toBe(computeHash(template(), 2));
  });

  it("encodes digits without vowels, as rand.SafeEncodeString", () => {
    expect(safeEncodeString("0123456789")).toBe("456789bcdf");
  });
});

describe("conditions on an injected clock", () => {
  const t0 = Date.parse("2026-01-01T00:00:00Z");

  it("keep lastTransitionTime while the status stays, and ignore a repeat of the same reason", () => {
    const status = {};
    setDeploymentCondition(status, {
      type: "Progressing",
      status: "True",
      reason: "NewReplicaSetCreated",
      lastUpdateTime: "2026-01-01T00:00:00Z",
      lastTransitionTime: "2026-01-01T00:00:00Z",
    });
    setDeploymentCondition(status, {
      type: "Progressing",
      status: "True",
      reason: "ReplicaSetUpdated",
      lastUpdateTime: "2026-01-01T00:01:00Z",
      lastTransitionTime: "2026-01-01T00:01:00Z",
    });
    expect(status).toEqual({
      conditions: [
        {
          type: "Progressing",
          status: "True",
          reason: "ReplicaSetUpdated",
          lastUpdateTime: "2026-01-01T00:01:00Z",
          lastTransitionTime: "2026-01-01T00:00:00Z",
        },
      ],
    });
    setDeploymentCondition(status, {
      type: "Progressing",
      status: "True",
      reason: "ReplicaSetUpdated",
      lastUpdateTime: "2026-01-01T00:05:00Z",
    });
    expect((status as { conditions: { lastUpdateTime: string }[] }).conditions[0].lastUpdateTime).toBe(
      "2026-01-01T00:01:00Z",
    );
  });

  it("time out progressDeadlineSeconds after the last update, not before; never when complete", () => {
    const d = deployment(3);
    const status = (reason: string) => ({
      conditions: [
        { type: "Progressing", status: "True" as const, reason, lastUpdateTime: "2026-01-01T00:00:00Z" },
      ],
    });
    expect(deploymentTimedOut(d, status("ReplicaSetUpdated"), t0 + 600_000)).toBe(false);
    expect(deploymentTimedOut(d, status("ReplicaSetUpdated"), t0 + 600_001)).toBe(true);
    expect(deploymentTimedOut(d, status("NewReplicaSetAvailable"), t0 + 9_999_999)).toBe(false);
    expect(deploymentTimedOut(d, status("ProgressDeadlineExceeded"), t0)).toBe(true);
    expect(
      deploymentTimedOut(
        { ...d, spec: { ...d.spec, progressDeadlineSeconds: 2147483647 } },
        status("x"),
        t0 + 1e12,
      ),
    ).toBe(false);
  });
});

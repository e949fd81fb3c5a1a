import { describe, expect, it } from "vitest";
import type { Pod, PodPhase } from "../api/core.ts";
import { mulberry32 } from "../testing/random.ts";
import {
  filterActivePods,
  getDeletionCostFromPodAnnotations,
  isPodAvailable,
  lessActivePodsWithRanks,
  sortActivePodsWithRanks,
} from "./active-pods.ts";

const now = Date.parse("2026-01-01T12:00:00Z");
const ago = (s: number) => new Date(now - s * 1000).toISOString();

function pod(
  name: string,
  o: {
    node?: string;
    phase?: string;
    ready?: string;
    created?: number;
    restarts?: number;
    cost?: string;
    uid?: string;
  } = {},
): Pod {
  return {
    metadata: {
      name,
      uid: o.uid ?? name,
      creationTimestamp: ago(o.created ?? 1000),
      ...(o.cost ? { annotations: { "controller.kubernetes.io/pod-deletion-cost": o.cost } } : {}),
    },
    spec: { containers: [{ name: "c", image: "i" }], ...(o.node ? { nodeName: o.node } : {}) },
    status: {
      phase: (o.phase ?? "Running") as PodPhase,
      ...(o.ready ? { conditions: [{ type: "Ready", status: "True", lastTransitionTime: o.ready }] } : {}),
      ...(o.restarts
        ? {
            containerStatuses: [
              { name: "c", ready: true, restartCount: o.restarts, image: "i", imageID: "" },
            ],
          }
        : {}),
    },
  } as Pod;
}

const order = (pods: Pod[]) =>
  sortActivePodsWithRanks(
    pods.map((p) => ({ pod: p, rank: 0 })),
    now,
  ).map((r) => r.pod.metadata.name);

describe("the ranking of pods for deletion (ActivePodsWithRanks)", () => {
  it("follows upstream's rules in order", () => {
    // Each pair differs in one rule; the first must go first.
    const pairs: [Pod, Pod, string][] = [
      [
        pod("unassigned", { node: "", ready: ago(500) }),
        pod("assigned", { node: "n1" }),
        "1. unassigned before assigned",
      ],
      [
        pod("pending", { node: "n1", phase: "Pending" }),
        pod("unknown", { node: "n1", phase: "Unknown" }),
        "2. Pending before Unknown",
      ],
      [
        pod("unknown", { node: "n1", phase: "Unknown" }),
        pod("running", { node: "n1", phase: "Running" }),
        "2. Unknown before Running",
      ],
      [
        pod("notready", { node: "n1" }),
        pod("ready", { node: "n1", ready: ago(500) }),
        "3. not ready before ready",
      ],
      [
        pod("cheap", { node: "n1", cost: "-5" }),
        pod("dear", { node: "n1", cost: "10" }),
        "4. lower deletion cost first",
      ],
      [
        pod("recent", { node: "n1", ready: ago(10) }),
        pod("long", { node: "n1", ready: ago(5000) }),
        "6. ready more recently first",
      ],
      [
        pod("crashy", { node: "n1", restarts: 4 }),
        pod("calm", { node: "n1", restarts: 1 }),
        "7. more restarts first",
      ],
      [
        pod("young", { node: "n1", created: 10 }),
        pod("old", { node: "n1", created: 5000 }),
        "8. newer first",
      ],
    ];
    for (const [a, b, rule] of pairs) {
      expect(lessActivePodsWithRanks({ pod: a, rank: 0 }, { pod: b, rank: 0 }, now), rule).toBe(true);
      expect(lessActivePodsWithRanks({ pod: b, rank: 0 }, { pod: a, rank: 0 }, now), rule).toBe(false);
    }
  });

  it("5. prefers pods doubled up on a node (higher rank)", () => {
    const a = { pod: pod("a", { node: "n1" }), rank: 3 };
    const b = { pod: pod("b", { node: "n2" }), rank: 1 };
    expect(lessActivePodsWithRanks(a, b, now)).toBe(true);
    expect(lessActivePodsWithRanks(b, a, now)).toBe(false);
  });

  it("an earlier rule wins over later ones: an old unscheduled pod goes before a young scheduled one", () => {
    expect(
      order([pod("young-scheduled", { node: "n1", created: 1 }), pod("old-unscheduled", { created: 9999 })]),
    ).toEqual(["old-unscheduled", "young-scheduled"]);
  });

  it("creation times in the same log2 bucket are ordered by UID, not by age", () => {
    // 600 s and 700 s ago: both ages fall in [2^39, 2^40) ns, one bucket — the UID decides.
    const older = pod("older", { node: "n1", created: 700, uid: "b" });
    const newer = pod("newer", { node: "n1", created: 600, uid: "a" });
    expect(order([older, newer])).toEqual(["newer", "older"]);
    // Swap the UIDs and the older one goes first: within a bucket, age does not count.
    older.metadata.uid = "a";
    newer.metadata.uid = "b";
    expect(order([newer, older])).toEqual(["older", "newer"]);
  });

  it("sorts any shuffle of the same pods to the same order (seeded)", () => {
    const seed = 42;
    const rand = mulberry32(seed);
    const pods = [
      pod("p1"),
      pod("p2", { node: "n1" }),
      pod("p3", { node: "n1", phase: "Pending" }),
      pod("p4", { node: "n1", ready: ago(100) }),
      pod("p5", { node: "n1", ready: ago(100000) }),
      pod("p6", { node: "n1", restarts: 2 }),
    ];
    const expected = order(pods);
    for (let i = 0; i < 50; i++) {
      const shuffled = [...pods].sort(() => rand() - 0.5);
      expect(order(shuffled), `seed ${seed}`).toEqual(expected);
    }
    expect(expected).toEqual(["p1", "p3", "p6", "p2", "p4", "p5"]);
  });
});

describe("active and available pods", () => {
  it("filterActivePods drops terminating, Succeeded and Failed pods", () => {
    const terminating = pod("t");
    terminating.metadata.deletionTimestamp = ago(1);
    const pods = [
      pod("ok"),
      pod("done", { phase: "Succeeded" }),
      pod("dead", { phase: "Failed" }),
      terminating,
    ];
    expect(filterActivePods(pods).map((p) => p.metadata.name)).toEqual(["ok"]);
  });

  it("isPodAvailable needs Ready for longer than minReadySeconds", () => {
    const p = pod("p", { ready: ago(10) });
    expect(isPodAvailable(p, 0, now)).toBe(true);
    expect(isPodAvailable(p, 9, now)).toBe(true);
    expect(isPodAvailable(p, 10, now)).toBe(false);
    expect(isPodAvailable(pod("notready"), 0, now)).toBe(false);
  });

  it("reads the deletion cost as an int32, malformed as 0", () => {
    expect(getDeletionCostFromPodAnnotations({ "controller.kubernetes.io/pod-deletion-cost": "-7" })).toBe(
      -7,
    );
    expect(getDeletionCostFromPodAnnotations({ "controller.kubernetes.io/pod-deletion-cost": "1.5" })).toBe(
      0,
    );
    expect(
      getDeletionCostFromPodAnnotations({ "controller.kubernetes.io/pod-deletion-cost": "9999999999" }),
    ).toBe(0);
    expect(getDeletionCostFromPodAnnotations(undefined)).toBe(0);
  });
});

import { describe, expect, it } from "vitest";
import type { ReplicaSet } from "../../api/apps.ts";
import type { Pod } from "../../api/core.ts";
import { calculateStatus, statusUnchanged } from "./replica-set-utils.ts";

const now = Date.parse("2026-01-01T12:00:00Z");
const ago = (s: number) => new Date(now - s * 1000).toISOString();

const rs = (o: Partial<ReplicaSet["spec"]> = {}, status?: ReplicaSet["status"]): ReplicaSet => ({
  apiVersion: "apps/v1",
  kind: "ReplicaSet",
  metadata: { name: "web", namespace: "default", generation: 2 },
  spec: {
    replicas: 3,
    selector: { matchLabels: { app: "web" } },
    template: {
      metadata: { labels: { app: "web", tier: "fe" } },
      spec: { containers: [{ name: "c", image: "i" }] },
    },
    ...o,
  },
  ...(status ? { status } : {}),
});

const pod = (labels: Record<string, string>, readySince?: number): Pod =>
  ({
    metadata: { name: "p", labels },
    spec: { containers: [] },
    status:
      readySince === undefined
        ? {}
        : { conditions: [{ type: "Ready", status: "True", lastTransitionTime: ago(readySince) }] },
  }) as unknown as Pod;

describe("calculateStatus", () => {
  it("counts replicas, fully labelled, ready and available (minReadySeconds)", () => {
    const pods = [
      pod({ app: "web", tier: "fe" }, 100),
      pod({ app: "web" }, 5),
      pod({ app: "web", tier: "fe" }),
    ];
    const s = calculateStatus(rs({ minReadySeconds: 10 }), pods, undefined, now);
    expect(s).toEqual({ replicas: 3, fullyLabeledReplicas: 2, readyReplicas: 2, availableReplicas: 1 });
  });

  it("adds ReplicaFailure on a failed create, keeps it while failing, removes it on success", () => {
    const failed = calculateStatus(
      rs(),
      [pod({ app: "web" })],
      new Error('pods "web-x" is forbidden: exceeded quota'),
      now,
    );
    expect(failed.conditions).toEqual([
      {
        type: "ReplicaFailure",
        status: "True",
        reason: "FailedCreate",
        message: 'pods "web-x" is forbidden: exceeded quota',
        lastTransitionTime: "2026-01-01T12:00:00Z",
      },
    ]);
    const stillFailing = calculateStatus(
      rs({}, failed),
      [pod({ app: "web" })],
      new Error("other"),
      now + 5000,
    );
    expect(stillFailing.conditions).toEqual(failed.conditions);
    const ok = calculateStatus(rs({}, failed), [pod({ app: "web" })], undefined, now);
    expect(ok.conditions).toBeUndefined();
  });

  it("names a failed delete FailedDelete", () => {
    const pods = [1, 2, 3, 4].map(() => pod({ app: "web" }));
    expect(calculateStatus(rs(), pods, new Error("x"), now).conditions?.[0].reason).toBe("FailedDelete");
  });
});

describe("statusUnchanged (updateReplicaSetStatus writes only on change)", () => {
  it("is false when the generation was not observed yet, true in the steady state", () => {
    const s = { replicas: 3, fullyLabeledReplicas: 3, readyReplicas: 0, availableReplicas: 0 };
    expect(statusUnchanged(rs({}, { ...s, observedGeneration: 1 }), s)).toBe(false);
    expect(statusUnchanged(rs({}, { ...s, observedGeneration: 2 }), s)).toBe(true);
    expect(statusUnchanged(rs({}, { ...s, observedGeneration: 2 }), { ...s, readyReplicas: 1 })).toBe(false);
  });
});

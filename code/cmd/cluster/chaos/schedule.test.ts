import { describe, expect, it } from "vitest";
import { describeFault, generateSchedule, replayCommand } from "./schedule.ts";
import { controlPlaneKinds } from "./target.ts";

const components = [
  { name: "kubelet-node-2", kind: "kubelet" },
  { name: "etcd", kind: "etcd" },
  { name: "kube-apiserver", kind: "kube-apiserver" },
  { name: "kube-scheduler-1", kind: "kube-scheduler" },
  { name: "kube-scheduler-2", kind: "kube-scheduler" },
  { name: "kube-controller-manager-1", kind: "kube-controller-manager" },
  { name: "kubelet-node-1", kind: "kubelet" },
];

describe("generateSchedule", () => {
  it("gives the same schedule for the same seed, whatever order the components are listed in", () => {
    const a = generateSchedule({ seed: 42, durationMs: 300_000, components });
    const b = generateSchedule({ seed: 42, durationMs: 300_000, components: [...components].reverse() });
    expect(a.length).toBeGreaterThan(10);
    expect(b).toEqual(a);
    expect(generateSchedule({ seed: 43, durationMs: 300_000, components })).not.toEqual(a);
  });

  it.each([1, 2, 3, 7, 1234, 99999])(
    "seed %i: sorted, within the duration, no overlap per target, one control-plane fault at a time",
    (seed) => {
      const faults = generateSchedule({ seed, durationMs: 600_000, components, settleMs: 5000 });
      const kinds = new Set(faults.map((f) => f.action));
      expect(kinds.size).toBeGreaterThanOrEqual(3);
      // Leaders are roles, resolved when the fault fires.
      expect(faults.some((f) => f.target === "leader:kube-scheduler")).toBe(true);
      expect(faults.some((f) => f.target === "kube-scheduler-1")).toBe(false);
      for (let i = 0; i < faults.length; i++) {
        const f = faults[i];
        expect(f.at + f.holdMs).toBeLessThanOrEqual(600_000);
        if (f.kind === "kube-apiserver") expect(f.action).not.toBe("partition");
        for (const g of faults.slice(0, i)) {
          expect(g.at).toBeLessThanOrEqual(f.at);
          if (g.target === f.target || (controlPlaneKinds.has(g.kind) && controlPlaneKinds.has(f.kind)))
            expect(
              g.at + g.holdMs + 5000,
              `${JSON.stringify(g)} then ${JSON.stringify(f)}`,
            ).toBeLessThanOrEqual(f.at);
        }
      }
    },
  );

  it("lets control-plane faults overlap only when asked", () => {
    const overlaps = (concurrentControlPlane: boolean) => {
      const faults = generateSchedule({ seed: 5, durationMs: 600_000, components, concurrentControlPlane });
      const cp = faults.filter((f) => controlPlaneKinds.has(f.kind));
      return cp.some((f, i) => cp.slice(0, i).some((g) => g.at + g.holdMs > f.at));
    };
    expect(overlaps(false)).toBe(false);
    expect(overlaps(true)).toBe(true);
  });
});

describe("printing and flags", () => {
  it("describes faults as the run prints them", () => {
    expect(
      describeFault(
        { at: 12_345, action: "kill", target: "leader:kube-scheduler", kind: "kube-scheduler", holdMs: 4000 },
        "kube-scheduler-2",
      ),
    ).toBe("+12.3s kill -9 kube-scheduler-2 (leader), restart after 4.0s");
    expect(describeFault({ at: 1000, action: "partition", target: "etcd", kind: "etcd", holdMs: 3000 })).toBe(
      "+1.0s partition etcd from kube-apiserver for 3.0s",
    );
  });

  it("prints the replay command with the seed and the duration", () => {
    expect(replayCommand(7, 300_000)).toBe("npm run cluster -- chaos --seed 7 --duration 5m0s");
    expect(replayCommand(7, 45_000, ["--concurrent-control-plane"])).toBe(
      "npm run cluster -- chaos --seed 7 --duration 45s --concurrent-control-plane",
    );
  });
});

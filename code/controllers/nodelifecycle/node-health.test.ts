/**
 * The node-health decision and its helpers, on plain numbers for the clock: which sign of life
 * moves probeTimestamp, which grace period applies, what an overdue node's conditions become,
 * how a zone's state is computed, how the taint queue hands nodes out at the eviction rate, and
 * which NoSchedule taints a node's conditions call for.
 */
import { describe, expect, it } from "vitest";
import type { Node, NodeCondition } from "../../api/core.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { noScheduleTaintDiff } from "./no-schedule-taints.ts";
import { conditionsWhenOverdue, type GracePeriods, nodeHealthVerdict } from "./node-health.ts";
import { RateLimitedTimedQueue } from "./rate-limited-queue.ts";
import { ZoneTainters } from "./zone-tainters.ts";
import { computeZoneState, getZoneKey } from "./zones.ts";

const grace: GracePeriods = { nodeMonitorGracePeriodMs: 50_000, nodeStartupGracePeriodMs: 60_000 };
const T0 = Date.parse("2026-01-01T00:00:00Z");
const iso = (ms: number) => new Date(ms).toISOString().replace(".000Z", "Z");

function node(ready?: Partial<NodeCondition>, extra: Partial<Node> = {}): Node {
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name: "n1", creationTimestamp: iso(T0) },
    status: ready
      ? {
          conditions: [
            {
              type: "Ready",
              status: "True",
              lastHeartbeatTime: iso(T0),
              lastTransitionTime: iso(T0),
              ...ready,
            },
          ],
        }
      : {},
    ...extra,
  };
}

describe("nodeHealthVerdict", () => {
  it("gives a node first seen a full grace period from now, not from its last heartbeat", () => {
    // The controller's clock is far past the kubelet's heartbeat: it does not compare the two.
    const now = T0 + 10 * 60_000;
    const v = nodeHealthVerdict(undefined, node({}), undefined, now, grace);
    expect(v.overdue).toBe(false);
    expect(v.health.probeTimestamp).toBe(now);
    expect(v.gracePeriodMs).toBe(50_000);
    const later = nodeHealthVerdict(v.health, node({}), undefined, now + 50_001, grace);
    expect(later.overdue).toBe(true);
    expect(later.why).toContain("grace period 50s");
  });

  it("a new lastHeartbeatTime moves probeTimestamp; the same one does not", () => {
    const first = nodeHealthVerdict(undefined, node({}), undefined, T0, grace);
    const same = nodeHealthVerdict(first.health, node({}), undefined, T0 + 40_000, grace);
    expect(same.health.probeTimestamp).toBe(T0);
    const posted = nodeHealthVerdict(
      same.health,
      node({ lastHeartbeatTime: iso(T0 + 40_000) }),
      undefined,
      T0 + 45_000,
      grace,
    );
    expect(posted.health.probeTimestamp).toBe(T0 + 45_000);
    // The transition time stays: only the heartbeat moved.
    expect(posted.health.readyTransitionTimestamp).toBe(T0);
    expect(
      nodeHealthVerdict(
        posted.health,
        node({ lastHeartbeatTime: iso(T0 + 40_000) }),
        undefined,
        T0 + 95_001,
        grace,
      ).overdue,
    ).toBe(true);
  });

  it("a renewed Lease is a heartbeat; an unchanged Lease is not", () => {
    const first = nodeHealthVerdict(undefined, node({}), T0, T0, grace);
    expect(first.health.leaseRenewTime).toBe(T0);
    const renewed = nodeHealthVerdict(first.health, node({}), T0 + 10_000, T0 + 40_000, grace);
    expect(renewed.health.probeTimestamp).toBe(T0 + 40_000);
    expect(renewed.why).toContain("Lease");
    const stale = nodeHealthVerdict(renewed.health, node({}), T0 + 10_000, T0 + 90_001, grace);
    expect(stale.overdue).toBe(true);
    expect(nodeHealthVerdict(renewed.health, node({}), T0 + 10_000, T0 + 90_000, grace).overdue).toBe(false);
  });

  it("a node that never posted a Ready condition gets the startup grace period, from its creation", () => {
    const v = nodeHealthVerdict(undefined, node(undefined), undefined, T0 + 59_000, grace);
    expect(v.gracePeriodMs).toBe(60_000);
    expect(v.observedReadyCondition.status).toBe("Unknown");
    expect(v.overdue).toBe(false);
    expect(nodeHealthVerdict(v.health, node(undefined), undefined, T0 + 60_001, grace).overdue).toBe(true);
  });

  it("a changed lastTransitionTime moves readyTransitionTimestamp", () => {
    const first = nodeHealthVerdict(undefined, node({}), undefined, T0, grace);
    const flipped = nodeHealthVerdict(
      first.health,
      node({ status: "False", lastHeartbeatTime: iso(T0 + 5_000), lastTransitionTime: iso(T0 + 5_000) }),
      undefined,
      T0 + 6_000,
      grace,
    );
    expect(flipped.health.readyTransitionTimestamp).toBe(T0 + 6_000);
    expect(flipped.observedReadyCondition.status).toBe("False");
  });
});

describe("conditionsWhenOverdue", () => {
  it("turns Ready and the pressure conditions Unknown with upstream's words, and adds the missing ones", () => {
    const n = node({});
    n.status?.conditions?.push({ type: "NetworkUnavailable", status: "False" });
    const now = iso(T0 + 60_000);
    const cs = conditionsWhenOverdue(n, now);
    const ready = cs.find((c) => c.type === "Ready");
    expect(ready).toMatchObject({
      status: "Unknown",
      reason: "NodeStatusUnknown",
      message: "Kubelet stopped posting node status.",
      lastTransitionTime: now,
      lastHeartbeatTime: iso(T0),
    });
    expect(cs.find((c) => c.type === "MemoryPressure")).toMatchObject({
      status: "Unknown",
      reason: "NodeStatusNeverUpdated",
      message: "Kubelet never posted node status.",
    });
    // NetworkUnavailable belongs to the network plugin: untouched.
    expect(cs.find((c) => c.type === "NetworkUnavailable")?.status).toBe("False");
    // Already Unknown: no new transition time.
    const again = conditionsWhenOverdue({ ...n, status: { conditions: cs } }, iso(T0 + 99_000));
    expect(again.find((c) => c.type === "Ready")?.lastTransitionTime).toBe(now);
  });
});

describe("zones", () => {
  const c = (status: "True" | "False" | "Unknown") => ({ type: "Ready", status }) as NodeCondition;
  it("computes upstream's zone states", () => {
    expect(computeZoneState([c("Unknown")], 0.55)).toEqual([1, "FullDisruption"]);
    expect(computeZoneState([c("True"), c("Unknown")], 0.55)).toEqual([1, "Normal"]);
    // Two of three not ready: still Normal (more than 2 are needed).
    expect(computeZoneState([c("True"), c("False"), c("Unknown")], 0.55)).toEqual([2, "Normal"]);
    expect(computeZoneState([c("True"), c("False"), c("Unknown"), undefined], 0.55)).toEqual([
      3,
      "PartialDisruption",
    ]);
    expect(computeZoneState([c("True"), c("True"), c("False"), c("Unknown"), c("False")], 0.55)).toEqual([
      3,
      "PartialDisruption",
    ]);
  });
  it("keys a zone by region and zone labels", () => {
    expect(getZoneKey(node({}))).toBe("");
    const labelled = node({});
    labelled.metadata.labels = { "topology.kubernetes.io/region": "r", "topology.kubernetes.io/zone": "z" };
    expect(getZoneKey(labelled)).toBe("r:\u0000:z");
  });
});

describe("RateLimitedTimedQueue", () => {
  it("hands out one node per 1/qps seconds, never the same node twice until removed", async () => {
    const clock = new FakeClock(T0);
    const q = new RateLimitedTimedQueue(clock, 0.1);
    expect(q.add("a", "u1")).toBe(true);
    expect(q.add("b", "u2")).toBe(true);
    expect(q.add("a", "u1")).toBe(false);
    const seen: string[] = [];
    const take = () =>
      q.try((v) => {
        seen.push(v.value);
        return [true, 0];
      });
    await take();
    expect(seen).toEqual(["a"]);
    clock.step(5_000);
    await take();
    expect(seen).toEqual(["a"]); // the bucket refills at 0.1/s
    clock.step(5_000);
    await take();
    expect(seen).toEqual(["a", "b"]);
    // Done, but still in the set: not queued again until removed.
    expect(q.add("a", "u1")).toBe(false);
    expect(q.remove("a")).toBe(true);
    expect(q.add("a", "u1")).toBe(true);
  });

  it("retries an item that failed after its wait, and a rate of 0 hands out nothing", async () => {
    const clock = new FakeClock(T0);
    const q = new RateLimitedTimedQueue(clock, 1000);
    q.add("a", "u");
    let calls = 0;
    const count = (result: [boolean, number]) => (): [boolean, number] => {
      calls++;
      return result;
    };
    await q.try(count([false, 50]));
    expect(calls).toBe(1);
    await q.try(count([true, 0]));
    expect(calls).toBe(1); // not due for 50 ms
    clock.step(51);
    await q.try(count([true, 0]));
    expect(calls).toBe(2);
    q.swapLimiter(0);
    q.remove("a");
    q.add("a", "u");
    clock.step(10_000);
    await q.try(count([true, 0]));
    expect(calls).toBe(2);
  });
});

describe("noScheduleTaintDiff", () => {
  it("mirrors the conditions and unschedulable, and leaves a user's NoSchedule taint alone", () => {
    const n = node({ status: "Unknown" });
    n.spec = {
      unschedulable: true,
      taints: [
        { key: "node.kubernetes.io/not-ready", effect: "NoSchedule" },
        { key: "dedicated", value: "gpu", effect: "NoSchedule" },
      ],
    };
    const [add, del] = noScheduleTaintDiff(n);
    expect(add).toEqual([
      { key: "node.kubernetes.io/unreachable", effect: "NoSchedule" },
      { key: "node.kubernetes.io/unschedulable", effect: "NoSchedule" },
    ]);
    expect(del).toEqual([{ key: "node.kubernetes.io/not-ready", effect: "NoSchedule" }]);
    expect(noScheduleTaintDiff(node({}))).toEqual([[], []]);
  });
});

describe("ZoneTainters.handleDisruption", () => {
  const c = (status: "True" | "Unknown") => ({ type: "Ready", status }) as NodeCondition;
  const rates = {
    evictionLimiterQPS: 0.1,
    secondaryEvictionLimiterQPS: 0.01,
    largeClusterThreshold: 50,
    unhealthyZoneThreshold: 0.55,
  };
  it("stops every zone's evictions when all zones are dead, and resumes when one node is back", () => {
    const z = new ZoneTainters(new FakeClock(T0), rates, () => {});
    z.addPodEvictorForNewZone(node({}));
    const q = z.tainterFor(node({}));
    expect(z.handleDisruption(new Map([["", [c("True"), c("Unknown")]]]))).toBeUndefined();
    expect(z.zoneStates.get("")).toBe("Normal");
    expect(q.qps).toBe(0.1);
    expect(z.handleDisruption(new Map([["", [c("Unknown"), c("Unknown")]]]))).toBe("entered");
    expect(q.qps).toBe(0);
    // Still all dead: nothing changes.
    expect(z.handleDisruption(new Map([["", [c("Unknown"), c("Unknown")]]]))).toBeUndefined();
    expect(z.handleDisruption(new Map([["", [c("True"), c("Unknown")]]]))).toBe("exited");
    expect(q.qps).toBe(0.1);
  });
  it("slows a mostly-dead zone: to 0 in a small cluster, to the secondary rate in a large one", () => {
    const b = node({});
    b.metadata.labels = { "topology.kubernetes.io/zone": "b" };
    const key = getZoneKey(b);
    const dead = (n: number, of: number) =>
      Array.from({ length: of }, (_, i) => c(i < n ? "Unknown" : "True"));
    const small = new ZoneTainters(new FakeClock(T0), rates, () => {});
    small.addPodEvictorForNewZone(b);
    small.handleDisruption(
      new Map([
        ["a", [c("True")]],
        [key, dead(0, 4)],
      ]),
    );
    expect(small.tainterFor(b).qps).toBe(0.1);
    small.handleDisruption(
      new Map([
        ["a", [c("True")]],
        [key, dead(3, 4)],
      ]),
    );
    expect(small.zoneStates.get(key)).toBe("PartialDisruption");
    expect(small.tainterFor(b).qps).toBe(0); // 4 nodes, not more than 50: evictions stop
    const large = new ZoneTainters(new FakeClock(T0), rates, () => {});
    large.addPodEvictorForNewZone(b);
    large.handleDisruption(
      new Map([
        ["a", [c("True")]],
        [key, dead(0, 60)],
      ]),
    );
    large.handleDisruption(
      new Map([
        ["a", [c("True")]],
        [key, dead(40, 60)],
      ]),
    );
    expect(large.tainterFor(b).qps).toBe(0.01);
  });
});

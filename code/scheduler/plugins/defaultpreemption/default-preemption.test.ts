// DefaultPreemption through the simulated scheduler: who is evicted, where the preemptor is
// nominated, how the criteria break ties, PDBs, preemptionPolicy Never, nominated pods counted
// by Filter, and a seeded property run. SEED=n replays the randomized test.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../../api/core.ts";
import { mulberry32 } from "../../../testing/random.ts";
import type { CycleState, StateData } from "../../framework/cycle-state.ts";
import { NominatingMode } from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import type { PodDisruptionBudget } from "../../framework/preemption/preemption.ts";
import type { Handle, ProfileConfig } from "../../framework/runtime/registry.ts";
import { Code, newStatus } from "../../framework/status.ts";
import { PodInfo } from "../../framework/types.ts";
import { newSim, type Sim, type SimOptions } from "../../testing/sim.ts";
import { makeNode, makePod, type PodOptions } from "../../testing/wrappers.ts";
import { defaultProfile } from "../registry.ts";

const oneCPU = { cpu: "1", memory: "4Gi", pods: "10" };

/** A pod already running on `node`, with a start time (ISO) and any extra labels. */
function running(
  name: string,
  node: string,
  priority: number,
  cpu: string,
  o: PodOptions & { start?: string } = {},
) {
  const p = makePod(name, { ...o, nodeName: node, priority, requests: [{ cpu }] });
  p.status = { ...p.status, phase: "Running", startTime: o.start ?? "2026-12-01T10:00:00Z" };
  return p;
}

function simWith(nodes: string[], pods: Pod[], o: SimOptions = {}): Sim {
  const sim = newSim({ nodes: nodes.map((n) => makeNode(n, { allocatable: oneCPU })), ...o });
  for (const p of pods) {
    sim.pods.set(p.metadata.uid ?? "", p);
    sim.cache.addPod(p);
  }
  return sim;
}

const nominatedTo = (sim: Sim, name: string) => sim.pods.get(name)?.status?.nominatedNodeName;
const deletedNames = (sim: Sim) => sim.deleted.map((p) => p.metadata.name);

/** Victims gone, backoff over: the next cycles run. */
async function afterVictimsLeave(sim: Sim) {
  sim.finishDeletions();
  sim.clock.step(20_000);
  sim.queue.flushBackoffQCompleted();
  await sim.drain();
}

describe("DefaultPreemption", () => {
  it("evicts the lowest-priority pod on the best node, nominates the preemptor, then it binds there", async () => {
    // a runs a priority-10 pod, b a priority-5 pod, each using the whole CPU: one victim each;
    // criterion 2 (lowest highest-priority victim) picks b.
    const sim = simWith(["a", "b"], [running("a1", "a", 10, "1"), running("b1", "b", 5, "1")]);
    sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "1" }] }));
    await sim.drain();
    expect(deletedNames(sim)).toEqual(["b1"]);
    expect(nominatedTo(sim, "hi")).toBe("b");
    expect(sim.queue.nominatedPodsForNode("b").map((pi) => pi.pod.metadata.name)).toEqual(["hi"]);
    const victim = sim.pods.get("b1")!;
    expect(victim.metadata.deletionTimestamp).toBeDefined();
    expect(victim.status?.conditions).toContainEqual({
      type: "DisruptionTarget",
      status: "True",
      reason: "PreemptionByScheduler",
      message: "default-scheduler: preempting to accommodate a higher priority pod",
    });
    // Success has no message: the FailedScheduling text is Filter's alone. The Preempted event
    // follows it: the victim's delete completes after the (synchronous) cycle.
    expect(sim.events.map((e) => [e.pod, e.reason, e.message])).toEqual([
      ["default/hi", "FailedScheduling", "0/2 nodes are available: 2 Insufficient cpu."],
      ["default/b1", "Preempted", "Preempted by pod hi on node b"],
    ]);
    expect(sim.bound).toEqual([]);

    // Retried while its victim is still terminating: it waits instead of evicting more.
    sim.queue.activate([sim.pods.get("hi")!]);
    await sim.drain();
    expect(deletedNames(sim)).toEqual(["b1"]);
    expect(sim.events.at(-1)?.message).toBe(
      "0/2 nodes are available: 2 Insufficient cpu. preemption: not eligible due to a terminating pod on the nominated node..",
    );

    await afterVictimsLeave(sim);
    expect(sim.bound.map((b) => [b.pod.metadata.name, b.node])).toEqual([["hi", "b"]]);
    expect(sim.queue.nominatedPodsForNode("b")).toEqual([]);
  });

  it("a failed eviction activates the preemptor, which preempts again instead of waiting", async () => {
    let failures = 1;
    const sim = simWith(["a"], [running("a1", "a", 5, "1")], {
      failDelete: () => (failures-- > 0 ? new Error("connection reset") : undefined),
    });
    sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "1" }] }));
    await sim.drain();
    await sim.preemption()!.evaluator.wait();
    // The first eviction failed: nothing deleted, but hi is back in activeQ, not parked.
    expect(deletedNames(sim)).toEqual([]);
    await sim.drain();
    await sim.preemption()!.evaluator.wait();
    expect(deletedNames(sim)).toEqual(["a1"]);
    await afterVictimsLeave(sim);
    expect(sim.bound.map((b) => [b.pod.metadata.name, b.node])).toEqual([["hi", "a"]]);
  });

  it("never evicts equal or higher priority: no victims found on any node", async () => {
    const sim = simWith(["a", "b"], [running("a1", "a", 100, "1"), running("b1", "b", 200, "1")]);
    sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "1" }] }));
    await sim.drain();
    expect(sim.deleted).toEqual([]);
    expect(sim.events.map((e) => e.message)).toEqual([
      "0/2 nodes are available: 2 Insufficient cpu. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..",
    ]);
  });

  it("evicts only what is needed: victims are reprieved most important first", async () => {
    // a: three 300m pods at priorities 1, 2, 3.
    const sim = simWith(
      ["a"],
      [running("p1", "a", 1, "300m"), running("p2", "a", 2, "300m"), running("p3", "a", 3, "300m")],
    );
    // Free: 1000 − 900 = 100m. Need 600m. All removed: 1000m free. Reprieve p3 (300m used, 700
    // free ≥ 600: kept), p2 (600 used, 400 free < 600: victim), p1 (600 used: victim).
    sim.add(makePod("hi", { priority: 10, requests: [{ cpu: "600m" }] }));
    await sim.drain();
    expect(deletedNames(sim)).toEqual(["p2", "p1"]);
  });

  describe("pickOneNodeForPreemption's criteria, in order", () => {
    it("1. fewest PDB violations beats a lower-priority victim", async () => {
      // a's victim (priority 1) is covered by a PDB with no disruption left; b's (priority 5) is not.
      const pdb: PodDisruptionBudget = {
        metadata: { name: "db", namespace: "default" },
        spec: { selector: { matchLabels: { app: "db" } } },
        status: { disruptionsAllowed: 0 },
      };
      const sim = simWith(
        ["a", "b"],
        [running("a1", "a", 1, "1", { labels: { app: "db" } }), running("b1", "b", 5, "1")],
        {
          pdbs: [pdb],
        },
      );
      sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "1" }] }));
      await sim.drain();
      expect(deletedNames(sim)).toEqual(["b1"]);
      expect(nominatedTo(sim, "hi")).toBe("b");
    });

    it("... and a PDB with a disruption allowed is no violation", async () => {
      const pdb: PodDisruptionBudget = {
        metadata: { name: "db", namespace: "default" },
        spec: { selector: { matchLabels: { app: "db" } } },
        status: { disruptionsAllowed: 1 },
      };
      const sim = simWith(
        ["a", "b"],
        [running("a1", "a", 1, "1", { labels: { app: "db" } }), running("b1", "b", 5, "1")],
        {
          pdbs: [pdb],
        },
      );
      sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "1" }] }));
      await sim.drain();
      expect(deletedNames(sim)).toEqual(["a1"]);
    });

    it("3. smallest sum of priorities, when the highest victims tie", async () => {
      // a: victims 5 + 5; b: victims 5 + 1. Highest 5 = 5; sums (offset 2³¹ each) 10 vs 6 → b.
      const sim = simWith(
        ["a", "b"],
        [
          running("a1", "a", 5, "500m"),
          running("a2", "a", 5, "500m"),
          running("b1", "b", 5, "500m"),
          running("b2", "b", 1, "500m"),
        ],
      );
      sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "1" }] }));
      await sim.drain();
      expect(nominatedTo(sim, "hi")).toBe("b");
      expect(deletedNames(sim).sort()).toEqual(["b1", "b2"]);
    });

    it("4. fewest victims, when the sums tie", async () => {
      // a: one victim at 5, sum 5 + 2³¹. b: 5 and −2³¹, sum 5 + 2³¹ + 0 — equal (the offset is
      // what makes a minimum-int32 pod count as zero). Victims 1 < 2 → a.
      const sim = simWith(
        ["a", "b"],
        [running("a1", "a", 5, "1"), running("b1", "b", 5, "500m"), running("b2", "b", -2147483648, "500m")],
      );
      sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "1" }] }));
      await sim.drain();
      expect(nominatedTo(sim, "hi")).toBe("a");
      expect(deletedNames(sim)).toEqual(["a1"]);
    });

    it("5. the latest start time of the most important victims, when all else ties", async () => {
      const sim = simWith(
        ["a", "b", "c"],
        [
          running("a1", "a", 5, "1", { start: "2026-12-01T09:00:00Z" }),
          running("b1", "b", 5, "1", { start: "2026-12-01T11:00:00Z" }),
          running("c1", "c", 5, "1", { start: "2026-12-01T10:00:00Z" }),
        ],
      );
      sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "1" }] }));
      await sim.drain();
      // b's victim started last: it has lost the least work.
      expect(deletedNames(sim)).toEqual(["b1"]);
    });
  });

  it("reprieves PDB-violating victims first, so a non-violating pod is evicted instead", async () => {
    // v1 (priority 1) is protected; v2 (priority 2) is not. Room for one 500m pod is needed.
    // Priority order alone would keep v2 and evict v1 (a violation); PDB-first keeps v1.
    const pdb: PodDisruptionBudget = {
      metadata: { name: "v1", namespace: "default" },
      spec: { selector: { matchLabels: { app: "v1" } } },
      status: { disruptionsAllowed: 0 },
    };
    const sim = simWith(
      ["a"],
      [running("v1", "a", 1, "500m", { labels: { app: "v1" } }), running("v2", "a", 2, "500m")],
      { pdbs: [pdb] },
    );
    sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "500m" }] }));
    await sim.drain();
    expect(deletedNames(sim)).toEqual(["v2"]);
  });

  it("preemptionPolicy Never: no eviction, and the reason in the event", async () => {
    const sim = simWith(["a"], [running("lo", "a", 1, "1")]);
    const hi = makePod("hi", { priority: 100, requests: [{ cpu: "1" }] });
    hi.spec.preemptionPolicy = "Never";
    sim.add(hi);
    await sim.drain();
    expect(sim.deleted).toEqual([]);
    expect(sim.events.map((e) => e.message)).toEqual([
      "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never..",
    ]);
  });

  it("clears the nomination of lower-priority pods nominated to the chosen node", async () => {
    const sim = simWith(["a"], [running("lo", "a", 1, "1")]);
    // mid (priority 50) was nominated to a earlier and waits; hi (100) now preempts there.
    const mid = makePod("mid", { priority: 50, requests: [{ cpu: "100m" }], nominatedNodeName: "a" });
    sim.pods.set("mid", mid);
    sim.queue.addNominatedPod(new PodInfo(mid));
    sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "1" }] }));
    await sim.sched.scheduleOne(); // hi first (priority order)
    await sim.preemption()!.evaluator.wait();
    expect(deletedNames(sim)).toEqual(["lo"]);
    expect(sim.pods.get("mid")?.status?.nominatedNodeName).toBeUndefined();
    expect(sim.queue.nominatedPodsForNode("a").map((pi) => pi.pod.metadata.name)).toEqual(["hi"]);
  });
});

describe("Filter with nominated pods", () => {
  it("a lower-priority pod cannot take the room a nominated higher-priority pod waits for", async () => {
    const sim = simWith(["a"], []);
    const waiting = makePod("waiting", { priority: 100, requests: [{ cpu: "800m" }] });
    sim.pods.set("waiting", waiting);
    sim.queue.addNominatedPod(new PodInfo(waiting), {
      nominatedNodeName: "a",
      nominatingMode: NominatingMode.ModeOverride,
    });
    sim.add(makePod("lo", { priority: 10, requests: [{ cpu: "500m" }] }));
    await sim.drain();
    expect(sim.bound).toEqual([]);
    // 800m nominated + 500m > 1 CPU; no victim (nothing runs on a).
    expect(sim.events.map((e) => e.message)[0]).toBe(
      "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 No preemption victims found for incoming pod..",
    );
    // A pod of higher priority than the nominated one does not yield to it.
    sim.add(makePod("top", { priority: 200, requests: [{ cpu: "500m" }] }));
    await sim.drain();
    expect(sim.bound.map((b) => b.pod.metadata.name)).toEqual(["top"]);
  });

  // A PreFilter plugin with extensions, like InterPodAffinity: PreFilter counts, per node, the
  // pods labelled `friend` and `enemy`; Filter passes only with a friend and without an enemy;
  // AddPod / RemovePod keep the counts right for "what if" copies.
  class Counts implements StateData {
    constructor(readonly byNode: Map<string, { friends: number; enemies: number }>) {}
    clone() {
      return new Counts(new Map([...this.byNode].map(([n, c]) => [n, { ...c }])));
    }
  }
  const key = "Friends";
  const tally = (state: CycleState, node: string, p: Pod, sign: number) => {
    const counts = (state.read(key) as Counts).byNode;
    const c = counts.get(node) ?? { friends: 0, enemies: 0 };
    if (p.metadata.labels?.role === "friend") c.friends += sign;
    if (p.metadata.labels?.role === "enemy") c.enemies += sign;
    counts.set(node, c);
  };
  const calls: string[] = [];
  const friends = (fh: Handle) => ({
    name: () => key,
    preFilter: (state: CycleState): [undefined, undefined] => {
      state.write(key, new Counts(new Map()));
      for (const ni of fh.snapshotSharedLister().list())
        for (const pi of ni.pods) tally(state, ni.nodeName(), pi.pod, 1);
      return [undefined, undefined];
    },
    preFilterExtensions: () => ({
      addPod: (state: CycleState, _p: Pod, pi: PodInfo, ni: NodeInfo) => {
        calls.push(`add ${pi.pod.metadata.name}`);
        tally(state, ni.nodeName(), pi.pod, 1);
        return undefined;
      },
      removePod: (state: CycleState, _p: Pod, pi: PodInfo, ni: NodeInfo) => {
        calls.push(`remove ${pi.pod.metadata.name}`);
        tally(state, ni.nodeName(), pi.pod, -1);
        return undefined;
      },
    }),
    filter: (state: CycleState, _p: Pod, ni: NodeInfo) => {
      const c = (state.read(key) as Counts).byNode.get(ni.nodeName()) ?? { friends: 0, enemies: 0 };
      if (c.enemies > 0) return newStatus(Code.Unschedulable, "an enemy is here");
      if (c.friends === 0) return newStatus(Code.Unschedulable, "no friend here");
      return undefined;
    },
  });
  const profileWith = (): ProfileConfig => {
    const p = defaultProfile();
    p.plugins.multiPoint!.enabled = [...p.plugins.multiPoint!.enabled!, { name: key }];
    return p;
  };

  it("runs Filter twice: a nominated friend passes the first pass, its absence fails the second", async () => {
    calls.length = 0;
    const sim = newSim({
      nodes: [makeNode("a", { allocatable: oneCPU })],
      profile: profileWith(),
      registry: new Map([[key, (_a: unknown, fh: Handle) => friends(fh)]]),
    });
    const friend = makePod("friend", { priority: 100, labels: { role: "friend" } });
    sim.pods.set("friend", friend);
    sim.queue.addNominatedPod(new PodInfo(friend), {
      nominatedNodeName: "a",
      nominatingMode: NominatingMode.ModeOverride,
    });
    sim.add(makePod("p", { priority: 10 }));
    await sim.drain();
    expect(calls).toEqual(["add friend"]);
    expect(sim.bound).toEqual([]);
    // The second pass (without the nominated friend) is the one that rejects.
    expect(sim.events[0].message).toMatch(/^0\/1 nodes are available: 1 no friend here\./);
  });

  it("preemption removes victims through RemovePod, so a plugin's state forgets them", async () => {
    calls.length = 0;
    const sim = newSim({
      nodes: [makeNode("a", { allocatable: oneCPU })],
      profile: profileWith(),
      registry: new Map([[key, (_a: unknown, fh: Handle) => friends(fh)]]),
    });
    for (const p of [
      running("enemy", "a", 1, "100m", { labels: { role: "enemy" } }),
      running("buddy", "a", 500, "100m", { labels: { role: "friend" } }),
    ]) {
      sim.pods.set(p.metadata.uid ?? "", p);
      sim.cache.addPod(p);
    }
    sim.add(makePod("p", { priority: 10 }));
    await sim.drain();
    // Removed with the other candidates, Filter passes; the reprieve tries it back (add), the
    // enemy fails Filter again, so it is removed for good and becomes the victim.
    expect(calls).toEqual(["remove enemy", "add enemy", "remove enemy"]);
    expect(deletedNames(sim)).toEqual(["enemy"]);
    await afterVictimsLeave(sim);
    expect(sim.bound.map((b) => b.node)).toEqual(["a"]);
  });
});

describe("after preemption the preemptor fits on its nominated node (seeded)", () => {
  it("holds for random clusters", async () => {
    const base = Number(process.env.SEED ?? 20261201);
    // 40 clusters: with this base seed 13 of them end in a preemption, the rest fit at once
    // or have no node where evicting lower priority makes room (both checked too).
    for (let run = 0; run < 40; run++) {
      const seed = base + run;
      const rand = mulberry32(seed);
      const int = (n: number) => Math.floor(rand() * n);
      const nodes = Array.from({ length: 2 + int(5) }, (_, i) => `n${i}`);
      const pods: Pod[] = [];
      const used = new Map(nodes.map((n) => [n, 0]));
      for (let i = 0; i < 12; i++) {
        const node = nodes[int(nodes.length)];
        const cpu = 100 * (1 + int(5));
        if (used.get(node)! + cpu > 1000) continue;
        used.set(node, used.get(node)! + cpu);
        pods.push(
          running(`p${i}`, node, int(10), `${cpu}m`, {
            start: `2026-12-01T10:${String(int(60)).padStart(2, "0")}:00Z`,
          }),
        );
      }
      const prio = 3 + int(8);
      const need = 100 * (3 + int(8));
      const sim = simWith(nodes, pods, { seed });
      sim.add(makePod("pre", { priority: prio, requests: [{ cpu: `${need}m` }] }));
      await sim.drain();
      const ctx = `seed ${seed}`;
      const cpuOf = (p: Pod) => Number.parseInt(p.spec.containers[0].resources?.requests?.cpu ?? "0", 10);
      if (sim.bound.length === 1) {
        // It fit without preemption: some node had the room.
        expect(Math.min(...nodes.map((n) => used.get(n)!)) + need, ctx).toBeLessThanOrEqual(1000);
        continue;
      }
      const nominated = nominatedTo(sim, "pre");
      // Could any node make room by evicting lower priority? Then preemption must have nominated.
      const possible = nodes.some((n) => {
        const keep = pods.filter((p) => p.spec.nodeName === n && (p.spec.priority ?? 0) >= prio);
        return keep.reduce((s, p) => s + cpuOf(p), 0) + need <= 1000;
      });
      expect(nominated !== undefined, ctx).toBe(possible);
      if (!nominated) continue;
      for (const v of sim.deleted) {
        expect(v.spec.nodeName, ctx).toBe(nominated);
        expect(v.spec.priority ?? 0, ctx).toBeLessThan(prio);
      }
      // Minimal: each victim, put back alone, would leave too little room.
      const remaining = pods
        .filter(
          (p) => p.spec.nodeName === nominated && !sim.deleted.some((d) => d.metadata.uid === p.metadata.uid),
        )
        .reduce((s, p) => s + cpuOf(p), 0);
      expect(remaining + need, ctx).toBeLessThanOrEqual(1000);
      for (const v of sim.deleted) expect(remaining + cpuOf(v) + need, ctx).toBeGreaterThan(1000);
      await afterVictimsLeave(sim);
      expect(
        sim.bound.map((b) => [b.pod.metadata.name, b.node]),
        ctx,
      ).toEqual([["pre", nominated]]);
    }
  });
});

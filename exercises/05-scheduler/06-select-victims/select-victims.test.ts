// Exercise 5.6, run inside the course's scheduler on a simulated cluster (no API server): your
// selectVictims is DefaultPreemption's victim choice. Each node has 1 CPU; the pods already
// running there are given with their priority and CPU request.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../../code/api/core.ts";
import type { PodDisruptionBudget } from "../../../code/scheduler/framework/preemption/preemption.ts";
import { newSim, type Sim } from "../../../code/scheduler/testing/sim.ts";
import { makeNode, makePod } from "../../../code/scheduler/testing/wrappers.ts";
import { selectVictims } from "./select-victims.ts";

const oneCPU = { cpu: "1", memory: "4Gi", pods: "10" };

function running(
  name: string,
  node: string,
  priority: number,
  cpu: string,
  labels?: Record<string, string>,
): Pod {
  const p = makePod(name, { nodeName: node, priority, requests: [{ cpu }], labels });
  p.status = { phase: "Running", startTime: "2026-12-01T10:00:00Z" };
  return p;
}

function cluster(nodes: string[], pods: Pod[], pdbs: PodDisruptionBudget[] = []): Sim {
  const sim = newSim({ nodes: nodes.map((n) => makeNode(n, { allocatable: oneCPU })), pdbs, selectVictims });
  for (const p of pods) {
    sim.pods.set(p.metadata.uid ?? "", p);
    sim.cache.addPod(p);
  }
  return sim;
}

const protect = (app: string): PodDisruptionBudget => ({
  metadata: { name: app, namespace: "default" },
  spec: { selector: { matchLabels: { app } } },
  status: { disruptionsAllowed: 0 },
});

const evicted = (sim: Sim) => sim.deleted.map((p) => p.metadata.name);
const nominated = (sim: Sim, name: string) => sim.pods.get(name)?.status?.nominatedNodeName;

async function victimsLeave(sim: Sim) {
  sim.finishDeletions();
  sim.clock.step(20_000);
  sim.queue.flushBackoffQCompleted();
  await sim.drain();
}

describe("selectVictims inside the scheduler", () => {
  it("evicts one pod when one is enough, and the preemptor then binds there", async () => {
    const sim = cluster(["a"], [running("lo", "a", 1, "600m"), running("keep", "a", 500, "200m")]);
    sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "700m" }] }));
    await sim.drain();
    expect(evicted(sim)).toEqual(["lo"]);
    expect(nominated(sim, "hi")).toBe("a");
    await victimsLeave(sim);
    expect(sim.bound.map((b) => [b.pod.metadata.name, b.node])).toEqual([["hi", "a"]]);
  });

  it("gives back the most important pods first", async () => {
    // 1000m − 900m used. The preemptor needs 600m: only one 300m pod can stay — the priority-3 one.
    const sim = cluster(
      ["a"],
      [running("p1", "a", 1, "300m"), running("p2", "a", 2, "300m"), running("p3", "a", 3, "300m")],
    );
    sim.add(makePod("hi", { priority: 10, requests: [{ cpu: "600m" }] }));
    await sim.drain();
    expect(evicted(sim)).toEqual(["p2", "p1"]);
    await victimsLeave(sim);
    expect(sim.bound.map((b) => b.node)).toEqual(["a"]);
  });

  it("gives back PDB-protected pods before the others", async () => {
    // v1 (priority 1) is protected by a PDB with no disruption left; v2 (priority 2) is not.
    // One of them must go: v2, though it is the more important by priority.
    const sim = cluster(
      ["a"],
      [running("v1", "a", 1, "500m", { app: "v1" }), running("v2", "a", 2, "500m")],
      [protect("v1")],
    );
    sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "500m" }] }));
    await sim.drain();
    expect(evicted(sim)).toEqual(["v2"]);
  });

  it("counts PDB violations, so the scheduler prefers a node that breaks none", async () => {
    // a: its only victim (priority 1) is protected; b: its victim (priority 5) is not. Fewer
    // violations beats a lower-priority victim: b.
    const sim = cluster(
      ["a", "b"],
      [running("a1", "a", 1, "1", { app: "db" }), running("b1", "b", 5, "1")],
      [protect("db")],
    );
    sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "1" }] }));
    await sim.drain();
    expect(nominated(sim, "hi")).toBe("b");
    expect(evicted(sim)).toEqual(["b1"]);
  });

  it("leaves a node alone when removing every lower-priority pod is still not enough", async () => {
    const sim = cluster(["a"], [running("big", "a", 500, "800m"), running("lo", "a", 1, "200m")]);
    sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "500m" }] }));
    await sim.drain();
    expect(sim.deleted).toEqual([]);
    expect(sim.events.map((e) => e.message)).toEqual([
      "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Insufficient cpu..",
    ]);
  });

  it("returns the victims most important first", async () => {
    // Victims from both groups: protected w (priority 1, must go anyway) and x (priority 4).
    const sim = cluster(
      ["a"],
      [running("w", "a", 1, "500m", { app: "w" }), running("x", "a", 4, "500m")],
      [protect("w")],
    );
    sim.add(makePod("hi", { priority: 100, requests: [{ cpu: "1" }] }));
    await sim.drain();
    expect(evicted(sim)).toEqual(["x", "w"]);
  });
});

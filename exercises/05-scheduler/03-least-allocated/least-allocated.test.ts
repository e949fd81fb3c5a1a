// Exercise 5.3, graded inside the real scheduler: your scorer is the profile's only Score plugin
// (through the course's resourceAllocationScorer, as NodeResourcesFit uses it) on a simulated
// cluster; the pod lands where your scores say, and explain shows each node's score.
import { describe, expect, it } from "vitest";
import type { Node, Pod } from "../../../code/api/core.ts";
import type { ResourceSpec } from "../../../code/scheduler/apis/config/types-pluginargs.ts";
import type { CycleState } from "../../../code/scheduler/framework/cycle-state.ts";
import type { ScoreExtensions, ScorePlugin } from "../../../code/scheduler/framework/interface.ts";
import type { NodeInfo } from "../../../code/scheduler/framework/node-info.ts";
import type { Status } from "../../../code/scheduler/framework/status.ts";
import { ResourceAllocationScorer } from "../../../code/scheduler/plugins/noderesources/resource-allocation.ts";
import { defaultProfile } from "../../../code/scheduler/plugins/registry.ts";
import { newSim } from "../../../code/scheduler/testing/sim.ts";
import { makeNode, makePod } from "../../../code/scheduler/testing/wrappers.ts";
import { leastResourceScorer } from "./least-allocated.ts";

const Name = "LearnerLeastAllocated";

class LearnerLeastAllocated implements ScorePlugin {
  private readonly scorer: ResourceAllocationScorer;
  constructor(resources: ResourceSpec[]) {
    this.scorer = new ResourceAllocationScorer("LeastAllocated", leastResourceScorer, false, resources);
  }
  name() {
    return Name;
  }
  score(_state: CycleState, pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined] {
    return [this.scorer.score(nodeInfo, this.scorer.podRequestList(pod)), undefined];
  }
  scoreExtensions(): ScoreExtensions | undefined {
    return undefined;
  }
}

const node = (name: string, cpu: string, memory: string): Node =>
  makeNode(name, { allocatable: { cpu, memory, pods: "110" } });

async function schedule(
  nodes: Node[],
  pod: Pod,
  resources: ResourceSpec[] = [
    { name: "cpu", weight: 1 },
    { name: "memory", weight: 1 },
  ],
  withoutFitFilter = false,
) {
  const profile = defaultProfile();
  profile.plugins.score = { disabled: [{ name: "*" }], enabled: [{ name: Name }] };
  if (withoutFitFilter) profile.plugins.filter = { disabled: [{ name: "NodeResourcesFit" }] };
  profile.pluginConfig = [{ name: Name, args: { resources } }];
  const registry = new Map([
    [Name, (args: unknown) => new LearnerLeastAllocated((args as { resources: ResourceSpec[] }).resources)],
  ]);
  const sim = newSim({ nodes, profile, registry, explain: true });
  sim.add(pod);
  await sim.drain();
  return { node: sim.bound[0]?.node, scores: sim.explained.get(`default/${pod.metadata.name}`)?.raw[Name] };
}

const web = () => makePod("web", { requests: [{ cpu: "1", memory: "2Gi" }] });

describe("LeastAllocated inside the scheduler", () => {
  it("prefers the node with more room left, averaging cpu and memory", async () => {
    // a: cpu (4000 − 1000) × 100 / 4000 = 75, memory (8 − 2) × 100 / 8 = 75 → (75 + 75) / 2 = 75.
    // b: cpu (2000 − 1000) × 100 / 2000 = 50, memory 75 → 125 / 2 = 62 (integer division).
    const r = await schedule([node("b", "2", "8Gi"), node("a", "4", "8Gi")], web());
    expect(r.scores).toEqual({ a: 75, b: 62 });
    expect(r.node).toBe("a");
  });

  it("weighs the resources as configured", async () => {
    // cpu weight 3, memory 1: a (75 × 3 + 75) / 4 = 75; b (50 × 3 + 75) / 4 = 225 / 4 = 56.
    const r = await schedule([node("a", "4", "8Gi"), node("b", "2", "8Gi")], web(), [
      { name: "cpu", weight: 3 },
      { name: "memory", weight: 1 },
    ]);
    expect(r.scores).toEqual({ a: 75, b: 56 });
  });

  it("leaves out a configured resource the node does not have", async () => {
    // example.com/gpu: allocatable 0 on both nodes, so the mean is over cpu and memory only.
    const r = await schedule([node("a", "4", "8Gi"), node("b", "2", "8Gi")], web(), [
      { name: "cpu", weight: 1 },
      { name: "memory", weight: 1 },
      { name: "example.com/gpu", weight: 1 },
    ]);
    expect(r.scores).toEqual({ a: 75, b: 62 });
  });

  it("scores an overcommitted resource 0, never below", async () => {
    // Fit's Filter off: 2 CPU asked of 1-CPU nodes. cpu → 0 on both;
    // tiny: memory (8 − 1) × 100 / 8 = 87 → (0 + 87) / 2 = 43; small: (4 − 1) × 100 / 4 = 75 → 37.
    const pod = makePod("greedy", { requests: [{ cpu: "2", memory: "1Gi" }] });
    const r = await schedule([node("tiny", "1", "8Gi"), node("small", "1", "4Gi")], pod, undefined, true);
    expect(r.node).toBe("tiny");
    expect(r.scores).toEqual({ tiny: 43, small: 37 });
  });
});

// Exercise 5.2, graded inside the real scheduler: FewerPods is the profile's only Score plugin
// on a simulated cluster, so the pod lands where your normalized scores say; the explain
// recorder (code/scheduler/explain.ts) shows the framework's view of your raw and normalized scores.
import { describe, expect, it } from "vitest";
import type { Node } from "../../../code/api/core.ts";
import { defaultProfile } from "../../../code/scheduler/plugins/registry.ts";
import { newSim } from "../../../code/scheduler/testing/sim.ts";
import { makeNode, makePod } from "../../../code/scheduler/testing/wrappers.ts";
import { FewerPods, Name } from "./fewer-pods.ts";

/** Nodes with `running[name]` pods already on them; schedules one pod and explains it. */
async function schedule(running: Record<string, number>, podLimit = "110") {
  const nodes: Node[] = Object.keys(running).map((n) =>
    makeNode(n, { allocatable: { cpu: "64", memory: "256Gi", pods: podLimit } }),
  );
  const profile = defaultProfile();
  profile.plugins.score = { disabled: [{ name: "*" }], enabled: [{ name: Name, weight: 1 }] };
  const sim = newSim({ nodes, profile, explain: true, registry: new Map([[Name, () => new FewerPods()]]) });
  for (const [n, count] of Object.entries(running)) {
    for (let i = 0; i < count; i++) sim.cache.addPod(makePod(`${n}-${i}`, { nodeName: n }));
  }
  sim.add(makePod("new"));
  await sim.drain();
  const r = sim.explained.get("default/new");
  return { node: sim.bound[0]?.node, raw: r?.raw[Name], normalized: r?.normalized[Name] };
}

describe("FewerPods inside the scheduler", () => {
  it("sends the pod to the node with the fewest pods", async () => {
    const r = await schedule({ a: 3, b: 1, c: 2 });
    expect(r.node).toBe("b");
    expect(r.raw).toEqual({ a: 3, b: 1, c: 2 });
  });

  it("normalizes as DefaultNormalizeScore reversed: 100 − 100 × pods / max, in integer arithmetic", async () => {
    // max 3: a 100 − 100 = 0; b 100 − trunc(33.3) = 67; c 100 − trunc(66.6) = 34.
    expect((await schedule({ a: 3, b: 1, c: 2 })).normalized).toEqual({ a: 0, b: 67, c: 34 });
  });

  it("gives every node 100 when no node runs a pod", async () => {
    const r = await schedule({ a: 0, b: 0, c: 0 });
    expect(r.normalized).toEqual({ a: 100, b: 100, c: 100 });
    expect(r.node).toBeDefined();
  });

  it("stays within 0–100 when nodes run more than 100 pods", async () => {
    // max 150: busy 0; lighter 100 − trunc(100 × 120 / 150) = 100 − 80 = 20.
    const r = await schedule({ busy: 150, lighter: 120 }, "500");
    expect(r.node).toBe("lighter");
    expect(r.normalized).toEqual({ busy: 0, lighter: 20 });
  });
});

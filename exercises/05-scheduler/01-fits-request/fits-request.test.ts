// Exercise 5.1, graded inside the real scheduler: your computePodResourceRequest and fitsRequest
// are NodeResourcesFit's PreFilter and Filter on a simulated cluster (code/scheduler/testing/
// sim.ts), so a pod lands only where your Filter lets it, and FailedScheduling counts your reasons.
import { describe, expect, it } from "vitest";
import type { Node, Pod } from "../../../code/api/core.ts";
import {
  type CycleState,
  NotFoundError,
  type StateData,
} from "../../../code/scheduler/framework/cycle-state.ts";
import type {
  FilterPlugin,
  PreFilterPlugin,
  PreFilterResult,
} from "../../../code/scheduler/framework/interface.ts";
import type { NodeInfo } from "../../../code/scheduler/framework/node-info.ts";
import { Code, newStatus, type Status } from "../../../code/scheduler/framework/status.ts";
import type { Resource } from "../../../code/scheduler/framework/types.ts";
import { newSim } from "../../../code/scheduler/testing/sim.ts";
import { makeNode, makePod } from "../../../code/scheduler/testing/wrappers.ts";
import { computePodResourceRequest, fitsRequest } from "./fits-request.ts";

class Request implements StateData {
  constructor(readonly value: Resource) {}
  clone() {
    return this;
  }
}

/** NodeResourcesFit's Filter half, built on your two functions. */
class LearnerFit implements PreFilterPlugin, FilterPlugin {
  name() {
    return "NodeResourcesFit";
  }
  preFilter(state: CycleState, pod: Pod): [PreFilterResult | undefined, Status | undefined] {
    state.write("PreFilterNodeResourcesFit", new Request(computePodResourceRequest(pod)));
    return [undefined, undefined];
  }
  filter(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const s = state.read("PreFilterNodeResourcesFit");
    if (s instanceof NotFoundError) throw s;
    const short = fitsRequest((s as Request).value, nodeInfo);
    if (short.length === 0) return undefined;
    return newStatus(Code.Unschedulable, ...short.map((r) => r.reason));
  }
}

const node = (name: string, cpu: string, memory: string, pods = "110"): Node =>
  makeNode(name, { allocatable: { cpu, memory, pods } });

async function schedule(nodes: Node[], ...pods: Pod[]) {
  const sim = newSim({ nodes, registry: new Map([["NodeResourcesFit", () => new LearnerFit()]]) });
  for (const p of pods) {
    sim.add(p);
    await sim.drain();
  }
  const placed = Object.fromEntries(sim.bound.map((b) => [b.pod.metadata.name, b.node]));
  // The Filter part of each FailedScheduling message; DefaultPreemption adds " preemption: …".
  const failed = sim.events
    .filter((e) => e.reason === "FailedScheduling")
    .map((e) => e.message.split(" preemption: ")[0]);
  return { placed, failed };
}

describe("fitsRequest inside the scheduler", () => {
  it("puts a pod only on a node with room for its CPU and memory", async () => {
    const r = await schedule(
      [node("small", "1", "2Gi"), node("big", "4", "8Gi")],
      makePod("web", { requests: [{ cpu: "2", memory: "1Gi" }] }),
      makePod("cache", { requests: [{ cpu: "500m", memory: "6Gi" }] }),
    );
    expect(r.placed).toEqual({ web: "big", cache: "big" });
  });

  it("counts what is already on the node", async () => {
    // big: 4 CPU; web-1 and web-2 take 3; web-3 (2 CPU) no longer fits anywhere.
    const r = await schedule(
      [node("small", "1", "2Gi"), node("big", "4", "8Gi")],
      makePod("web-1", { requests: [{ cpu: "1500m" }] }),
      makePod("web-2", { requests: [{ cpu: "1500m" }] }),
      makePod("web-3", { requests: [{ cpu: "2" }] }),
    );
    expect(r.placed).toEqual({ "web-1": "big", "web-2": "big" });
    expect(r.failed).toEqual(["0/2 nodes are available: 2 Insufficient cpu."]);
  });

  it("gives one reason per short resource, counted per node as FailedScheduling does", async () => {
    const r = await schedule(
      [node("a", "1", "2Gi"), node("b", "2", "16Gi"), node("c", "8", "1Gi")],
      makePod("huge", { requests: [{ cpu: "4", memory: "4Gi" }] }),
    );
    expect(r.placed).toEqual({});
    expect(r.failed).toEqual(["0/3 nodes are available: 2 Insufficient cpu, 2 Insufficient memory."]);
  });

  it("refuses a pod on a node at its pod limit, even one that requests nothing", async () => {
    const r = await schedule([node("one-slot", "4", "8Gi", "1")], makePod("first"), makePod("best-effort"));
    expect(r.placed).toEqual({ first: "one-slot" });
    expect(r.failed).toEqual(["0/1 nodes are available: 1 Too many pods."]);
  });

  it("does not check a resource the pod does not request", async () => {
    // full's CPU is taken; a memory-only pod still fits there.
    const r = await schedule(
      [node("full", "1", "8Gi")],
      makePod("cpu-hog", { requests: [{ cpu: "1" }] }),
      makePod("memory-only", { requests: [{ memory: "1Gi" }] }),
    );
    expect(r.placed).toEqual({ "cpu-hog": "full", "memory-only": "full" });
  });
});

describe("computePodResourceRequest inside the scheduler", () => {
  const withInit = (name: string, init: string[], app: string) => {
    const p = makePod(name, { requests: [{ cpu: app }] });
    p.spec.initContainers = init.map((cpu, i) => ({
      name: `init-${i}`,
      image: "pause",
      resources: { requests: { cpu } },
    }));
    return p;
  };

  it("takes the largest init container as a floor, not the sum", async () => {
    // Containers 500m; init containers 1500m then 1: the pod needs max(500m, 1500m, 1) = 1500m.
    const r = await schedule([node("two-cpu", "2", "8Gi")], withInit("migrate", ["1500m", "1"], "500m"));
    expect(r.placed).toEqual({ migrate: "two-cpu" });
  });

  it("needs room for an init container larger than the app", async () => {
    const r = await schedule([node("one-cpu", "1", "8Gi")], withInit("warmup", ["2"], "200m"));
    expect(r.failed).toEqual(["0/1 nodes are available: 1 Insufficient cpu."]);
  });

  it("adds the pod's overhead", async () => {
    // 1 CPU for the container + 250m for the sandbox: more than a 1-CPU node has.
    const kata = () => {
      const p = makePod("kata", { requests: [{ cpu: "1", memory: "1Gi" }] });
      (p.spec as { overhead?: Record<string, string> }).overhead = { cpu: "250m", memory: "120Mi" };
      return p;
    };
    expect((await schedule([node("one-cpu", "1", "8Gi")], kata())).failed).toEqual([
      "0/1 nodes are available: 1 Insufficient cpu.",
    ]);
    expect((await schedule([node("two-cpu", "2", "8Gi")], kata())).placed).toEqual({ kata: "two-cpu" });
  });
});

// Exercise 5.4, graded inside the real scheduler: your toleratesTaint is TaintToleration's
// matcher on a simulated cluster — its Filter (NoSchedule, NoExecute) decides which nodes a pod
// may use, its Score (PreferNoSchedule, reversed) which of them it prefers.
import { describe, expect, it } from "vitest";
import type { Node, Pod, Taint, Toleration } from "../../../code/api/core.ts";
import type { CycleState } from "../../../code/scheduler/framework/cycle-state.ts";
import {
  type FilterPlugin,
  MaxNodeScore,
  type NodeScore,
  type ScoreExtensions,
  type ScorePlugin,
} from "../../../code/scheduler/framework/interface.ts";
import type { NodeInfo } from "../../../code/scheduler/framework/node-info.ts";
import { Code, newStatus, type Status } from "../../../code/scheduler/framework/status.ts";
import { defaultNormalizeScore } from "../../../code/scheduler/plugins/helper/normalize-score.ts";
import { newSim } from "../../../code/scheduler/testing/sim.ts";
import { makeNode, makePod } from "../../../code/scheduler/testing/wrappers.ts";
import { toleratesTaint } from "./tolerates-taint.ts";

const tolerated = (ts: Toleration[] | undefined, taint: Taint) =>
  (ts ?? []).some((t) => toleratesTaint(t, taint));

/** TaintToleration with your matcher. */
class LearnerTaintToleration implements FilterPlugin, ScorePlugin, ScoreExtensions {
  name() {
    return "TaintToleration";
  }
  filter(_state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    for (const taint of nodeInfo.node()?.spec?.taints ?? []) {
      if (taint.effect !== "NoSchedule" && taint.effect !== "NoExecute") continue;
      if (!tolerated(pod.spec.tolerations, taint)) {
        return newStatus(
          Code.UnschedulableAndUnresolvable,
          `node(s) had untolerated taint {${taint.key}: ${taint.value ?? ""}}`,
        );
      }
    }
    return undefined;
  }
  score(_state: CycleState, pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined] {
    const soft = (pod.spec.tolerations ?? []).filter((t) => !t.effect || t.effect === "PreferNoSchedule");
    const taints = (nodeInfo.node()?.spec?.taints ?? []).filter((t) => t.effect === "PreferNoSchedule");
    return [taints.filter((t) => !tolerated(soft, t)).length, undefined];
  }
  scoreExtensions() {
    return this;
  }
  normalizeScore(_state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    defaultNormalizeScore(MaxNodeScore, true, scores);
    return undefined;
  }
}

const tainted = (name: string, ...taints: Taint[]): Node => ({ ...makeNode(name), spec: { taints } });
const pod = (name: string, ...tolerations: Toleration[]): Pod => {
  const p = makePod(name, { requests: [{ cpu: "100m" }] });
  p.spec.tolerations = tolerations;
  return p;
};

async function place(nodes: Node[], p: Pod): Promise<{ node?: string; failed?: string }> {
  const sim = newSim({ nodes, registry: new Map([["TaintToleration", () => new LearnerTaintToleration()]]) });
  sim.add(p);
  await sim.drain();
  return {
    node: sim.bound[0]?.node,
    // The Filter part of FailedScheduling; DefaultPreemption adds " preemption: …".
    failed: sim.events.find((e) => e.reason === "FailedScheduling")?.message.split(" preemption: ")[0],
  };
}

const gpu: Taint = { key: "dedicated", value: "gpu", effect: "NoSchedule" };
const infra: Taint = { key: "dedicated", value: "infra", effect: "NoSchedule" };
const notReady: Taint = { key: "node.kubernetes.io/not-ready", effect: "NoExecute" };

describe("toleratesTaint inside the scheduler", () => {
  it("keeps a pod without tolerations off every tainted node", async () => {
    expect(await place([tainted("g", gpu), tainted("i", infra)], pod("plain"))).toEqual({
      failed:
        "0/2 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 1 node(s) had untolerated taint {dedicated: infra}.",
    });
  });

  it("Equal needs the value: a gpu toleration opens the gpu node, not infra's", async () => {
    const t: Toleration = { key: "dedicated", operator: "Equal", value: "gpu", effect: "NoSchedule" };
    expect((await place([tainted("i", infra), tainted("g", gpu)], pod("trainer", t))).node).toBe("g");
    expect((await place([tainted("i", infra)], pod("trainer", t))).node).toBeUndefined();
  });

  it("treats an empty operator as Equal", async () => {
    const t: Toleration = { key: "dedicated", value: "infra" };
    expect((await place([tainted("g", gpu), tainted("i", infra)], pod("agent", t))).node).toBe("i");
  });

  it("Exists with a key matches any value of that key only", async () => {
    const t: Toleration = { key: "dedicated", operator: "Exists" };
    expect((await place([tainted("g", gpu)], pod("any-team", t))).node).toBe("g");
    expect((await place([tainted("n", notReady)], pod("any-team", t))).node).toBeUndefined();
  });

  it("Exists with an empty key tolerates every taint", async () => {
    const t: Toleration = { operator: "Exists" };
    expect((await place([tainted("n", notReady, gpu)], pod("daemon", t))).node).toBe("n");
  });

  it("an empty effect matches every effect; a named one only itself", async () => {
    const any: Toleration = { key: "node.kubernetes.io/not-ready", operator: "Exists" };
    expect((await place([tainted("n", notReady)], pod("patient", any))).node).toBe("n");
    const wrongEffect: Toleration = {
      key: "node.kubernetes.io/not-ready",
      operator: "Exists",
      effect: "NoSchedule",
    };
    expect((await place([tainted("n", notReady)], pod("patient", wrongEffect))).node).toBeUndefined();
  });

  it("PreferNoSchedule does not filter: the node is used when it is the only one, avoided otherwise", async () => {
    const spot: Taint = { key: "spot", value: "true", effect: "PreferNoSchedule" };
    expect((await place([tainted("s", spot)], pod("web"))).node).toBe("s");
    expect((await place([tainted("s", spot), makeNode("plain")], pod("web"))).node).toBe("plain");
  });
});

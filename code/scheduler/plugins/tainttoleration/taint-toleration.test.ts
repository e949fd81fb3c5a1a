// TaintToleration Filter and Score, toleration matching, and the two simple filters
// (NodeName, NodeUnschedulable).
import { describe, expect, it } from "vitest";
import type { Taint, Toleration } from "../../../api/core.ts";
import { CycleState } from "../../framework/cycle-state.ts";
import { NodeInfo } from "../../framework/node-info.ts";
import { Code, codeOf } from "../../framework/status.ts";
import { makeNode, makePod } from "../../testing/wrappers.ts";
import { toleratesTaint } from "../helper/taints.ts";
import { NodeName } from "../nodename/node-name.ts";
import { NodeUnschedulable } from "../nodeunschedulable/node-unschedulable.ts";
import { TaintToleration } from "./taint-toleration.ts";

const nodeWith = (name: string, taints: Taint[] = [], unschedulable = false) => {
  const ni = new NodeInfo();
  const n = makeNode(name);
  n.spec = { taints, unschedulable };
  ni.setNode(n);
  return ni;
};
const podTolerating = (tolerations: Toleration[]) => {
  const p = makePod("p");
  p.spec.tolerations = tolerations;
  return p;
};

describe("toleratesTaint", () => {
  const taint: Taint = { key: "dedicated", value: "gpu", effect: "NoSchedule" };
  it.each([
    [{ key: "dedicated", value: "gpu", effect: "NoSchedule" }, true],
    [{ key: "dedicated", value: "gpu" }, true], // empty effect: every effect
    [{ key: "dedicated", operator: "Exists" }, true],
    [{ operator: "Exists" }, true], // empty key + Exists: every taint
    [{ key: "dedicated", value: "cpu" }, false],
    [{ key: "dedicated", value: "gpu", effect: "NoExecute" }, false],
    [{ key: "other", operator: "Exists" }, false],
  ] as [Toleration, boolean][])("%j → %s", (t, want) => {
    expect(toleratesTaint(t, taint)).toBe(want);
  });
});

describe("TaintToleration", () => {
  const pl = new TaintToleration();
  it("Filter names the first untolerated hard taint", () => {
    const ni = nodeWith("n", [
      { key: "soft", effect: "PreferNoSchedule" },
      { key: "dedicated", value: "gpu", effect: "NoSchedule" },
    ]);
    const s = pl.filter(new CycleState(), makePod("p"), ni);
    expect(codeOf(s)).toBe(Code.UnschedulableAndUnresolvable);
    expect(s?.message()).toBe("node(s) had untolerated taint {dedicated: gpu}");
    expect(
      pl.filter(new CycleState(), podTolerating([{ key: "dedicated", operator: "Exists" }]), ni),
    ).toBeUndefined();
  });

  it("Score counts untolerated PreferNoSchedule taints; NormalizeScore reverses", () => {
    const soft = (k: string): Taint => ({ key: k, effect: "PreferNoSchedule" });
    const nodes = [nodeWith("a"), nodeWith("b", [soft("x")]), nodeWith("c", [soft("x"), soft("y")])];
    // The pod tolerates y only with a NoSchedule toleration — which does not count for scoring.
    const pod = podTolerating([{ key: "y", operator: "Exists", effect: "NoSchedule" }]);
    const state = new CycleState();
    pl.preScore(state, pod, nodes);
    const scores = nodes.map((n) => ({ name: n.nodeName(), score: pl.score(state, pod, n)[0] }));
    expect(scores.map((s) => s.score)).toEqual([0, 1, 2]);
    pl.normalizeScore(state, pod, scores);
    // max 2: 100 − 100·0/2, 100 − 100·1/2, 100 − 100·2/2
    expect(scores.map((s) => s.score)).toEqual([100, 50, 0]);
  });

  it("all-zero raw scores normalize to 100 everywhere", () => {
    const scores = [
      { name: "a", score: 0 },
      { name: "b", score: 0 },
    ];
    pl.normalizeScore(new CycleState(), makePod("p"), scores);
    expect(scores.map((s) => s.score)).toEqual([100, 100]);
  });
});

describe("NodeName and NodeUnschedulable", () => {
  it("NodeName rejects every node but the named one", () => {
    const pod = makePod("p", { nodeName: "a" });
    expect(new NodeName().filter(new CycleState(), pod, nodeWith("a"))).toBeUndefined();
    const s = new NodeName().filter(new CycleState(), pod, nodeWith("b"));
    expect([codeOf(s), s?.message()]).toEqual([
      Code.UnschedulableAndUnresolvable,
      "node(s) didn't match the requested node name",
    ]);
  });

  it("NodeUnschedulable rejects a cordoned node unless the pod tolerates the taint", () => {
    const cordoned = nodeWith("a", [], true);
    const s = new NodeUnschedulable().filter(new CycleState(), makePod("p"), cordoned);
    expect(s?.message()).toBe("node(s) were unschedulable");
    const tolerant = podTolerating([
      { key: "node.kubernetes.io/unschedulable", operator: "Exists", effect: "NoSchedule" },
    ]);
    expect(new NodeUnschedulable().filter(new CycleState(), tolerant, cordoned)).toBeUndefined();
  });
});

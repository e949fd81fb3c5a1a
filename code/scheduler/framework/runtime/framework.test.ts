// The framework runtime: profiles from configuration, the Filter / Score / Reserve / Permit /
// Bind rules, and waiting pods on a fake clock.
import { describe, expect, it } from "vitest";
import type { Pod } from "../../../api/core.ts";
import { FakeClock } from "../../../client/util/clock.ts";
import { Snapshot } from "../../backend/cache/snapshot.ts";
import { newInTreeRegistry } from "../../plugins/registry.ts";
import { makeNode, makePod } from "../../testing/wrappers.ts";
import { CycleState } from "../cycle-state.ts";
import type { NodeScore, Plugin } from "../interface.ts";
import { NodeInfo } from "../node-info.ts";
import { asStatus, Code, codeOf, newStatus, type Status } from "../status.ts";
import { Framework } from "./framework.ts";
import type { ProfileConfig, Registry } from "./registry.ts";

const log: string[] = [];

/** A configurable test plugin implementing every scheduling and binding point. */
class Fake implements Plugin {
  constructor(
    readonly n: string,
    readonly o: {
      filter?: Status;
      scores?: Record<string, number>;
      normalize?: (s: NodeScore[]) => void;
      reserve?: Status;
      permit?: [Status | undefined, number];
      bind?: Status;
    } = {},
  ) {}
  name() {
    return this.n;
  }
  filter(_s: CycleState, _p: Pod, _n: NodeInfo) {
    log.push(`filter ${this.n}`);
    return this.o.filter;
  }
  score(_s: CycleState, _p: Pod, n: NodeInfo): [number, Status | undefined] {
    return [this.o.scores?.[n.nodeName()] ?? 0, undefined];
  }
  scoreExtensions() {
    const f = this.o.normalize;
    return f
      ? {
          normalizeScore: (_s: CycleState, _p: Pod, sc: NodeScore[]) => {
            f(sc);
            return undefined;
          },
        }
      : undefined;
  }
  reserve() {
    log.push(`reserve ${this.n}`);
    return this.o.reserve;
  }
  unreserve() {
    log.push(`unreserve ${this.n}`);
  }
  permit(): [Status | undefined, number] {
    return this.o.permit ?? [undefined, 0];
  }
  async bind() {
    log.push(`bind ${this.n}`);
    return this.o.bind;
  }
}

function framework(fakes: Fake[], weights: Record<string, number> = {}, clock = new FakeClock()) {
  const registry: Registry = newInTreeRegistry(async () => {});
  for (const f of fakes) registry.set(f.n, () => f);
  const profile: ProfileConfig = {
    schedulerName: "test",
    plugins: {
      queueSort: { enabled: [{ name: "PrioritySort" }] },
      multiPoint: { enabled: fakes.map((f) => ({ name: f.n, weight: weights[f.n] })) },
    },
  };
  return new Framework(registry, profile, { snapshot: new Snapshot(), clock });
}

const nodeInfo = (name: string) => {
  const ni = new NodeInfo();
  ni.setNode(makeNode(name));
  return ni;
};

describe("profile from configuration", () => {
  it("puts a multiPoint plugin at every point it implements, explicit ones first, minus disabled", () => {
    const fwk = new Framework(
      newInTreeRegistry(async () => {}),
      {
        schedulerName: "s",
        plugins: {
          multiPoint: {
            enabled: [
              { name: "PrioritySort" },
              { name: "NodeName" },
              { name: "TaintToleration", weight: 3 },
              { name: "NodeResourcesFit" },
              { name: "DefaultBinder" },
            ],
          },
          filter: { enabled: [{ name: "NodeResourcesFit" }], disabled: [{ name: "TaintToleration" }] },
        },
      },
      { snapshot: new Snapshot() },
    );
    expect(fwk.filterPlugins.map((p) => p.name())).toEqual(["NodeResourcesFit", "NodeName"]);
    expect(fwk.scorePlugins.map((p) => p.name())).toEqual(["TaintToleration", "NodeResourcesFit"]);
    expect(fwk.preScorePlugins.map((p) => p.name())).toEqual(["TaintToleration", "NodeResourcesFit"]);
    expect(fwk.scorePluginWeight.get("TaintToleration")).toBe(3);
    expect(fwk.scorePluginWeight.get("NodeResourcesFit")).toBe(1);
    // One object per plugin, shared by its points.
    expect(fwk.scorePlugins[1]).toBe(fwk.filterPlugins[0]);
  });

  it("rejects an unknown plugin, a plugin at a point it lacks, and a profile without a binder", () => {
    const reg = newInTreeRegistry(async () => {});
    const mk = (plugins: ProfileConfig["plugins"]) => () =>
      new Framework(reg, { schedulerName: "s", plugins }, { snapshot: new Snapshot() });
    expect(mk({ multiPoint: { enabled: [{ name: "Nope" }] } })).toThrow('plugin "Nope" does not exist');
    expect(
      mk({ queueSort: { enabled: [{ name: "PrioritySort" }] }, bind: { enabled: [{ name: "NodeName" }] } }),
    ).toThrow('plugin "NodeName" does not extend bind plugin');
    expect(mk({ queueSort: { enabled: [{ name: "PrioritySort" }] } })).toThrow("at least one bind plugin");
  });
});

describe("RunFilterPlugins", () => {
  it("stops at the first rejection and names its plugin", () => {
    log.length = 0;
    const fwk = framework([
      new Fake("A"),
      new Fake("B", { filter: newStatus(Code.Unschedulable, "no") }),
      new Fake("C"),
    ]);
    const s = fwk.runFilterPlugins(new CycleState(), makePod("p"), nodeInfo("n"));
    expect([codeOf(s), s?.plugin, s?.message()]).toEqual([Code.Unschedulable, "B", "no"]);
    expect(log).toEqual(["filter A", "filter B"]);
  });

  it("wraps an error with the plugin's name", () => {
    const fwk = framework([new Fake("A", { filter: asStatus(new Error("boom")) })]);
    const s = fwk.runFilterPlugins(new CycleState(), makePod("p"), nodeInfo("n"));
    expect([codeOf(s), s?.message()]).toEqual([Code.Error, 'running "A" filter plugin: boom']);
  });

  it("does not run a plugin its PreFilter skipped", () => {
    log.length = 0;
    const fwk = framework([new Fake("A", { filter: newStatus(Code.Unschedulable) })]);
    const state = new CycleState();
    state.skipFilterPlugins.add("A");
    expect(fwk.runFilterPlugins(state, makePod("p"), nodeInfo("n"))).toBeUndefined();
    expect(log).toEqual([]);
  });
});

describe("RunScorePlugins", () => {
  it("normalizes each plugin, multiplies by its weight and sums per node", () => {
    const a = new Fake("A", {
      scores: { n1: 2, n2: 4 },
      normalize: (sc) => {
        for (const s of sc) s.score *= 25; // 2 → 50, 4 → 100
      },
    });
    const b = new Fake("B", { scores: { n1: 10, n2: 0 } });
    const fwk = framework([a, b], { A: 2, B: 3 });
    const [scores, s] = fwk.runScorePlugins(new CycleState(), makePod("p"), [nodeInfo("n1"), nodeInfo("n2")]);
    expect(s).toBeUndefined();
    // n1: 50·2 + 10·3 = 130; n2: 100·2 + 0·3 = 200
    expect(scores.map((x) => [x.name, x.totalScore])).toEqual([
      ["n1", 130],
      ["n2", 200],
    ]);
    expect(scores[0].scores).toEqual([
      { name: "A", score: 100 },
      { name: "B", score: 30 },
    ]);
  });

  it("fails a score outside 0–100 after normalizing", () => {
    const fwk = framework([new Fake("A", { scores: { n1: 101 } })]);
    const [, s] = fwk.runScorePlugins(new CycleState(), makePod("p"), [nodeInfo("n1")]);
    expect(codeOf(s)).toBe(Code.Error);
    expect(s?.message()).toContain(
      'plugin "A" returns an invalid score 101, it should in the range of [0, 100]',
    );
  });
});

describe("Reserve, Permit, Bind", () => {
  it("a failed Reserve unreserves every Reserve plugin in reverse order", () => {
    log.length = 0;
    const fwk = framework([
      new Fake("A"),
      new Fake("B", { reserve: newStatus(Code.Unschedulable, "full") }),
      new Fake("C"),
    ]);
    const s = fwk.runReservePluginsReserve(new CycleState(), makePod("p"), "n");
    expect([s?.plugin, s?.message()]).toEqual(["B", "full"]);
    fwk.runReservePluginsUnreserve(new CycleState(), makePod("p"), "n");
    expect(log).toEqual(["reserve A", "reserve B", "unreserve C", "unreserve B", "unreserve A"]);
  });

  it("Wait holds the pod until every waiting plugin allows it", async () => {
    const fwk = framework([
      new Fake("A", { permit: [newStatus(Code.Wait), 10_000] }),
      new Fake("B", { permit: [newStatus(Code.Wait), 20_000] }),
    ]);
    const pod = makePod("p");
    const s = fwk.runPermitPlugins(new CycleState(), pod, "n");
    expect([codeOf(s), s?.message()]).toEqual([
      Code.Wait,
      'one or more plugins asked to wait and no plugin rejected pod "p"',
    ]);
    const wp = fwk.getWaitingPod("p")!;
    expect(wp.getPendingPlugins()).toEqual(["A", "B"]);
    const verdict = fwk.waitOnPermit(pod);
    wp.allow("A");
    wp.allow("B");
    expect(await verdict).toBeUndefined();
    expect(fwk.getWaitingPod("p")).toBeUndefined();
  });

  it("a waiting pod is rejected when its plugin's timeout passes on the clock", async () => {
    const clock = new FakeClock();
    const fwk = framework([new Fake("A", { permit: [newStatus(Code.Wait), 10_000] })], {}, clock);
    const pod = makePod("p");
    fwk.runPermitPlugins(new CycleState(), pod, "n");
    const verdict = fwk.waitOnPermit(pod);
    clock.step(9_999);
    fwk.getWaitingPod("p")!.allow("nobody");
    clock.step(1);
    const s = await verdict;
    expect([codeOf(s), s?.plugin, s?.message()]).toEqual([
      Code.Unschedulable,
      "A",
      "rejected due to timeout after waiting 10s at plugin A",
    ]);
  });

  it("a Permit rejection stops at once; Bind passes on a Skip to the next binder", async () => {
    const fwk = framework([
      new Fake("A", { permit: [newStatus(Code.Unschedulable, "not yet"), 0], bind: newStatus(Code.Skip) }),
      new Fake("B"),
    ]);
    const s = fwk.runPermitPlugins(new CycleState(), makePod("p"), "n");
    expect([s?.plugin, s?.message()]).toEqual(["A", "not yet"]);
    log.length = 0;
    expect(await fwk.runBindPlugins(new CycleState(), makePod("p"), "n")).toBeUndefined();
    expect(log.filter((l) => l.startsWith("bind"))).toEqual(["bind A", "bind B"]);
  });
});

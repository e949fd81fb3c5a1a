import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { setDefaults } from "../apis/config/defaults.ts";
import { loadConfig, loadConfigFromFile } from "../apis/config/load.ts";
import { Snapshot } from "../backend/cache/snapshot.ts";
import type { QueueSortPlugin } from "../framework/interface.ts";
import type { Registry } from "../framework/runtime/registry.ts";
import { newInTreeRegistry } from "../plugins/registry.ts";
import { newSim } from "../testing/sim.ts";
import { makeNode, makePod } from "../testing/wrappers.ts";
import { handlesSchedulerName, newMap, ProfileError } from "./profile.ts";

const registry = (): Registry => newInTreeRegistry(async () => {});
const opts = () => ({ snapshot: new Snapshot() });
const head = "apiVersion: kubescheduler.config.k8s.io/v1\nkind: KubeSchedulerConfiguration\n";

function mapError(build: () => unknown): string {
  try {
    build();
  } catch (e) {
    expect(e).toBeInstanceOf(ProfileError);
    return (e as Error).message;
  }
  throw new Error("built without error");
}

describe("newMap", () => {
  it("builds one framework per profile of the two-profile example", () => {
    const cfg = loadConfigFromFile(
      join(import.meta.dirname, "..", "..", "..", "chapters", "05-scheduler", "two-profiles.yaml"),
    );
    const m = newMap(cfg.profiles, registry(), opts());
    expect([...m.keys()]).toEqual(["default-scheduler", "bin-packing"]);
    expect(handlesSchedulerName(m, "bin-packing")).toBe(true);
    expect(handlesSchedulerName(m, "other")).toBe(false);
    const def = m.get("default-scheduler")!;
    const bin = m.get("bin-packing")!;
    expect(def.scorePlugins.map((p) => p.name())).toContain("NodeResourcesBalancedAllocation");
    expect(bin.scorePlugins.map((p) => p.name())).not.toContain("NodeResourcesBalancedAllocation");
    expect(def.scorePluginWeight.get("NodeResourcesFit")).toBe(1);
    expect(bin.scorePluginWeight.get("NodeResourcesFit")).toBe(5);
    expect(bin.scorePluginWeight.get("TaintToleration")).toBe(3);
  });

  it("two profiles with one name: duplicate profile", () => {
    const cfg = setDefaults({ profiles: [{ schedulerName: "a" }, { schedulerName: "a" }] });
    expect(mapError(() => newMap(cfg.profiles, registry(), opts()))).toBe(
      'duplicate profile with scheduler name "a"',
    );
  });

  it("an empty name: scheduler name is needed", () => {
    const cfg = setDefaults({ profiles: [{ schedulerName: "a" }, {}] });
    expect(mapError(() => newMap(cfg.profiles, registry(), opts()))).toBe("scheduler name is needed");
  });

  it("a queue sort that differs through multiPoint (which validation does not compare)", () => {
    const reg = registry();
    const sort: QueueSortPlugin = { name: () => "FifoSort", less: () => false };
    reg.set("FifoSort", () => sort);
    const cfg = setDefaults({
      profiles: [
        { schedulerName: "a" },
        {
          schedulerName: "b",
          plugins: { multiPoint: { enabled: [{ name: "FifoSort" }], disabled: [{ name: "PrioritySort" }] } },
        },
      ],
    });
    expect(mapError(() => newMap(cfg.profiles, reg, opts()))).toBe(
      'different queue sort plugins for profile "b": "FifoSort", first: "PrioritySort"',
    );
  });

  it("a queue sort with different args", () => {
    const cfg = setDefaults({
      profiles: [
        { schedulerName: "a", pluginConfig: [{ name: "PrioritySort", args: { x: 1 } }] },
        { schedulerName: "b" },
      ],
    });
    expect(mapError(() => newMap(cfg.profiles, registry(), opts()))).toBe(
      'different queue sort plugin args for profile "b"',
    );
  });

  it("a plugin that does not build names its profile", () => {
    const cfg = setDefaults({
      profiles: [{ schedulerName: "a", plugins: { filter: { enabled: [{ name: "Missing" }] } } }],
    });
    expect(mapError(() => newMap(cfg.profiles, registry(), opts()))).toBe(
      'creating profile for scheduler name a: plugin "Missing" does not exist',
    );
  });

  it("NodeResourcesFit refuses bad args when built, as NewFit does", () => {
    const cfg = loadConfig(
      `${head}profiles:\n- pluginConfig:\n  - name: NodeResourcesFit\n    args:\n      scoringStrategy:\n        type: LeastAllocated\n        resources:\n        - name: cpu\n          weight: 200\n`,
    );
    expect(mapError(() => newMap(cfg.profiles, registry(), opts()))).toBe(
      'creating profile for scheduler name default-scheduler: initializing plugin "NodeResourcesFit": ' +
        "scoringStrategy.resources[0].weight: Invalid value: 200: resource weight of cpu not in valid range (0, 100]",
    );
  });
});

describe("a configuration changes what the scheduler does", () => {
  const tainted = () => {
    const n = makeNode("n1");
    n.spec = { taints: [{ key: "dedicated", value: "gpu", effect: "NoSchedule" }] };
    return n;
  };

  it("with the defaults, a pod without a toleration does not land on a tainted node", async () => {
    const sim = newSim({ nodes: [tainted()], profile: setDefaults({}).profiles[0]! });
    sim.add(makePod("p"));
    await sim.drain();
    expect(sim.bound).toEqual([]);
  });

  it("with TaintToleration disabled at multiPoint, it does", async () => {
    const cfg = loadConfig(
      `${head}profiles:\n- plugins:\n    multiPoint:\n      disabled:\n      - name: TaintToleration\n`,
    );
    const sim = newSim({ nodes: [tainted()], profile: cfg.profiles[0]! });
    sim.add(makePod("p"));
    await sim.drain();
    expect(sim.bound.map((b) => b.node)).toEqual(["n1"]);
  });

  // Node a: empty, with a PreferNoSchedule taint. Node b: untainted, already running 2 cpu / 4Gi.
  // Both 4 cpu / 8Gi. The pod asks 1 cpu / 1Gi.
  //   LeastAllocated:  a = ((4-1)/4·100 + (8-1)/8·100)/2 = (75 + 87.5)/2 = 81
  //                    b = ((4-3)/4·100 + (8-5)/8·100)/2 = (25 + 37.5)/2 = 31
  //   Balanced:        a: |0.25 − 0.125|/2 = 0.0625 → 93;  b: |0.75 − 0.625|/2 = 0.0625 → 93
  //   TaintToleration: a has 1 intolerable PreferNoSchedule taint, b 0 → reversed: a 0, b 100
  // Default weights (Fit 1, Balanced 1, Taint 3): a = 81 + 93 + 0 = 174, b = 31 + 93 + 300 = 424 → b.
  // NodeResourcesFit weight 10:                  a = 810 + 93 + 0 = 903, b = 310 + 93 + 300 = 703 → a.
  const twoNodes = () => {
    const a = makeNode("a");
    a.spec = { taints: [{ key: "spot", effect: "PreferNoSchedule" }] };
    return [a, makeNode("b")];
  };
  const placeOne = async (yaml: string) => {
    const sim = newSim({ nodes: twoNodes(), profile: loadConfig(yaml).profiles[0]! });
    sim.cache.addPod(makePod("running", { nodeName: "b", requests: [{ cpu: "2", memory: "4Gi" }] }));
    sim.add(makePod("p", { requests: [{ cpu: "1", memory: "1Gi" }] }));
    await sim.drain();
    return sim.bound.map((x) => x.node);
  };

  it("a weight from the file changes which node wins", async () => {
    expect(await placeOne(head)).toEqual(["b"]);
    expect(
      await placeOne(
        `${head}profiles:\n- plugins:\n    multiPoint:\n      enabled:\n      - name: NodeResourcesFit\n        weight: 10\n`,
      ),
    ).toEqual(["a"]);
  });
});

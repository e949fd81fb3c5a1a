import { describe, expect, it } from "vitest";
import { defaultMultiPoint } from "../../plugins/registry.ts";
import { defaultConfiguration, mergePluginSet, setDefaults } from "./defaults.ts";

// Upstream v1.32's getDefaultPlugins (default_plugins.go), written out by hand: the order is the
// Filter order, the weights are the Score weights.
const upstreamDefaultMultiPoint = [
  { name: "SchedulingGates" },
  { name: "PrioritySort" },
  { name: "NodeUnschedulable" },
  { name: "NodeName" },
  { name: "TaintToleration", weight: 3 },
  { name: "NodeAffinity", weight: 2 },
  { name: "NodePorts" },
  { name: "NodeResourcesFit", weight: 1 },
  { name: "VolumeRestrictions" },
  { name: "EBSLimits" },
  { name: "GCEPDLimits" },
  { name: "NodeVolumeLimits" },
  { name: "AzureDiskLimits" },
  { name: "VolumeBinding" },
  { name: "VolumeZone" },
  { name: "PodTopologySpread", weight: 2 },
  { name: "InterPodAffinity", weight: 2 },
  { name: "DefaultPreemption" },
  { name: "NodeResourcesBalancedAllocation", weight: 1 },
  { name: "ImageLocality", weight: 1 },
  { name: "DefaultBinder" },
];

// Upstream's defaults_test.go `pluginConfigs`: the args every default plugin with an args kind
// gets, in name order (VolumeBinding's is left out: no volume plugins here).
const upstreamPluginConfigs = [
  { name: "DefaultPreemption", args: { minCandidateNodesPercentage: 10, minCandidateNodesAbsolute: 100 } },
  { name: "InterPodAffinity", args: { hardPodAffinityWeight: 1 } },
  { name: "NodeAffinity", args: {} },
  {
    name: "NodeResourcesBalancedAllocation",
    args: {
      resources: [
        { name: "cpu", weight: 1 },
        { name: "memory", weight: 1 },
      ],
    },
  },
  {
    name: "NodeResourcesFit",
    args: {
      scoringStrategy: {
        type: "LeastAllocated",
        resources: [
          { name: "cpu", weight: 1 },
          { name: "memory", weight: 1 },
        ],
      },
    },
  },
  { name: "PodTopologySpread", args: { defaultingType: "System" } },
];

// The plugins this scheduler has built so far: upstream's expectation, restricted to them, is
// what the defaults must equal (the list grows as plugins land in the registry).
const built = new Set(defaultMultiPoint.map((p) => p.name));
const expectedMultiPoint = upstreamDefaultMultiPoint.filter((p) => built.has(p.name));
const expectedPluginConfig = upstreamPluginConfigs.filter((pc) => built.has(pc.name));

describe('defaults of an empty configuration (upstream\'s TestSchedulerDefaults, "empty config")', () => {
  it("the registry's default list is upstream's, in upstream's order and weights", () => {
    expect(defaultMultiPoint).toEqual(expectedMultiPoint);
  });

  it("equals upstream's defaulted object", () => {
    expect(defaultConfiguration()).toEqual({
      parallelism: 16,
      percentageOfNodesToScore: 0,
      podInitialBackoffSeconds: 1,
      podMaxBackoffSeconds: 10,
      clientConnection: {
        kubeconfig: "",
        qps: 50,
        burst: 100,
        contentType: "application/vnd.kubernetes.protobuf",
        acceptContentTypes: "",
      },
      leaderElection: {
        leaderElect: true,
        leaseDurationMs: 15_000,
        renewDeadlineMs: 10_000,
        retryPeriodMs: 2_000,
        resourceLock: "leases",
        resourceName: "kube-scheduler",
        resourceNamespace: "kube-system",
      },
      enableProfiling: true,
      enableContentionProfiling: true,
      delayCacheUntilActive: false,
      extenders: [],
      profiles: [
        {
          schedulerName: "default-scheduler",
          plugins: { multiPoint: { enabled: expectedMultiPoint } },
          pluginConfig: expectedPluginConfig,
        },
      ],
    });
  });

  it("does not share the default list with the registry (a profile's edits stay in that profile)", () => {
    const cfg = defaultConfiguration();
    cfg.profiles[0]!.plugins.multiPoint!.enabled![0]!.weight = 99;
    expect(defaultMultiPoint[0]!.weight).toBeUndefined();
  });

  it("contention profiling follows profiling when unset", () => {
    expect(setDefaults({ enableProfiling: false }).enableContentionProfiling).toBe(false);
    expect(
      setDefaults({ enableProfiling: false, enableContentionProfiling: true }).enableContentionProfiling,
    ).toBe(true);
  });
});

describe("mergePluginSet (upstream's default_plugins_test.go cases, on our default list)", () => {
  const defaults = { enabled: [{ name: "A" }, { name: "B", weight: 3 }, { name: "C", weight: 1 }] };

  it("disabling one default plugin drops it and keeps the others in order", () => {
    expect(mergePluginSet(defaults, { disabled: [{ name: "B" }] })).toEqual({
      enabled: [{ name: "A" }, { name: "C", weight: 1 }],
      disabled: [{ name: "B" }],
    });
  });

  it('disabling "*" drops every default; the custom enabled plugins remain, in the file\'s order', () => {
    expect(
      mergePluginSet(defaults, {
        enabled: [{ name: "Z" }, { name: "C", weight: 5 }],
        disabled: [{ name: "*" }],
      }),
    ).toEqual({
      enabled: [{ name: "Z" }, { name: "C", weight: 5 }],
      disabled: [{ name: "*" }],
    });
  });

  it("re-enabling a default with a new weight changes the weight in place, without moving it", () => {
    expect(mergePluginSet(defaults, { enabled: [{ name: "B", weight: 7 }] })).toEqual({
      enabled: [{ name: "A" }, { name: "B", weight: 7 }, { name: "C", weight: 1 }],
    });
  });

  it("re-enabling a default without a weight drops its default weight (the framework then uses 1)", () => {
    expect(mergePluginSet(defaults, { enabled: [{ name: "B" }] }).enabled![1]).toEqual({ name: "B" });
  });

  it("a new plugin is appended after the defaults", () => {
    expect(mergePluginSet(defaults, { enabled: [{ name: "Mine", weight: 2 }] }).enabled).toEqual([
      { name: "A" },
      { name: "B", weight: 3 },
      { name: "C", weight: 1 },
      { name: "Mine", weight: 2 },
    ]);
  });

  it("a custom plugin named twice is kept twice (building the framework refuses it)", () => {
    expect(mergePluginSet({}, { enabled: [{ name: "X" }, { name: "X" }] }).enabled).toEqual([
      { name: "X" },
      { name: "X" },
    ]);
  });
});

describe("profile defaults through setDefaults", () => {
  it("disabling one default plugin at multiPoint removes it and its args", () => {
    const cfg = setDefaults({
      profiles: [{ plugins: { multiPoint: { disabled: [{ name: "NodeResourcesBalancedAllocation" }] } } }],
    });
    const prof = cfg.profiles[0]!;
    expect(prof.plugins.multiPoint!.enabled!.map((p) => p.name)).toEqual(
      expectedMultiPoint.map((p) => p.name).filter((n) => n !== "NodeResourcesBalancedAllocation"),
    );
    expect(prof.pluginConfig!.map((pc) => pc.name)).not.toContain("NodeResourcesBalancedAllocation");
  });

  it("a weight changed at multiPoint keeps the plugin's place", () => {
    const cfg = setDefaults({
      profiles: [{ plugins: { multiPoint: { enabled: [{ name: "TaintToleration", weight: 10 }] } } }],
    });
    const enabled = cfg.profiles[0]!.plugins.multiPoint!.enabled!;
    expect(enabled.findIndex((p) => p.name === "TaintToleration")).toBe(
      expectedMultiPoint.findIndex((p) => p.name === "TaintToleration"),
    );
    expect(enabled.find((p) => p.name === "TaintToleration")!.weight).toBe(10);
  });

  it("a point-specific set is merged on its own (the default multiPoint stays whole)", () => {
    const cfg = setDefaults({
      profiles: [
        {
          plugins: {
            score: { disabled: [{ name: "*" }], enabled: [{ name: "NodeResourcesFit", weight: 4 }] },
          },
        },
      ],
    });
    const prof = cfg.profiles[0]!;
    expect(prof.plugins.multiPoint!.enabled).toEqual(expectedMultiPoint);
    expect(prof.plugins.score).toEqual({
      enabled: [{ name: "NodeResourcesFit", weight: 4 }],
      disabled: [{ name: "*" }],
    });
  });

  it("the file's args are defaulted where they leave fields out, and kept first", () => {
    const cfg = setDefaults({
      profiles: [
        {
          pluginConfig: [
            {
              name: "NodeResourcesFit",
              args: { scoringStrategy: { type: "MostAllocated", resources: [{ name: "cpu", weight: 0 }] } },
            },
            { name: "OutOfTree", args: { anything: 1 } },
          ],
        },
      ],
    });
    const pcs = cfg.profiles[0]!.pluginConfig!;
    expect(pcs[0]).toEqual({
      name: "NodeResourcesFit",
      args: { scoringStrategy: { type: "MostAllocated", resources: [{ name: "cpu", weight: 1 }] } },
    });
    expect(pcs[1]).toEqual({ name: "OutOfTree", args: { anything: 1 } });
    expect(pcs.filter((pc) => pc.name === "NodeResourcesFit")).toHaveLength(1);
  });

  it("two profiles: no name is invented, each is merged with the defaults", () => {
    const cfg = setDefaults({
      profiles: [
        {},
        {
          schedulerName: "custom-scheduler",
          plugins: { bind: { enabled: [{ name: "BarPlugin" }], disabled: [{ name: "DefaultBinder" }] } },
        },
      ],
    });
    expect(cfg.profiles.map((p) => p.schedulerName)).toEqual(["", "custom-scheduler"]);
    expect(cfg.profiles[1]!.plugins).toEqual({
      multiPoint: { enabled: expectedMultiPoint },
      bind: { enabled: [{ name: "BarPlugin" }], disabled: [{ name: "DefaultBinder" }] },
    });
  });
});

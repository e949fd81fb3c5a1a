import { describe, expect, it } from "vitest";
import { aggregateMessage } from "../../../api/field-errors.ts";
import { defaultConfiguration, setDefaults } from "./defaults.ts";
import type { KubeSchedulerConfiguration, KubeSchedulerConfigurationV1 } from "./types.ts";
import {
  ConfigValidationError,
  validateKubeSchedulerConfiguration,
  validateKubeSchedulerConfigurationErrors,
} from "./validation.ts";
import { validateNodeResourcesFitArgs } from "./validation-pluginargs.ts";

/** The aggregate message validation gives for the configuration, or "" if it is valid. */
function message(cfg: KubeSchedulerConfiguration): string {
  const errs = validateKubeSchedulerConfigurationErrors(cfg);
  return errs.length ? aggregateMessage(errs) : "";
}
const fromFile = (v1: KubeSchedulerConfigurationV1) => message(setDefaults(v1));
const withArgs = (name: string, args: Record<string, unknown>) =>
  fromFile({ profiles: [{ pluginConfig: [{ name, args }] }] });

describe("validateKubeSchedulerConfiguration: the configuration's own fields", () => {
  it("the defaults are valid", () => {
    expect(() => validateKubeSchedulerConfiguration(defaultConfiguration())).not.toThrow();
  });

  it("parallelism must be positive", () => {
    expect(fromFile({ parallelism: -1 })).toBe(
      "parallelism: Invalid value: -1: should be an integer value greater than zero",
    );
  });

  it("percentageOfNodesToScore is 0–100, globally and per profile", () => {
    expect(fromFile({ percentageOfNodesToScore: 101 })).toBe(
      "percentageOfNodesToScore: Invalid value: 101: not in valid range [0-100]",
    );
    expect(fromFile({ profiles: [{ percentageOfNodesToScore: -5 }] })).toBe(
      "profiles[0].percentageOfNodesToScore: Invalid value: -5: not in valid range [0-100]",
    );
  });

  it("backoff: initial > 0, max ≥ initial", () => {
    expect(fromFile({ podInitialBackoffSeconds: -1, podMaxBackoffSeconds: 5 })).toBe(
      "podInitialBackoffSeconds: Invalid value: -1: must be greater than 0",
    );
    expect(fromFile({ podInitialBackoffSeconds: 20 })).toBe(
      "podMaxBackoffSeconds: Invalid value: 10: must be greater than or equal to PodInitialBackoffSeconds",
    );
  });

  it("burst must be non-negative (qps is not checked upstream)", () => {
    expect(fromFile({ clientConnection: { burst: -1, qps: -3 } })).toBe(
      "clientConnection.burst: Invalid value: -1: must be non-negative",
    );
  });

  it("leader election durations, printed as Go durations", () => {
    const cfg = defaultConfiguration();
    cfg.leaderElection.leaseDurationMs = 5_000;
    expect(message(cfg)).toBe(
      "leaderElection.leaseDuration: Invalid value: 10s: LeaseDuration must be greater than RenewDeadline",
    );
    cfg.leaderElection.retryPeriodMs = -1_500;
    cfg.leaderElection.leaseDurationMs = 90_000;
    expect(message(cfg)).toBe("leaderElection.retryPeriod: Invalid value: -1.5s: must be greater than zero");
  });

  it("leader election is only checked when electing", () => {
    const cfg = defaultConfiguration();
    cfg.leaderElection.leaseDurationMs = 1;
    cfg.leaderElection.leaderElect = false;
    expect(message(cfg)).toBe("");
  });

  it('the lock must be "leases"', () => {
    expect(fromFile({ leaderElection: { resourceLock: "endpoints" } })).toBe(
      'leaderElection.resourceLock: Invalid value: "endpoints": resourceLock value must be "leases"',
    );
  });

  it("extenders: a prioritizing extender needs a weight, one binder at most", () => {
    expect(
      fromFile({
        extenders: [
          { urlPrefix: "http://a", prioritizeVerb: "prioritize", bindVerb: "bind" },
          { urlPrefix: "http://b", bindVerb: "bind", weight: 1 },
        ],
      }),
    ).toBe(
      "[extenders[0].weight: Invalid value: 0: must have a positive weight applied to it, " +
        'extenders: Invalid value: "found 2 extenders implementing bind": only one extender can implement bind]',
    );
  });
});

describe("validateKubeSchedulerConfiguration: profiles", () => {
  it("with two profiles each needs a name", () => {
    expect(fromFile({ profiles: [{ schedulerName: "a" }, {}] })).toBe(
      "profiles[1].schedulerName: Required value",
    );
  });

  it("two profiles with one name: Duplicate value, pointing at the first", () => {
    expect(fromFile({ profiles: [{ schedulerName: "a" }, { schedulerName: "a" }] })).toBe(
      "profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName",
    );
  });

  it("profiles with different queueSort sets: must be the same for all profiles", () => {
    expect(
      fromFile({
        profiles: [
          { schedulerName: "a" },
          {
            schedulerName: "b",
            plugins: { queueSort: { enabled: [{ name: "MySort" }], disabled: [{ name: "*" }] } },
          },
        ],
      }),
    ).toBe(
      'profiles[1].plugins.queueSort: Invalid value: config.PluginSet{Enabled:[]config.Plugin{config.Plugin{Name:"MySort", Weight:0}}, ' +
        'Disabled:[]config.Plugin{config.Plugin{Name:"*", Weight:0}}}: must be the same for all profiles',
    );
  });

  it("only one queue sort plugin", () => {
    expect(
      fromFile({ profiles: [{ plugins: { queueSort: { enabled: [{ name: "A" }, { name: "B" }] } } }] }),
    ).toBe(
      "profiles[0].plugins.queueSort.Enabled: Invalid value: 2: only one queue sort plugin can be enabled",
    );
  });

  it("one plugin configured twice", () => {
    expect(
      fromFile({
        profiles: [
          {
            pluginConfig: [
              { name: "Foo", args: {} },
              { name: "Foo", args: {} },
            ],
          },
        ],
      }),
    ).toBe('profiles[0].pluginConfig[1]: Duplicate value: "Foo"');
  });

  it("several problems come back as one aggregate, in upstream's order", () => {
    const err = (() => {
      try {
        validateKubeSchedulerConfiguration(
          setDefaults({ parallelism: 0, podInitialBackoffSeconds: 0, profiles: [{}, {}] }),
        );
      } catch (e) {
        return e as ConfigValidationError;
      }
    })();
    expect(err).toBeInstanceOf(ConfigValidationError);
    expect(err!.errors).toHaveLength(5);
    expect(err!.message).toBe(
      "[parallelism: Invalid value: 0: should be an integer value greater than zero, " +
        "profiles[0].schedulerName: Required value, profiles[1].schedulerName: Required value, " +
        "profiles[1].schedulerName: Duplicate value: profiles[0].schedulerName, " +
        "podInitialBackoffSeconds: Invalid value: 0: must be greater than 0]",
    );
  });
});

describe("plugin args (validation_pluginargs.go)", () => {
  it("DefaultPreemption: ranges, and not both zero", () => {
    expect(
      withArgs("DefaultPreemption", { minCandidateNodesPercentage: 101, minCandidateNodesAbsolute: -1 }),
    ).toBe(
      "[profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 101: not in valid range [0, 100], " +
        "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: -1: not in valid range [0, inf)]",
    );
    expect(
      withArgs("DefaultPreemption", { minCandidateNodesPercentage: 0, minCandidateNodesAbsolute: 0 }),
    ).toBe(
      "[profiles[0].pluginConfig[0].args.minCandidateNodesPercentage: Invalid value: 0: cannot be zero at the same time as minCandidateNodesAbsolute, " +
        "profiles[0].pluginConfig[0].args.minCandidateNodesAbsolute: Invalid value: 0: cannot be zero at the same time as minCandidateNodesPercentage]",
    );
  });

  it("InterPodAffinity: hardPodAffinityWeight 0–100", () => {
    expect(withArgs("InterPodAffinity", { hardPodAffinityWeight: 101 })).toBe(
      "profiles[0].pluginConfig[0].args.hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
    );
    expect(withArgs("InterPodAffinity", { hardPodAffinityWeight: 0 })).toBe("");
  });

  it("PodTopologySpread: defaultingType, maxSkew, topologyKey, whenUnsatisfiable, selector, repeats", () => {
    expect(withArgs("PodTopologySpread", { defaultingType: "Auto" })).toBe(
      'profiles[0].pluginConfig[0].args.defaultingType: Unsupported value: "Auto": supported values: "System", "List"',
    );
    const c = { maxSkew: 1, topologyKey: "zone", whenUnsatisfiable: "ScheduleAnyway" };
    expect(withArgs("PodTopologySpread", { defaultConstraints: [c] })).toBe(
      'profiles[0].pluginConfig[0].args.defaultingType: Invalid value: "System": when .defaultConstraints are not empty',
    );
    const p = "profiles[0].pluginConfig[0].args.defaultConstraints";
    expect(
      withArgs("PodTopologySpread", {
        defaultingType: "List",
        defaultConstraints: [
          c,
          { maxSkew: 0, topologyKey: "", whenUnsatisfiable: "Never", labelSelector: {} },
          { ...c, maxSkew: 2 },
        ],
      }),
    ).toBe(
      `[${p}[1].maxSkew: Invalid value: 0: not in valid range (0, inf), ${p}[1].topologyKey: Required value: can not be empty, ` +
        `${p}[1].whenUnsatisfiable: Unsupported value: "Never": supported values: "DoNotSchedule", "ScheduleAnyway", ` +
        `${p}[1].labelSelector: Forbidden: constraint must not define a selector, as they deduced for each pod, ` +
        `${p}[2]: Duplicate value: "{zone, ScheduleAnyway}"]`,
    );
  });

  it("NodeResourcesBalancedAllocation: every weight 1, no resource twice", () => {
    expect(
      withArgs("NodeResourcesBalancedAllocation", {
        resources: [
          { name: "cpu", weight: 2 },
          { name: "cpu", weight: 1 },
        ],
      }),
    ).toBe(
      "[profiles[0].pluginConfig[0].args.resources[0].weight: Invalid value: 2: must be 1, " +
        'profiles[0].pluginConfig[0].args.resources[1].name: Duplicate value: "cpu"]',
    );
  });

  it("NodeResourcesFit args are not checked by configuration validation (upstream's table says NodeResourcesFitArgs)", () => {
    expect(withArgs("NodeResourcesFit", { scoringStrategy: { type: "Nope" } })).toBe("");
  });

  it("NodeResourcesFit: strategy type, resource weights, RequestedToCapacityRatio shape", () => {
    const at = (args: unknown) => aggregateMessage(validateNodeResourcesFitArgs("", args as never));
    expect(at({ scoringStrategy: { type: "Nope", resources: [{ name: "cpu", weight: 101 }] } })).toBe(
      '[scoringStrategy.type: Unsupported value: "Nope": supported values: "LeastAllocated", "MostAllocated", "RequestedToCapacityRatio", ' +
        "scoringStrategy.resources[0].weight: Invalid value: 101: resource weight of cpu not in valid range (0, 100]]",
    );
    expect(at({ scoringStrategy: { type: "RequestedToCapacityRatio", resources: [] } })).toBe(
      "scoringStrategy.requestedToCapacityRatio: Required value: must be specified when type is RequestedToCapacityRatio",
    );
    expect(
      at({
        scoringStrategy: {
          type: "RequestedToCapacityRatio",
          resources: [],
          requestedToCapacityRatio: {
            shape: [
              { utilization: 50, score: 5 },
              { utilization: 40, score: 11 },
              { utilization: 101, score: 0 },
            ],
          },
        },
      }),
    ).toBe(
      "[scoringStrategy.requestedToCapacityRatio.shape[1].utilization: Invalid value: 40: values must be sorted in increasing order, " +
        "scoringStrategy.requestedToCapacityRatio.shape[1].score: Invalid value: 11: not in valid range [0, 10], " +
        "scoringStrategy.requestedToCapacityRatio.shape[2].utilization: Invalid value: 101: not in valid range [0, 100]]",
    );
    expect(
      at({
        scoringStrategy: {
          type: "RequestedToCapacityRatio",
          resources: [],
          requestedToCapacityRatio: { shape: [] },
        },
      }),
    ).toBe(
      "scoringStrategy.requestedToCapacityRatio.shape: Required value: at least one point must be specified",
    );
    expect(
      at({
        scoringStrategy: { type: "LeastAllocated", resources: [], requestedToCapacityRatio: { shape: [] } },
      }),
    ).toBe(
      "scoringStrategy.requestedToCapacityRatio: Forbidden: must be nil when type is not RequestedToCapacityRatio",
    );
    expect(
      at({
        ignoredResourceGroups: ["example.com/x"],
        scoringStrategy: { type: "MostAllocated", resources: [] },
      }),
    ).toContain(
      "ignoredResourceGroups[0]: Invalid value: \"example.com/x\": resource group name can't contain '/'",
    );
  });
});

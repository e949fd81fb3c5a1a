/**
 * Plugin args — the `pluginConfig[].args` of the in-tree plugins, with upstream's field names,
 * and the defaults each gets when a profile leaves it out.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/types_pluginargs.go (DefaultPreemptionArgs, InterPodAffinityArgs, NodeResourcesFitArgs, PodTopologySpreadArgs, NodeResourcesBalancedAllocationArgs, NodeAffinityArgs, ScoringStrategy, ResourceSpec, UtilizationShapePoint)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/v1/defaults.go (SetDefaults_DefaultPreemptionArgs, SetDefaults_InterPodAffinityArgs, SetDefaults_NodeResourcesFitArgs, SetDefaults_PodTopologySpreadArgs, SetDefaults_NodeResourcesBalancedAllocationArgs)
 * @chapter 05-scheduler
 *
 * Solves: a plugin's knobs (which resources LeastAllocated weighs, how many candidates
 * preemption looks at) are data in the configuration file, not code; the file names a plugin's
 * args by the plugin's name, and the kind is `<plugin name>Args`.
 *
 * Invariants:
 * - `argsKinds` lists the plugins that have an args kind; a plugin not in it (PrioritySort,
 *   NodeName…) takes no args, and its pluginConfig entry is kept as given, undecoded — as upstream
 *   keeps an out-of-tree plugin's args as runtime.Unknown.
 * - defaulting only fills what is absent (or a zero weight): it never overrides a set value.
 * - VolumeBindingArgs is not here: this scheduler has no volume plugins.
 */

import type { Affinity } from "../../../api/core.ts";
import type { LabelSelector } from "../../../api/labels.ts";

// #region args-types
export interface ResourceSpec {
  name: string;
  /** 0 or absent becomes 1. */
  weight: number;
}

export interface UtilizationShapePoint {
  /** 0–100. */
  utilization: number;
  /** 0–10 (MaxCustomPriorityScore). */
  score: number;
}

export type ScoringStrategyType = "LeastAllocated" | "MostAllocated" | "RequestedToCapacityRatio";

export interface ScoringStrategy {
  type: ScoringStrategyType;
  resources: ResourceSpec[];
  requestedToCapacityRatio?: { shape: UtilizationShapePoint[] };
}

export interface NodeResourcesFitArgs {
  ignoredResources?: string[];
  ignoredResourceGroups?: string[];
  scoringStrategy: ScoringStrategy;
}

export interface NodeResourcesBalancedAllocationArgs {
  resources: ResourceSpec[];
}

export interface DefaultPreemptionArgs {
  /** 0–100: the share of nodes dry-run for victims, before the absolute floor. */
  minCandidateNodesPercentage: number;
  minCandidateNodesAbsolute: number;
}

export interface InterPodAffinityArgs {
  /** 0–100: the score a required affinity term of an existing pod contributes. */
  hardPodAffinityWeight: number;
  ignorePreferredTermsOfExistingPods?: boolean;
}

/** A pod's topologySpreadConstraints entry, as PodTopologySpreadArgs' defaults carry them. */
export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: "DoNotSchedule" | "ScheduleAnyway";
  labelSelector?: LabelSelector;
  minDomains?: number;
  nodeAffinityPolicy?: "Honor" | "Ignore";
  nodeTaintsPolicy?: "Honor" | "Ignore";
  matchLabelKeys?: string[];
}

export type PodTopologySpreadConstraintsDefaulting = "System" | "List";

export interface PodTopologySpreadArgs {
  defaultConstraints?: TopologySpreadConstraint[];
  defaultingType: PodTopologySpreadConstraintsDefaulting;
}

export interface NodeAffinityArgs {
  addedAffinity?: Affinity["nodeAffinity"];
}

export interface PluginArgsByName {
  DefaultPreemption: DefaultPreemptionArgs;
  InterPodAffinity: InterPodAffinityArgs;
  NodeAffinity: NodeAffinityArgs;
  NodeResourcesBalancedAllocation: NodeResourcesBalancedAllocationArgs;
  NodeResourcesFit: NodeResourcesFitArgs;
  PodTopologySpread: PodTopologySpreadArgs;
}
// #endregion args-types

// #region args-defaults
const defaultResourceSpec = (): ResourceSpec[] => [
  { name: "cpu", weight: 1 },
  { name: "memory", weight: 1 },
];

/** A plugin's args with upstream's defaults applied to what the file gave (a fresh object). */
type Defaulter = (given: Record<string, unknown>) => Record<string, unknown>;

const weightsDefaulted = (rs: ResourceSpec[]): ResourceSpec[] =>
  rs.map((r) => ({ ...r, weight: r.weight || 1 }));

export const argsDefaulters: Record<keyof PluginArgsByName, Defaulter> = {
  DefaultPreemption: (a) => ({
    ...a,
    minCandidateNodesPercentage: a.minCandidateNodesPercentage ?? 10,
    minCandidateNodesAbsolute: a.minCandidateNodesAbsolute ?? 100,
  }),
  InterPodAffinity: (a) => ({ ...a, hardPodAffinityWeight: a.hardPodAffinityWeight ?? 1 }),
  NodeAffinity: (a) => ({ ...a }),
  NodeResourcesBalancedAllocation: (a) => {
    const given = (a.resources as ResourceSpec[] | undefined) ?? [];
    return { ...a, resources: given.length === 0 ? defaultResourceSpec() : weightsDefaulted(given) };
  },
  NodeResourcesFit: (a) => {
    // An absent strategy is LeastAllocated over cpu and memory; a strategy without resources
    // gets those two; a resource without a weight gets 1.
    const s = (a.scoringStrategy as Partial<ScoringStrategy> | undefined) ?? { type: "LeastAllocated" };
    const resources = s.resources?.length ? weightsDefaulted(s.resources) : defaultResourceSpec();
    return { ...a, scoringStrategy: { ...s, resources } };
  },
  PodTopologySpread: (a) => ({ ...a, defaultingType: a.defaultingType || "System" }),
};

/** The plugins with an args kind (`<name>Args` in kubescheduler.config.k8s.io/v1). */
export const argsKinds: ReadonlySet<string> = new Set(Object.keys(argsDefaulters));
// #endregion args-defaults

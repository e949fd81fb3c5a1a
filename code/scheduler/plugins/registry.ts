/**
 * In-tree registry and default profile — the plugins this scheduler ships, by upstream's names,
 * and the default profile's multiPoint list with upstream's default Score weights.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/registry.go (NewInTreeRegistry)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/v1/default_plugins.go (getDefaultPlugins)
 * @chapter 05-scheduler
 *
 * Solves: a profile names plugins as strings (in KubeSchedulerConfiguration); the registry
 * turns a name into a plugin built with its args and the framework handle.
 *
 * Invariants:
 * - the default list keeps upstream's order (it is the Filter order, and the first failing
 *   Filter names the reason) and Score weights: TaintToleration 3, NodeAffinity 2,
 *   NodeResourcesFit 1, PodTopologySpread 2, InterPodAffinity 2,
 *   NodeResourcesBalancedAllocation 1, ImageLocality 1 (DefaultPreemption is PostFilter only,
 *   between InterPodAffinity and BalancedAllocation); plugins not built (the volume plugins:
 *   VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone) are absent, not stubbed.
 */
import type { NodeAffinityArgs } from "../apis/config/types-pluginargs.ts";
import type { PluginFactory, PluginRef, ProfileConfig, Registry } from "../framework/runtime/registry.ts";
import { type BindFunc, DefaultBinder, Name as DefaultBinderName } from "./defaultbinder/default-binder.ts";
import {
  DefaultPreemption,
  type DefaultPreemptionArgsInput,
  Name as DefaultPreemptionName,
  type DefaultPreemptionOptions,
} from "./defaultpreemption/default-preemption.ts";
import { ImageLocality, Name as ImageLocalityName } from "./imagelocality/image-locality.ts";
import {
  InterPodAffinity,
  type InterPodAffinityArgsInput,
  Name as InterPodAffinityName,
} from "./interpodaffinity/plugin.ts";
import { NodeAffinity, Name as NodeAffinityName } from "./nodeaffinity/node-affinity.ts";
import { NodeName, Name as NodeNameName } from "./nodename/node-name.ts";
import { NodePorts, Name as NodePortsName } from "./nodeports/node-ports.ts";
import { BalancedAllocation, BalancedAllocationName } from "./noderesources/balanced-allocation.ts";
import { Fit, type FitArgs, Name as FitName } from "./noderesources/fit.ts";
import { NodeUnschedulable, Name as NodeUnschedulableName } from "./nodeunschedulable/node-unschedulable.ts";
import type { PodTopologySpreadArgsInput } from "./podtopologyspread/args.ts";
import { PodTopologySpread, Name as PodTopologySpreadName } from "./podtopologyspread/plugin.ts";
import { PrioritySort, Name as PrioritySortName } from "./queuesort/priority-sort.ts";
import { SchedulingGates, Name as SchedulingGatesName } from "./schedulinggates/scheduling-gates.ts";
import { TaintToleration, Name as TaintTolerationName } from "./tainttoleration/taint-toleration.ts";

export const DefaultSchedulerName = "default-scheduler";

// #region registry
export function newInTreeRegistry(bindFn: BindFunc, preemption: DefaultPreemptionOptions = {}): Registry {
  return new Map<string, PluginFactory>([
    [SchedulingGatesName, () => new SchedulingGates()],
    [PrioritySortName, () => new PrioritySort()],
    [NodeUnschedulableName, () => new NodeUnschedulable()],
    [NodeNameName, () => new NodeName()],
    [TaintTolerationName, () => new TaintToleration()],
    [NodeAffinityName, (args) => new NodeAffinity((args ?? {}) as Partial<NodeAffinityArgs>)],
    [NodePortsName, () => new NodePorts()],
    [FitName, (args) => new Fit((args ?? {}) as FitArgs)],
    [
      PodTopologySpreadName,
      (args, h) => new PodTopologySpread(args as PodTopologySpreadArgsInput | undefined, h),
    ],
    [
      InterPodAffinityName,
      (args, h) => new InterPodAffinity(args as InterPodAffinityArgsInput | undefined, h),
    ],
    [BalancedAllocationName, () => new BalancedAllocation()],
    [ImageLocalityName, (_args, h) => new ImageLocality(h)],
    [DefaultBinderName, () => new DefaultBinder(bindFn)],
    // Preemption (issue 14): PostFilter only; its options carry the listers and API callbacks.
    [
      DefaultPreemptionName,
      (args, fh) => new DefaultPreemption(args as DefaultPreemptionArgsInput | undefined, fh, preemption),
    ],
  ]);
}

export const defaultMultiPoint: PluginRef[] = [
  { name: SchedulingGatesName },
  { name: PrioritySortName },
  { name: NodeUnschedulableName },
  { name: NodeNameName },
  { name: TaintTolerationName, weight: 3 },
  { name: NodeAffinityName, weight: 2 },
  { name: NodePortsName },
  { name: FitName, weight: 1 },
  // (upstream: VolumeRestrictions, NodeVolumeLimits, VolumeBinding, VolumeZone — not built)
  { name: PodTopologySpreadName, weight: 2 },
  { name: InterPodAffinityName, weight: 2 },
  { name: DefaultPreemptionName },
  { name: BalancedAllocationName, weight: 1 },
  { name: ImageLocalityName, weight: 1 },
  { name: DefaultBinderName },
];
// #endregion registry

/** The default profile; `multiPoint` weights carry over to Score. */
export function defaultProfile(schedulerName = DefaultSchedulerName): ProfileConfig {
  return { schedulerName, plugins: { multiPoint: { enabled: defaultMultiPoint } } };
}

/**
 * NodeResourcesFit — Filter: the pod's requests must fit in what the node's pods leave of its
 * allocatable ("Insufficient cpu", "Too many pods"); Score: the configured strategy
 * (LeastAllocated by default, MostAllocated, RequestedToCapacityRatio).
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/fit.go (Fit, NewFit, nodeResourceStrategyTypeMap, PreFilter, Filter, fitsRequest, InsufficientResource, computePodResourceRequest, PreScore, Score, EventsToRegister)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/types_pluginargs.go (NodeResourcesFitArgs, ScoringStrategy, ScoringStrategyType, RequestedToCapacityRatioParam)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/v1/defaults.go (SetDefaults_NodeResourcesFitArgs)
 * @chapter 05-scheduler
 *
 * Solves: a node must never be promised more than it has. The sums come from NodeInfo (which
 * counts assumed pods too), so two pods placed in consecutive cycles cannot both take the
 * last core.
 *
 * Invariants:
 * - the pod count is checked first, always; then CPU, memory, ephemeral storage and each
 *   requested scalar resource — each only when the pod requests it (> 0).
 * - every shortfall is a reason; the code is Unschedulable (evicting pods may help), or
 *   UnschedulableAndUnresolvable when some request exceeds the node's whole allocatable.
 * - Filter uses real requests (`requested`), Score the non-zero defaults (`nonZeroRequested`).
 * - extended resources named in `ignoredResources`, or whose group (the part before "/") is in
 *   `ignoredResourceGroups`, are not checked by Filter (a device plugin outside the scheduler
 *   accounts for them).
 * - args are defaulted as upstream: no scoringStrategy is LeastAllocated over cpu and memory
 *   (weight 1 each); no resources is that default set; a weight of 0 is 1.
 */
import type { Pod } from "../../../api/core.ts";
import type {
  NodeResourcesFitArgs,
  ResourceSpec,
  ScoringStrategy,
  UtilizationShapePoint,
} from "../../apis/config/types-pluginargs.ts";
import type { CycleState, StateData } from "../../framework/cycle-state.ts";
import { NotFoundError } from "../../framework/cycle-state.ts";
import { ActionType, type ClusterEventWithHint } from "../../framework/events.ts";
import type {
  EnqueueExtensions,
  FilterPlugin,
  PreFilterPlugin,
  PreFilterResult,
  PreScorePlugin,
  ScoreExtensions,
  ScorePlugin,
} from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import { asStatus, Code, newStatus, type Status } from "../../framework/status.ts";
import { podRequests, type Resource } from "../../framework/types.ts";
import { leastResourceScorer } from "./least-allocated.ts";
import { mostResourceScorer } from "./most-allocated.ts";
import { MaxCustomPriorityScore, requestedToCapacityRatioScorer } from "./requested-to-capacity-ratio.ts";
import { defaultResourceSpec, ResourceAllocationScorer, type Scorer } from "./resource-allocation.ts";

export const Name = "NodeResourcesFit";
const preFilterStateKey = `PreFilter${Name}`;
const preScoreStateKey = `PreScore${Name}`;

export interface InsufficientResource {
  resourceName: string;
  reason: string;
  requested: number;
  used: number;
  capacity: number;
  /** The request exceeds the node's whole allocatable: no eviction can help. */
  unresolvable: boolean;
}

class ResourceState implements StateData {
  constructor(readonly value: Resource) {}
  clone(): StateData {
    return this;
  }
}
class RequestsState implements StateData {
  constructor(readonly podRequests: number[]) {}
  clone(): StateData {
    return this;
  }
}

// #region fits-request
export function fitsRequest(
  podRequest: Resource,
  nodeInfo: NodeInfo,
  ignoredExtendedResources: ReadonlySet<string> = new Set(),
  ignoredResourceGroups: ReadonlySet<string> = new Set(),
): InsufficientResource[] {
  const out: InsufficientResource[] = [];
  const alloc = nodeInfo.allocatable;
  const used = nodeInfo.requested;
  const allowed = alloc.allowedPodNumber;
  if (nodeInfo.pods.length + 1 > allowed) {
    out.push({
      resourceName: "pods",
      reason: "Too many pods",
      requested: 1,
      used: nodeInfo.pods.length,
      capacity: allowed,
      unresolvable: false,
    });
  }
  if (
    podRequest.milliCPU === 0 &&
    podRequest.memory === 0 &&
    podRequest.ephemeralStorage === 0 &&
    podRequest.scalarResources.size === 0
  ) {
    return out;
  }
  const check = (name: string, req: number, u: number, cap: number) => {
    if (req > 0 && req > cap - u) {
      out.push({
        resourceName: name,
        reason: `Insufficient ${name}`,
        requested: req,
        used: u,
        capacity: cap,
        unresolvable: req > cap,
      });
    }
  };
  check("cpu", podRequest.milliCPU, used.milliCPU, alloc.milliCPU);
  check("memory", podRequest.memory, used.memory, alloc.memory);
  check("ephemeral-storage", podRequest.ephemeralStorage, used.ephemeralStorage, alloc.ephemeralStorage);
  for (const [name, req] of podRequest.scalarResources) {
    if (
      isExtendedResourceName(name) &&
      (ignoredExtendedResources.has(name) || ignoredResourceGroups.has(name.split("/")[0]))
    ) {
      continue;
    }
    check(name, req, used.scalarResources.get(name) ?? 0, alloc.scalarResources.get(name) ?? 0);
  }
  return out;
}

/** IsExtendedResourceName: a vendor-domain name (`example.com/gpu`), not `kubernetes.io/…` or `requests.…`. */
function isExtendedResourceName(name: string): boolean {
  const native = !name.includes("/") || name.includes("kubernetes.io/");
  return !native && !name.startsWith("requests.");
}
// #endregion fits-request

// #region scoring-strategy
/**
 * FitArgs: NodeResourcesFitArgs (apis/config) as a caller may give them — a simulation or a
 * test passes none or part; the plugin defaults the rest as v1's defaulting does.
 */
export type FitArgs = Omit<Partial<NodeResourcesFitArgs>, "scoringStrategy"> & {
  scoringStrategy?: Omit<ScoringStrategy, "resources"> & { resources?: ResourceSpec[] };
};

/** SetDefaults_NodeResourcesFitArgs: LeastAllocated over cpu and memory; weight 0 means 1. */
export function defaultNodeResourcesFitArgs(args: FitArgs = {}): NodeResourcesFitArgs {
  const given = args.scoringStrategy ?? { type: "LeastAllocated" };
  const resources = given.resources?.length ? given.resources : defaultResourceSpec;
  const scoringStrategy: ScoringStrategy = {
    ...given,
    resources: resources.map((r) => ({ name: r.name, weight: r.weight || 1 })),
  };
  return { ...args, scoringStrategy };
}

/** validateFunctionShape, in part: the curve needs points, in increasing utilization, in range. */
function shapeError(shape: readonly UtilizationShapePoint[] | undefined): string | undefined {
  if (!shape || shape.length === 0) return "at least one point must be specified";
  for (const [i, p] of shape.entries()) {
    if (i > 0 && shape[i - 1].utilization >= p.utilization) {
      return "utilization values must be sorted in increasing order";
    }
    if (p.utilization < 0 || p.utilization > 100)
      return `utilization ${p.utilization} not in valid range [0, 100]`;
    if (p.score < 0 || p.score > MaxCustomPriorityScore) {
      return `score ${p.score} not in valid range [0, ${MaxCustomPriorityScore}]`;
    }
  }
  return undefined;
}

/** nodeResourceStrategyTypeMap: the scorer of each strategy (all count the non-zero defaults). */
function strategyScorer(strategy: ScoringStrategy): Scorer {
  switch (strategy.type) {
    case "LeastAllocated":
      return leastResourceScorer;
    case "MostAllocated":
      return mostResourceScorer;
    case "RequestedToCapacityRatio": {
      const shape = strategy.requestedToCapacityRatio?.shape;
      const err = shapeError(shape);
      if (err) throw new Error(`scoringStrategy.requestedToCapacityRatio.shape: ${err}`);
      return requestedToCapacityRatioScorer(shape!);
    }
    default:
      throw new Error(`scoring strategy ${String(strategy.type)} is not supported`);
  }
}
// #endregion scoring-strategy

export class Fit implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions {
  private readonly scorer: ResourceAllocationScorer;
  private readonly ignoredResources: Set<string>;
  private readonly ignoredResourceGroups: Set<string>;

  /** NewFit: defaults the args, then refuses an unknown strategy or a bad shape (the profile fails). */
  constructor(rawArgs: FitArgs = {}) {
    const args = defaultNodeResourcesFitArgs(rawArgs);
    const strategy = args.scoringStrategy;
    this.scorer = new ResourceAllocationScorer(
      strategy.type,
      strategyScorer(strategy),
      false,
      strategy.resources,
    );
    this.ignoredResources = new Set(args.ignoredResources ?? []);
    this.ignoredResourceGroups = new Set(args.ignoredResourceGroups ?? []);
  }

  name(): string {
    return Name;
  }

  // #region filter
  preFilter(state: CycleState, pod: Pod): [PreFilterResult | undefined, Status | undefined] {
    state.write(preFilterStateKey, new ResourceState(podRequests(pod)));
    return [undefined, undefined];
  }

  filter(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const s = state.read(preFilterStateKey);
    if (s instanceof NotFoundError) {
      return asStatus(new Error(`error reading "${preFilterStateKey}" from cycleState: ${s.message}`));
    }
    const insufficient = fitsRequest(
      (s as ResourceState).value,
      nodeInfo,
      this.ignoredResources,
      this.ignoredResourceGroups,
    );
    if (insufficient.length === 0) return undefined;
    const code = insufficient.some((r) => r.unresolvable)
      ? Code.UnschedulableAndUnresolvable
      : Code.Unschedulable;
    return newStatus(code, ...insufficient.map((r) => r.reason));
  }
  // #endregion filter

  // #region score
  preScore(state: CycleState, pod: Pod, _nodes: NodeInfo[]): Status | undefined {
    state.write(preScoreStateKey, new RequestsState(this.scorer.podRequestList(pod)));
    return undefined;
  }

  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined] {
    const s = state.read(preScoreStateKey);
    const reqs =
      s instanceof NotFoundError ? this.scorer.podRequestList(pod) : (s as RequestsState).podRequests;
    return [this.scorer.score(nodeInfo, reqs), undefined];
  }

  scoreExtensions(): ScoreExtensions | undefined {
    return undefined;
  }
  // #endregion score

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      { event: { resource: "Pod", actionType: ActionType.Delete | ActionType.UpdatePodScaleDown } },
      { event: { resource: "Node", actionType: ActionType.Add | ActionType.UpdateNodeAllocatable } },
    ];
  }
}

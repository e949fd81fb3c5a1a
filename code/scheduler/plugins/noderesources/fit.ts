/**
 * NodeResourcesFit — Filter: the pod's requests must fit in what the node's pods leave of its
 * allocatable ("Insufficient cpu", "Too many pods"); Score: the configured strategy
 * (LeastAllocated by default).
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/fit.go (Fit, PreFilter, Filter, fitsRequest, InsufficientResource, computePodResourceRequest, PreScore, Score, EventsToRegister)
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
 */
import type { Pod } from "../../../api/core.ts";
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
import { defaultResourceSpec, ResourceAllocationScorer, type ResourceSpec } from "./resource-allocation.ts";

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
export function fitsRequest(podRequest: Resource, nodeInfo: NodeInfo): InsufficientResource[] {
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
    check(name, req, used.scalarResources.get(name) ?? 0, alloc.scalarResources.get(name) ?? 0);
  }
  return out;
}
// #endregion fits-request

export interface FitArgs {
  /** scoringStrategy.resources; the strategy itself is LeastAllocated (the default) for now. */
  resources?: ResourceSpec[];
}

export class Fit implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, EnqueueExtensions {
  private readonly scorer: ResourceAllocationScorer;
  constructor(args: FitArgs = {}) {
    this.scorer = new ResourceAllocationScorer(
      "LeastAllocated",
      leastResourceScorer,
      false,
      args.resources ?? defaultResourceSpec,
    );
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
    const insufficient = fitsRequest((s as ResourceState).value, nodeInfo);
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

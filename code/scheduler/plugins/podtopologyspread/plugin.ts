/**
 * PodTopologySpread — the plugin: spread a pod's group evenly over topology domains (zones,
 * hosts), hard at Filter (DoNotSchedule) and soft at Score (ScheduleAnyway); default
 * constraints for pods that declare none; the events after which a rejected pod may fit.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/plugin.go (PodTopologySpread, New, setListers, EventsToRegister, involvedInTopologySpreading, hasConstraintWithNodeTaintsPolicyHonor, isSchedulableAfterPodChange, getConstraints, isSchedulableAfterNodeChange, checkTopologyKeyLabelsChanged, ErrReasonConstraintsNotMatch, ErrReasonNodeLabelNotMatch)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/filtering.go (PreFilter, Filter, PreFilterExtensions, AddPod, RemovePod, getPreFilterState)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/podtopologyspread/scoring.go (PreScore, Score, NormalizeScore, ScoreExtensions, getPreScoreState)
 * @chapter 05-scheduler
 *
 * Solves: replicas packed into one zone die together with it. The plugin keeps, per
 * constraint, the difference between the fullest and the emptiest domain (the skew) within
 * maxSkew — refusing nodes that would break it, or only preferring nodes that keep it small.
 *
 * Invariants:
 * - a pod's own constraints replace the defaults entirely; the defaults (System: hostname
 *   maxSkew 3 and zone maxSkew 5, both ScheduleAnyway) need a selector from the pod's
 *   Services / controller, read from the informer factory's listers — none in a simulation.
 * - PreFilter / PreScore return Skip when the pod has no constraint of that kind.
 * - the state PreFilter writes is the only thing Filter, AddPod and RemovePod read; its
 *   clone is deep, so preemption's what-ifs never leak into the real cycle.
 */
import type {
  Node,
  Pod,
  TopologySpreadConstraint,
  UnsatisfiableConstraintAction,
} from "../../../api/core.ts";
import { selectorMatches } from "../../../api/labels.ts";
import type { GroupVersionResource } from "../../../api/schema.ts";
import type { SharedInformerFactory } from "../../../client/tools/cache/informer-factory.ts";
import { type CycleState, NotFoundError } from "../../framework/cycle-state.ts";
import { ActionType, type ClusterEventWithHint, QueueingHint } from "../../framework/events.ts";
import type {
  EnqueueExtensions,
  FilterPlugin,
  NodeScore,
  PreFilterExtensions,
  PreFilterPlugin,
  PreFilterResult,
  PreScorePlugin,
  ScoreExtensions,
  ScorePlugin,
} from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import type { Handle } from "../../framework/runtime/registry.ts";
import { asStatus, Code, newStatus, type Status } from "../../framework/status.ts";
import type { PodInfo } from "../../framework/types.ts";
import type { NamespacedLister, SpreadListers } from "../helper/spread.ts";
import {
  type PodTopologySpreadArgsInput,
  SystemDefaulting,
  systemDefaultConstraints,
  validateArgs,
  withDefaults,
} from "./args.ts";
import {
  buildDefaultConstraints,
  filterTopologySpreadConstraints,
  nodeLabelsMatchSpreadConstraints,
  podLabelsMatchSpreadConstraints,
  type SpreadConstraint,
} from "./common.ts";
import { calPreFilterState, filterNode, PreFilterState, updateWithPod } from "./filtering.ts";
import { calPreScoreState, normalizeScores, PreScoreState, scoreNode } from "./scoring.ts";

export { ErrReasonConstraintsNotMatch, ErrReasonNodeLabelNotMatch } from "./filtering.ts";

export const Name = "PodTopologySpread";
const preFilterStateKey = `PreFilter${Name}`;
const preScoreStateKey = `PreScore${Name}`;

const gvr = (group: string, resource: string): GroupVersionResource => ({ group, version: "v1", resource });

// #region new
export class PodTopologySpread
  implements
    PreFilterPlugin,
    PreFilterExtensions,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreExtensions,
    EnqueueExtensions
{
  /** True with the System defaults: then a node without a zone label still spreads by hostname. */
  readonly systemDefaulted: boolean;
  readonly defaultConstraints: TopologySpreadConstraint[];
  readonly listers: SpreadListers | undefined;

  constructor(
    args: PodTopologySpreadArgsInput | undefined,
    private readonly handle: Handle,
  ) {
    const a = withDefaults(args);
    const err = validateArgs(a);
    if (err) throw err;
    this.systemDefaulted = a.defaultingType === SystemDefaulting;
    this.defaultConstraints = this.systemDefaulted ? [...systemDefaultConstraints] : a.defaultConstraints;
    // Upstream fails New without an informer factory; a simulation has none, so it runs with
    // no listers — which gives every pod the empty default selector: no default spreading.
    const factory = this.defaultConstraints.length > 0 ? handle.sharedInformerFactory() : undefined;
    this.listers = factory ? listersFrom(factory) : undefined;
  }

  name(): string {
    return Name;
  }
  // #endregion new

  // #region get-constraints
  /** getConstraints: the pod's own constraints with `action`, or the defaults when it has none. */
  getConstraints(pod: Pod, action: UnsatisfiableConstraintAction): SpreadConstraint[] | Error {
    const own = pod.spec.topologySpreadConstraints ?? [];
    const hard = action === "DoNotSchedule" ? "hard" : "soft";
    if (own.length > 0) {
      const cs = filterTopologySpreadConstraints(own, pod.metadata.labels ?? {}, action);
      return cs instanceof Error
        ? new Error(`obtaining pod's ${hard} topology spread constraints: ${cs.message}`)
        : cs;
    }
    const cs = buildDefaultConstraints(this.defaultConstraints, pod, action, this.listers);
    return cs instanceof Error
      ? new Error(`setting default ${hard} topology spread constraints: ${cs.message}`)
      : cs;
  }
  // #endregion get-constraints

  // #region prefilter-filter
  preFilter(state: CycleState, pod: Pod): [PreFilterResult | undefined, Status | undefined] {
    const constraints = this.getConstraints(pod, "DoNotSchedule");
    if (constraints instanceof Error) {
      return [undefined, asStatus(new Error(`get constraints from pod: ${constraints.message}`))];
    }
    if (constraints.length === 0) return [undefined, newStatus(Code.Skip)];
    state.write(
      preFilterStateKey,
      calPreFilterState(constraints, pod, this.handle.snapshotSharedLister().list()),
    );
    return [undefined, undefined];
  }

  preFilterExtensions(): PreFilterExtensions {
    return this;
  }

  addPod(
    state: CycleState,
    podToSchedule: Pod,
    podInfoToAdd: PodInfo,
    nodeInfo: NodeInfo,
  ): Status | undefined {
    const s = readState(state, preFilterStateKey, PreFilterState);
    if (s instanceof Error) return asStatus(s);
    updateWithPod(s, podInfoToAdd.pod, podToSchedule, nodeInfo.node(), 1);
    return undefined;
  }

  removePod(
    state: CycleState,
    podToSchedule: Pod,
    podInfoToRemove: PodInfo,
    nodeInfo: NodeInfo,
  ): Status | undefined {
    const s = readState(state, preFilterStateKey, PreFilterState);
    if (s instanceof Error) return asStatus(s);
    updateWithPod(s, podInfoToRemove.pod, podToSchedule, nodeInfo.node(), -1);
    return undefined;
  }

  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const s = readState(state, preFilterStateKey, PreFilterState);
    if (s instanceof Error) return asStatus(s);
    return filterNode(s, pod, nodeInfo);
  }
  // #endregion prefilter-filter

  // #region prescore-score
  preScore(state: CycleState, pod: Pod, filteredNodes: NodeInfo[]): Status | undefined {
    const allNodes = this.handle.snapshotSharedLister().list();
    if (allNodes.length === 0) return newStatus(Code.Skip);
    const constraints = this.getConstraints(pod, "ScheduleAnyway");
    if (constraints instanceof Error) {
      return asStatus(new Error(`calculating preScoreState: ${constraints.message}`));
    }
    if (constraints.length === 0) return newStatus(Code.Skip);
    // Only the system defaults let a node lacking a key (no zone label) still be scored.
    const requireAllTopologies =
      (pod.spec.topologySpreadConstraints?.length ?? 0) > 0 || !this.systemDefaulted;
    state.write(
      preScoreStateKey,
      calPreScoreState(constraints, pod, filteredNodes, allNodes, requireAllTopologies),
    );
    return undefined;
  }

  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined] {
    const s = readState(state, preScoreStateKey, PreScoreState);
    if (s instanceof Error) return [0, asStatus(s)];
    return [scoreNode(s, pod, nodeInfo), undefined];
  }

  scoreExtensions(): ScoreExtensions {
    return this;
  }

  normalizeScore(state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    const s = readState(state, preScoreStateKey, PreScoreState);
    if (s instanceof Error) return asStatus(s);
    normalizeScores(s, scores);
    return undefined;
  }
  // #endregion prescore-score

  // #region events
  eventsToRegister(): ClusterEventWithHint[] {
    return [
      // A matching pod added, relabelled or deleted changes a domain's count; a new
      // toleration changes which nodes count under nodeTaintsPolicy: Honor.
      {
        event: {
          resource: "Pod",
          actionType:
            ActionType.Add | ActionType.UpdatePodLabel | ActionType.UpdatePodTolerations | ActionType.Delete,
        },
        queueingHintFn: (pod, oldObj, newObj) =>
          this.isSchedulableAfterPodChange(pod, oldObj as Pod, newObj as Pod),
      },
      // A node added, deleted, relabelled or retainted changes which domains exist.
      {
        event: {
          resource: "Node",
          actionType:
            ActionType.Add | ActionType.Delete | ActionType.UpdateNodeLabel | ActionType.UpdateNodeTaint,
        },
        queueingHintFn: (pod, oldObj, newObj) =>
          this.isSchedulableAfterNodeChange(pod, oldObj as Node | undefined, newObj as Node | undefined),
      },
    ];
  }

  isSchedulableAfterPodChange(
    pod: Pod,
    original: Pod | undefined,
    modified: Pod | undefined,
  ): QueueingHint | Error {
    if (
      (modified && !involvedInTopologySpreading(modified, pod)) ||
      (original && !involvedInTopologySpreading(original, pod))
    ) {
      return QueueingHint.QueueSkip;
    }
    const constraints = this.getConstraints(pod, "DoNotSchedule");
    if (constraints instanceof Error) return constraints;
    if (original && modified) {
      if (
        pod.metadata.uid === modified.metadata.uid &&
        JSON.stringify(modified.spec.tolerations ?? []) !== JSON.stringify(original.spec.tolerations ?? []) &&
        constraints.some((c) => c.nodeTaintsPolicy === "Honor")
      ) {
        return QueueingHint.Queue;
      }
      const before = original.metadata.labels ?? {};
      const after = modified.metadata.labels ?? {};
      // Only a change that flips some constraint's match can change a count.
      const flips = constraints.some(
        (c) => selectorMatches(c.selector, before) !== selectorMatches(c.selector, after),
      );
      return flips ? QueueingHint.Queue : QueueingHint.QueueSkip;
    }
    const changed = modified ?? original;
    return podLabelsMatchSpreadConstraints(constraints, changed?.metadata.labels)
      ? QueueingHint.Queue
      : QueueingHint.QueueSkip;
  }

  isSchedulableAfterNodeChange(
    pod: Pod,
    original: Node | undefined,
    modified: Node | undefined,
  ): QueueingHint | Error {
    const constraints = this.getConstraints(pod, "DoNotSchedule");
    if (constraints instanceof Error) return constraints;
    const origMatch = original
      ? nodeLabelsMatchSpreadConstraints(original.metadata.labels, constraints)
      : false;
    const modMatch = modified
      ? nodeLabelsMatchSpreadConstraints(modified.metadata.labels, constraints)
      : false;
    if (original && modified) {
      if (origMatch !== modMatch) return QueueingHint.Queue;
      const keyChanged = constraints.some(
        (c) => original.metadata.labels?.[c.topologyKey] !== modified.metadata.labels?.[c.topologyKey],
      );
      const taintsChanged =
        JSON.stringify(original.spec?.taints ?? []) !== JSON.stringify(modified.spec?.taints ?? []);
      return modMatch && (keyChanged || taintsChanged) ? QueueingHint.Queue : QueueingHint.QueueSkip;
    }
    // An added node must have the keys to be a new domain; a deleted one must have had them.
    return (modified ? modMatch : origMatch) ? QueueingHint.Queue : QueueingHint.QueueSkip;
  }
  // #endregion events
}

/** involvedInTopologySpreading: the pod itself, or an assigned pod of its namespace. */
function involvedInTopologySpreading(incoming: Pod, podWithSpreading: Pod): boolean {
  return (
    incoming.metadata.uid === podWithSpreading.metadata.uid ||
    (!!incoming.spec.nodeName && incoming.metadata.namespace === podWithSpreading.metadata.namespace)
  );
}

/**
 * setListers: Services and ReplicaSets from the factory. Upstream also lists
 * ReplicationControllers and StatefulSets; our API server does not serve them yet, and an
 * informer on a resource that is not served never syncs — the scheduler would never start.
 */
function listersFrom(f: SharedInformerFactory): SpreadListers {
  const l = <T>(group: string, resource: string) =>
    f.lister(gvr(group, resource)) as unknown as NamespacedLister<T>;
  return { services: l("", "services"), replicaSets: l("apps", "replicasets") };
}

/** getPreFilterState / getPreScoreState: the state, or upstream's error when PreFilter did not run. */
function readState<T>(state: CycleState, key: string, type: new (...a: never[]) => T): T | Error {
  const v = state.read(key);
  // Upstream's two getters word it differently: "reading …" for PreFilter, "error reading …" for PreScore.
  const verb = key === preScoreStateKey ? "error reading" : "reading";
  if (v instanceof NotFoundError) return new Error(`${verb} "${key}" from cycleState: ${v.message}`);
  if (!(v instanceof type)) return new Error(`${String(v)} convert to podtopologyspread state error`);
  return v;
}

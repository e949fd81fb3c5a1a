/**
 * NodeAffinity — Filter: a node must match the pod's `nodeSelector` and required node affinity
 * (and the profile's `addedAffinity`); Score: the sum of the weights of the preferred terms the
 * node matches, scaled so the best node gets 100.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/nodeaffinity/node_affinity.go (NodeAffinity, PreFilter, Filter, PreScore, Score, NormalizeScore, EventsToRegister, isSchedulableAfterNodeChange, New, ErrReasonPod)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/types_pluginargs.go (NodeAffinityArgs)
 * @chapter 05-scheduler
 *
 * Solves: "run only on GPU nodes", "prefer zone a": placement rules written once on the pod,
 * checked on every node. The rules themselves are code/api/node-affinity.ts, shared with the
 * kubelet; this plugin only decides when to parse them (once, in PreFilter / PreScore) and what
 * a mismatch means (UnschedulableAndUnresolvable: evicting pods never changes a node's labels).
 *
 * Invariants:
 * - PreFilter is Skip when the pod has no nodeSelector, no required node affinity and the
 *   profile adds none; when every required term pins `metadata.name` with In, it narrows the
 *   cycle to those names (the union over terms, the intersection within one) — and an empty
 *   union is "pod affinity terms conflict".
 * - Filter rejects with "node(s) didn't match Pod's node affinity/selector", or for the
 *   profile's addedAffinity with "node(s) didn't match scheduler-enforced node affinity";
 *   both UnschedulableAndUnresolvable. A term that fails to parse counts as not matching.
 * - Score = Σ weights of matching preferred terms (the pod's plus addedAffinity's);
 *   NormalizeScore is DefaultNormalizeScore(100, reverse false).
 */

import type { Node, Pod } from "../../../api/core.ts";
import {
  getRequiredNodeAffinity,
  NodeSelector,
  ObjectNameField,
  PreferredSchedulingTerms,
  type RequiredNodeAffinity,
} from "../../../api/node-affinity.ts";
import type { NodeAffinityArgs } from "../../apis/config/types-pluginargs.ts";
import type { CycleState, StateData } from "../../framework/cycle-state.ts";
import { NotFoundError } from "../../framework/cycle-state.ts";
import { ActionType, type ClusterEventWithHint, QueueingHint } from "../../framework/events.ts";
import {
  type EnqueueExtensions,
  type FilterPlugin,
  MaxNodeScore,
  type NodeScore,
  type PreFilterPlugin,
  type PreFilterResult,
  type PreScorePlugin,
  type ScoreExtensions,
  type ScorePlugin,
} from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import { asStatus, Code, newStatus, type Status } from "../../framework/status.ts";
import { defaultNormalizeScore } from "../helper/normalize-score.ts";

export const Name = "NodeAffinity";
export const ErrReasonPod = "node(s) didn't match Pod's node affinity/selector";
export const ErrReasonEnforced = "node(s) didn't match scheduler-enforced node affinity";
export const ErrReasonConflict = "pod affinity terms conflict";
const preFilterStateKey = `PreFilter${Name}`;
const preScoreStateKey = `PreScore${Name}`;

class PreFilterState implements StateData {
  constructor(readonly required: RequiredNodeAffinity) {}
  clone(): StateData {
    return this;
  }
}

class PreScoreState implements StateData {
  constructor(readonly preferred: PreferredSchedulingTerms | undefined) {}
  clone(): StateData {
    return this;
  }
}

function podPreferredNodeAffinity(pod: Pod): PreferredSchedulingTerms | Error | undefined {
  const terms = pod.spec.affinity?.nodeAffinity?.preferredDuringSchedulingIgnoredDuringExecution;
  if (!terms) return undefined;
  const r = PreferredSchedulingTerms.parse(terms);
  return r.ok ? r.value : r.error;
}

export class NodeAffinity
  implements PreFilterPlugin, FilterPlugin, PreScorePlugin, ScorePlugin, ScoreExtensions, EnqueueExtensions
{
  private readonly addedNodeSelector?: NodeSelector;
  private readonly addedPrefSchedTerms?: PreferredSchedulingTerms;

  /** New: a bad addedAffinity is a configuration error — the profile does not start. */
  constructor(args: Partial<NodeAffinityArgs> = {}) {
    const added = args.addedAffinity;
    if (added?.requiredDuringSchedulingIgnoredDuringExecution) {
      const r = NodeSelector.parse(added.requiredDuringSchedulingIgnoredDuringExecution);
      if (!r.ok) {
        throw new Error(
          `parsing addedAffinity.requiredDuringSchedulingIgnoredDuringExecution: ${r.error.message}`,
        );
      }
      this.addedNodeSelector = r.value;
    }
    const pref = added?.preferredDuringSchedulingIgnoredDuringExecution;
    if (pref && pref.length > 0) {
      const r = PreferredSchedulingTerms.parse(pref);
      if (!r.ok) {
        throw new Error(
          `parsing addedAffinity.preferredDuringSchedulingIgnoredDuringExecution: ${r.error.message}`,
        );
      }
      this.addedPrefSchedTerms = r.value;
    }
  }

  name(): string {
    return Name;
  }

  // #region events
  /**
   * Only a node appearing or its labels changing can make a node match; with queueing hints
   * on (the 1.32 default) upstream registers exactly those two.
   */
  eventsToRegister(): ClusterEventWithHint[] {
    return [
      {
        event: { resource: "Node", actionType: ActionType.Add | ActionType.UpdateNodeLabel },
        queueingHintFn: (pod, oldObj, newObj) => this.isSchedulableAfterNodeChange(pod, oldObj, newObj),
      },
    ];
  }

  /** Queue only when the node (newly) matches: an added matching node, or unmatched → matched. */
  isSchedulableAfterNodeChange(pod: Pod, oldObj: unknown, newObj: unknown): QueueingHint | Error {
    const modified = newObj as Node | undefined;
    if (!modified?.metadata) return new Error(`expected a Node, got ${typeof newObj}`);
    if (this.addedNodeSelector && !this.addedNodeSelector.match(modified)) return QueueingHint.QueueSkip;
    const required = getRequiredNodeAffinity(pod);
    const [matched, err] = required.match(modified);
    if (err) return err;
    if (!matched) return QueueingHint.QueueSkip;
    const original = oldObj as Node | undefined;
    if (!original) return QueueingHint.Queue;
    const [wasMatched, err2] = required.match(original);
    if (err2) return err2;
    return wasMatched ? QueueingHint.QueueSkip : QueueingHint.Queue;
  }
  // #endregion events

  // #region prefilter
  preFilter(state: CycleState, pod: Pod): [PreFilterResult | undefined, Status | undefined] {
    const required = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
    // Go checks `pod.Spec.NodeSelector == nil`: an empty map still runs the (trivial) Filter.
    if (!required && !this.addedNodeSelector && pod.spec.nodeSelector === undefined) {
      return [undefined, newStatus(Code.Skip)];
    }
    state.write(preFilterStateKey, new PreFilterState(getRequiredNodeAffinity(pod)));
    const terms = required?.nodeSelectorTerms ?? [];
    if (terms.length === 0) return [undefined, undefined];

    // Terms are ORed: one term that does not pin node names allows every node.
    let nodeNames: Set<string> | undefined;
    for (const t of terms) {
      let termNames: Set<string> | undefined;
      for (const r of t.matchFields ?? []) {
        if (r.key !== ObjectNameField || r.operator !== "In") continue;
        const s = new Set(r.values ?? []);
        // Requirements of one term are ANDed: intersect.
        termNames = termNames ? new Set([...termNames].filter((n) => s.has(n))) : s;
      }
      if (!termNames) return [undefined, undefined];
      nodeNames = new Set([...(nodeNames ?? []), ...termNames]);
    }
    if (nodeNames && nodeNames.size === 0) {
      return [undefined, newStatus(Code.UnschedulableAndUnresolvable, ErrReasonConflict)];
    }
    return [nodeNames ? { nodeNames } : undefined, undefined];
  }

  /** Nothing to update when other pods come and go: the answer depends on the node alone. */
  preFilterExtensions(): undefined {
    return undefined;
  }
  // #endregion prefilter

  // #region filter
  filter(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    const node = nodeInfo.node();
    if (!node) return asStatus(new Error("node not found"));
    if (this.addedNodeSelector && !this.addedNodeSelector.match(node)) {
      return newStatus(Code.UnschedulableAndUnresolvable, ErrReasonEnforced);
    }
    const s = state.read(preFilterStateKey);
    // Without PreFilter (disabled in the profile), parse here, as upstream's fallback.
    const required =
      s instanceof NotFoundError ? getRequiredNodeAffinity(pod) : (s as PreFilterState).required;
    // Parse errors are ignored for backwards compatibility: a bad term simply never matches.
    const [match] = required.match(node);
    if (!match) return newStatus(Code.UnschedulableAndUnresolvable, ErrReasonPod);
    return undefined;
  }
  // #endregion filter

  // #region score
  preScore(state: CycleState, pod: Pod, _nodes: NodeInfo[]): Status | undefined {
    const preferred = podPreferredNodeAffinity(pod);
    if (preferred instanceof Error) return asStatus(preferred);
    if (!preferred && !this.addedPrefSchedTerms) return newStatus(Code.Skip);
    state.write(preScoreStateKey, new PreScoreState(preferred));
    return undefined;
  }

  score(state: CycleState, pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined] {
    const node = nodeInfo.node();
    if (!node) return [0, asStatus(new Error("node not found"))];
    let count = this.addedPrefSchedTerms?.score(node) ?? 0;
    const s = state.read(preScoreStateKey);
    let preferred: PreferredSchedulingTerms | undefined;
    if (s instanceof NotFoundError) {
      const p = podPreferredNodeAffinity(pod);
      if (p instanceof Error) return [0, asStatus(p)];
      preferred = p;
    } else {
      preferred = (s as PreScoreState).preferred;
    }
    count += preferred?.score(node) ?? 0;
    return [count, undefined];
  }

  scoreExtensions(): ScoreExtensions {
    return this;
  }

  /** Raw sums of weights have no fixed range: the best node gets 100, the rest in proportion. */
  normalizeScore(_state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    defaultNormalizeScore(MaxNodeScore, false, scores);
    return undefined;
  }
  // #endregion score
}

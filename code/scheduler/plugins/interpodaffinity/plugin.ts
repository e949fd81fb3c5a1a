/**
 * InterPodAffinity — the plugin: its wiring to the snapshot and the namespaces lister, its
 * extension points (delegating to filtering.ts and scoring.ts), and the cluster events (with
 * queueing hints) after which a pod it rejected may fit.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/plugin.go (InterPodAffinity, New, EventsToRegister, isSchedulableAfterPodChange, isSchedulableAfterNodeChange)
 * @chapter 05-scheduler
 *
 * Solves: pods say where they want to be relative to other pods — "in the zone of a cache
 * pod", "never on a node with another replica of me" — as label selectors over pods and a
 * topology key over nodes. PreFilter + Filter enforce the required terms (filtering.ts),
 * PreScore + Score rank the preferred ones (scoring.ts); this file ties them together.
 *
 * Invariants:
 * - the args are defaulted and validated (args.ts) before the plugin exists: a bad weight
 *   fails the profile, not a cycle.
 * - the namespaces lister comes from the handle's informer factory; without one (a
 *   simulation) namespaceSelectors select nothing and every namespace has no labels.
 * - hints only say QueueSkip when the event provably cannot help: an unscheduled pod, or a
 *   pod / node change that touches none of the rejected pod's terms.
 */

import type { Node, Pod } from "../../../api/core.ts";
import { Resources } from "../../../client/informers/factory.ts";
import type { InterPodAffinityArgs } from "../../apis/config/types-pluginargs.ts";
import type { CycleState } from "../../framework/cycle-state.ts";
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
import type { Status } from "../../framework/status.ts";
import { PodInfo } from "../../framework/types.ts";
import {
  defaultInterPodAffinityArgs,
  type InterPodAffinityArgsInput,
  type InterPodAffinityContext,
  validateInterPodAffinityArgs,
} from "./args.ts";
import { filter, preFilter, updatePreFilterState } from "./filtering.ts";
import { normalizeScore, preScore, score } from "./scoring.ts";
import { type NamespaceLister, podMatchesAllAffinityTerms } from "./terms.ts";

export const Name = "InterPodAffinity";
export type { InterPodAffinityArgsInput };

export class InterPodAffinity
  implements
    PreFilterPlugin,
    PreFilterExtensions,
    FilterPlugin,
    PreScorePlugin,
    ScorePlugin,
    ScoreExtensions,
    EnqueueExtensions,
    InterPodAffinityContext
{
  readonly args: Required<InterPodAffinityArgs>;
  private readonly namespaces: NamespaceLister | undefined;

  constructor(
    args: InterPodAffinityArgsInput | undefined,
    readonly handle: Handle,
  ) {
    this.args = defaultInterPodAffinityArgs(args);
    const err = validateInterPodAffinityArgs(this.args);
    if (err) throw err;
    // Asking for the lister registers the namespaces informer, so the binary's start runs it.
    this.namespaces = handle.sharedInformerFactory()?.lister(Resources.namespaces) as
      | NamespaceLister
      | undefined;
  }

  name(): string {
    return Name;
  }

  nsLister(): NamespaceLister | undefined {
    return this.namespaces;
  }

  // #region extension-points
  preFilter(state: CycleState, pod: Pod): [PreFilterResult | undefined, Status | undefined] {
    return preFilter(this, state, pod);
  }

  preFilterExtensions(): PreFilterExtensions {
    return this;
  }

  addPod(
    state: CycleState,
    _podToSchedule: Pod,
    podInfoToAdd: PodInfo,
    nodeInfo: NodeInfo,
  ): Status | undefined {
    return updatePreFilterState(state, podInfoToAdd, nodeInfo, 1);
  }

  removePod(
    state: CycleState,
    _podToSchedule: Pod,
    podInfoToRemove: PodInfo,
    nodeInfo: NodeInfo,
  ): Status | undefined {
    return updatePreFilterState(state, podInfoToRemove, nodeInfo, -1);
  }

  filter(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): Status | undefined {
    return filter(state, nodeInfo);
  }

  preScore(state: CycleState, pod: Pod, nodes: NodeInfo[]): Status | undefined {
    return preScore(this, state, pod, nodes);
  }

  score(state: CycleState, _pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined] {
    return score(state, nodeInfo);
  }

  scoreExtensions(): ScoreExtensions {
    return this;
  }

  normalizeScore(state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    return normalizeScore(state, scores);
  }
  // #endregion extension-points

  // #region events
  /**
   * Pods: an assigned pod added (it may be the one the pod needs), relabelled (it may stop
   * being hated, or start being liked) or deleted (it may have been the one in the way).
   * Nodes: added or relabelled (a topology domain appears or moves). Upstream also registers
   * UpdateNodeTaint when queueing hints are off (preCheck may drop a NodeAdd); hints are on
   * by default in 1.32 and this queue has no such filter, so it is not needed.
   */
  eventsToRegister(): ClusterEventWithHint[] {
    return [
      {
        event: {
          resource: "Pod",
          actionType: ActionType.Add | ActionType.UpdatePodLabel | ActionType.Delete,
        },
        queueingHintFn: isSchedulableAfterPodChange,
      },
      {
        event: { resource: "Node", actionType: ActionType.Add | ActionType.UpdateNodeLabel },
        queueingHintFn: isSchedulableAfterNodeChange,
      },
    ];
  }
  // #endregion events
}

// #region queueing-hints
/**
 * A scheduled pod changed. Added: Queue if it matches all the rejected pod's affinity terms.
 * Relabelled: Queue if it started matching the affinity terms, or stopped matching the
 * anti-affinity terms. Deleted: Queue if it matched the anti-affinity terms. As in 1.32, a
 * deleted pod whose OWN anti-affinity repelled the rejected pod is not recognised
 * (kubernetes#134393, fixed after 1.32): that pod waits for the unschedulable flush.
 */
export function isSchedulableAfterPodChange(
  pod: Pod,
  oldObj: unknown,
  newObj: unknown,
): QueueingHint | Error {
  const original = oldObj as Pod | undefined;
  const modified = newObj as Pod | undefined;
  // Unscheduled pods are on no node, so they are in no topology domain.
  if ((modified && !modified.spec.nodeName) || (original && !original.spec.nodeName))
    return QueueingHint.QueueSkip;
  const pi = new PodInfo(pod);
  if (pi.parseError) return pi.parseError;
  const terms = pi.requiredAffinityTerms;
  const antiTerms = pi.requiredAntiAffinityTerms;
  if (modified && original) {
    if (!podMatchesAllAffinityTerms(terms, original) && podMatchesAllAffinityTerms(terms, modified)) {
      return QueueingHint.Queue;
    }
    if (podMatchesAllAffinityTerms(antiTerms, original) && !podMatchesAllAffinityTerms(antiTerms, modified)) {
      return QueueingHint.Queue;
    }
    return QueueingHint.QueueSkip;
  }
  if (modified)
    return podMatchesAllAffinityTerms(terms, modified) ? QueueingHint.Queue : QueueingHint.QueueSkip;
  if (!original) return QueueingHint.Queue;
  return podMatchesAllAffinityTerms(antiTerms, original) ? QueueingHint.Queue : QueueingHint.QueueSkip;
}

/**
 * A node was added or relabelled. For affinity: Queue when a node gains a term's topology
 * key or its value changes (a domain with the wanted pod may now include it). For
 * anti-affinity: any new node (without the key it is always allowed; with it, its domain may
 * be free), or a node that loses the key or changes its value.
 */
export function isSchedulableAfterNodeChange(
  pod: Pod,
  oldObj: unknown,
  newObj: unknown,
): QueueingHint | Error {
  const original = oldObj as Node | undefined;
  const modified = newObj as Node | undefined;
  if (!modified) return new Error(`unexpected objects: old ${typeof oldObj}, new ${typeof newObj}`);
  const pi = new PodInfo(pod);
  if (pi.parseError) return pi.parseError;
  const label = (n: Node | undefined, k: string) => n?.metadata.labels?.[k];
  for (const t of pi.requiredAffinityTerms) {
    const now = label(modified, t.topologyKey);
    if (!original) {
      if (now !== undefined) return QueueingHint.Queue;
      continue;
    }
    const before = label(original, t.topologyKey);
    if (now !== undefined && before !== now) return QueueingHint.Queue;
  }
  for (const t of pi.requiredAntiAffinityTerms) {
    if (!original) return QueueingHint.Queue;
    const before = label(original, t.topologyKey);
    const now = label(modified, t.topologyKey);
    if (before !== undefined && before !== now) return QueueingHint.Queue;
  }
  return QueueingHint.QueueSkip;
}
// #endregion queueing-hints

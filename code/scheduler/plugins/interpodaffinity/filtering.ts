/**
 * InterPodAffinity filtering — PreFilter counts, per topology pair (`zone=a`), the pods that
 * attract or repel the incoming pod; Filter then answers each node by looking its labels up in
 * those counts; AddPod / RemovePod keep the counts right when a pod is added to or removed
 * from a node hypothetically (nominated pods, preemption's victims).
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/filtering.go (preFilterState, updateWithPod, topologyPair, topologyToMatchedTermCount, getExistingAntiAffinityCounts, getIncomingAffinityAntiAffinityCounts, PreFilter, AddPod, RemovePod, satisfyExistingPodsAntiAffinity, satisfyPodAntiAffinity, satisfyPodAffinity, Filter, ErrReasonExistingAntiAffinityRulesNotMatch, ErrReasonAffinityRulesNotMatch, ErrReasonAntiAffinityRulesNotMatch)
 * @chapter 05-scheduler
 *
 * Solves: "is there a matching pod in this node's zone?" asked per node would scan every pod
 * of every node in the zone, for every node: nodes² × pods. Counting once per cycle by
 * topology pair makes each Filter a few map lookups; the scan happens once, in PreFilter.
 *
 * Invariants:
 * - `affinityCounts[k=v]` = Σ over existing pods matching ALL the incoming pod's required
 *   affinity terms, on a node labelled k=v, of the number of terms with topologyKey k.
 * - `antiAffinityCounts[k=v]` = Σ over existing pods, per incoming anti-affinity term the pod
 *   matches, with the pod's node labelled k=v.
 * - `existingAntiAffinityCounts[k=v]` = Σ over existing pods with required anti-affinity
 *   (NodeInfo.podsWithRequiredAntiAffinity only), per term of theirs matching the incoming
 *   pod, with their node labelled k=v — the symmetric rule: "I must not be near you" binds
 *   the newcomer as well.
 * - a count never stays at 0: an entry is deleted when AddPod / RemovePod bring it to zero,
 *   so "has any entry" means "some pod matched".
 * - Filter checks affinity (Unresolvable), then the pod's anti-affinity, then the existing
 *   pods' (both Unschedulable: preemption can evict the repelling pod).
 */
import type { Node, Pod } from "../../../api/core.ts";
import type { Labels } from "../../../api/labels.ts";
import type { CycleState, StateData } from "../../framework/cycle-state.ts";
import { NotFoundError } from "../../framework/cycle-state.ts";
import type { PreFilterResult } from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import { asStatus, Code, newStatus, type Status } from "../../framework/status.ts";
import { type AffinityTerm, PodInfo } from "../../framework/types.ts";
import type { InterPodAffinityContext } from "./args.ts";
import { getNamespaceLabelsSnapshot, mergeAll, podMatchesAllAffinityTerms, termMatches } from "./terms.ts";

// "PreFilter" + Name; spelled out so this file does not import plugin.ts (which imports it).
const preFilterStateKey = "PreFilterInterPodAffinity";

export const ErrReasonExistingAntiAffinityRulesNotMatch =
  "node(s) didn't satisfy existing pods anti-affinity rules";
export const ErrReasonAffinityRulesNotMatch = "node(s) didn't match pod affinity rules";
export const ErrReasonAntiAffinityRulesNotMatch = "node(s) didn't match pod anti-affinity rules";

// #region topology-counts
/**
 * topologyToMatchedTermCount: topology key → topology value → count. Upstream keys one map by
 * a struct {key, value}; a string "key=value" would cost an allocation per lookup, so here the
 * pair is two levels of Map, and a node's label value is looked up under each key counted.
 */
export class TopologyCounts {
  private readonly byKey = new Map<string, Map<string, number>>();
  /** How many pairs have a count (never 0: a pair brought to 0 is deleted). */
  size = 0;

  get(key: string, value: string): number {
    return this.byKey.get(key)?.get(value) ?? 0;
  }

  add(key: string, value: string, delta: number): void {
    let values = this.byKey.get(key);
    if (!values) {
      values = new Map();
      this.byKey.set(key, values);
    }
    const before = values.get(value);
    const n = (before ?? 0) + delta;
    if (n === 0) {
      if (before !== undefined) this.size--;
      values.delete(value);
      if (values.size === 0) this.byKey.delete(key);
    } else {
      if (before === undefined) this.size++;
      values.set(value, n);
    }
  }

  /** Some pair (k, labels[k]) of the node has a positive count. */
  anyPositiveOn(labels: Labels): boolean {
    // The counted keys are few (one per distinct topologyKey of the terms), the labels many.
    for (const [k, values] of this.byKey) {
      const v = labels[k];
      if (v !== undefined && (values.get(v) ?? 0) > 0) return true;
    }
    return false;
  }

  clone(): TopologyCounts {
    const c = new TopologyCounts();
    for (const [k, values] of this.byKey) c.byKey.set(k, new Map(values));
    c.size = this.size;
    return c;
  }

  /** The pairs as "key=value" → count, for tests and messages. */
  entries(): [string, number][] {
    const out: [string, number][] = [];
    for (const [k, values] of this.byKey) for (const [v, n] of values) out.push([`${k}=${v}`, n]);
    return out;
  }
}

/** Adds `delta` to the node's pair for topology key `tk`; a node without that label has no pair. */
function update(m: TopologyCounts, node: Node, tk: string, delta: number): void {
  const tv = node.metadata.labels?.[tk];
  if (tv !== undefined) m.add(tk, tv, delta);
}

/** Affinity: one pod must match every term, and then counts once per term's topology key. */
function updateWithAffinityTerms(
  m: TopologyCounts,
  terms: readonly AffinityTerm[],
  pod: Pod,
  node: Node,
  delta: number,
): void {
  if (!podMatchesAllAffinityTerms(terms, pod)) return;
  for (const t of terms) update(m, node, t.topologyKey, delta);
}

/** Anti-affinity: each term the pod matches counts on its own — any one of them repels. */
function updateWithAntiAffinityTerms(
  m: TopologyCounts,
  terms: readonly AffinityTerm[],
  pod: Pod,
  nsLabels: Labels | undefined,
  node: Node,
  delta: number,
): void {
  for (const t of terms) if (termMatches(t, pod, nsLabels)) update(m, node, t.topologyKey, delta);
}
// #endregion topology-counts

// #region prefilter-state
export class PreFilterState implements StateData {
  constructor(
    /** The incoming pod, with its required terms' namespaceSelectors unrolled. */
    readonly pod: Pod,
    readonly requiredAffinityTerms: AffinityTerm[],
    readonly requiredAntiAffinityTerms: AffinityTerm[],
    /** The incoming pod's namespace labels, for the existing pods' namespaceSelectors. */
    readonly namespaceLabels: Labels | undefined,
    readonly existingAntiAffinityCounts = new TopologyCounts(),
    readonly affinityCounts = new TopologyCounts(),
    readonly antiAffinityCounts = new TopologyCounts(),
  ) {}

  /** The counts are copied (AddPod / RemovePod change them); the terms never change. */
  clone(): PreFilterState {
    return new PreFilterState(
      this.pod,
      this.requiredAffinityTerms,
      this.requiredAntiAffinityTerms,
      this.namespaceLabels,
      this.existingAntiAffinityCounts.clone(),
      this.affinityCounts.clone(),
      this.antiAffinityCounts.clone(),
    );
  }

  /** updateWithPod: `pi` appears on (multiplier 1) or disappears from (−1) `node`. */
  updateWithPod(pi: PodInfo, node: Node, multiplier: 1 | -1): void {
    updateWithAntiAffinityTerms(
      this.existingAntiAffinityCounts,
      pi.requiredAntiAffinityTerms,
      this.pod,
      this.namespaceLabels,
      node,
      multiplier,
    );
    updateWithAffinityTerms(this.affinityCounts, this.requiredAffinityTerms, pi.pod, node, multiplier);
    // The incoming pod's terms are unrolled: the other pod's namespace labels are not needed.
    updateWithAntiAffinityTerms(
      this.antiAffinityCounts,
      this.requiredAntiAffinityTerms,
      pi.pod,
      undefined,
      node,
      multiplier,
    );
  }
}
// #endregion prefilter-state

// #region prefilter
/** The existing pods' required anti-affinity toward the incoming pod, on the nodes that have any. */
function getExistingAntiAffinityCounts(
  pod: Pod,
  nsLabels: Labels | undefined,
  nodes: NodeInfo[],
): TopologyCounts {
  const m = new TopologyCounts();
  for (const ni of nodes) {
    const node = ni.node();
    if (!node) continue;
    for (const existing of ni.podsWithRequiredAntiAffinity) {
      updateWithAntiAffinityTerms(m, existing.requiredAntiAffinityTerms, pod, nsLabels, node, 1);
    }
  }
  return m;
}

/** The existing pods that the incoming pod's required terms select: every pod of every node. */
function getIncomingAffinityAntiAffinityCounts(
  affinityTerms: AffinityTerm[],
  antiAffinityTerms: AffinityTerm[],
  nodes: NodeInfo[],
): [TopologyCounts, TopologyCounts] {
  const affinity = new TopologyCounts();
  const anti = new TopologyCounts();
  if (affinityTerms.length === 0 && antiAffinityTerms.length === 0) return [affinity, anti];
  for (const ni of nodes) {
    const node = ni.node();
    if (!node) continue;
    for (const existing of ni.pods) {
      updateWithAffinityTerms(affinity, affinityTerms, existing.pod, node, 1);
      updateWithAntiAffinityTerms(anti, antiAffinityTerms, existing.pod, undefined, node, 1);
    }
  }
  return [affinity, anti];
}

/** Any pod (anti-)affinity at all — a pod without it cannot fail to parse either. */
function hasPodAffinity(pod: Pod): boolean {
  const a = pod.spec.affinity;
  return a?.podAffinity !== undefined || a?.podAntiAffinity !== undefined;
}

export function preFilter(
  pl: InterPodAffinityContext,
  cycleState: CycleState,
  pod: Pod,
): [PreFilterResult | undefined, Status | undefined] {
  const snapshot = pl.handle.snapshotSharedLister();
  const withRequiredAnti = snapshot.havePodsWithRequiredAntiAffinityList();
  // The common case, decided before parsing anything: no terms here, nobody repelling there.
  // (The answer is the Skip below; this only saves building a PodInfo every cycle.)
  if (withRequiredAnti.length === 0 && !hasPodAffinity(pod)) return [undefined, newStatus(Code.Skip)];
  const podInfo = new PodInfo(pod);
  if (podInfo.parseError) {
    return [
      undefined,
      newStatus(Code.UnschedulableAndUnresolvable, `parsing pod: ${podInfo.parseError.message}`),
    ];
  }
  const nsLister = pl.nsLister();
  const namespaceLabels = getNamespaceLabelsSnapshot(pod.metadata.namespace ?? "", nsLister);
  const requiredAffinityTerms = mergeAll(podInfo.requiredAffinityTerms, nsLister);
  const requiredAntiAffinityTerms = mergeAll(podInfo.requiredAntiAffinityTerms, nsLister);
  const [affinity, anti] = getIncomingAffinityAntiAffinityCounts(
    requiredAffinityTerms,
    requiredAntiAffinityTerms,
    snapshot.list(),
  );
  const s = new PreFilterState(
    pod,
    requiredAffinityTerms,
    requiredAntiAffinityTerms,
    namespaceLabels,
    getExistingAntiAffinityCounts(pod, namespaceLabels, withRequiredAnti),
    affinity,
    anti,
  );
  // Nothing attracts or repels this pod, and it asks for nothing: Filter has nothing to check.
  if (
    s.existingAntiAffinityCounts.size === 0 &&
    s.requiredAffinityTerms.length === 0 &&
    s.requiredAntiAffinityTerms.length === 0
  ) {
    return [undefined, newStatus(Code.Skip)];
  }
  cycleState.write(preFilterStateKey, s);
  return [undefined, undefined];
}
// #endregion prefilter

// #region add-remove-pod
export function getPreFilterState(cycleState: CycleState): PreFilterState | Error {
  const c = cycleState.read(preFilterStateKey);
  if (c instanceof NotFoundError)
    return new Error(`error reading "${preFilterStateKey}" from cycleState: ${c.message}`);
  if (!(c instanceof PreFilterState))
    return new Error(`${String(c)} convert to interpodaffinity.state error`);
  return c;
}

/** AddPod / RemovePod: the same counting as PreFilter, for one pod, with ±1. */
export function updatePreFilterState(
  cycleState: CycleState,
  podInfo: PodInfo,
  nodeInfo: NodeInfo,
  multiplier: 1 | -1,
): Status | undefined {
  const s = getPreFilterState(cycleState);
  if (s instanceof Error) return asStatus(s);
  const node = nodeInfo.node();
  if (node) s.updateWithPod(podInfo, node, multiplier);
  return undefined;
}
// #endregion add-remove-pod

// #region filter
/** The symmetric rule: some pod near this node said "not near me" of the incoming pod. */
function satisfyExistingPodsAntiAffinity(s: PreFilterState, node: Node): boolean {
  if (s.existingAntiAffinityCounts.size === 0) return true;
  // Any pair of the node's labels: each existing term counted under its own topology key.
  return !s.existingAntiAffinityCounts.anyPositiveOn(node.metadata.labels ?? {});
}

/** The incoming pod's required anti-affinity: no selected pod in the node's domain, per term. */
function satisfyPodAntiAffinity(s: PreFilterState, node: Node): boolean {
  if (s.antiAffinityCounts.size === 0) return true;
  for (const t of s.requiredAntiAffinityTerms) {
    const tv = node.metadata.labels?.[t.topologyKey];
    if (tv !== undefined && s.antiAffinityCounts.get(t.topologyKey, tv) > 0) return false;
  }
  return true;
}

/** The incoming pod's required affinity: a matching pod in the node's domain, for every term. */
function satisfyPodAffinity(s: PreFilterState, node: Node): boolean {
  let podsExist = true;
  for (const t of s.requiredAffinityTerms) {
    const tv = node.metadata.labels?.[t.topologyKey];
    // A node without the topology label is in no domain at all: never a match.
    if (tv === undefined) return false;
    if (s.affinityCounts.get(t.topologyKey, tv) <= 0) podsExist = false;
  }
  if (podsExist) return true;
  // The first of its group: no pod anywhere matches the terms, but the pod itself does — let
  // it go to any node that has the topology labels, or a self-affine group never starts.
  return s.affinityCounts.size === 0 && podMatchesAllAffinityTerms(s.requiredAffinityTerms, s.pod);
}

export function filter(cycleState: CycleState, nodeInfo: NodeInfo): Status | undefined {
  const node = nodeInfo.node();
  if (!node) return newStatus(Code.Error, "node not found");
  const s = getPreFilterState(cycleState);
  if (s instanceof Error) return asStatus(s);
  // Evicting pods cannot create the pod this one needs: preemption cannot help (Unresolvable).
  if (!satisfyPodAffinity(s, node))
    return newStatus(Code.UnschedulableAndUnresolvable, ErrReasonAffinityRulesNotMatch);
  if (!satisfyPodAntiAffinity(s, node))
    return newStatus(Code.Unschedulable, ErrReasonAntiAffinityRulesNotMatch);
  if (!satisfyExistingPodsAntiAffinity(s, node)) {
    return newStatus(Code.Unschedulable, ErrReasonExistingAntiAffinityRulesNotMatch);
  }
  return undefined;
}
// #endregion filter

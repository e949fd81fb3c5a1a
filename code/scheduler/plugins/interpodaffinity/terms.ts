/**
 * Affinity terms as InterPodAffinity matches them — which pods a term selects, and how the
 * incoming pod's namespaceSelector is unrolled into namespace names once per cycle.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/types.go (AffinityTerm.Matches, GetAffinityTerms)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/plugin.go (mergeAffinityTermNamespacesIfNotEmpty, GetNamespaceLabelsSnapshot)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/interpodaffinity/filtering.go (podMatchesAllAffinityTerms)
 * @chapter 05-scheduler
 *
 * Solves: a term selects pods by two things — the pod's namespace (named, or chosen by a
 * selector over the namespaces' labels) and the pod's labels. Asking the namespace lister for
 * every existing pod would cost a lookup per pod per term; so the incoming pod's selectors are
 * turned into a plain set of names once (the lister is asked once per term), and the existing
 * pods' selectors are checked against one snapshot of the incoming pod's namespace labels.
 *
 * Invariants:
 * - a term matches a pod iff (its namespace is in `namespaces` or `namespaceSelector` matches
 *   the namespace's labels) and `selector` matches the pod's labels.
 * - after `mergeAffinityTermNamespacesIfNotEmpty` a term's namespaceSelector is either
 *   Nothing (unrolled into `namespaces`) or Empty (every namespace), so matching it needs no
 *   namespace labels — callers pass `undefined` for them.
 * - the PodInfo a term came from is never modified: merging returns a new term.
 * - matchLabelKeys / mismatchLabelKeys are not seen here: the API server folded them into
 *   `labelSelector` when the pod was created (code/apiserver/registry/strategies/pods.ts).
 */
import type { Namespace, Pod } from "../../../api/core.ts";
import {
  isEmptySelector,
  type Labels,
  nothing,
  type Selector,
  selectorMatches,
} from "../../../api/labels.ts";
import type { AffinityTerm, WeightedAffinityTerm } from "../../framework/types.ts";

/** What the plugin needs of the namespaces lister (client-go's NamespaceLister). */
export interface NamespaceLister {
  list(selector: Selector): Namespace[];
  get(name: string): Namespace | undefined;
}

// #region term-matches
/**
 * AffinityTerm.Matches: the pod is in one of the term's namespaces (by name or by the
 * namespace's labels) and carries the labels the term selects.
 */
export function termMatches(term: AffinityTerm, pod: Pod, nsLabels: Labels | undefined): boolean {
  const inNamespace =
    term.namespaces.has(pod.metadata.namespace ?? "") ||
    selectorMatches(term.namespaceSelector, nsLabels ?? {});
  return inNamespace && selectorMatches(term.selector, pod.metadata.labels ?? {});
}

/**
 * podMatchesAllAffinityTerms: required affinity is satisfied by ONE pod matching EVERY term,
 * not by one pod per term — so counts are kept only for pods that match them all. No terms:
 * false (there is nothing to be attracted to).
 */
export function podMatchesAllAffinityTerms(terms: readonly AffinityTerm[], pod: Pod): boolean {
  if (terms.length === 0) return false;
  // The incoming pod's terms have their namespaceSelector unrolled: no labels needed.
  return terms.every((t) => termMatches(t, pod, undefined));
}
// #endregion term-matches

// #region merge-namespaces
/**
 * mergeAffinityTermNamespacesIfNotEmpty: the namespaces the term's namespaceSelector selects
 * now, added to its named namespaces; the selector becomes Nothing. An Empty selector (`{}`,
 * every namespace) stays as it is: matching it needs no lookup. Without a lister (a
 * simulation) the selector selects no namespace beyond the named ones.
 */
export function mergeAffinityTermNamespacesIfNotEmpty<T extends AffinityTerm>(
  term: T,
  nsLister: NamespaceLister | undefined,
): T {
  if (isEmptySelector(term.namespaceSelector)) return term;
  const namespaces = new Set(term.namespaces);
  if (!term.namespaceSelector.selectsNothing) {
    for (const ns of nsLister?.list(term.namespaceSelector) ?? []) namespaces.add(ns.metadata.name ?? "");
  }
  return { ...term, namespaces, namespaceSelector: nothing() };
}

export function mergeAll<T extends AffinityTerm>(
  terms: readonly T[],
  nsLister: NamespaceLister | undefined,
): T[] {
  return terms.map((t) => mergeAffinityTermNamespacesIfNotEmpty(t, nsLister));
}

/**
 * GetNamespaceLabelsSnapshot: a copy of the labels of namespace `ns`, taken once per cycle so
 * every existing pod's namespaceSelector sees the same labels. A namespace the lister does
 * not know has no labels (upstream logs and carries on).
 */
export function getNamespaceLabelsSnapshot(
  ns: string,
  nsLister: NamespaceLister | undefined,
): Labels | undefined {
  const labels = nsLister?.get(ns)?.metadata.labels;
  return labels ? { ...labels } : undefined;
}
// #endregion merge-namespaces

export type { AffinityTerm, WeightedAffinityTerm };

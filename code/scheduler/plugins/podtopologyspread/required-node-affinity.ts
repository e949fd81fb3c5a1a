/**
 * RequiredNodeAffinity — does a node satisfy a pod's `nodeSelector` and its required node
 * affinity terms? PodTopologySpread asks this to decide which nodes count as domains.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-helpers/scheduling/corev1/nodeaffinity/nodeaffinity.go (GetRequiredNodeAffinity, RequiredNodeAffinity.Match, LazyErrorNodeSelector.Match, nodeSelectorTerm)
 * @chapter 05-scheduler
 *
 * Solves: spreading over nodes the pod could never run on would count domains it cannot
 * use — a pod pinned to zone a would be told that zone b is "less full" and be rejected.
 *
 * Invariants:
 * - `nodeSelector` and the required terms are ANDed; the terms are ORed with each other; an
 *   empty term matches nothing, and a pod with only empty terms matches no node.
 * - a term whose requirement cannot be evaluated (Gt on a non-integer, an unknown field) does
 *   not match — upstream reports the parse error only when no term matched, and
 *   PodTopologySpread ignores it.
 * - this is the scheduler-local copy for PodTopologySpread; the shared one for NodeAffinity and
 *   the kubelet is code/api/node-affinity.ts when that lands (the lead swaps the import).
 */
import type { Node, NodeSelectorRequirement, NodeSelectorTerm, Pod } from "../../../api/core.ts";

// #region required-node-affinity
export interface RequiredNodeAffinity {
  match(node: Node): boolean;
}

/** GetRequiredNodeAffinity: the pod's nodeSelector and required node affinity, parsed once. */
export function getRequiredNodeAffinity(pod: Pod): RequiredNodeAffinity {
  const selector = pod.spec.nodeSelector;
  const required = pod.spec.affinity?.nodeAffinity?.requiredDuringSchedulingIgnoredDuringExecution;
  // An empty term selects nothing: it is dropped, so "only empty terms" matches no node.
  const terms = (required?.nodeSelectorTerms ?? []).filter(
    (t) => (t.matchExpressions?.length ?? 0) + (t.matchFields?.length ?? 0) > 0,
  );
  return {
    match(node: Node): boolean {
      const labels = node.metadata.labels ?? {};
      if (selector && !Object.entries(selector).every(([k, v]) => labels[k] === v)) return false;
      if (required === undefined) return true;
      return terms.some((t) => termMatches(t, labels, node.metadata.name ?? ""));
    },
  };
}
// #endregion required-node-affinity

function termMatches(term: NodeSelectorTerm, labels: Record<string, string>, nodeName: string): boolean {
  for (const r of term.matchExpressions ?? []) if (!requirementMatches(r, labels[r.key])) return false;
  for (const r of term.matchFields ?? []) {
    // The only node field a selector may name.
    if (r.key !== "metadata.name") return false;
    if (!requirementMatches(r, nodeName)) return false;
  }
  return true;
}

function requirementMatches(r: NodeSelectorRequirement, value: string | undefined): boolean {
  const values = r.values ?? [];
  switch (r.operator) {
    case "In":
      return value !== undefined && values.includes(value);
    case "NotIn":
      return value === undefined || !values.includes(value);
    case "Exists":
      return value !== undefined;
    case "DoesNotExist":
      return value === undefined;
    case "Gt":
    case "Lt": {
      // Exactly one integer value; anything else is a parse error, which never matches.
      if (value === undefined || values.length !== 1) return false;
      const bound = parseInteger(values[0]);
      const actual = parseInteger(value);
      if (bound === undefined || actual === undefined) return false;
      return r.operator === "Gt" ? actual > bound : actual < bound;
    }
    default:
      return false;
  }
}

function parseInteger(s: string): bigint | undefined {
  return /^[+-]?[0-9]+$/.test(s) ? BigInt(s) : undefined;
}

/**
 * Namespace and object selectors — the label tests that decide, before any rule, whether a
 * webhook cares about this request. Upstream: k8s.io/apiserver
 * pkg/admission/plugin/webhook/predicates/namespace/matcher.go and predicates/object/matcher.go.
 *
 * Solves:
 * - `namespaceSelector` lets a webhook skip whole namespaces (kube-system, or every namespace
 *   without `injection: enabled`) by the namespace's labels, which the request does not carry;
 * - `objectSelector` lets it skip objects by their own labels — old or new, so an update that
 *   removes the label is still seen.
 *
 * Invariants:
 * - a cluster-scoped request (other than for a Namespace) always passes the namespace selector;
 * - for a create or update of a Namespace, its labels are the new object's; for anything else
 *   they are the stored namespace's, and a namespace that does not exist is its 404;
 * - an empty selector matches everything without reading anything.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/namespace/matcher.go (Matcher.MatchNamespaceSelector, GetNamespaceLabels)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/predicates/object/matcher.go (Matcher.MatchObjectSelector)
 * @chapter 03-api-security
 */
import type { LabelSelector, Selector } from "../../../api/labels.ts";
import { isEmptySelector, labelSelectorAsSelector, selectorMatches } from "../../../api/labels.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { newInternalError } from "../../errors.ts";
import type { Attributes } from "../interfaces.ts";

/** Reads a namespace by name (upstream: the namespace lister, then a live GET on a miss). */
export type NamespaceGetter = (name: string) => Promise<KubeObject>;

function parse(selector: LabelSelector | undefined): Selector {
  const parsed = labelSelectorAsSelector(selector);
  if (!parsed.ok) throw newInternalError(parsed.error.message);
  return parsed.value;
}

// #region namespace-selector
export async function matchNamespaceSelector(
  selector: LabelSelector | undefined,
  a: Attributes,
  getNamespace: NamespaceGetter,
): Promise<boolean> {
  const isNamespace = a.resource.resource === "namespaces";
  if (a.namespace === "" && !isNamespace) return true;
  const s = parse(selector);
  if (isEmptySelector(s)) return true;
  let labels: Record<string, string> | undefined;
  if (isNamespace && a.subresource === "" && (a.operation === "CREATE" || a.operation === "UPDATE")) {
    labels = a.object?.metadata?.labels;
  } else {
    // A missing namespace is its own 404 (StatusError), as upstream answers for compatibility.
    labels = (await getNamespace(a.namespace)).metadata?.labels;
  }
  return selectorMatches(s, labels ?? {});
}
// #endregion namespace-selector

// #region object-selector
export function matchObjectSelector(selector: LabelSelector | undefined, a: Attributes): boolean {
  const s = parse(selector);
  if (isEmptySelector(s)) return true;
  const matches = (o: KubeObject | undefined) =>
    o !== undefined && selectorMatches(s, o.metadata?.labels ?? {});
  return matches(a.object) || matches(a.oldObject);
}
// #endregion object-selector

// #region selectors
/**
 * Both selectors, as webhooks and policies apply them: a clear "no" skips the hook; an error in
 * either is returned, not thrown — it counts only if a rule then matches (upstream evaluates the
 * rules before reporting a selector's error).
 */
export async function matchSelectors(
  namespaceSelector: LabelSelector | undefined,
  objectSelector: LabelSelector | undefined,
  a: Attributes,
  getNamespace: NamespaceGetter,
): Promise<{ matched: false } | { matched: true; err?: unknown }> {
  let nsErr: unknown;
  try {
    if (!(await matchNamespaceSelector(namespaceSelector, a, getNamespace))) return { matched: false };
  } catch (e) {
    nsErr = e;
  }
  let objErr: unknown;
  try {
    if (!matchObjectSelector(objectSelector, a)) return { matched: false };
  } catch (e) {
    objErr = e;
  }
  return { matched: true, err: nsErr ?? objErr };
}
// #endregion selectors

/**
 * Policy parameters — the objects a binding hands its policy as `params`: found by the policy's
 * paramKind and the binding's paramRef (a name, or a label selector; a namespace, or the
 * request's). Upstream: k8s.io/apiserver pkg/admission/plugin/policy/generic/policy_dispatcher.go
 * (CollectParams).
 *
 * Solves: one policy ("at most `params.maxReplicas` replicas") serves many bindings, each with
 * its own limit in a ConfigMap or custom object, so the rule is written once and tuned per place.
 *
 * Invariants:
 * - a policy without paramKind, or a binding without paramRef, is evaluated once with `params`
 *   null; with a selector, once per object selected;
 * - no object found: with parameterNotFoundAction Deny that is a configuration error (the
 *   failurePolicy decides); with Allow the binding judges nothing;
 * - a namespaced paramKind reads the paramRef's namespace, else the request's; a cluster-scoped
 *   request then has none, which is a configuration error, as upstream.
 *
 * What upstream does differently: an informer per paramKind keeps the params in memory; here
 * each request reads the param's registry store (a get, or a list for a selector).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/policy/generic/policy_dispatcher.go (CollectParams)
 * @chapter 03-api-security
 */
import { labelSelectorAsSelector, selectorMatches } from "../../../api/labels.ts";
import type { KubeObject } from "../../../api/meta.ts";
import type { ParamKind, ParamRef } from "../../../api/validatingadmissionpolicy.ts";
import { isStatusError } from "../../errors.ts";
import type { Store } from "../../registry/store.ts";
import { apiVersionOf, resources } from "../../resources.ts";

/** A configuration error: judged by the policy's failurePolicy, not a denial by itself. */
export class ParamError extends Error {
  override readonly name = "ParamError";
}

/** Go's %v of a ParamKind (its generated String()). */
function paramKindString(pk: ParamKind): string {
  return `&ParamKind{APIVersion:${pk.apiVersion},Kind:${pk.kind},}`;
}

// #region collect-params
export async function collectParams(
  paramKind: ParamKind | undefined,
  paramRef: ParamRef | undefined,
  namespace: string,
  storeOf: (group: string, resource: string) => Store | undefined,
): Promise<(KubeObject | null)[]> {
  if (!paramKind || !paramRef) return [null];
  const r = resources.find((x) => apiVersionOf(x) === paramKind.apiVersion && x.kind === paramKind.kind);
  const store = r ? storeOf(r.group, r.resource) : undefined;
  if (!r || !store) throw new ParamError(`paramKind kind \`${paramKindString(paramKind)}\` not known`);
  let ns = "";
  if (r.namespaced) {
    ns = paramRef.namespace || namespace;
    if (!ns)
      throw new ParamError(
        "cannot use namespaced paramRef in policy binding that matches cluster-scoped resources",
      );
  } else if (paramRef.namespace) {
    throw new ParamError("paramRef.namespace must not be provided for a cluster-scoped `paramKind`");
  }
  let params: KubeObject[] = [];
  if (paramRef.name) {
    try {
      params = [await store.get(ns, paramRef.name)];
    } catch (e) {
      if (!(isStatusError(e) && e.status.code === 404)) throw e;
    }
  } else if (paramRef.selector) {
    const selector = labelSelectorAsSelector(paramRef.selector);
    if (!selector.ok) throw new ParamError(selector.error.message);
    const list = await store.list(ns, {});
    params = list.items.filter((o) => selectorMatches(selector.value, o.metadata.labels ?? {}));
  } else {
    throw new ParamError("one of name or selector must be provided");
  }
  if (params.length === 0 && paramRef.parameterNotFoundAction === "Deny") {
    throw new ParamError("no params found for policy binding with `Deny` parameterNotFoundAction");
  }
  // TypeMeta on each param, as upstream's wrappedParam ensures: CEL may read params.kind.
  return params.map((p) => ({
    ...p,
    apiVersion: p.apiVersion ?? paramKind.apiVersion,
    kind: p.kind ?? paramKind.kind,
  }));
}
// #endregion collect-params

/**
 * A quota's usage — which objects a quota counts (its scopes) and their sum over a namespace:
 * the one calculation the admission plugin and the resource quota controller both make.
 * Upstream: kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/quota/v1/resources.go (CalculateUsage).
 *
 * Solves:
 * - admission fills in a new quota's `status.used` before it judges a request against it, and
 *   the controller recomputes every quota's `status.used` to give back what deleted objects held;
 *   if the two counted differently, a quota would drift every time one of them wrote it;
 * - neither may import the other (the API server knows no component; a component reaches the
 *   server only over HTTP), so the calculation lives here, below both, beside the evaluators —
 *   as upstream keeps it in k8s.io/apiserver's quota package, imported by both binaries.
 *
 * Invariants:
 * - pure: the objects come from a `list` function the caller gives (the registry's store in the
 *   API server, an informer's cache in the controller); nothing here does I/O of its own;
 * - the result names only what the quota's `spec.hard` names, each with the sum of what the
 *   matching objects use (0 when none), and skips a name whose resource `list` cannot list;
 * - scopes (Terminating, NotTerminating, BestEffort, NotBestEffort) select pods only; a quota
 *   with a scope counts no other kind, and a `scopeSelector` (not built) matches nothing.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/quota/v1/resources.go (CalculateUsage)
 * @upstream kubernetes/kubernetes pkg/quota/v1/evaluator/core/pods.go (podMatchesScopeFunc, isTerminating, isBestEffort)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/quota/v1/generic/evaluator.go (MatchesNoScopeFunc)
 * @chapter 03-api-security
 */
import type { Pod, ResourceQuota } from "../api/core.ts";
import type { KubeObject } from "../api/meta.ts";
import { resourceForQuotaName, usageOf } from "./evaluator.ts";
import { addLists, type ResourceList } from "./resources.ts";

/** A group and resource as quota names them (`""`/`pods`, `apps`/`deployments`). */
export interface GroupResource {
  group: string;
  resource: string;
}

// #region scopes
/**
 * podMatchesScopeFunc for the scopes built here: does `quota` count `obj` of group/resource?
 * Other kinds match only a quota without scopes (MatchesNoScopeFunc).
 */
export function matchesScopes(
  quota: ResourceQuota,
  group: string,
  resource: string,
  obj: KubeObject,
): boolean {
  const scopes = quota.spec?.scopes ?? [];
  if (quota.spec?.scopeSelector) return false;
  if (scopes.length === 0) return true;
  if (group !== "" || resource !== "pods") return false;
  const pod = obj as Pod;
  const terminating = typeof pod.spec.activeDeadlineSeconds === "number";
  const bestEffort = [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])].every(
    (c) =>
      Object.keys(c.resources?.requests ?? {}).length === 0 &&
      Object.keys(c.resources?.limits ?? {}).length === 0,
  );
  return scopes.every((s) =>
    s === "Terminating"
      ? terminating
      : s === "NotTerminating"
        ? !terminating
        : s === "BestEffort"
          ? bestEffort
          : s === "NotBestEffort"
            ? !bestEffort
            : false,
  );
}
// #endregion scopes

/** The resources whose objects a quota's hard names count (the evaluators it needs). */
export function resourcesForQuota(hard: ResourceList): GroupResource[] {
  const byKey = new Map<string, GroupResource>();
  for (const name of Object.keys(hard)) {
    const r = resourceForQuotaName(name);
    if (r) byKey.set(`${r.group}/${r.resource}`, r);
  }
  return [...byKey.values()];
}

// #region calculate-usage
/**
 * CalculateUsage: the usage of every name in `quota.spec.hard`, summed over the objects `list`
 * returns for the quota's namespace. `list` answers undefined for a resource it cannot list;
 * `usage` is the evaluator (a learner's, in exercise 03-api-security/05-quota-usage).
 */
export async function calculateUsage(
  quota: ResourceQuota,
  list: (r: GroupResource) => Promise<KubeObject[] | undefined> | KubeObject[] | undefined,
  opts: { now?: Date; usage?: typeof usageOf } = {},
): Promise<ResourceList> {
  const now = opts.now ?? new Date();
  const usage = opts.usage ?? usageOf;
  const hard = quota.spec?.hard ?? {};
  let total: ResourceList = {};
  const listed = new Set<string>();
  for (const r of resourcesForQuota(hard)) {
    const items = await list(r);
    if (!items) continue;
    listed.add(`${r.group}/${r.resource}`);
    for (const item of items) {
      if (!matchesScopes(quota, r.group, r.resource, item)) continue;
      total = addLists(total, usage(r.group, r.resource, item, now));
    }
  }
  const used: ResourceList = {};
  for (const name of Object.keys(hard)) {
    const r = resourceForQuotaName(name);
    if (r && listed.has(`${r.group}/${r.resource}`)) used[name] = total[name] ?? "0";
  }
  return used;
}
// #endregion calculate-usage

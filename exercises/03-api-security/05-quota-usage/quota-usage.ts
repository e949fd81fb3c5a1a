/**
 * Exercise: quota usage — what a pod uses, and the charge that keeps `pods: 10` at ten under
 * concurrent creates.
 *
 * Two functions, plugged into the course's real ResourceQuota admission plugin
 * (code/apiserver/admission/plugin/resource-quota.ts) over the real registry stores:
 * - `podUsage(pod, now)`: the quota names one pod uses — `count/pods` always, `pods` only while
 *   the pod still holds compute;
 * - `chargeQuota(delta, access)`: check used + delta against hard and write the new used,
 *   correctly when fifty requests do it at once. README.md has the rules.
 *
 * Helpers you may import from code/quota/resources.ts:
 * `addLists`, `maskList`, `exceededNames` (the names where a > b), `isZeroList`, `prettyPrint`;
 * and `isStatusError` from code/apiserver/errors.ts.
 */
import type { Pod, ResourceList } from "../../../code/api/core.ts";
import type { QuotaAccess } from "../../../code/apiserver/admission/plugin/quota-charge.ts";

/** The quota usage of one pod at time `now`: `{"count/pods": "1", pods: "1"}` or less. */
export function podUsage(pod: Pod, now: Date): ResourceList {
  throw new Error(`TODO: podUsage of ${pod.metadata.name} at ${now.toISOString()}`);
}

/**
 * Charges `delta` to the quota `access` reads and writes, or throws `access.forbidden(...)` with
 * upstream's message: `exceeded quota: q, requested: pods=1, used: pods=10, limited: pods=10`.
 */
export async function chargeQuota(delta: ResourceList, access: QuotaAccess): Promise<void> {
  throw new Error(`TODO: chargeQuota of ${Object.keys(delta).join(",")} with ${typeof access.get}`);
}

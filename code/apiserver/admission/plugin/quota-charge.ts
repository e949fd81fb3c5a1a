/**
 * Charging a quota — the check and the write that make `pods: 10` mean at most ten pods, however
 * many creates arrive at once: read the quota, refuse if used + requested would pass hard,
 * otherwise write the new `status.used` on the condition that the quota is still the one read.
 *
 * Solves: two creates that both read `used: pods=9` must not both write `pods=10`. The write
 * carries the resourceVersion read; the store refuses a stale one with 409 Conflict, and the
 * loser reads again — now seeing `pods=10` — and is refused. The charge is made before the
 * object is stored, so no create can slip in between check and charge.
 *
 * Invariants:
 * - a charge is written only with the resourceVersion of the quota it was computed from;
 * - on Conflict the whole decision is made again from a fresh read, never the old numbers;
 * - used + requested equal to hard is allowed; one more is refused, with upstream's message
 *   (`exceeded quota: q, requested: pods=1, used: pods=10, limited: pods=10`).
 *
 * What upstream does differently: its admission controller batches the waiting requests of a
 * namespace and charges them in one status write per quota (controller.go), so a burst costs
 * few conflicts; here each request charges alone and retries on its own.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go (quotaEvaluator.checkQuotas, checkRequest)
 * @chapter 03-api-security
 */
import type { ResourceQuota } from "../../../api/core.ts";
import {
  addLists,
  exceededNames,
  isZeroList,
  maskList,
  prettyPrint,
  type ResourceList,
} from "../../../quota/resources.ts";
import { isStatusError, newInternalError, type StatusError } from "../../errors.ts";

/** How the charge reads and writes one quota. */
export interface QuotaAccess {
  /** The quota as stored now (a fresh read, not a cache). */
  get(): Promise<ResourceQuota>;
  /**
   * Writes `quota.status`; with `metadata.resourceVersion` set, only if the stored quota still
   * has it (else a 409 Conflict). Without one, the write is unconditional.
   */
  updateStatus(quota: ResourceQuota): Promise<ResourceQuota>;
  /** The refusal, as the request's Forbidden (`pods "web" is forbidden: <why>`). */
  forbidden(why: string): StatusError;
}

/** How many times a charge re-reads after losing a race before it gives up. */
export const maxChargeAttempts = 1000;

// #region charge
/** Charges `delta` to one quota, or throws its Forbidden. */
export async function chargeQuota(delta: ResourceList, access: QuotaAccess): Promise<void> {
  for (let attempt = 0; attempt < maxChargeAttempts; attempt++) {
    const quota = await access.get();
    const hard = quota.status?.hard ?? {};
    const used = quota.status?.used ?? {};
    // Only what this quota limits.
    const requested = maskList(delta, Object.keys(hard));
    if (Object.keys(requested).length === 0 || isZeroList(requested)) return;
    const newUsed = addLists(used, requested);
    const exceeded = exceededNames(maskList(newUsed, Object.keys(requested)), hard);
    if (exceeded.length > 0) {
      throw access.forbidden(
        `exceeded quota: ${quota.metadata.name}, requested: ${prettyPrint(maskList(requested, exceeded))}, used: ${prettyPrint(maskList(used, exceeded))}, limited: ${prettyPrint(maskList(hard, exceeded))}`,
      );
    }
    const charged: ResourceQuota = {
      ...quota,
      status: { ...quota.status, hard, used: { ...used, ...newUsed } },
    };
    try {
      // The precondition: charged carries the resourceVersion this decision was made from.
      await access.updateStatus(charged);
      return;
    } catch (e) {
      if (isStatusError(e) && e.code === 409) continue; // lost the race: decide again
      throw e;
    }
  }
  throw newInternalError(`failed to charge quota after ${maxChargeAttempts} conflicts`);
}
// #endregion charge

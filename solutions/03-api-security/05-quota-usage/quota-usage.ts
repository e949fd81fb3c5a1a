/**
 * Solution: quota usage and the resourceVersion-conditioned charge.
 * The course's own versions are podHoldsCompute / podUsage in
 * code/quota/evaluator.ts and chargeQuota in quota-charge.ts.
 */
import type { Pod, ResourceList, ResourceQuota } from "../../../code/api/core.ts";
import type { QuotaAccess } from "../../../code/apiserver/admission/plugin/quota-charge.ts";
import { isStatusError } from "../../../code/apiserver/errors.ts";
import { addLists, exceededNames, isZeroList, maskList, prettyPrint } from "../../../code/quota/resources.ts";

/** The pieces the recorded mistakes change. */
export interface QuotaUsageParts {
  holdsCompute(pod: Pod, now: Date): boolean;
  /** Does a new usage pass hard? (used + requested may equal hard.) */
  exceeds(newUsed: ResourceList, hard: ResourceList): string[];
  /** The quota to write: the charged status, carrying the resourceVersion read. */
  toWrite(read: ResourceQuota, used: ResourceList): ResourceQuota;
  /** After a 409 Conflict: decide again (true) or give up with the error (false). */
  retryOnConflict: boolean;
}

export const reference: QuotaUsageParts = {
  holdsCompute(pod, now) {
    const phase = pod.status?.phase;
    if (phase === "Succeeded" || phase === "Failed") return false;
    const { deletionTimestamp, deletionGracePeriodSeconds } = pod.metadata;
    if (deletionTimestamp && typeof deletionGracePeriodSeconds === "number") {
      return now.getTime() <= Date.parse(deletionTimestamp) + deletionGracePeriodSeconds * 1000;
    }
    return true;
  },
  exceeds: (newUsed, hard) => exceededNames(newUsed, hard),
  toWrite: (read, used) => ({ ...read, status: { ...read.status, used } }),
  retryOnConflict: true,
};

export function withParts(parts: QuotaUsageParts) {
  return {
    podUsage(pod: Pod, now: Date): ResourceList {
      return parts.holdsCompute(pod, now) ? { "count/pods": "1", pods: "1" } : { "count/pods": "1" };
    },
    async chargeQuota(delta: ResourceList, access: QuotaAccess): Promise<void> {
      for (;;) {
        const quota = await access.get();
        const hard = quota.status?.hard ?? {};
        const used = quota.status?.used ?? {};
        const requested = maskList(delta, Object.keys(hard));
        if (Object.keys(requested).length === 0 || isZeroList(requested)) return;
        const newUsed = addLists(used, requested);
        const exceeded = parts.exceeds(maskList(newUsed, Object.keys(requested)), hard);
        if (exceeded.length > 0) {
          throw access.forbidden(
            `exceeded quota: ${quota.metadata.name}, requested: ${prettyPrint(maskList(requested, exceeded))}, used: ${prettyPrint(maskList(used, exceeded))}, limited: ${prettyPrint(maskList(hard, exceeded))}`,
          );
        }
        try {
          await access.updateStatus(parts.toWrite(quota, { ...used, ...newUsed }));
          return;
        } catch (e) {
          if (parts.retryOnConflict && isStatusError(e) && e.code === 409) continue;
          throw e;
        }
      }
    },
  };
}

export const { podUsage, chargeQuota } = withParts(reference);

// Mistake: on a Conflict the write is retried with a fresh resourceVersion, but the check is not
// made again. Plausible because "retry on conflict" is the rule; but the numbers written are the
// old read's, and a charge that no longer fits is written anyway.

import type { ResourceList } from "../../../code/api/core.ts";
import type { QuotaAccess } from "../../../code/apiserver/admission/plugin/quota-charge.ts";
import { isStatusError } from "../../../code/apiserver/errors.ts";
import { addLists, exceededNames, maskList, prettyPrint } from "../../../code/quota/resources.ts";
import { reference, withParts } from "./quota-usage.ts";

export const { podUsage } = withParts(reference);

export async function chargeQuota(delta: ResourceList, access: QuotaAccess): Promise<void> {
  const quota = await access.get();
  const hard = quota.status?.hard ?? {};
  const used = quota.status?.used ?? {};
  const requested = maskList(delta, Object.keys(hard));
  if (Object.keys(requested).length === 0) return;
  const newUsed = addLists(used, requested);
  const exceeded = exceededNames(maskList(newUsed, Object.keys(requested)), hard);
  if (exceeded.length > 0) {
    throw access.forbidden(
      `exceeded quota: ${quota.metadata.name}, requested: ${prettyPrint(maskList(requested, exceeded))}, used: ${prettyPrint(maskList(used, exceeded))}, limited: ${prettyPrint(maskList(hard, exceeded))}`,
    );
  }
  for (;;) {
    const fresh = await access.get();
    try {
      await access.updateStatus({ ...fresh, status: { ...fresh.status, used: { ...used, ...newUsed } } });
      return;
    } catch (e) {
      if (!(isStatusError(e) && e.code === 409)) throw e;
    }
  }
}

// Mistake: the charge is written without the resourceVersion it was computed from ("to avoid
// conflicts"). Plausible because the write then never fails; but fifty requests that all read
// `used: pods=3` all pass the check and all write `pods=4`: the quota is exceeded and its used
// is wrong.
import { reference, withParts } from "./quota-usage.ts";

export const { podUsage, chargeQuota } = withParts({
  ...reference,
  toWrite: (read, used) => ({
    ...read,
    metadata: { ...read.metadata, resourceVersion: undefined },
    status: { ...read.status, used },
  }),
});

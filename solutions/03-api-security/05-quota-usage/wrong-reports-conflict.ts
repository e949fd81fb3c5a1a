// Mistake: a 409 Conflict on the status write is returned to the client. Plausible because 409 is
// what a stale write gets; but the race is the server's own (another create charged first), and
// the client sees a Conflict for a pod the quota had room for.
import { reference, withParts } from "./quota-usage.ts";

export const { podUsage, chargeQuota } = withParts({ ...reference, retryOnConflict: false });

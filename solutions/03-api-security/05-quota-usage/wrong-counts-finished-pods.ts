// Mistake: every stored pod counts towards `pods`, finished or long past its deletion grace.
// Plausible because the pod is still in storage (and count/pods does count it); but a Succeeded
// job's pod holds no compute, and a namespace full of finished pods could run nothing new.
import { reference, withParts } from "./quota-usage.ts";

export const { podUsage, chargeQuota } = withParts({ ...reference, holdsCompute: () => true });

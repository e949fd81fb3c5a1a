// Mistake: the check refuses when the new usage reaches hard (>=) instead of when it passes it
// (>). Plausible because "at the limit" sounds like "over it"; but `pods: 10` then admits nine.
import { cmpQuantity, parseQuantity } from "../../../code/api/quantity.ts";
import { reference, withParts } from "./quota-usage.ts";

export const { podUsage, chargeQuota } = withParts({
  ...reference,
  exceeds: (newUsed, hard) =>
    Object.keys(newUsed).filter((name) => {
      const [a, b] = [parseQuantity(newUsed[name]), parseQuantity(hard[name])];
      return a !== undefined && b !== undefined && cmpQuantity(a, b) >= 0;
    }),
});

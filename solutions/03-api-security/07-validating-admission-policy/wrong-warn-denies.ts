// Mistake: Warn is treated like Deny. Plausible because a failed validation "should" stop the
// request, and Warn reads like a milder Deny; but Warn exists precisely to roll a new policy out
// without refusing anything — a cluster trying a policy in Warn mode would start failing writes.
import { outcomeWith, reference } from "./validation-actions.ts";

export const outcome = outcomeWith({
  ...reference,
  actions: (binding) => (binding.spec.validationActions ?? []).map((a) => (a === "Warn" ? "Deny" : a)),
});

// Mistake: the denial names the policy but not the binding. Plausible because the policy holds the
// expression that failed; but one policy can have many bindings with different params and scopes,
// and the person reading kubectl's error needs to know which binding refused them.
import { outcomeWith, reference } from "./validation-actions.ts";

export const outcome = outcomeWith({
  ...reference,
  denial: (policy, _binding, message) => `ValidatingAdmissionPolicy '${policy}' denied request: ${message}`,
});

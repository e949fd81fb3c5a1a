// Mistake: only the first action listed is carried out. Plausible if validationActions is read
// as a choice of one mode; but `[Deny, Audit]` is upstream's recommended pair — refuse and keep a
// record — and the audit record would silently never be written.
import { outcomeWith, reference } from "./validation-actions.ts";

export const outcome = outcomeWith({
  ...reference,
  actions: (binding) => (binding.spec.validationActions ?? []).slice(0, 1),
});

// Mistake: each servant rule must be covered whole by one owner rule, without breaking it into
// atoms. Plausible because a role's rules look like the unit of permission; but a user who holds
// `get pods` from one binding and `list pods` from another could not grant `get, list pods`, and
// the missing list names whole rules instead of what is actually missing.
import type { PolicyRule } from "../../../code/api/rbac.ts";
import { coversWith, reference } from "./covers.ts";

export const covers = coversWith({
  ...reference,
  // The mistake: the rule is its own only "atom".
  breakdown: (rule: PolicyRule) => [rule],
});

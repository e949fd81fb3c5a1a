/**
 * Exercise: the escalation check's comparison — do the owner's rules cover every rule granted?
 *
 * Break each granted (servant) rule into atoms (one group, resource, verb and at most one name;
 * or one URL and verb) and look for one owner rule that covers each. README.md has the rules.
 */
import type { PolicyRule } from "../../../code/api/rbac.ts";

/** [true, []] when `ownerRules` cover `servantRules`; else [false, the atoms not covered]. */
export function covers(
  ownerRules: readonly PolicyRule[],
  servantRules: readonly PolicyRule[],
): [boolean, PolicyRule[]] {
  throw new Error(
    `TODO: covers — break ${servantRules.length} rule(s) into atoms and find one of ${ownerRules.length} owner rule(s) covering each`,
  );
}

// Mistake: non-resource URLs are compared exactly, with only a lone `*` special. Plausible because
// resources have no prefix patterns either; but `system:discovery` grants `/apis/*`, and kubectl's
// discovery of `/apis/apps/v1` would then be forbidden to every user.
import { reference, ruleAllowsWith } from "./rule-allows.ts";

export const ruleAllows = ruleAllowsWith({
  ...reference,
  // The mistake: no trailing-star prefix match.
  url: (rule, path) => (rule.nonResourceURLs ?? []).some((u) => u === "*" || u === path),
});

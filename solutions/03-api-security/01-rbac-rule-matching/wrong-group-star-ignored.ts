// Mistake: `*` is honoured in verbs and resources but not in apiGroups. Plausible because groups
// look like names, not patterns; but cluster-admin is `*` on `*` in `*`, and the admin would then
// be refused everything outside the core group.
import { reference, ruleAllowsWith } from "./rule-allows.ts";

export const ruleAllows = ruleAllowsWith({
  ...reference,
  // The mistake: only an exact group matches.
  group: (rule, group) => (rule.apiGroups ?? []).includes(group),
});

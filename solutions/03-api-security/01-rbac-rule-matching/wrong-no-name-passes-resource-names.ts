// Mistake: a request without a name passes a rule limited to resourceNames. Plausible because
// "no name given, so no name to refuse"; but a `list` or `watch` returns every object, so a rule
// meant for one ConfigMap would read them all.
import { reference, ruleAllowsWith } from "./rule-allows.ts";

export const ruleAllows = ruleAllowsWith({
  ...reference,
  // The mistake: an empty request name treated as "nothing to check".
  name: (rule, name) => name === "" || reference.name(rule, name),
});

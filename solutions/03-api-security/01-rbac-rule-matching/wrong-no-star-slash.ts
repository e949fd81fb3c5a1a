// Mistake: `*/scale` is compared literally, like any other resource name. Plausible because `*`
// alone already means "everything" and the combined form looks like a typo; but upstream's
// autoscaling roles grant `*/scale`, and an autoscaler would then be refused every scale it manages.
import { reference, ruleAllowsWith } from "./rule-allows.ts";

export const ruleAllows = ruleAllowsWith({
  ...reference,
  // The mistake: no `*/<subresource>` form.
  resource: (rule, combined) => (rule.resources ?? []).some((r) => r === "*" || r === combined),
});

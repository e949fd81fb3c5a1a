// Mistake: the resource is matched without its subresource. Plausible because the request's
// `resource` field says `pods` and the rule says `pods`; but then every pod reader may also read
// `pods/log`, and anyone allowed to create pods may `create pods/exec` — run commands in them.
import { reference, ruleAllowsWith } from "./rule-allows.ts";

export const ruleAllows = ruleAllowsWith({
  ...reference,
  // The mistake: `pods/log` reduced to `pods` before comparing.
  resource: (rule, combined, subresource) =>
    reference.resource(rule, combined.split("/")[0] as string, subresource),
});

// Mistake: a 410 on the watch relists at "" at once. Plausible — the version is gone, so ask for
// the newest — but a list at "" is a quorum read from etcd of the whole collection, while a list
// at the last seen resourceVersion is usually served by the watch cache. Only a 410 on that list
// justifies "".
import { type Outcome, type ReflectorState, reference, type Step } from "./next-step.ts";

export function nextStep(state: ReflectorState, outcome: Outcome): Step {
  if ((outcome.type === "watch-refused" || outcome.type === "watch-error-event") && outcome.code === 410) {
    return { action: "list", resourceVersion: "", backoff: true };
  }
  return reference(state, outcome);
}

// Mistake: a 429 is handled like a 410 — relist. Plausible — both are errors that end the watch —
// but the server said "too many requests": answering with a list of the whole collection, from
// every reflector at once, is the storm it asked to stop. Back off and watch again.
import { type Outcome, type ReflectorState, reference, type Step } from "./next-step.ts";

export function nextStep(state: ReflectorState, outcome: Outcome): Step {
  if ((outcome.type === "watch-refused" || outcome.type === "watch-error-event") && outcome.code === 429) {
    return { action: "list", resourceVersion: state.lastSyncResourceVersion, backoff: true };
  }
  return reference(state, outcome);
}

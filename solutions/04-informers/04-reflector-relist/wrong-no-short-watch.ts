// Mistake: every clean end of a watch resumes, however short. Plausible — nothing went wrong that
// the reflector could see — but a proxy that closes every stream at once then gets an endless,
// unthrottled loop of watch calls. Under a second with no event counts as an error.
import { type Outcome, type ReflectorState, reference, type Step } from "./next-step.ts";

export function nextStep(state: ReflectorState, outcome: Outcome): Step {
  if (outcome.type === "watch-closed") {
    return { action: "watch", resourceVersion: state.lastSyncResourceVersion, backoff: false };
  }
  return reference(state, outcome);
}

// Mistake: any end of a watch relists. Plausible — a fresh list is surely correct — but every
// watch times out within 10 minutes, so every reflector in the cluster re-reads its whole
// collection that often, and resuming (the point of resourceVersion) is lost.
import { type Outcome, type ReflectorState, reference, type Step } from "./next-step.ts";

export function nextStep(state: ReflectorState, outcome: Outcome): Step {
  if (outcome.type === "watch-closed") {
    return { action: "list", resourceVersion: state.lastSyncResourceVersion, backoff: true };
  }
  return reference(state, outcome);
}

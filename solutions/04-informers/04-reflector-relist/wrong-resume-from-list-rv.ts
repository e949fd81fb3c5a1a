// Mistake: a closed watch resumes from the list's resourceVersion. Plausible — that is where the
// watch started — but it replays every event since, and it ignores bookmarks: a quiet watch's
// position never moves, so after a compaction the resume is answered 410 and forces a relist.
import { type Outcome, type ReflectorState, reference, type Step } from "./next-step.ts";

export function nextStep(state: ReflectorState, outcome: Outcome): Step {
  const step = reference(state, outcome);
  if (
    outcome.type === "watch-closed" ||
    outcome.type === "watch-refused" ||
    outcome.type === "watch-error-event"
  ) {
    return { ...step, resourceVersion: state.listResourceVersion };
  }
  return step;
}

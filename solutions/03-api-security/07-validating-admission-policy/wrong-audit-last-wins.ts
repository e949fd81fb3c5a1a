// Mistake: every failure overwrites the audit annotation, so the last one is recorded. Plausible
// because a map assignment is the obvious way to "add" an annotation; but upstream's AddAnnotation
// keeps the first value of a key, so the audit log names the first validation that failed.
import { outcomeWith, reference, validationFailureKey } from "./validation-actions.ts";

export const outcome = outcomeWith({
  ...reference,
  audit: (annotations, value) => {
    annotations[validationFailureKey] = value;
  },
});

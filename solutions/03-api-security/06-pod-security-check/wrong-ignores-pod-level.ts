// Mistake: only the container's own field counts; the pod-level runAsNonRoot=true is ignored.
// Plausible because the check reads "every container must run as non-root"; but upstream lets
// the pod say it once for all, and most well-written pods do exactly that — they would all be refused.
import { reference, runAsNonRootWith } from "./run-as-non-root.ts";

export const runAsNonRoot = runAsNonRootWith({
  ...reference,
  implicitlyFine: (own) => own !== undefined,
});

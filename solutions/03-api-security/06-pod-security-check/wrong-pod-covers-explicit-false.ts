// Mistake: the pod's runAsNonRoot=true wins over a container's explicit false. Plausible if
// "the pod sets it for everyone" is read as an override; but the container's field is the more
// specific one — the kubelet would run that container as root, so the check must refuse it.
import { reference, runAsNonRootWith } from "./run-as-non-root.ts";

export const runAsNonRoot = runAsNonRootWith({
  ...reference,
  explicitlyBad: (own, pod) => own === false && pod !== true,
  implicitlyFine: (own, pod) => own === true || pod === true,
});

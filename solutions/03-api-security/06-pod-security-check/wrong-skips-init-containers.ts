// Mistake: only spec.containers are judged. Plausible because "the containers" of a pod usually
// means that list; but init and ephemeral containers run code with the same privileges, so a
// root process would simply move into an init container.
import { reference, runAsNonRootWith } from "./run-as-non-root.ts";

export const runAsNonRoot = runAsNonRootWith({
  ...reference,
  containers: (spec) => spec.containers ?? [],
});

/**
 * Exercise: the restricted level's runAsNonRoot check.
 *
 * Every container must run with securityContext.runAsNonRoot=true, set on the container or
 * once on the pod. README.md has the rules and the exact messages.
 *
 * Helpers you may import from code/apiserver/admission/podsecurity/checks.ts: `allowed`,
 * `forbidden(reason, detail)`, `containersOf(spec)` (init, regular and ephemeral containers in
 * order) and `containersPhrase(names)` (`container "a"` / `containers "a", "b"`).
 */
import type { CheckPod } from "../../../code/apiserver/admission/podsecurity/checks.ts";

export const runAsNonRoot: CheckPod = (_meta, spec) => {
  throw new Error(
    `TODO: runAsNonRoot — judge ${spec.containers?.length ?? 0} container(s) and the pod's securityContext`,
  );
};

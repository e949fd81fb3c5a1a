// Reference solution: the restricted level's runAsNonRoot check (upstream's runAsNonRoot_1_0).
//
// Each decision is one named step in `reference`; `runAsNonRootWith` puts them together. A
// recorded mistake next to this file (wrong-*.ts) is this answer with one step done wrong.
import {
  allowed,
  type CheckPod,
  type Container,
  containersOf,
  containersPhrase,
  forbidden,
  type PodSpec,
} from "../../../code/apiserver/admission/podsecurity/checks.ts";

export interface RunAsNonRootSteps {
  /** Which containers are judged. */
  containers(spec: PodSpec): Container[];
  /** Is a container that sets `own` (maybe nothing) fine, given the pod's value? */
  implicitlyFine(own: boolean | undefined, pod: boolean | undefined): boolean;
  /** Does a container's explicit false count as a fault? */
  explicitlyBad(own: boolean | undefined, pod: boolean | undefined): boolean;
}

export const reference: RunAsNonRootSteps = {
  // Init and ephemeral containers run code too.
  containers: containersOf,
  // Unset is covered only by the pod's true; a container's own true is enough.
  implicitlyFine: (own, pod) => own !== undefined || pod === true,
  // false is false, whatever the pod says.
  explicitlyBad: (own) => own === false,
};

export function runAsNonRootWith(step: RunAsNonRootSteps): CheckPod {
  return (_meta, spec) => {
    const pod = spec.securityContext?.runAsNonRoot;
    const setters: string[] = pod === false ? ["pod"] : [];
    const explicit: string[] = [];
    const implicit: string[] = [];
    for (const c of step.containers(spec)) {
      const own = c.securityContext?.runAsNonRoot;
      if (step.explicitlyBad(own, pod)) explicit.push(c.name);
      else if (!step.implicitlyFine(own, pod)) implicit.push(c.name);
    }
    if (explicit.length > 0) setters.push(containersPhrase(explicit));
    if (setters.length > 0) {
      return forbidden(
        "runAsNonRoot != true",
        `${setters.join(" and ")} must not set securityContext.runAsNonRoot=false`,
      );
    }
    if (implicit.length > 0) {
      return forbidden(
        "runAsNonRoot != true",
        `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true`,
      );
    }
    return allowed;
  };
}

export const runAsNonRoot = runAsNonRootWith(reference);

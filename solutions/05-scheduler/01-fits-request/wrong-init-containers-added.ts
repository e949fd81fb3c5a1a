// Mistake: init containers' requests are added to the containers', like any other container.
// Plausible: "the pod has these containers, sum them all". But init containers run one at a time
// and finish before the app starts, so the pod needs only the largest of them at once: adding
// them makes a pod with a heavy migration step look too big for a node it fits on.

import type { Pod } from "../../../code/api/core.ts";
import { Resource } from "../../../code/scheduler/framework/types.ts";

export { fitsRequest, type InsufficientResource } from "./fits-request.ts";

export function computePodResourceRequest(pod: Pod): Resource {
  const reqs = new Resource();
  for (const c of [...(pod.spec.containers ?? []), ...(pod.spec.initContainers ?? [])]) {
    reqs.add(c.resources?.requests);
  }
  reqs.add((pod.spec as { overhead?: Record<string, string> }).overhead);
  return reqs;
}

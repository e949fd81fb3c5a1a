// Mistake: the pod's overhead is left out — only what the containers request is counted.
// Plausible: overhead is not in any container's resources, and most pods have none. But with a
// RuntimeClass such as Kata, the sandbox VM itself costs CPU and memory on the node; ignore it and
// the node is promised more than it has.

import type { Pod } from "../../../code/api/core.ts";
import type { Resource } from "../../../code/scheduler/framework/types.ts";
import { computePodResourceRequest as correct } from "./fits-request.ts";

export { fitsRequest, type InsufficientResource } from "./fits-request.ts";

export function computePodResourceRequest(pod: Pod): Resource {
  const { overhead: _ignored, ...spec } = pod.spec as typeof pod.spec & { overhead?: unknown };
  return correct({ ...pod, spec });
}

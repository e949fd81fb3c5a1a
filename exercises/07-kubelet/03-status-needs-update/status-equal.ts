/**
 * Exercise: the status manager's "only write on change" — are two pod statuses the same as far
 * as the kubelet is concerned? README.md has the rules.
 *
 * The test plugs your function into the course's real StatusManager
 * (code/kubelet/status/status-manager.ts) and counts the requests it sends to the API server.
 */
import type { PodStatus } from "../../../code/api/core.ts";
import { semanticEqual } from "../../../code/kubelet/status/patch-pod-status.ts";
import {
  podConditionByKubelet,
  podConditionSharedByKubelet,
} from "../../../code/kubelet/status/status-manager.ts";

export function isPodStatusByKubeletEqual(oldStatus: PodStatus, status: PodStatus): boolean {
  throw new Error(
    `TODO: isPodStatusByKubeletEqual(${oldStatus.phase} with ${oldStatus.conditions?.length ?? 0} conditions, ${status.phase} with ${status.conditions?.length ?? 0}) — see ${[podConditionByKubelet, podConditionSharedByKubelet, semanticEqual].map((f) => f.name).join(", ")}`,
  );
}

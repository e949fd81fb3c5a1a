/**
 * Container helpers — the small questions about a pod's containers that the kubelet's phase,
 * conditions and runtime manager all ask. Mirrors kubernetes/kubernetes pkg/kubelet/container/helpers.go.
 *
 * Solves:
 * - a sidecar is an init container with `restartPolicy: Always`: it keeps running beside the
 *   app containers, so phase and readiness treat it unlike a run-to-completion init container;
 * - once any app container has run, the pod was initialized, even if a sidecar is restarting now:
 *   without this a pod would fall back to Pending (and Initialized=False) on every sidecar crash.
 *
 * Invariants:
 * - `getContainerStatus` finds a status by name only (statuses carry no spec index);
 * - `hasAnyRegularContainerStarted` looks only at names in `spec.containers`, and counts a
 *   container as started when it is running or has terminated (waiting does not count).
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/container/helpers.go (HasAnyRegularContainerStarted)
 * @upstream kubernetes/kubernetes pkg/kubelet/types/pod_update.go (IsRestartableInitContainer)
 * @upstream kubernetes/kubernetes pkg/api/v1/pod/util.go (GetContainerStatus)
 * @chapter 07-kubelet
 */

import type { Container, ContainerStatus, PodSpec } from "../../api/core.ts";

/** A sidecar: an init container that the kubelet restarts, as it would an app container. */
export function isRestartableInitContainer(c: Container): boolean {
  return c.restartPolicy === "Always";
}

export function getContainerStatus(
  statuses: ContainerStatus[] | undefined,
  name: string,
): ContainerStatus | undefined {
  return statuses?.find((s) => s.name === name);
}

/** Whether an app container has ever run — proof that every init container had finished. */
export function hasAnyRegularContainerStarted(
  spec: PodSpec,
  statuses: ContainerStatus[] | undefined,
): boolean {
  if (!statuses || statuses.length === 0) return false;
  const names = new Set(spec.containers.map((c) => c.name));
  return statuses.some(
    (s) => names.has(s.name) && (s.state?.running !== undefined || s.state?.terminated !== undefined),
  );
}

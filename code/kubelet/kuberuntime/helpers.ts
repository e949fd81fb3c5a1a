/**
 * Runtime manager helpers — the small translations between the kubelet's words and the CRI's:
 * states, log paths, the pod's printed name, and the questions asked of a runtime pod status
 * ("the newest status of container x", "should it run again?").
 * Mirrors kubernetes/kubernetes pkg/kubelet/kuberuntime/helpers.go.
 *
 * Solves: computePodActions, SyncPod, GetPodStatus and generateAPIPodStatus all ask the same
 * questions of a kubecontainer.PodStatus; answering them in one place keeps the answers equal.
 *
 * Invariants:
 * - a PodStatus lists containers newest first, so "find by name" returns the latest attempt;
 * - a container is restarted when it never ran, is created-but-not-started or unknown, or exited
 *   and the restartPolicy allows it (Never: never; OnFailure: only a non-zero exit) — and never
 *   once the pod is being deleted;
 * - log paths are `<root>/<namespace>_<name>_<uid>/<container>/<restartCount>.log`.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/helpers.go (toKubeContainerState, BuildContainerLogsDirectory, BuildPodLogsDirectory, buildContainerLogsPath, getStableKey)
 * @upstream kubernetes/kubernetes pkg/kubelet/container/helpers.go (ShouldContainerBeRestarted, ConvertPodStatusToRunningPod)
 * @upstream kubernetes/kubernetes pkg/kubelet/container/runtime.go (PodStatus.FindContainerStatusByName)
 * @upstream kubernetes/kubernetes pkg/kubelet/util/format/pod.go (Pod)
 * @chapter 07-kubelet
 */

import type { Container, Pod } from "../../api/core.ts";
import type { PodStatus, State, Status } from "../container/runtime.ts";
import type { ContainerState } from "../runtime/cri.ts";

/** format.Pod: `name_namespace(uid)`, how the kubelet names a pod in messages. */
export function formatPod(pod: Pod): string {
  return `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
}

export function toKubeContainerState(state: ContainerState): State {
  switch (state) {
    case "CONTAINER_CREATED":
      return "created";
    case "CONTAINER_RUNNING":
      return "running";
    case "CONTAINER_EXITED":
      return "exited";
    default:
      return "unknown";
  }
}

export function buildPodLogsDirectory(root: string, namespace: string, name: string, uid: string): string {
  return `${root}/${namespace}_${name}_${uid}`;
}

export function buildContainerLogsDirectory(
  root: string,
  namespace: string,
  name: string,
  uid: string,
  containerName: string,
): string {
  return `${buildPodLogsDirectory(root, namespace, name, uid)}/${containerName}`;
}

/** Relative to the sandbox's log directory. */
export function buildContainerLogsPath(containerName: string, restartCount: number): string {
  return `${containerName}/${restartCount}.log`;
}

/** The newest status of the container named `name`. */
export function findContainerStatusByName(podStatus: PodStatus, name: string): Status | undefined {
  return podStatus.containerStatuses.find((s) => s.name === name);
}

/** Whether a container that is not running should be (re)started on the next sync. */
export function shouldContainerBeRestarted(container: Container, pod: Pod, podStatus: PodStatus): boolean {
  // A pod being deleted only shuts down.
  if (pod.metadata.deletionTimestamp) return false;
  const status = findContainerStatusByName(podStatus, container.name);
  if (!status) return true; // never ran (or its history was garbage-collected)
  if (status.state === "running") return false;
  if (status.state === "unknown" || status.state === "created") return true;
  const restartPolicy = pod.spec.restartPolicy ?? "Always";
  if (restartPolicy === "Never") return false;
  if (restartPolicy === "OnFailure" && status.exitCode === 0) return false;
  return true;
}

export function shouldRestartOnFailure(pod: Pod): boolean {
  return (pod.spec.restartPolicy ?? "Always") !== "Never";
}

/** An init container failed if it was OOM-killed, exited non-zero, or is in an unknown state. */
export function isInitContainerFailed(status: Status): boolean {
  if (status.reason === "OOMKilled") return true;
  if (status.state === "exited" && status.exitCode !== 0) return true;
  return status.state === "unknown";
}

export function containerSucceeded(c: Container, podStatus: PodStatus): boolean {
  const s = findContainerStatusByName(podStatus, c.name);
  if (!s || s.state === "running") return false;
  return s.exitCode === 0;
}

/** Go's time.Duration.String() for a whole number of milliseconds: 0s, 313ms, 1.594s, 1m20.5s. */
export function goDuration(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const restMs = ms % 60_000;
  const secs = `${Math.floor(restMs / 1000)}${
    restMs % 1000
      ? `.${String(restMs % 1000)
          .padStart(3, "0")
          .replace(/0+$/, "")}`
      : ""
  }s`;
  if (h > 0) return `${h}h${m}m${secs}`;
  return m > 0 ? `${m}m${secs}` : secs;
}

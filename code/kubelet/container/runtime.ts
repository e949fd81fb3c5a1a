/**
 * kubecontainer.Runtime — the kubelet's own view of a container runtime, one level above the CRI:
 * whole pods in, whole pod statuses out.
 * Mirrors kubernetes/kubernetes pkg/kubelet/container/runtime.go.
 *
 * Solves: the kubelet's sync loop thinks in pods ("make this pod's containers match its spec",
 * "kill this pod", "what is this pod's state?"); the CRI thinks in sandboxes and containers. The
 * runtime manager (kuberuntime) translates one into the other, so the loop never lists containers
 * or reads CRI labels itself.
 *
 * Invariants:
 * - a PodStatus is a snapshot of the runtime at `timeStamp`: every sandbox and every container the
 *   runtime still has for the pod, newest first, including exited ones (their exit codes are how the
 *   kubelet computes lastState, restartCount and the phase).
 * - syncPod never throws for a container's failure: each action's outcome is a SyncResult, and the
 *   kubelet turns failed ones (ErrImagePull, CrashLoopBackOff, …) into waiting reasons.
 * - times here are milliseconds since the epoch (the CRI's are nanoseconds).
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/container/runtime.go (Runtime, Pod, PodStatus, Status, ContainerID, State)
 * @upstream kubernetes/kubernetes pkg/kubelet/container/helpers.go (ConvertPodStatusToRunningPod)
 * @upstream kubernetes/kubernetes pkg/kubelet/container/sync_result.go (PodSyncResult, SyncResult, SyncAction)
 * @chapter 07-kubelet
 */

import type { Pod } from "../../api/core.ts";
import type { Backoff } from "../../client/util/flowcontrol/backoff.ts";
import type { PodSandboxStatus } from "../runtime/cri.ts";

/** `containerd://3f2a…` in a pod's status: the runtime's name, then its id. */
export interface ContainerID {
  type: string;
  id: string;
}

export const containerIDString = (id: ContainerID): string => `${id.type}://${id.id}`;

export function parseContainerID(s: string): ContainerID {
  const i = s.indexOf("://");
  if (i < 0) throw new Error(`invalid container ID: "${s}"`);
  return { type: s.slice(0, i), id: s.slice(i + 3) };
}

/** kubecontainer.State: the CRI's four states in the kubelet's spelling. */
export type State = "created" | "running" | "exited" | "unknown";

/** One container as the runtime last saw it (kubecontainer.Status). */
export interface Status {
  id: ContainerID;
  name: string;
  state: State;
  createdAt: number;
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  /** The image as the pod spec names it, and what it resolved to. */
  image: string;
  imageID: string;
  imageRef: string;
  /** The spec's hash when the container was created: a change means "recreate it". */
  hash: string;
  restartCount: number;
  reason: string;
  message: string;
}

/** Everything the runtime has for one pod (kubecontainer.PodStatus). */
export interface PodStatus {
  id: string;
  name: string;
  namespace: string;
  /** The newest sandbox's IPs, the first one primary. */
  ips: string[];
  containerStatuses: Status[];
  sandboxStatuses: PodSandboxStatus[];
  timeStamp: number;
}

/** A container or sandbox in a running pod listing (kubecontainer.Container). */
export interface RuntimeContainer {
  id: ContainerID;
  name: string;
  image: string;
  imageID: string;
  hash: string;
  state: State;
}

/** A pod as the runtime lists it (kubecontainer.Pod): what runs, not what should. */
export interface RuntimePod {
  id: string;
  name: string;
  namespace: string;
  containers: RuntimeContainer[];
  sandboxes: RuntimeContainer[];
}

/** sync_result.go's SyncAction. */
export type SyncAction =
  | "StartContainer"
  | "KillContainer"
  | "RunContainerError"
  | "CreatePodSandbox"
  | "ConfigPodSandbox"
  | "KillPodSandbox";

/** The outcome of one action on one target (a container's name, or the pod's sandbox). */
export interface SyncResult {
  action: SyncAction;
  target: string;
  /** The reason on failure (ErrImagePull, ImagePullBackOff, CrashLoopBackOff, …); "" on success. */
  error: string;
  message: string;
}

export interface PodSyncResult {
  syncResults: SyncResult[];
  /** A failure of the sync as a whole (listing the runtime failed, …). */
  syncError?: Error;
}

/** The first failed result, as upstream's PodSyncResult.Error() reports it. */
export function podSyncError(result: PodSyncResult): Error | undefined {
  if (result.syncError) return result.syncError;
  const failed = result.syncResults.find((r) => r.error !== "");
  return failed
    ? new Error(
        `failed to "${failed.action}" for "${failed.target}" with ${failed.error}: "${failed.message}"`,
      )
    : undefined;
}

export interface Runtime {
  /** "containerd", "process", "fake": the prefix of every ContainerID. */
  type(): string;
  /** Pods with at least one sandbox or container; `all` includes exited ones. */
  getPods(all: boolean): Promise<RuntimePod[]>;
  /**
   * Makes the runtime match the pod's spec: a sandbox, then init containers in order, then app
   * containers, restarting exited ones per restartPolicy through `backOff` (CrashLoopBackOff).
   */
  syncPod(pod: Pod, podStatus: PodStatus, backOff: Backoff): Promise<PodSyncResult>;
  /**
   * Stops every container of the pod (preStop hooks, SIGTERM, the grace period, SIGKILL) and then
   * its sandboxes. `pod` is undefined for a pod the kubelet no longer knows (an orphan).
   */
  killPod(pod: Pod | undefined, runningPod: RuntimePod, gracePeriodOverride?: number): Promise<void>;
  getPodStatus(uid: string, name: string, namespace: string): Promise<PodStatus>;
  /** Removes a terminated pod's exited containers and sandboxes (the kubelet's cleanup after syncTerminatedPod). */
  removeTerminatedPod(uid: string): Promise<void>;
}

/** ConvertPodStatusToRunningPod: the running part of a pod status, as killPod takes it — running containers, every sandbox. */
export function convertPodStatusToRunningPod(runtimeName: string, podStatus: PodStatus): RuntimePod {
  return {
    id: podStatus.id,
    name: podStatus.name,
    namespace: podStatus.namespace,
    containers: podStatus.containerStatuses
      .filter((s) => s.state === "running")
      .map((s) => ({
        id: s.id,
        name: s.name,
        image: s.image,
        imageID: s.imageID,
        hash: s.hash,
        state: s.state,
      })),
    sandboxes: podStatus.sandboxStatuses.map((s) => ({
      id: { type: runtimeName, id: s.id },
      name: "",
      image: "",
      imageID: "",
      hash: "",
      state: s.state === "SANDBOX_READY" ? "running" : "exited",
    })),
  };
}

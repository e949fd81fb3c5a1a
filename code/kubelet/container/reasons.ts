/**
 * Container state reasons — the words in `state.waiting.reason` and `state.terminated.reason`
 * that `kubectl get pods` shows in its STATUS column.
 *
 * Solves: users, scripts and alerts match on these exact strings (`CrashLoopBackOff`,
 * `ImagePullBackOff`, `OOMKilled`), so ours are upstream's, each from the file that defines it.
 *
 * Invariants:
 * - the kubelet sets a waiting reason itself: ContainerCreating / PodInitializing while a
 *   container has no runtime state yet, and, from the error of its last sync, CrashLoopBackOff,
 *   ErrImagePull, ImagePullBackOff and the other sync errors;
 * - terminated reasons (Completed, Error, OOMKilled) are not the kubelet's: the CRI runtime
 *   reports them and the kubelet copies them through.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (PodInitializing, ContainerCreating)
 * @upstream kubernetes/kubernetes pkg/kubelet/container/sync_result.go (ErrCrashLoopBackOff, ErrRunContainer, ErrCreateContainerConfig, ErrCreateContainer, ErrPostStartHook, ErrRunInitContainer)
 * @upstream kubernetes/kubernetes pkg/kubelet/images/types.go (ErrImagePullBackOff, ErrImagePull, ErrImageNeverPull, ErrInvalidImageName, ErrImageInspect)
 * @upstream containerd/containerd pkg/cri/server/helpers.go (completeExitReason, errorExitReason, oomExitReason, errorStartReason — internal/cri/server/ in containerd 2.0)
 * @chapter 07-kubelet
 */

// #region waiting-reasons
// Set by the kubelet (kubelet_pods.go) while the runtime has nothing for the container yet.
export const ContainerCreating = "ContainerCreating";
/** Instead of ContainerCreating for app containers of a pod that has init containers. */
export const PodInitializing = "PodInitializing";

// The errors of a sync (kubecontainer/sync_result.go), shown as the waiting reason.
export const ErrCrashLoopBackOff = "CrashLoopBackOff";
export const ErrRunContainer = "RunContainerError";
export const ErrRunInitContainer = "RunInitContainerError";
export const ErrCreateContainerConfig = "CreateContainerConfigError";
export const ErrCreateContainer = "CreateContainerError";
export const ErrPostStartHook = "PostStartHookError";

// Image errors (images/types.go).
export const ErrImagePull = "ErrImagePull";
export const ErrImagePullBackOff = "ImagePullBackOff";
export const ErrImageNeverPull = "ErrImageNeverPull";
export const ErrInvalidImageName = "InvalidImageName";
export const ErrImageInspect = "ImageInspectError";
// #endregion waiting-reasons

// #region terminated-reasons
// Reported by the CRI runtime (containerd's cri plugin) and copied by the kubelet.
export const CompletedExitReason = "Completed";
export const ErrorExitReason = "Error";
export const OOMKilledExitReason = "OOMKilled";
/** The container's process could not be started; exit code 128 goes with it. */
export const StartErrorExitReason = "StartError";

/** The reason a runtime gives a container that exited with `exitCode` (and was or was not OOM-killed). */
export function terminatedReason(exitCode: number, oomKilled: boolean): string {
  if (oomKilled) return OOMKilledExitReason;
  return exitCode === 0 ? CompletedExitReason : ErrorExitReason;
}
// #endregion terminated-reasons

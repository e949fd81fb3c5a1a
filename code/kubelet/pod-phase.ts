/**
 * getPhase — the pod's phase (Pending, Running, Succeeded, Failed) from its containers' states.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (getPhase).
 *
 * Solves: the phase is the one word every controller reads (a Job counts Succeeded and Failed
 * pods, a ReplicaSet replaces Failed ones), but it is not stored anywhere the kubelet can look it
 * up: the kubelet recomputes it from the container statuses on every sync, so the rules must say
 * what each mix of running, waiting and exited containers means under each restartPolicy.
 *
 * Invariants:
 * - a regular init container that failed, under restartPolicy Never, fails the pod at once;
 * - while an init container (or a sidecar not yet started) is pending, the pod is Pending —
 *   unless an app container has already run, so a restarting sidecar does not send a running
 *   pod back to Pending;
 * - a container with no status, or no state, counts as unknown: Running needs none unknown;
 * - with every container stopped: restartPolicy Always → Running (they are about to restart),
 *   all exited 0 → Succeeded, Never → Failed, OnFailure → Running;
 * - a pod the kubelet has finished with (`podIsTerminal`) gets Succeeded or Failed from its exit
 *   codes whatever its restartPolicy, since nothing will restart — except static pods (#116484);
 * - a terminated sidecar is ignored: it does not make the pod Succeeded or Failed.
 *
 * Not here: Unknown. The API keeps the phase, but 1.32's getPhase has no path that returns it: a
 * pod whose containers the kubelet cannot see yet is Pending.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (getPhase)
 * @upstream kubernetes/kubernetes pkg/kubelet/types/pod_update.go (IsStaticPod, ConfigSourceAnnotationKey)
 * @chapter 07-kubelet
 */

import type { ContainerStatus, Pod, PodPhase } from "../api/core.ts";
import {
  getContainerStatus,
  hasAnyRegularContainerStarted,
  isRestartableInitContainer,
} from "./container/helpers.ts";

/** Upstream's kubetypes.IsStaticPod: the pod came from a manifest file, not the API server. */
function isStaticPod(pod: Pod): boolean {
  const source = pod.metadata.annotations?.["kubernetes.io/config.source"];
  return source !== undefined && source !== "api";
}

// #region get-phase
/** `info` holds the statuses of init and app containers together, as the kubelet passes them. */
export function getPhase(pod: Pod, info: ContainerStatus[], podIsTerminal: boolean): PodPhase {
  const spec = pod.spec;
  let pendingInitialization = 0;
  let failedInitialization = 0;

  // Regular init containers run one after another to completion.
  for (const container of spec.initContainers ?? []) {
    if (isRestartableInitContainer(container)) continue;
    const status = getContainerStatus(info, container.name);
    const state = status?.state;
    if (!state) pendingInitialization++;
    else if (state.running) pendingInitialization++;
    else if (state.terminated) {
      if (state.terminated.exitCode !== 0) failedInitialization++;
    } else if (state.waiting) {
      // Waiting after an earlier run: judge it by how that run ended.
      const last = status.lastState?.terminated;
      if (!last) pendingInitialization++;
      else if (last.exitCode !== 0) failedInitialization++;
    } else pendingInitialization++;
  }

  let unknown = 0;
  let running = 0;
  let waiting = 0;
  let stopped = 0;
  let succeeded = 0;

  // Sidecars: they count as running, but never as stopped or succeeded.
  for (const container of spec.initContainers ?? []) {
    if (!isRestartableInitContainer(container)) continue;
    const status = getContainerStatus(info, container.name);
    if (!status) {
      unknown++;
      continue;
    }
    const state = status.state ?? {};
    if (state.running) {
      // Until its startup probe passes, the next init container may not start.
      if (!status.started) pendingInitialization++;
      running++;
    } else if (state.terminated) {
      // A sidecar that exited does not decide the pod's phase.
    } else if (state.waiting) {
      if (!status.lastState?.terminated) {
        pendingInitialization++;
        waiting++;
      }
    } else {
      pendingInitialization++;
      unknown++;
    }
  }

  for (const container of spec.containers) {
    const status = getContainerStatus(info, container.name);
    const state = status?.state;
    if (!status || !state) unknown++;
    else if (state.running) running++;
    else if (state.terminated) {
      stopped++;
      if (state.terminated.exitCode === 0) succeeded++;
    } else if (state.waiting) {
      // Waiting to restart after a run counts as stopped; waiting for a first run, as waiting.
      if (status.lastState?.terminated) stopped++;
      else waiting++;
    } else unknown++;
  }

  const restartPolicy = spec.restartPolicy ?? "Always";
  if (failedInitialization > 0 && restartPolicy === "Never") return "Failed";

  if ((pendingInitialization > 0 && !hasAnyRegularContainerStarted(spec, info)) || waiting > 0)
    return "Pending";
  if (running > 0 && unknown === 0) return "Running";
  if (running === 0 && stopped > 0 && unknown === 0) {
    // The kubelet has stopped the pod for good: nothing restarts, whatever the policy says.
    if (podIsTerminal && !isStaticPod(pod)) return stopped === succeeded ? "Succeeded" : "Failed";
    if (restartPolicy === "Always") return "Running";
    if (stopped === succeeded) return "Succeeded";
    if (restartPolicy === "Never") return "Failed";
    return "Running"; // OnFailure: the failed ones are about to restart
  }
  return "Pending";
}
// #endregion get-phase

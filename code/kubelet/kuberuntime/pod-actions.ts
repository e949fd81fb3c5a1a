/**
 * computePodActions — the plan of one sync: compare the pod's spec with what the runtime has and
 * decide what to kill, what to create and what to start, without touching the runtime.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go (computePodActions, computeInitContainerActions).
 *
 * Solves: the kubelet is level-triggered — it does not remember "I started x and it crashed"; each
 * sync it looks at the runtime's state afresh and works out the next steps. Keeping that decision
 * a pure function of (pod, runtime status, probe results) makes it testable and makes SyncPod a
 * plain executor of the plan.
 *
 * Invariants:
 * - no usable sandbox (none, dead, two ready, no IP) → kill whatever is left and start over with a
 *   new sandbox (attempt + 1), init containers from the first; except a pod that must not
 *   restart (restartPolicy Never) and already ran, or whose app containers all finished and need
 *   not run again: that pod is only killed, no sandbox is made for it;
 * - init containers run one at a time in spec order; the next starts only after the previous
 *   exited 0. A failed one restarts — unless restartPolicy is Never, which kills the pod (the phase
 *   becomes Failed). Sidecars (restartPolicy: Always init containers) count as done once running
 *   (and past their startup probe), and are restarted whenever they stop, even after init;
 * - app containers are looked at only once initialization is done; a stopped one is started per
 *   shouldContainerBeRestarted; a running one is killed when its spec hash changed (and started
 *   again, whatever the restartPolicy) or its liveness/startup probe failed (started again unless
 *   restartPolicy is Never);
 * - nothing to keep and nothing to start → kill the pod (its sandbox), sidecars included.
 *
 * Reduced: no ephemeral containers, no in-place resize; the network-namespace comparison is
 * omitted because `hostNetwork` is immutable on a pod.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go (podActions, containerToKillInfo, computePodActions, computeInitContainerActions, hasAnyRegularContainerCreated, containerChanged)
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/util/util.go (PodSandboxChanged: attempt and sandbox id)
 * @chapter 07-kubelet
 */

import type { Container, Pod } from "../../api/core.ts";
import { isRestartableInitContainer } from "../container/helpers.ts";
import { containerIDString, type PodStatus, type Status } from "../container/runtime.ts";
import type { ResultsManager } from "../prober/results/results-manager.ts";
import {
  containerSucceeded,
  findContainerStatusByName,
  isInitContainerFailed,
  shouldContainerBeRestarted,
  shouldRestartOnFailure,
} from "./helpers.ts";
import { hashContainer } from "./labels.ts";
import { podSandboxChanged, type SandboxStatus } from "./util.ts";

/** Why a container is killed; a probe's reason picks the probe's terminationGracePeriodSeconds. */
export type ContainerKillReason = "" | "StartupProbe" | "LivenessProbe" | "FailedPostStartHook" | "Unknown";

export interface ContainerToKillInfo {
  name: string;
  container: Container;
  /** The Killing event's message; "" means the default "Stopping container <name>". */
  message: string;
  reason: ContainerKillReason;
}

export interface PodActions {
  killPod: boolean;
  createSandbox: boolean;
  /** The sandbox to use (or, when creating, the old one). */
  sandboxID: string;
  attempt: number;
  /** Indexes into spec.initContainers, in the order to start them. */
  initContainersToStart: number[];
  /** Indexes into spec.containers. */
  containersToStart: number[];
  /** Keyed by the container's ID string (`fake://…`). */
  containersToKill: Map<string, ContainerToKillInfo>;
}

export interface ProbeResults {
  livenessManager: Pick<ResultsManager, "get">;
  startupManager: Pick<ResultsManager, "get">;
}

/** The kubelet's view of the CRI sandboxes (newest first) for podSandboxChanged. */
export function toSandboxStatuses(pod: Pod, podStatus: PodStatus): SandboxStatus[] {
  return podStatus.sandboxStatuses.map((s) => ({
    state: s.state,
    hostNetwork: pod.spec.hostNetwork === true,
    ip: s.network?.ip,
  }));
}

/** PodSandboxChanged with the attempt number for the next sandbox and the current sandbox's id. */
export function podSandboxChangedWithAttempt(
  pod: Pod,
  podStatus: PodStatus,
): { changed: boolean; attempt: number; sandboxID: string } {
  const newest = podStatus.sandboxStatuses[0];
  if (!newest) return { changed: true, attempt: 0, sandboxID: "" };
  const changed = podSandboxChanged(pod, { sandboxStatuses: toSandboxStatuses(pod, podStatus) });
  return {
    changed,
    attempt: changed ? newest.metadata.attempt + 1 : newest.metadata.attempt,
    sandboxID: newest.id,
  };
}

export function containerChanged(container: Container, status: Status): boolean {
  return status.hash !== hashContainer(container);
}

function hasAnyRegularContainerCreated(pod: Pod, podStatus: PodStatus): boolean {
  return pod.spec.containers.some((c) => {
    const s = findContainerStatusByName(podStatus, c.name);
    return s !== undefined && (s.state === "created" || s.state === "running" || s.state === "exited");
  });
}

// #region compute-pod-actions
export function computePodActions(pod: Pod, podStatus: PodStatus, probes: ProbeResults): PodActions {
  const sandbox = podSandboxChangedWithAttempt(pod, podStatus);
  const changes: PodActions = {
    killPod: sandbox.changed,
    createSandbox: sandbox.changed,
    sandboxID: sandbox.sandboxID,
    attempt: sandbox.attempt,
    initContainersToStart: [],
    containersToStart: [],
    containersToKill: new Map(),
  };

  if (sandbox.changed) {
    // A pod that must not restart and has already run is done: kill it, make no new sandbox.
    if (!shouldRestartOnFailure(pod) && sandbox.attempt !== 0 && podStatus.containerStatuses.length !== 0) {
      changes.createSandbox = false;
      return changes;
    }
    const containersToStart: number[] = [];
    pod.spec.containers.forEach((c, idx) => {
      if (pod.spec.restartPolicy === "OnFailure" && containerSucceeded(c, podStatus)) return;
      containersToStart.push(idx);
    });
    // Everything succeeded after initialization: nothing to run in a new sandbox.
    if (containersToStart.length === 0 && hasAnyRegularContainerCreated(pod, podStatus)) {
      changes.createSandbox = false;
      return changes;
    }
    // A new sandbox starts from the beginning: the first init container, or every app container.
    if ((pod.spec.initContainers ?? []).length > 0) {
      changes.initContainersToStart = [0];
      return changes;
    }
    changes.containersToStart = containersToStart;
    return changes;
  }

  const hasInitialized = computeInitContainerActions(pod, podStatus, changes, probes);
  // Initialization failed or is still under way: leave the app containers alone.
  if (changes.killPod || !hasInitialized) return changes;

  let keepCount = 0;
  pod.spec.containers.forEach((container, idx) => {
    const status = findContainerStatusByName(podStatus, container.name);
    if (status?.state !== "running") {
      if (shouldContainerBeRestarted(container, pod, podStatus)) {
        changes.containersToStart.push(idx);
        if (status?.state === "unknown") {
          // It may still run: kill it first so two instances never run at once.
          changes.containersToKill.set(containerIDString(status.id), {
            name: status.name,
            container,
            message: `Container is in "${status.state}" state, try killing it before restart`,
            reason: "Unknown",
          });
        }
      }
      return;
    }
    // Running: kill it if its spec changed or a probe says it is dead.
    const id = containerIDString(status.id);
    let message: string;
    let reason: ContainerKillReason = "";
    let restart = shouldRestartOnFailure(pod);
    if (containerChanged(container, status)) {
      message = `Container ${container.name} definition changed`;
      restart = true; // a new spec runs whatever the restartPolicy
    } else if (probes.livenessManager.get(id) === "Failure") {
      message = `Container ${container.name} failed liveness probe`;
      reason = "LivenessProbe";
    } else if (probes.startupManager.get(id) === "Failure") {
      message = `Container ${container.name} failed startup probe`;
      reason = "StartupProbe";
    } else {
      keepCount++;
      return;
    }
    if (restart) {
      message = `${message}, will be restarted`;
      changes.containersToStart.push(idx);
    }
    changes.containersToKill.set(id, { name: status.name, container, message, reason });
  });

  if (keepCount === 0 && changes.containersToStart.length === 0) {
    changes.killPod = true;
    // Sidecars must not keep a finished pod alive.
    changes.initContainersToStart = [];
  }
  return changes;
}
// #endregion compute-pod-actions

/**
 * Sets the init containers to start (and sidecars to kill) on `changes`; returns whether the pod
 * has been initialized. Walks the init containers from the last: completed ones may have been
 * garbage-collected, so the last one with a status says how far initialization got.
 */
export function computeInitContainerActions(
  pod: Pod,
  podStatus: PodStatus,
  changes: PodActions,
  probes: ProbeResults,
): boolean {
  const initContainers = pod.spec.initContainers ?? [];
  if (initContainers.length === 0) return true;

  // An app container created or running proves that initialization finished once.
  let podHasInitialized = pod.spec.containers.some((c) => {
    const s = findContainerStatusByName(podStatus, c.name);
    return s?.state === "created" || s?.state === "running";
  });
  let isPreviouslyInitialized = podHasInitialized;
  const restartOnFailure = shouldRestartOnFailure(pod);
  const toStart: number[] = [];
  const kill = (status: Status, container: Container, message: string, reason: ContainerKillReason) =>
    changes.containersToKill.set(containerIDString(status.id), {
      name: container.name,
      container,
      message,
      reason,
    });

  for (let i = initContainers.length - 1; i >= 0; i--) {
    const container = initContainers[i];
    const sidecar = isRestartableInitContainer(container);
    const status = findContainerStatusByName(podStatus, container.name);
    if (!status) {
      // Its history is gone; a sidecar after initialization must run again.
      if (isPreviouslyInitialized && sidecar) toStart.push(i);
      continue;
    }
    // After initialization only sidecars need to be kept running.
    if (isPreviouslyInitialized && !sidecar) continue;

    switch (status.state) {
      case "created":
        // Created and started happen in one sync; stuck in created means the start failed.
        toStart.push(i);
        break;
      case "running": {
        if (!sidecar) break; // an ordinary init container: wait for it to finish
        const id = containerIDString(status.id);
        if (container.startupProbe) {
          const startup = probes.startupManager.get(id);
          if (startup === undefined) break; // not probed yet: wait
          if (startup !== "Success") {
            if (startup === "Failure") {
              kill(
                status,
                container,
                `Init container ${container.name} failed startup probe`,
                "StartupProbe",
              );
              toStart.push(i);
            }
            break;
          }
        }
        if (i === initContainers.length - 1) podHasInitialized = true;
        else if (!isPreviouslyInitialized) toStart.push(i + 1); // started for the first time: next one
        if (containerChanged(container, status)) {
          kill(status, container, `Init container ${container.name} definition changed`, "");
          toStart.push(i);
          break;
        }
        if (container.livenessProbe && probes.livenessManager.get(id) === "Failure") {
          kill(status, container, `Init container ${container.name} failed liveness probe`, "LivenessProbe");
          toStart.push(i);
        }
        break;
      }
      case "exited":
        if (sidecar) {
          toStart.push(i);
        } else if (isInitContainerFailed(status)) {
          if (!restartOnFailure) {
            changes.killPod = true;
            changes.initContainersToStart = [];
            return false;
          }
          toStart.push(i);
        } else if (i === initContainers.length - 1) {
          podHasInitialized = true;
        } else {
          toStart.push(i + 1);
        }
        break;
      default: {
        // Unknown: it may still run, so kill it before starting it again.
        if (!sidecar && !restartOnFailure) {
          changes.killPod = true;
          changes.initContainersToStart = [];
          return false;
        }
        kill(
          status,
          container,
          `Init container is in "${status.state}" state, try killing it before restart`,
          "Unknown",
        );
        toStart.push(i);
      }
    }
    isPreviouslyInitialized = true;
  }
  // No init container has a status yet: start the first.
  if (!isPreviouslyInitialized) toStart.push(0);
  // The walk went backwards; start them in spec order.
  changes.initContainersToStart = toStart.reverse();
  return podHasInitialized;
}

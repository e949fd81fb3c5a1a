/**
 * Pod conditions — the kubelet's five: PodScheduled, PodReadyToStartContainers, Initialized,
 * ContainersReady and Ready, each computed from the container statuses on every sync.
 * Mirrors kubernetes/kubernetes pkg/kubelet/status/generate.go.
 *
 * Solves:
 * - a Service sends traffic only to Ready pods, and a rolling update waits for them: Ready must be
 *   True exactly when every app container (and every sidecar) is ready and every readiness gate
 *   another controller set is True;
 * - a user asking "why is my pod not ready?" gets the answer in the condition's reason and
 *   message, naming the containers (`containers with unready status: [web db]`);
 * - a finished pod (Succeeded or Failed) must never report Ready=True, even for a moment.
 *
 * Invariants:
 * - no container statuses at all → False with reason UnknownContainerStatuses (Initialized only
 *   when the pod has init containers);
 * - Ready is ContainersReady's status, reason and message when that is not True; then the
 *   readiness gates decide;
 * - a Succeeded pod with every container known → ContainersReady False/PodCompleted and
 *   Initialized True/PodCompleted; a Failed pod → ContainersReady False/PodFailed;
 * - messages list names in spec order in Go's `%s` of a []string: `[a b]`; the parts are joined
 *   with ", ".
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/status/generate.go (GenerateContainersReadyCondition, GeneratePodReadyCondition, GeneratePodInitializedCondition, GeneratePodReadyToStartContainersCondition)
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (generateAPIPodStatus: the PodScheduled condition)
 * @chapter 07-kubelet
 */

import type { ContainerStatus, Pod, PodCondition, PodPhase, PodSpec } from "../../api/core.ts";
import {
  getContainerStatus,
  hasAnyRegularContainerStarted,
  isRestartableInitContainer,
} from "../container/helpers.ts";
import { podSandboxChanged, type RuntimePodStatus } from "../kuberuntime/util.ts";

// #region condition-reasons
export const UnknownContainerStatuses = "UnknownContainerStatuses";
export const PodCompleted = "PodCompleted";
export const PodFailed = "PodFailed";
export const ContainersNotReady = "ContainersNotReady";
export const ContainersNotInitialized = "ContainersNotInitialized";
export const ReadinessGatesNotReady = "ReadinessGatesNotReady";
// #endregion condition-reasons

/** Go's fmt `%s` of a []string. */
const goList = (names: string[]) => `[${names.join(" ")}]`;

// #region containers-ready
/** `containerStatuses` undefined means the kubelet has none yet (Go's nil slice). */
export function GenerateContainersReadyCondition(
  spec: PodSpec,
  containerStatuses: ContainerStatus[] | undefined,
  podPhase: PodPhase,
): PodCondition {
  if (containerStatuses === undefined) {
    return { type: "ContainersReady", status: "False", reason: UnknownContainerStatuses };
  }
  const unknownContainers: string[] = [];
  const unreadyContainers: string[] = [];
  // Sidecars serve beside the app, so they must be ready too; ordinary init containers are done.
  const sidecars = (spec.initContainers ?? []).filter(isRestartableInitContainer);
  for (const container of [...sidecars, ...spec.containers]) {
    const status = getContainerStatus(containerStatuses, container.name);
    if (!status) unknownContainers.push(container.name);
    else if (!status.ready) unreadyContainers.push(container.name);
  }

  if (podPhase === "Succeeded" && unknownContainers.length === 0) return terminalContainersReady(podPhase);
  // A failed pod's containers may still be shutting down and report ready: override them.
  if (podPhase === "Failed") return terminalContainersReady(podPhase);

  const messages: string[] = [];
  if (unknownContainers.length > 0)
    messages.push(`containers with unknown status: ${goList(unknownContainers)}`);
  if (unreadyContainers.length > 0)
    messages.push(`containers with unready status: ${goList(unreadyContainers)}`);
  if (messages.length > 0) {
    return {
      type: "ContainersReady",
      status: "False",
      reason: ContainersNotReady,
      message: messages.join(", "),
    };
  }
  return { type: "ContainersReady", status: "True" };
}

function terminalContainersReady(podPhase: "Succeeded" | "Failed"): PodCondition {
  return {
    type: "ContainersReady",
    status: "False",
    reason: podPhase === "Failed" ? PodFailed : PodCompleted,
  };
}
// #endregion containers-ready

// #region pod-ready
/** `conditions` are the pod's other conditions so far: the readiness gates are looked up there. */
export function GeneratePodReadyCondition(
  spec: PodSpec,
  conditions: PodCondition[],
  containerStatuses: ContainerStatus[] | undefined,
  podPhase: PodPhase,
): PodCondition {
  const containersReady = GenerateContainersReadyCondition(spec, containerStatuses, podPhase);
  if (containersReady.status !== "True") {
    return { ...containersReady, type: "Ready" };
  }
  const messages: string[] = [];
  for (const gate of spec.readinessGates ?? []) {
    const c = conditions.find((x) => x.type === gate.conditionType);
    if (!c) {
      messages.push(`corresponding condition of pod readiness gate "${gate.conditionType}" does not exist.`);
    } else if (c.status !== "True") {
      messages.push(
        `the status of pod readiness gate "${gate.conditionType}" is not "True", but ${c.status}`,
      );
    }
  }
  if (messages.length > 0) {
    return { type: "Ready", status: "False", reason: ReadinessGatesNotReady, message: messages.join(", ") };
  }
  return { type: "Ready", status: "True" };
}
// #endregion pod-ready

// #region initialized
/** An ordinary init container is done when ready (exited 0); a sidecar, once it has started. */
function isInitContainerInitialized(
  container: PodSpec["containers"][number],
  status: ContainerStatus,
): boolean {
  return isRestartableInitContainer(container) ? status.started === true : status.ready;
}

export function GeneratePodInitializedCondition(
  spec: PodSpec,
  containerStatuses: ContainerStatus[] | undefined,
  podPhase: PodPhase,
): PodCondition {
  const initContainers = spec.initContainers ?? [];
  if (containerStatuses === undefined && initContainers.length > 0) {
    return { type: "Initialized", status: "False", reason: UnknownContainerStatuses };
  }
  const unknownContainers: string[] = [];
  const incompleteContainers: string[] = [];
  for (const container of initContainers) {
    const status = getContainerStatus(containerStatuses, container.name);
    if (!status) unknownContainers.push(container.name);
    else if (!isInitContainerInitialized(container, status)) incompleteContainers.push(container.name);
  }

  if (podPhase === "Succeeded" && unknownContainers.length === 0) {
    return { type: "Initialized", status: "True", reason: PodCompleted };
  }
  // An app container has run, so initialization finished once; a sidecar restarting now does not undo it.
  if (hasAnyRegularContainerStarted(spec, containerStatuses)) return { type: "Initialized", status: "True" };

  const messages: string[] = [];
  if (unknownContainers.length > 0)
    messages.push(`containers with unknown status: ${goList(unknownContainers)}`);
  if (incompleteContainers.length > 0) {
    messages.push(`containers with incomplete status: ${goList(incompleteContainers)}`);
  }
  if (messages.length > 0) {
    return {
      type: "Initialized",
      status: "False",
      reason: ContainersNotInitialized,
      message: messages.join(", "),
    };
  }
  return { type: "Initialized", status: "True" };
}
// #endregion initialized

/** True once the pod has a sandbox with its network set up: containers can be started in it. */
export function GeneratePodReadyToStartContainersCondition(
  pod: Pod,
  podStatus: RuntimePodStatus,
): PodCondition {
  return { type: "PodReadyToStartContainers", status: podSandboxChanged(pod, podStatus) ? "False" : "True" };
}

/** The kubelet only runs pods bound to its node, so for it PodScheduled is always True. */
export function generatePodScheduledCondition(): PodCondition {
  return { type: "PodScheduled", status: "True" };
}

/**
 * generateAPIPodStatus — the pod's API status (phase, conditions, container statuses, IPs) from
 * what the runtime reports and what the last sync failed at.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (generateAPIPodStatus, convertStatusToAPIStatus, convertToAPIContainerStatuses).
 *
 * Solves:
 * - `kubectl get pods` shows ContainerCreating, CrashLoopBackOff, ImagePullBackOff, Completed,
 *   Error: none of those is stored anywhere; the kubelet derives them on every sync from the
 *   runtime's containers (running, exited with a code) and the reason cache (why the last start
 *   failed);
 * - restartCount and lastState survive even when the runtime has forgotten the old container:
 *   the previous API status is the fallback for what the runtime no longer has.
 *
 * Invariants:
 * - a container the runtime has never run is waiting with ContainerCreating (PodInitializing for
 *   app containers of a pod with init containers);
 * - the newest runtime container gives `state`, the one before it `lastState`; older ones are
 *   ignored;
 * - a container that will be restarted and whose last start failed shows that failure as its
 *   waiting reason (CrashLoopBackOff, ErrImagePull, …), its terminated state moving to lastState;
 *   an init container that exited 0 is never shown waiting;
 * - a terminal phase (Succeeded, Failed) never goes back: once the old status or the API says
 *   so, it stays;
 * - app container statuses are sorted by name, init container statuses in spec order;
 * - ready/started are left to the prober manager (`updatePodStatus`), which runs before the
 *   conditions are computed, as upstream calls probeManager.UpdatePodStatus there.
 *
 * Reduced: qosClass is kept from the status the API server set on create (never computed), no resize status, no eviction by pod
 * sync handlers; host IPs are given, not looked up.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (generateAPIPodStatus, convertStatusToAPIStatus, convertToAPIContainerStatuses)
 * @upstream kubernetes/kubernetes pkg/kubelet/types/pod_status.go (PodConditionByKubelet)
 * @upstream kubernetes/kubernetes pkg/kubelet/types/types.go (SortedContainerStatuses, SortStatusesOfInitContainers)
 * @upstream kubernetes/kubernetes pkg/kubelet/container/runtime.go (ContainerReasonStatusUnknown)
 * @chapter 07-kubelet
 */

import type {
  Container,
  ContainerState,
  ContainerStatus,
  Pod,
  PodCondition,
  PodStatus,
} from "../api/core.ts";
import { rfc3339 } from "../client/tools/record/events-cache.ts";
import type { Clock } from "../client/util/clock.ts";
import { ContainerCreating, PodInitializing } from "./container/reasons.ts";
import { containerIDString, type PodStatus as RuntimePodStatus, type Status } from "./container/runtime.ts";
import { findContainerStatusByName, shouldContainerBeRestarted } from "./kuberuntime/helpers.ts";
import { toSandboxStatuses } from "./kuberuntime/pod-actions.ts";
import { getPhase } from "./pod-phase.ts";
import {
  GenerateContainersReadyCondition,
  GeneratePodInitializedCondition,
  GeneratePodReadyCondition,
  GeneratePodReadyToStartContainersCondition,
  generatePodScheduledCondition,
} from "./status/generate.ts";
import type { ReasonCache } from "./util/reason-cache.ts";

/** A container the kubelet lost track of: it used to run, the runtime no longer knows it. */
export const ContainerReasonStatusUnknown = "ContainerStatusUnknown";

export interface GenerateAPIPodStatusDeps {
  reasonCache: ReasonCache;
  /** The node's IPs: hostIP/hostIPs, and a host-network pod's podIPs. */
  nodeIPs?: string[];
  clock: Clock;
  /** The status manager's last status for the pod; the API's `pod.status` when absent. */
  oldPodStatus?: PodStatus;
  /** The prober manager's UpdatePodStatus: sets ready/started before the conditions are made. */
  updatePodStatus?: (pod: Pod, status: PodStatus) => void;
  /** The phase from the container statuses; the real getPhase by default (chapter 7's exercise swaps it). */
  getPhase?: typeof getPhase;
}

/** The condition types the kubelet owns; others (readiness gates, DisruptionTarget) are kept. */
const kubeletConditions = new Set([
  "PodScheduled",
  "Ready",
  "Initialized",
  "ContainersReady",
  "PodReadyToStartContainers",
]);

const isTerminal = (phase: string | undefined) => phase === "Succeeded" || phase === "Failed";

export function generateAPIPodStatus(
  pod: Pod,
  podStatus: RuntimePodStatus,
  podIsTerminal: boolean,
  deps: GenerateAPIPodStatusDeps,
): PodStatus {
  const apiStatus = pod.status ?? {};
  const oldPodStatus = deps.oldPodStatus ?? apiStatus;
  const s = convertStatusToAPIStatus(pod, podStatus, oldPodStatus, deps.reasonCache);

  s.phase = (deps.getPhase ?? getPhase)(
    pod,
    [...(s.containerStatuses ?? []), ...(s.initContainerStatuses ?? [])],
    podIsTerminal,
  );
  // A terminal phase already reported (by us or the API) is kept: pods never leave it.
  if (!isTerminal(s.phase)) {
    if (isTerminal(oldPodStatus.phase)) s.phase = oldPodStatus.phase;
    else if (isTerminal(apiStatus.phase)) s.phase = apiStatus.phase;
  }
  if (s.phase === oldPodStatus.phase) {
    // The reason and message belong to the phase: keep them while it lasts.
    s.reason = oldPodStatus.reason || apiStatus.reason;
    s.message = oldPodStatus.message || apiStatus.message;
  }
  if (isTerminal(apiStatus.phase) && s.phase !== apiStatus.phase) s.phase = apiStatus.phase;

  deps.updatePodStatus?.(pod, s);

  const conditions: PodCondition[] = (apiStatus.conditions ?? []).filter(
    (c) => !kubeletConditions.has(c.type),
  );
  const all = [...(s.initContainerStatuses ?? []), ...(s.containerStatuses ?? [])];
  conditions.push(
    GeneratePodReadyToStartContainersCondition(pod, { sandboxStatuses: toSandboxStatuses(pod, podStatus) }),
  );
  conditions.push(GeneratePodInitializedCondition(pod.spec, all, s.phase));
  conditions.push(GeneratePodReadyCondition(pod.spec, conditions, all, s.phase));
  conditions.push(GenerateContainersReadyCondition(pod.spec, all, s.phase));
  conditions.push(generatePodScheduledCondition());
  s.conditions = conditions;

  const nodeIPs = deps.nodeIPs ?? [];
  if (nodeIPs.length > 0) {
    s.hostIP = nodeIPs[0];
    s.hostIPs = nodeIPs.slice(0, 2).map((ip) => ({ ip }));
    // A host-network pod's IPs are the node's.
    if (pod.spec.hostNetwork && !s.podIP) {
      s.podIP = nodeIPs[0];
      s.podIPs = [{ ip: nodeIPs[0] }];
    }
  }
  // Upstream's status manager keeps the first start time; we carry it too so it never moves.
  if (oldPodStatus.startTime) s.startTime = oldPodStatus.startTime;
  // GetPodQOS answers from the status when it is set (the API server set it on create): kept,
  // or every status patch would try to clear it.
  const qosClass = oldPodStatus.qosClass ?? apiStatus.qosClass;
  if (qosClass) s.qosClass = qosClass;
  return s;
}

export function convertStatusToAPIStatus(
  pod: Pod,
  podStatus: RuntimePodStatus,
  oldPodStatus: PodStatus,
  reasonCache: ReasonCache,
): PodStatus {
  const s: PodStatus = {};
  if (podStatus.ips.length > 0) {
    s.podIPs = podStatus.ips.map((ip) => ({ ip }));
    s.podIP = podStatus.ips[0];
  }
  const hasInit = (pod.spec.initContainers ?? []).length > 0;
  s.containerStatuses = convertToAPIContainerStatuses(
    pod,
    podStatus,
    oldPodStatus.containerStatuses ?? [],
    pod.spec.containers,
    hasInit,
    false,
    reasonCache,
  );
  if (hasInit) {
    s.initContainerStatuses = convertToAPIContainerStatuses(
      pod,
      podStatus,
      oldPodStatus.initContainerStatuses ?? [],
      pod.spec.initContainers ?? [],
      hasInit,
      true,
      reasonCache,
    );
  }
  return s;
}

/** One runtime container as an API status (state only: lastState is set by the caller). */
function convertContainerStatus(cs: Status, oldStatus: ContainerStatus | undefined): ContainerStatus {
  const cid = containerIDString(cs.id);
  const status: ContainerStatus = {
    name: cs.name,
    restartCount: cs.restartCount,
    image: cs.image,
    // The digested ref, not the image id: historically so, and kept.
    imageID: cs.imageRef,
    containerID: cid,
    ready: false,
    state: {},
  };
  if (cs.state === "running") {
    status.state = { running: { startedAt: rfc3339(cs.startedAt) } };
  } else if (cs.state === "created") {
    status.state = { waiting: {} }; // created but not running: waiting to run
  } else if (cs.state === "exited") {
    status.state = {
      terminated: {
        exitCode: cs.exitCode,
        reason: cs.reason,
        message: cs.message || undefined,
        startedAt: rfc3339(cs.startedAt),
        finishedAt: rfc3339(cs.finishedAt),
        containerID: cid,
      },
    };
  } else if (oldStatus?.state?.running) {
    // It was running and the runtime cannot say what became of it: it ran, and it is gone.
    status.state = {
      terminated: {
        reason: ContainerReasonStatusUnknown,
        message: "The container could not be located when the pod was terminated",
        exitCode: 137,
      },
    };
    status.restartCount = oldStatus.restartCount + 1;
  } else {
    status.state = { waiting: {} };
  }
  return status;
}

// #region container-statuses
export function convertToAPIContainerStatuses(
  pod: Pod,
  podStatus: RuntimePodStatus,
  previousStatus: ContainerStatus[],
  containers: Container[],
  hasInitContainers: boolean,
  isInitContainer: boolean,
  reasonCache: ReasonCache,
): ContainerStatus[] {
  const oldStatuses = new Map(previousStatus.map((s) => [s.name, s]));
  const defaultReason = hasInitContainers ? PodInitializing : ContainerCreating;

  // Everything starts waiting; an old terminated status stands until the runtime says more.
  const statuses = new Map<string, ContainerStatus>();
  for (const c of containers) {
    let status: ContainerStatus = {
      name: c.name,
      image: c.image ?? "",
      imageID: "",
      ready: false,
      restartCount: 0,
      state: { waiting: { reason: defaultReason } },
    };
    const old = oldStatuses.get(c.name);
    if (old) {
      if (old.state?.terminated) status = structuredClone(old);
      else {
        status.restartCount = old.restartCount;
        if (old.lastState) status.lastState = structuredClone(old.lastState);
      }
    }
    statuses.set(c.name, status);
  }

  // A container that was running and has vanished from the runtime did terminate, somehow.
  for (const c of containers) {
    if (podStatus.containerStatuses.some((cs) => cs.name === c.name)) continue;
    const old = oldStatuses.get(c.name);
    if (!old || old.state?.terminated || !old.state?.running) continue;
    const status = statuses.get(c.name)!;
    if (status.state?.waiting?.reason !== defaultReason || status.lastState?.terminated) continue;
    status.lastState = {
      terminated: {
        reason: ContainerReasonStatusUnknown,
        message:
          "The container could not be located when the pod was deleted.  The container used to be Running",
        exitCode: 137,
      },
    };
    if (!pod.metadata.deletionTimestamp) status.restartCount += 1;
  }

  // The runtime's view: the newest container is the state, the one before it the last state.
  const seen = new Map<string, number>();
  for (const cs of podStatus.containerStatuses) {
    if (!statuses.has(cs.name)) continue;
    const n = seen.get(cs.name) ?? 0;
    if (n >= 2) continue;
    const converted = convertContainerStatus(cs, oldStatuses.get(cs.name));
    if (n === 0) statuses.set(cs.name, converted);
    else statuses.get(cs.name)!.lastState = converted.state;
    seen.set(cs.name, n + 1);
  }

  // A container the next sync will (re)start shows why its last start failed, if it did.
  for (const c of containers) {
    if (isInitContainer) {
      const s = findContainerStatusByName(podStatus, c.name);
      if (s?.state === "exited" && s.exitCode === 0) continue; // done: it will not run again
    }
    if (!shouldContainerBeRestarted(c, pod, podStatus)) continue;
    const reason = reasonCache.get(pod.metadata.uid ?? "", c.name);
    if (!reason) continue;
    const status = statuses.get(c.name)!;
    if (status.state?.terminated) status.lastState = status.state;
    status.state = { waiting: { reason: reason.err, message: reason.message } } satisfies ContainerState;
  }

  if (isInitContainer) return containers.map((c) => statuses.get(c.name)!);
  return [...statuses.values()].sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
}
// #endregion container-statuses

/**
 * A small generateAPIPodStatus for the kubelet loop's tests: the runtime's newest container per
 * name as a running, terminated or ContainerCreating status; the phase from getPhase; the
 * kubelet's conditions from status/generate.ts; the pod IP.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (generateAPIPodStatus), reduced.
 *
 * Solves: the loop's tests need a pod status that moves as the runtime does, without the runtime
 * manager's full converter (kubelet-pods.ts, built beside this chapter's loop): no lastState, no
 * reason cache, no init containers.
 *
 * Invariants: deterministic in (pod, runtime status, podIsTerminal, clock) — the same inputs give
 * the same status, so the status manager's "only write on change" can be tested through it.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (generateAPIPodStatus, convertToAPIContainerStatuses)
 * @chapter 07-kubelet
 */

import type { PodStatus as APIPodStatus, ContainerStatus, Pod } from "../../../api/core.ts";
import { getPhase } from "../../pod-phase.ts";
import {
  GenerateContainersReadyCondition,
  GeneratePodInitializedCondition,
  GeneratePodReadyCondition,
  generatePodScheduledCondition,
} from "../../status/generate.ts";
import { containerIDString, type PodStatus } from "../runtime.ts";

const iso = (ms: number) => new Date(ms).toISOString();

export function testGenerateAPIPodStatus(
  pod: Pod,
  podStatus: PodStatus,
  podIsTerminal: boolean,
): APIPodStatus {
  const containerStatuses: ContainerStatus[] = pod.spec.containers.map((c) => {
    const s = podStatus.containerStatuses.find((x) => x.name === c.name); // newest first
    const base = { name: c.name, image: c.image ?? "", ready: false, restartCount: s?.restartCount ?? 0 };
    if (!s) return { ...base, imageID: "", state: { waiting: { reason: "ContainerCreating" } } };
    const state =
      s.state === "running"
        ? { running: { startedAt: iso(s.startedAt) } }
        : s.state === "exited"
          ? {
              terminated: {
                exitCode: s.exitCode,
                reason: s.reason,
                startedAt: iso(s.startedAt),
                finishedAt: iso(s.finishedAt),
                containerID: containerIDString(s.id),
              },
            }
          : { waiting: { reason: "ContainerCreating" } };
    return { ...base, imageID: s.imageID, containerID: containerIDString(s.id), state };
  });
  const phase = getPhase(pod, containerStatuses, podIsTerminal);
  const conditions = [
    GeneratePodInitializedCondition(pod.spec, undefined, phase),
    GenerateContainersReadyCondition(pod.spec, containerStatuses, phase),
    GeneratePodReadyCondition(pod.spec, pod.status?.conditions ?? [], containerStatuses, phase),
    generatePodScheduledCondition(),
  ];
  const status: APIPodStatus = { phase, conditions, containerStatuses };
  // GetPodQOS: the class the API server computed at creation stays (its strategy keeps it anyway).
  if (pod.status?.qosClass) status.qosClass = pod.status.qosClass;
  if (podStatus.ips.length) {
    status.podIP = podStatus.ips[0];
    status.podIPs = podStatus.ips.map((ip) => ({ ip }));
  }
  return status;
}

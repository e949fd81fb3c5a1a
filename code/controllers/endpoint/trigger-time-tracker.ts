/**
 * TriggerTimeTracker — when did the change happen that this Endpoints update reflects? The
 * controller exports it as the `endpoints.kubernetes.io/last-change-trigger-time` annotation.
 * Mirrors kubernetes/kubernetes pkg/controller/util/endpoint/trigger_time_tracker.go.
 *
 * Solves: the network programming latency SLI (pod turns ready → kube-proxy programs the rule)
 * needs the time of the *cause*, not of the Endpoints write: a controller that is slow, batched
 * or retried writes late, and measuring from the write would hide that. The cause of an
 * Endpoints change is a pod whose Ready condition flipped (its lastTransitionTime) or the
 * Service being created (its creationTimestamp).
 *
 * Invariants:
 * - the first sync of a Service returns the Service's creationTimestamp;
 * - later syncs return the earliest trigger time that moved since the previous sync of the same
 *   Service, or nothing (the annotation is then removed) when none moved;
 * - the state of a Service is forgotten when the Service is deleted.
 *
 * @upstream kubernetes/kubernetes pkg/controller/util/endpoint/trigger_time_tracker.go (TriggerTimeTracker, ComputeEndpointLastChangeTriggerTime, DeleteService, getPodTriggerTime, getServiceTriggerTime)
 * @chapter 07-kubelet
 */
import type { Pod, Service } from "../../api/core.ts";
import { getPodReadyCondition } from "../active-pods.ts";

interface ServiceState {
  /** Pod name → its Ready condition's lastTransitionTime (ms) at the last sync. */
  lastPodTriggerTimes: Map<string, number>;
  lastServiceTriggerTime: number;
}

const parse = (t: string | undefined): number | undefined => {
  if (!t) return undefined;
  const ms = Date.parse(t);
  return Number.isNaN(ms) ? undefined : ms;
};

export class TriggerTimeTracker {
  private readonly serviceStates = new Map<string, ServiceState>();

  // #region trigger-time
  /** The trigger time to export, or undefined for none (remove the annotation). */
  computeEndpointLastChangeTriggerTime(
    namespace: string,
    service: Service,
    pods: readonly Pod[],
  ): number | undefined {
    const key = `${namespace}/${service.metadata.name ?? ""}`;
    const state = this.serviceStates.get(key);
    let minChanged: number | undefined;
    const podTimes = new Map<string, number>();
    for (const pod of pods) {
      const t = parse(getPodReadyCondition(pod)?.lastTransitionTime);
      if (t === undefined) continue;
      podTimes.set(pod.metadata.name ?? "", t);
      const before = state?.lastPodTriggerTimes.get(pod.metadata.name ?? "");
      // Moved since the last sync (or first seen): a candidate cause.
      if (before === undefined || t > before)
        minChanged = minChanged === undefined ? t : Math.min(minChanged, t);
    }
    const serviceTime = parse(service.metadata.creationTimestamp) ?? 0;
    if (serviceTime > (state?.lastServiceTriggerTime ?? 0))
      minChanged = minChanged === undefined ? serviceTime : Math.min(minChanged, serviceTime);
    this.serviceStates.set(key, { lastPodTriggerTimes: podTimes, lastServiceTriggerTime: serviceTime });
    // A Service seen for the first time: its creation is the cause.
    if (!state) return parse(service.metadata.creationTimestamp);
    return minChanged;
  }
  // #endregion trigger-time

  deleteService(namespace: string, name: string): void {
    this.serviceStates.delete(`${namespace}/${name}`);
  }
}

/**
 * Cluster events — what changed in the cluster (a node added, a pod deleted, a node's labels
 * updated), and the queueing hints with which a plugin says whether that change may make a pod
 * it rejected schedulable.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/types.go (ActionType, EventResource, ClusterEvent, QueueingHint, QueueingHintFn, ClusterEventWithHint)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/events.go (NodeAdd, AssignedPodDelete, EventUnschedulableTimeout, PodSchedulingPropertiesChange)
 * @chapter 05-scheduler
 *
 * Solves: an unschedulable pod should be retried when, and only when, something that could
 * change its answer happens. Retrying on every event wastes cycles (thousands of pods, each
 * event); retrying on none leaves pods waiting for the 5-minute flush. So each plugin registers
 * the events that could undo its rejection, with a hint function that looks at the object.
 *
 * Invariants:
 * - ActionType is a bit set; `Update` is the union of every specific update bit, so a plugin
 *   registering Node/Update hears every kind of node update.
 * - an event registered for resource `Pod` matches the queue's incoming `AssignedPod` and
 *   `UnscheduledPod` events; the wildcard event (`*`, All) matches everything.
 * - a hint that returns an error counts as Queue: a broken hint must not strand a pod.
 */
import type { Pod } from "../../api/core.ts";
import { podRequests } from "./types.ts";

// #region action-type
export enum ActionType {
  Add = 1 << 0,
  Delete = 1 << 1,
  UpdateNodeAllocatable = 1 << 2,
  UpdateNodeLabel = 1 << 3,
  UpdateNodeTaint = 1 << 4,
  UpdateNodeCondition = 1 << 5,
  UpdateNodeAnnotation = 1 << 6,
  UpdatePodLabel = 1 << 7,
  UpdatePodScaleDown = 1 << 8,
  UpdatePodTolerations = 1 << 9,
  UpdatePodSchedulingGatesEliminated = 1 << 10,
  UpdatePodGeneratedResourceClaim = 1 << 11,
  /** A pod update not covered by the bits above (unexported upstream). */
  updatePodOther = 1 << 12,
  All = (1 << 13) - 1,
  Update = All & ~(Add | Delete),
}
// #endregion action-type

export type EventResource =
  | "Pod"
  | "AssignedPod"
  | "UnscheduledPod"
  | "Node"
  | "PersistentVolume"
  | "PersistentVolumeClaim"
  | "CSINode"
  | "CSIDriver"
  | "CSIStorageCapacity"
  | "StorageClass"
  | "ResourceClaim"
  | "ResourceSlice"
  | "DeviceClass"
  | "*";

// #region cluster-event
export interface ClusterEvent {
  resource: EventResource;
  actionType: ActionType;
  /** The name metrics and logs use ("NodeAdd", "UnschedulableTimeout"). */
  label?: string;
}

export const isWildCard = (e: ClusterEvent): boolean => e.resource === "*" && e.actionType === ActionType.All;

/** Match: does the registered event `registered` cover the incoming event `incoming`? */
export function matchEvent(registered: ClusterEvent, incoming: ClusterEvent): boolean {
  if (isWildCard(registered)) return true;
  const r = registered.resource;
  const resourceMatches =
    r === "*" ||
    r === incoming.resource ||
    (r === "Pod" && (incoming.resource === "AssignedPod" || incoming.resource === "UnscheduledPod"));
  return resourceMatches && (registered.actionType & incoming.actionType) !== 0;
}

export function eventLabel(e: ClusterEvent): string {
  return e.label ?? `${e.resource}${ActionType[e.actionType] ?? e.actionType}`;
}
// #endregion cluster-event

// #region queueing-hint
export enum QueueingHint {
  /** The event cannot make this pod schedulable: leave it where it is. */
  QueueSkip = 0,
  /** The event may make it schedulable: move it to activeQ (or backoffQ while it backs off). */
  Queue = 1,
}

/** A plugin's judgement of one event for one pod it rejected; an error counts as Queue. */
export type QueueingHintFn = (pod: Pod, oldObj: unknown, newObj: unknown) => QueueingHint | Error;

/** What EnqueueExtensions.eventsToRegister returns: an event, and optionally a hint for it
 * (no hint means "always Queue"). */
export interface ClusterEventWithHint {
  event: ClusterEvent;
  queueingHintFn?: QueueingHintFn;
}
// #endregion queueing-hint

// #region well-known-events
export const NodeAdd: ClusterEvent = { resource: "Node", actionType: ActionType.Add, label: "NodeAdd" };
export const AssignedPodAdd: ClusterEvent = {
  resource: "AssignedPod",
  actionType: ActionType.Add,
  label: "AssignedPodAdd",
};
export const AssignedPodDelete: ClusterEvent = {
  resource: "AssignedPod",
  actionType: ActionType.Delete,
  label: "AssignedPodDelete",
};
export const UnscheduledPodAdd: ClusterEvent = {
  resource: "UnscheduledPod",
  actionType: ActionType.Add,
  label: "UnschedulablePodAdd",
};
export const UnscheduledPodUpdate: ClusterEvent = {
  resource: "UnscheduledPod",
  actionType: ActionType.Update,
  label: "UnschedulablePodUpdate",
};
/** The flush of pods that sat in unschedulablePods longer than podMaxInUnschedulablePodsDuration. */
export const EventUnschedulableTimeout: ClusterEvent = {
  resource: "*",
  actionType: ActionType.All,
  label: "UnschedulableTimeout",
};
/** Activate: a plugin (or the binding cycle) asks for pods to be retried at once. */
export const EventForceActivate: ClusterEvent = {
  resource: "*",
  actionType: ActionType.All,
  label: "ForceActivate",
};
export const BackoffComplete = "BackoffComplete";
export const ScheduleAttemptFailure = "ScheduleAttemptFailure";
export const PodAdd = "PodAdd";
// #endregion well-known-events

// #region pod-update-events
/**
 * PodSchedulingPropertiesChange: what an update of an unscheduled pod changed, as events —
 * labels, a request scaled down, tolerations, the last scheduling gate removed — or "other".
 */
export function podSchedulingPropertiesChange(newPod: Pod, oldPod: Pod): ClusterEvent[] {
  const events: ClusterEvent[] = [];
  const ev = (actionType: ActionType, label: string): ClusterEvent => ({
    resource: "UnscheduledPod",
    actionType,
    label,
  });
  if (JSON.stringify(oldPod.metadata.labels ?? {}) !== JSON.stringify(newPod.metadata.labels ?? {})) {
    events.push(ev(ActionType.UpdatePodLabel, "UnscheduledPodLabelChange"));
  }
  if (scaledDown(oldPod, newPod)) {
    events.push(ev(ActionType.UpdatePodScaleDown, "UnscheduledPodRequestScaledDown"));
  }
  if (JSON.stringify(oldPod.spec.tolerations ?? []) !== JSON.stringify(newPod.spec.tolerations ?? [])) {
    events.push(ev(ActionType.UpdatePodTolerations, "UnscheduledPodTolerationChange"));
  }
  if ((oldPod.spec.schedulingGates?.length ?? 0) > 0 && (newPod.spec.schedulingGates?.length ?? 0) === 0) {
    events.push(ev(ActionType.UpdatePodSchedulingGatesEliminated, "UnscheduledPodSchedulingGateEliminated"));
  }
  if (events.length === 0) events.push(ev(ActionType.updatePodOther, "UnscheduledPodUpdate"));
  return events;
}

/** Whether any CPU or memory request of the pod went down (the room it needs shrank). */
function scaledDown(oldPod: Pod, newPod: Pod): boolean {
  const o = podRequests(oldPod);
  const n = podRequests(newPod);
  return n.milliCPU < o.milliCPU || n.memory < o.memory || n.ephemeralStorage < o.ephemeralStorage;
}
// #endregion pod-update-events

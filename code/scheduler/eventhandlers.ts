/**
 * Event handlers — how the scheduler hears about pods and nodes: the informers' adds, updates
 * and deletes become cache changes (bound pods, nodes), queue changes (unscheduled pods), and
 * cluster events that move the pods waiting in unschedulablePods.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/eventhandlers.go (addAllEventHandlers, addNodeToCache, updateNodeInCache, deleteNodeFromCache, addPodToSchedulingQueue, updatePodInSchedulingQueue, deletePodFromSchedulingQueue, addPodToCache, updatePodInCache, deletePodFromCache, assignedPod, responsibleForPod, preCheckForNode)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/events.go (NodeSchedulingPropertiesChange, EventNodeDelete, EventUnscheduledPodDelete)
 * @chapter 05-scheduler
 *
 * Solves: the scheduler's two pictures of the cluster — the queue of pods to place and the cache
 * of what is placed — must follow the API server through one watch of pods and one of nodes,
 * and an unschedulable pod must be retried when something that could help happens (a node
 * added, a pod deleted), not on a timer.
 *
 * Invariants:
 * - one pods informer, two filtered handlers: a pod with `spec.nodeName` is the cache's
 *   (whoever bound it); a pod without, whose `schedulerName` is one of our profiles, is the
 *   queue's. A binding is an update that crosses the filters: the queue's handler sees a delete,
 *   the cache's an add (which confirms the assumed pod).
 * - a tombstone (DeletedFinalStateUnknown) may carry a stale pod, so both handlers clean up
 *   after it: the cache's handler accepts every tombstone, the queue's every one of our profiles.
 * - every cache change that may make room or change a node's fitness is followed by
 *   `moveAllToActiveOrBackoffQueue` with the matching cluster event; the queueing hints of the
 *   plugins that rejected each pod decide whether it moves.
 * - an update with the same resourceVersion (a resync) changes nothing in the queue.
 */
import type { Node, Pod } from "../api/core.ts";
import { DeletedFinalStateUnknown } from "../client/tools/cache/delta-fifo.ts";
import { filteringResourceEventHandler } from "../client/tools/cache/filtering-handler.ts";
import type {
  ResourceEventHandlerRegistration,
  SharedIndexInformer,
} from "../client/tools/cache/shared-informer.ts";
import type { Cache } from "./backend/cache/cache.ts";
import type { PriorityQueue } from "./backend/queue/scheduling-queue.ts";
import {
  ActionType,
  AssignedPodAdd,
  AssignedPodDelete,
  type ClusterEvent,
  NodeAdd,
  podSchedulingPropertiesChange,
} from "./framework/events.ts";
import type { Framework } from "./framework/runtime/framework.ts";
import { DefaultSchedulerName } from "./plugins/registry.ts";

// #region node-events
const nodeEvent = (actionType: ActionType, label: string): ClusterEvent => ({
  resource: "Node",
  actionType,
  label,
});
export const NodeDelete = nodeEvent(ActionType.Delete, "NodeDelete");
export const NodeSpecUnschedulableChange = nodeEvent(
  ActionType.UpdateNodeTaint,
  "NodeSpecUnschedulableChange",
);
export const NodeAllocatableChange = nodeEvent(ActionType.UpdateNodeAllocatable, "NodeAllocatableChange");
export const NodeLabelChange = nodeEvent(ActionType.UpdateNodeLabel, "NodeLabelChange");
export const NodeAnnotationChange = nodeEvent(ActionType.UpdateNodeAnnotation, "NodeAnnotationChange");
export const NodeTaintChange = nodeEvent(ActionType.UpdateNodeTaint, "NodeTaintChange");
export const NodeConditionChange = nodeEvent(ActionType.UpdateNodeCondition, "NodeConditionChange");
export const UnscheduledPodDelete: ClusterEvent = {
  resource: "UnscheduledPod",
  actionType: ActionType.Delete,
  label: "UnschedulablePodDelete",
};

const same = (a: unknown, b: unknown) => JSON.stringify(a ?? {}) === JSON.stringify(b ?? {});

/**
 * NodeSchedulingPropertiesChange: what a node update changed that the scheduler cares about.
 * A node becoming unschedulable is not listed: that can only make pods fit less.
 */
export function nodeSchedulingPropertiesChange(newNode: Node, oldNode: Node): ClusterEvent[] {
  const events: ClusterEvent[] = [];
  if (oldNode.spec?.unschedulable && !newNode.spec?.unschedulable) events.push(NodeSpecUnschedulableChange);
  if (!same(oldNode.status?.allocatable, newNode.status?.allocatable)) events.push(NodeAllocatableChange);
  if (!same(oldNode.metadata.labels, newNode.metadata.labels)) events.push(NodeLabelChange);
  if (!same(oldNode.spec?.taints ?? [], newNode.spec?.taints ?? [])) events.push(NodeTaintChange);
  if (!same(conditionStatuses(oldNode), conditionStatuses(newNode))) events.push(NodeConditionChange);
  if (!same(oldNode.metadata.annotations, newNode.metadata.annotations)) events.push(NodeAnnotationChange);
  return events;
}

/** Only a condition's status counts: heartbeat times change every few seconds. */
function conditionStatuses(node: Node): Record<string, string> {
  return Object.fromEntries((node.status?.conditions ?? []).map((c) => [c.type, c.status]));
}
// #endregion node-events

// #region filters
/** assignedPod: bound to a node (scheduled by us or anyone else). */
export const assignedPod = (pod: Pod): boolean => (pod.spec.nodeName ?? "") !== "";

/** responsibleForPod: one of our profiles has the pod's schedulerName. */
export const responsibleForPod = (pod: Pod, profiles: Map<string, Framework>): boolean =>
  profiles.has(pod.spec.schedulerName || DefaultSchedulerName);
// #endregion filters

/** What the handlers change: the scheduler's cache and queue, for its profiles. */
export interface HandlerTarget {
  cache: Cache;
  queue: PriorityQueue;
  profiles: Map<string, Framework>;
  onError?: (err: Error) => void;
}

// #region node-handlers
export function addNodeToCache(s: HandlerTarget, node: Node): void {
  s.cache.addNode(node);
  // With queueing hints (on in 1.32) there is no pre-check: the hints judge each pod.
  s.queue.moveAllToActiveOrBackoffQueue(NodeAdd, undefined, node);
}

export function updateNodeInCache(s: HandlerTarget, oldNode: Node, newNode: Node): void {
  s.cache.updateNode(oldNode, newNode);
  for (const evt of nodeSchedulingPropertiesChange(newNode, oldNode)) {
    s.queue.moveAllToActiveOrBackoffQueue(evt, oldNode, newNode);
  }
}

export function deleteNodeFromCache(s: HandlerTarget, obj: Node | DeletedFinalStateUnknown<Node>): void {
  const node = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
  if (!node) return;
  // A node going away can help a pod too (pod anti-affinity to pods on it, topology spread).
  s.queue.moveAllToActiveOrBackoffQueue(NodeDelete, node, undefined);
  const err = s.cache.removeNode(node);
  if (err) s.onError?.(err);
}
// #endregion node-handlers

// #region queue-handlers
export function addPodToSchedulingQueue(s: HandlerTarget, pod: Pod): void {
  s.queue.add(pod);
}

export function updatePodInSchedulingQueue(s: HandlerTarget, oldPod: Pod, newPod: Pod): void {
  // A resync delivers the same object again: updating the queue with it could schedule it twice.
  if (oldPod.metadata.resourceVersion === newPod.metadata.resourceVersion) return;
  // Assumed: its own scheduling is in flight; the binding's update will bring it to the cache.
  if (s.cache.isAssumedPod(newPod)) return;
  s.queue.update(oldPod, newPod);
}

export function deletePodFromSchedulingQueue(
  s: HandlerTarget,
  obj: Pod | DeletedFinalStateUnknown<Pod>,
): void {
  const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
  if (!pod) return;
  s.queue.delete(pod);
  const fwk = s.profiles.get(pod.spec.schedulerName || DefaultSchedulerName);
  // Deleted while waiting at Permit: it was assumed, so rejecting it frees its node — which
  // may be room for the pods that were waiting.
  if (fwk?.rejectWaitingPod(pod.metadata.uid ?? "")) {
    s.queue.moveAllToActiveOrBackoffQueue(AssignedPodDelete, pod, undefined);
  }
}
// #endregion queue-handlers

// #region cache-handlers
export function addPodToCache(s: HandlerTarget, pod: Pod): void {
  const err = s.cache.addPod(pod);
  if (err) s.onError?.(err);
  // With hints the plain move: each rejecting plugin's hint says whether this pod helps.
  s.queue.moveAllToActiveOrBackoffQueue(AssignedPodAdd, undefined, pod);
}

export function updatePodInCache(s: HandlerTarget, oldPod: Pod, newPod: Pod): void {
  const err = s.cache.updatePod(oldPod, newPod);
  if (err) s.onError?.(err);
  for (const evt of podSchedulingPropertiesChange(newPod, oldPod)) {
    const label = evt.label?.replace("UnscheduledPod", "AssignedPod");
    s.queue.assignedPodUpdated(oldPod, newPod, { ...evt, resource: "AssignedPod", label });
  }
}

export function deletePodFromCache(s: HandlerTarget, obj: Pod | DeletedFinalStateUnknown<Pod>): void {
  const pod = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
  if (!pod) return;
  const err = s.cache.removePod(pod);
  if (err) s.onError?.(err);
  s.queue.moveAllToActiveOrBackoffQueue(AssignedPodDelete, pod, undefined);
}
// #endregion cache-handlers

// #region add-all-event-handlers
/**
 * addAllEventHandlers: registers the three handlers — bound pods to the cache, unscheduled pods
 * of our profiles to the queue, nodes to the cache. Returns the registrations, whose hasSynced
 * the scheduler waits on before its first cycle.
 */
export function addAllEventHandlers(
  s: HandlerTarget,
  podInformer: SharedIndexInformer<Pod>,
  nodeInformer: SharedIndexInformer<Node>,
): ResourceEventHandlerRegistration[] {
  const assigned = podInformer.addEventHandler(
    filteringResourceEventHandler<Pod>(
      // A tombstone may be stale (bound since): let the cache try to remove it anyway.
      (obj) => obj instanceof DeletedFinalStateUnknown || assignedPod(obj),
      {
        onAdd: (pod) => addPodToCache(s, pod),
        onUpdate: (oldPod, newPod) => updatePodInCache(s, oldPod, newPod),
        onDelete: (obj) => deletePodFromCache(s, obj),
      },
    ),
  );
  const unassigned = podInformer.addEventHandler(
    filteringResourceEventHandler<Pod>(
      (obj) => {
        if (obj instanceof DeletedFinalStateUnknown)
          return !!obj.obj && responsibleForPod(obj.obj, s.profiles);
        return !assignedPod(obj) && responsibleForPod(obj, s.profiles);
      },
      {
        onAdd: (pod) => addPodToSchedulingQueue(s, pod),
        onUpdate: (oldPod, newPod) => updatePodInSchedulingQueue(s, oldPod, newPod),
        onDelete: (obj) => deletePodFromSchedulingQueue(s, obj),
      },
    ),
  );
  const nodes = nodeInformer.addEventHandler({
    onAdd: (node) => addNodeToCache(s, node),
    onUpdate: (oldNode, newNode) => updateNodeInCache(s, oldNode, newNode),
    onDelete: (obj) => deleteNodeFromCache(s, obj),
  });
  return [assigned, unassigned, nodes];
}
// #endregion add-all-event-handlers

/**
 * What the node lifecycle controller writes: taints added to and removed from a Node, and the
 * Ready condition of a node's pods turned False.
 * Mirrors kubernetes/kubernetes pkg/controller/util/node/controller_utils.go (SwapNodeControllerTaint,
 * MarkPodsNotReady, RecordNodeStatusChange) and pkg/controller/controller_utils.go
 * (AddOrUpdateTaintOnNode, RemoveTaintOffNode, PatchNodeTaints).
 *
 * Solves:
 * - the kubelet, the scheduler and users also write the Node: a taint change is a patch of
 *   `spec.taints` carrying the resourceVersion it was computed from, retried on a conflict from a
 *   fresh read, so nobody's taint is lost;
 * - `kubectl get pods` and every Service must stop trusting the pods of a silent node at once,
 *   before they are evicted: their Ready condition becomes False (the kubelet that would do
 *   it is the one that is gone).
 *
 * Invariants:
 * - a taint is identified by key and effect (MatchTaint); adding one that exists with another
 *   value or timeAdded replaces it;
 * - removing taints the Node does not have sends nothing;
 * - a pod's Ready condition is written only when it was not False already.
 *
 * @upstream kubernetes/kubernetes pkg/controller/util/node/controller_utils.go (SwapNodeControllerTaint, MarkPodsNotReady, RecordNodeStatusChange)
 * @upstream kubernetes/kubernetes pkg/controller/controller_utils.go (AddOrUpdateTaintOnNode, RemoveTaintOffNode, PatchNodeTaints, UpdateTaintBackoff)
 * @upstream kubernetes/kubernetes pkg/util/taints/taints.go (AddOrUpdateTaint, DeleteTaint, TaintExists)
 * @chapter 07-kubelet
 */
import type { Node, Pod, Taint } from "../../api/core.ts";
import { isConflict, isNotFound } from "../../client/errors.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { StrategicMergePatchType } from "../../client/rest/request.ts";
import type { SharedIndexInformer } from "../../client/tools/cache/shared-informer.ts";
import type { EventRecorder } from "../pod-control.ts";

/** Retries of a taint patch that met a conflict (UpdateTaintBackoff.Steps). */
const taintRetries = 5;

export const matchTaint = (a: Taint, b: Taint) => a.key === b.key && a.effect === b.effect;
export const taintExists = (taints: readonly Taint[] | undefined, t: Taint) =>
  (taints ?? []).some((x) => matchTaint(x, t));

/** metav1.Time: seconds, UTC. */
export const metaTime = (ms: number) =>
  new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");

/** PATCH spec.taints with the resourceVersion it was computed from (a conflict if the Node moved on). */
async function patchNodeTaints(client: Clientset, node: Node, taints: Taint[]): Promise<void> {
  await client.coreV1.nodes().patch(node.metadata.name ?? "", StrategicMergePatchType, {
    metadata: { resourceVersion: node.metadata.resourceVersion },
    spec: { taints },
  });
}

/** Reads, changes and patches the Node's taints, from a fresh read after each conflict. */
async function updateTaints(
  client: Clientset,
  nodeName: string,
  first: Node | undefined,
  change: (taints: Taint[]) => Taint[] | undefined,
): Promise<void> {
  let node = first;
  for (let attempt = 0; ; attempt++) {
    node ??= await client.coreV1.nodes().get(nodeName);
    const next = change([...(node.spec?.taints ?? [])]);
    if (!next) return; // nothing to change
    try {
      await patchNodeTaints(client, node, next);
      return;
    } catch (err) {
      if (!isConflict(err) || attempt + 1 >= taintRetries) throw err;
      node = undefined;
    }
  }
}

// #region taints
/** AddOrUpdateTaintOnNode: each taint added, or put in place of the one with its key and effect. */
export function addOrUpdateTaintOnNode(client: Clientset, nodeName: string, taints: Taint[]): Promise<void> {
  if (taints.length === 0) return Promise.resolve();
  return updateTaints(client, nodeName, undefined, (current) => {
    let changed = false;
    let result = current;
    for (const t of taints) {
      const i = result.findIndex((x) => matchTaint(x, t));
      if (i >= 0 && JSON.stringify(result[i]) === JSON.stringify(t)) continue;
      changed = true;
      result = i >= 0 ? result.map((x, j) => (j === i ? t : x)) : [...result, t];
    }
    return changed ? result : undefined;
  });
}

/** RemoveTaintOffNode: nothing is sent if `node` (the cached one) has none of them. */
export function removeTaintOffNode(
  client: Clientset,
  nodeName: string,
  node: Node | undefined,
  taints: Taint[],
): Promise<void> {
  if (taints.length === 0) return Promise.resolve();
  if (node && !taints.some((t) => taintExists(node.spec?.taints, t))) return Promise.resolve();
  return updateTaints(client, nodeName, undefined, (current) => {
    const result = current.filter((x) => !taints.some((t) => matchTaint(x, t)));
    return result.length === current.length ? undefined : result;
  });
}

/** SwapNodeControllerTaint: add (stamped with timeAdded = now), then remove; false on failure. */
export async function swapNodeControllerTaint(
  client: Clientset,
  toAdd: Taint[],
  toRemove: Taint[],
  node: Node,
  nowMs: number,
  onError: (err: unknown) => void = () => {},
): Promise<boolean> {
  const stamped = toAdd.map((t) => ({ ...t, timeAdded: metaTime(nowMs) }));
  try {
    await addOrUpdateTaintOnNode(client, node.metadata.name ?? "", stamped);
    await removeTaintOffNode(client, node.metadata.name ?? "", node, toRemove);
    return true;
  } catch (err) {
    onError(err);
    return false;
  }
}
// #endregion taints

// #region mark-pods-not-ready
/**
 * MarkPodsNotReady: every pod of the node whose Ready condition is not False gets it False
 * (through pods/status) and a Warning NodeNotReady event. Pods already gone are skipped.
 */
export async function markPodsNotReady(
  client: Clientset,
  recorder: EventRecorder,
  pods: readonly Pod[],
  nodeName: string,
  nowMs: number,
): Promise<void> {
  const errors: unknown[] = [];
  for (const cached of pods) {
    if (cached.spec.nodeName !== nodeName) continue;
    const ready = cached.status?.conditions?.find((c) => c.type === "Ready");
    if (!ready || ready.status === "False") continue;
    const pod: Pod = structuredClone(cached);
    pod.status = {
      ...pod.status,
      conditions: (pod.status?.conditions ?? []).map((c) =>
        c.type === "Ready" ? { ...c, status: "False", lastTransitionTime: metaTime(nowMs) } : c,
      ),
    };
    try {
      await client.coreV1.pods(pod.metadata.namespace ?? "").updateStatus(pod);
    } catch (err) {
      if (isNotFound(err)) continue;
      errors.push(err);
      continue;
    }
    recorder(pod, "Warning", "NodeNotReady", "Node is not ready");
  }
  if (errors.length > 0) throw errors[0];
}
// #endregion mark-pods-not-ready

/** RecordNodeStatusChange: "Node <name> status is now: <status>" on the Node. */
export function recordNodeStatusChange(recorder: EventRecorder, node: Node, newStatus: string): void {
  recorder(node, "Normal", newStatus, `Node ${node.metadata.name} status is now: ${newStatus}`);
}

/** The pod index by spec.nodeName, shared by the controllers that look up a node's pods (PodNodeNameKeyIndex). */
export const PodNodeNameKeyIndex = "spec.nodeName";

/** AddPodNodeNameIndexer: adds the index once, whichever controller asks first. */
export function addPodNodeNameIndexer(informer: SharedIndexInformer<Pod>): void {
  try {
    informer.addIndexers({ [PodNodeNameKeyIndex]: (pod) => (pod.spec.nodeName ? [pod.spec.nodeName] : []) });
  } catch (err) {
    if (!String(err).includes("indexer conflict")) throw err;
  }
}

/** The pods assigned to `nodeName`, from the index (getPodsAssignedToNode). */
export function getPodsAssignedToNode(informer: SharedIndexInformer<Pod>, nodeName: string): Pod[] {
  return informer.getIndexer().byIndex(PodNodeNameKeyIndex, nodeName);
}

/**
 * PatchNodeStatus — the kubelet's node status write: a strategic merge patch of what changed
 * between the Node it read and the Node its setters produced, sent to `nodes/<name>/status`.
 * Mirrors kubernetes/kubernetes pkg/util/node/node.go (PatchNodeStatus, preparePatchBytesforNodeStatus).
 *
 * Solves:
 * - a heartbeat must not undo what someone else wrote in between (the node lifecycle controller's
 *   conditions, `kubectl label`): a patch that names only the kubelet's changes leaves the rest;
 * - a heartbeat is small: when only the heartbeat times moved, the patch carries four conditions'
 *   `type` and `lastHeartbeatTime` and nothing else.
 *
 * Invariants:
 * - the patch names only fields that differ; a key gone from a map is sent as `null`;
 * - `status.conditions` merge by `type` (`$setElementOrder/conditions` keeps the kubelet's
 *   order); a condition gone is `{type, $patch: delete}`;
 * - `status.addresses` are annotated `patchStrategy=merge` by `type`, which cannot express a
 *   change of an address of the same type correctly, so a change replaces the whole list
 *   (`{$patch: replace}` first) — upstream's fixupPatchForNodeStatusAddresses;
 * - `spec` is never patched: the status subresource ignores it.
 *
 * @upstream kubernetes/kubernetes pkg/util/node/node.go (PatchNodeStatus, preparePatchBytesforNodeStatus, fixupPatchForNodeStatusAddresses)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go (CreateTwoWayMergePatch)
 * @chapter 07-kubelet
 */

import type { Node, NodeCondition } from "../../api/core.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { StrategicMergePatchType } from "../../client/rest/request.ts";

type JSONMap = Record<string, unknown>;

const isMap = (v: unknown): v is JSONMap => typeof v === "object" && v !== null && !Array.isArray(v);

export function deepEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => deepEqual(x, b[i]));
  if (isMap(a) && isMap(b)) {
    const ka = Object.keys(a).filter((k) => a[k] !== undefined);
    const kb = Object.keys(b).filter((k) => b[k] !== undefined);
    return ka.length === kb.length && ka.every((k) => deepEqual(a[k], b[k]));
  }
  return false;
}

/** A two-way merge patch of two maps whose lists are all replaced (no list of theirs has a merge key). */
function diffMap(oldMap: JSONMap = {}, newMap: JSONMap = {}): JSONMap {
  const patch: JSONMap = {};
  for (const [k, v] of Object.entries(newMap)) {
    if (v === undefined || deepEqual(oldMap[k], v)) continue;
    if (isMap(v) && isMap(oldMap[k])) patch[k] = diffMap(oldMap[k] as JSONMap, v);
    else patch[k] = v;
  }
  for (const k of Object.keys(oldMap)) {
    if (oldMap[k] !== undefined && newMap[k] === undefined) patch[k] = null;
  }
  return patch;
}

// #region node-status-patch
/** The conditions list merged by `type`: only the changed fields of changed conditions. */
function diffConditions(oldList: NodeCondition[] = [], newList: NodeCondition[] = []): JSONMap {
  const items: JSONMap[] = [];
  for (const c of newList) {
    const before = oldList.find((o) => o.type === c.type);
    const d = diffMap(before as unknown as JSONMap, c as unknown as JSONMap);
    if (Object.keys(d).length > 0) items.push({ type: c.type, ...d });
  }
  for (const o of oldList) {
    if (!newList.some((c) => c.type === o.type)) items.push({ type: o.type, $patch: "delete" });
  }
  if (items.length === 0) return {};
  return { "$setElementOrder/conditions": newList.map((c) => ({ type: c.type })), conditions: items };
}

/**
 * preparePatchBytesforNodeStatus: metadata (labels, annotations) and status of `newNode` against
 * `oldNode`, as a strategic merge patch; `{}` when nothing changed.
 */
export function nodeStatusPatch(oldNode: Node, newNode: Node): JSONMap {
  const patch: JSONMap = {};
  const meta: JSONMap = {};
  for (const field of ["labels", "annotations"] as const) {
    const d = diffMap(oldNode.metadata[field], newNode.metadata[field]);
    if (Object.keys(d).length > 0) meta[field] = d;
  }
  if (Object.keys(meta).length > 0) patch.metadata = meta;

  const { conditions: oldConditions, addresses: oldAddresses, ...oldRest } = oldNode.status ?? {};
  const { conditions: newConditions, addresses: newAddresses, ...newRest } = newNode.status ?? {};
  const status: JSONMap = {
    ...diffMap(oldRest as JSONMap, newRest as JSONMap),
    ...diffConditions(oldConditions, newConditions),
  };
  if (!deepEqual(oldAddresses ?? [], newAddresses ?? [])) {
    status.addresses =
      (oldAddresses ?? []).length > 0 ? [{ $patch: "replace" }, ...(newAddresses ?? [])] : newAddresses;
  }
  if (Object.keys(status).length > 0) patch.status = status;
  return patch;
}
// #endregion node-status-patch

/** PATCH nodes/<name>/status with the difference; the error names the patch, as upstream's does. */
export async function patchNodeStatus(
  client: Clientset,
  nodeName: string,
  oldNode: Node,
  newNode: Node,
  signal?: AbortSignal,
): Promise<Node> {
  const patch = nodeStatusPatch(oldNode, newNode);
  try {
    return await client.coreV1.nodes().patch(nodeName, StrategicMergePatchType, patch, { signal }, "status");
  } catch (err) {
    const e = new Error(
      `failed to patch status ${JSON.stringify(JSON.stringify(patch))} for node ${JSON.stringify(nodeName)}: ${(err as Error).message}`,
    );
    (e as Error & { cause?: unknown }).cause = err;
    throw e;
  }
}

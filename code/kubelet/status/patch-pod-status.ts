/**
 * PatchPodStatus — the kubelet's one way of writing a pod's status: a strategic merge patch of
 * `pods/<name>/status` carrying only what changed, plus the pod's UID as a precondition.
 * Mirrors kubernetes/kubernetes pkg/util/pod/pod.go (PatchPodStatus, preparePatchBytesForPodStatus).
 *
 * Solves:
 * - other writers own parts of a pod's status (the scheduler's PodScheduled, a controller's
 *   readiness gate, the node lifecycle controller's Ready=Unknown): a PUT of the kubelet's whole
 *   view would overwrite them. A two-way patch names only the kubelet's changes; conditions merge
 *   by `type` and pod IPs by `ip`, so another writer's condition survives.
 * - a pod deleted and re-created under the same name must not receive the old one's status: the
 *   patch sets `metadata.uid`, which the API server refuses to change (a UID precondition).
 * - no change, no request: when the patch holds nothing but the UID, nothing is sent.
 *
 * Invariants: applying the patch to `old` (server side, with the pod's patch strategies) gives
 * `new` for every field the kubelet set; containerStatuses are replaced whole (no merge key in
 * 1.32's API).
 *
 * What upstream does differently: upstream diffs two JSON documents with the generic
 * strategicpatch.CreateTwoWayMergePatch; this diff knows only the PodStatus fields (and compares
 * the items of merged lists one level deep, which is all a condition or a pod IP has).
 *
 * @upstream kubernetes/kubernetes pkg/util/pod/pod.go (PatchPodStatus, preparePatchBytesForPodStatus)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/strategicpatch/patch.go (CreateTwoWayMergePatch, $setElementOrder, $patch: delete)
 * @chapter 07-kubelet
 */

import type { PodStatus } from "../../api/core.ts";

/** PodStatus lists with a patch merge key (types.go `patchMergeKey`). */
const mergeKeys: Record<string, string> = { conditions: "type", podIPs: "ip", hostIPs: "ip" };

/** Semantic equality: a missing field equals an undefined one; arrays keep their order. */
export function semanticEqual(a: unknown, b: unknown): boolean {
  if (a === b) return true;
  if (typeof a !== "object" || typeof b !== "object" || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => semanticEqual(x, b[i]));
  const ao = a as Record<string, unknown>;
  const bo = b as Record<string, unknown>;
  const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
  for (const k of keys) if (!semanticEqual(ao[k], bo[k])) return false;
  return true;
}

// #region pod-status-patch
/** The `status` part of the two-way patch from `oldStatus` to `newStatus`; {} when nothing changed. */
export function podStatusPatch(oldStatus: PodStatus, newStatus: PodStatus): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  const o = oldStatus as Record<string, unknown>;
  const n = newStatus as Record<string, unknown>;
  for (const field of new Set([...Object.keys(o), ...Object.keys(n)])) {
    if (semanticEqual(o[field], n[field])) continue;
    if (n[field] === undefined) {
      patch[field] = null; // a field the kubelet no longer sets is removed
      continue;
    }
    const key = mergeKeys[field];
    if (!key || !Array.isArray(n[field])) {
      patch[field] = n[field];
      continue;
    }
    // A list merged by key: the changed and new items, a delete for each item gone, and the
    // order of the new list (so the server can put the merged items in it).
    const oldItems = (o[field] as Record<string, unknown>[] | undefined) ?? [];
    const newItems = n[field] as Record<string, unknown>[];
    const items: Record<string, unknown>[] = [];
    for (const item of newItems) {
      const before = oldItems.find((x) => x[key] === item[key]);
      if (!before) items.push(item);
      else if (!semanticEqual(before, item)) items.push(itemPatch(key, before, item));
    }
    for (const before of oldItems) {
      if (!newItems.some((x) => x[key] === before[key])) items.push({ [key]: before[key], $patch: "delete" });
    }
    patch[`$setElementOrder/${field}`] = newItems.map((x) => ({ [key]: x[key] }));
    if (items.length > 0) patch[field] = items;
  }
  return patch;
}
// #endregion pod-status-patch

/**
 * A changed list item: its merge key, its changed fields, and null for each field it lost (a
 * condition that became True drops its reason and message; the server merges items field by field).
 */
function itemPatch(
  key: string,
  before: Record<string, unknown>,
  item: Record<string, unknown>,
): Record<string, unknown> {
  const patch: Record<string, unknown> = { [key]: item[key] };
  for (const f of new Set([...Object.keys(before), ...Object.keys(item)])) {
    if (f === key || semanticEqual(before[f], item[f])) continue;
    patch[f] = item[f] === undefined ? null : item[f];
  }
  return patch;
}

/** The whole patch body, or undefined when it would carry nothing but the UID (unchanged). */
export function preparePatchForPodStatus(
  uid: string,
  oldStatus: PodStatus,
  newStatus: PodStatus,
): Record<string, unknown> | undefined {
  const status = podStatusPatch(oldStatus, newStatus);
  if (Object.keys(status).length === 0) return undefined;
  return { metadata: { uid }, status };
}

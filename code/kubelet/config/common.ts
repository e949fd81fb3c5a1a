/**
 * Static pod defaults — what the kubelet fills in on a pod read from a file: a name unique to
 * this node, a UID derived from the content, the node, and the annotations that mark its source.
 * Mirrors kubernetes/kubernetes pkg/kubelet/config/common.go.
 *
 * Solves:
 * - two nodes may read the same manifest: the pod name gets `-<nodeName>` so their mirror pods
 *   do not collide in the API.
 * - a file has no UID, yet the pod must keep one across rescans (and across kubelet restarts, so
 *   running containers are re-adopted) and get a new one when the file changes (so the old pod is
 *   stopped and the new one started): the UID is a hash of the node, the file and the content.
 *
 * Invariants: applyDefaults is a pure function of (pod, source path, node name); the hash
 * annotation equals the UID; a static pod tolerates every NoExecute taint.
 *
 * What upstream does differently: upstream hashes the decoded Go object with DeepHashObject
 * (spew's printing of it); we hash its JSON. The idea — same content, same UID — is the same,
 * the exact hex differs.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/config/common.go (generatePodName, applyDefaults, tryDecodeSinglePod)
 * @chapter 07-kubelet
 */

import { createHash } from "node:crypto";
import type { Pod } from "../../api/core.ts";
import { ConfigHashAnnotationKey } from "../types/pod-update.ts";

/** A name unique among nodes: the node's name (lower-cased) appended. */
export function generatePodName(name: string, nodeName: string): string {
  return `${name}-${nodeName.toLowerCase()}`;
}

// #region apply-defaults
export function applyDefaults(input: Pod, source: string, nodeName: string): Pod {
  const pod = structuredClone(input);
  if (!pod.metadata.uid) {
    const hasher = createHash("md5");
    hasher.update(`host:${nodeName}`);
    hasher.update(`file:${source}`);
    hasher.update(JSON.stringify(pod));
    pod.metadata.uid = hasher.digest("hex");
  }
  pod.metadata.name = generatePodName(pod.metadata.name ?? "", nodeName);
  pod.metadata.namespace ||= "default";
  pod.spec.nodeName = nodeName; // scheduled here by definition
  pod.metadata.annotations = { ...pod.metadata.annotations, [ConfigHashAnnotationKey]: pod.metadata.uid };
  // Static pods are not evicted for node problems.
  const tolerations = pod.spec.tolerations ?? [];
  if (!tolerations.some((t) => t.operator === "Exists" && t.effect === "NoExecute" && !t.key)) {
    pod.spec.tolerations = [...tolerations, { operator: "Exists", effect: "NoExecute" }];
  }
  pod.status = { phase: "Pending" };
  return pod;
}
// #endregion apply-defaults

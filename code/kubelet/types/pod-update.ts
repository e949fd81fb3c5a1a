/**
 * Pod updates and pod sources — the messages the kubelet's config delivers to the sync loop, and
 * the annotations that say where a pod came from.
 * Mirrors kubernetes/kubernetes pkg/kubelet/types/pod_update.go.
 *
 * Solves: the kubelet runs pods from more than one source (the API server; static pod files) and
 * must tell them apart everywhere: a static pod has no API object of its own (the kubelet creates
 * a *mirror pod* for it), so its status is written to the mirror, and it is never deleted through
 * the API. The source rides along on the pod as an annotation, as upstream does.
 *
 * Invariants:
 * - every pod from the config carries `kubernetes.io/config.source` ("api" or "file") and
 *   `kubernetes.io/config.seen`; a static pod also `kubernetes.io/config.hash` (its UID);
 * - a mirror pod carries `kubernetes.io/config.mirror` (the static pod's hash) and is never run.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/types/pod_update.go (PodOperation, PodUpdate, ConfigSourceAnnotationKey, ConfigMirrorAnnotationKey, ConfigFirstSeenAnnotationKey, ConfigHashAnnotationKey, GetPodSource, IsStaticPod, IsMirrorPod, ApiserverSource, FileSource, AllSource)
 * @chapter 07-kubelet
 */

import type { Pod } from "../../api/core.ts";

export const ConfigSourceAnnotationKey = "kubernetes.io/config.source";
export const ConfigMirrorAnnotationKey = "kubernetes.io/config.mirror";
export const ConfigFirstSeenAnnotationKey = "kubernetes.io/config.seen";
export const ConfigHashAnnotationKey = "kubernetes.io/config.hash";

export const ApiserverSource = "api";
export const FileSource = "file";

/**
 * SET: the whole set of a source's pods. ADD/UPDATE/DELETE/REMOVE/RECONCILE: what changed, as the
 * config's merge delivers it (DELETE = graceful deletion requested; REMOVE = gone from the source;
 * RECONCILE = only the status differs).
 */
export type PodOperation = "SET" | "ADD" | "DELETE" | "REMOVE" | "UPDATE" | "RECONCILE";

export interface PodUpdate {
  pods: Pod[];
  op: PodOperation;
  source: string;
}

export function getPodSource(pod: Pod): string | undefined {
  return pod.metadata.annotations?.[ConfigSourceAnnotationKey];
}

/** A pod from a source other than the API server. */
export function isStaticPod(pod: Pod): boolean {
  const source = getPodSource(pod);
  return source !== undefined && source !== ApiserverSource;
}

/** The API server's copy of a static pod. */
export function isMirrorPod(pod: Pod): boolean {
  return pod.metadata.annotations?.[ConfigMirrorAnnotationKey] !== undefined;
}

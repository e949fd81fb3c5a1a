/**
 * The mirror client — creates and deletes the API server's copies of this node's static pods.
 * Mirrors kubernetes/kubernetes pkg/kubelet/pod/mirror_client.go.
 *
 * Solves: a static pod comes from a file, yet `kubectl get pods` should show it and the scheduler
 * must count its resources. The kubelet creates a *mirror pod*: the same pod, annotated
 * `kubernetes.io/config.mirror: <hash>`, owned by the Node (so it goes when the node goes). The
 * API server's NodeRestriction admission lets a kubelet create exactly such pods, bound to itself.
 *
 * Invariants: a mirror pod carries the static pod's hash; when the file changes (new hash), the
 * old mirror is deleted (grace period 0, UID precondition) and a new one created; the API
 * assigns the mirror its own UID.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/pod/mirror_client.go (MirrorClient, basicMirrorClient, CreateMirrorPod, DeleteMirrorPod, IsMirrorPodOf, getHashFromMirror, getPodHash)
 * @chapter 07-kubelet
 */

import type { Pod } from "../../api/core.ts";
import { isAlreadyExists, isNotFound } from "../../client/errors.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { ConfigHashAnnotationKey, ConfigMirrorAnnotationKey } from "../types/pod-update.ts";

export const getPodHash = (pod: Pod) => pod.metadata.annotations?.[ConfigHashAnnotationKey] ?? "";
export const getHashFromMirror = (pod: Pod) => pod.metadata.annotations?.[ConfigMirrorAnnotationKey];

/** Whether `mirror` is the current mirror of `pod` (same hash, not being deleted). */
export function isMirrorPodOf(mirror: Pod | undefined, pod: Pod): boolean {
  if (!mirror || mirror.metadata.deletionTimestamp) return false;
  return getHashFromMirror(mirror) === getPodHash(pod);
}

export class MirrorClient {
  constructor(
    private readonly client: Clientset,
    private readonly nodeName: string,
    /** The node's UID, for the owner reference (undefined until the node is registered). */
    private readonly nodeUID: () => Promise<string | undefined>,
  ) {}

  // #region create-mirror-pod
  async createMirrorPod(pod: Pod): Promise<void> {
    const {
      uid: _uid,
      resourceVersion: _rv,
      creationTimestamp: _ct,
      ...metadata
    } = structuredClone(pod.metadata);
    metadata.annotations = { ...metadata.annotations, [ConfigMirrorAnnotationKey]: getPodHash(pod) };
    const nodeUID = await this.nodeUID();
    if (nodeUID) {
      metadata.ownerReferences = [
        { apiVersion: "v1", kind: "Node", name: this.nodeName, uid: nodeUID, controller: true },
      ];
    }
    const mirror: Pod = { apiVersion: "v1", kind: "Pod", metadata, spec: structuredClone(pod.spec) };
    try {
      await this.client.coreV1.pods(metadata.namespace ?? "default").create(mirror);
    } catch (err) {
      // One with the same hash already there is fine; another is for the caller to delete first.
      if (!isAlreadyExists(err)) throw err;
    }
  }
  // #endregion create-mirror-pod

  /** Deletes the mirror pod of `podFullName` (`<name>_<namespace>`), only if its UID is `uid`. */
  async deleteMirrorPod(podFullName: string, uid: string | undefined): Promise<boolean> {
    const i = podFullName.lastIndexOf("_");
    const name = podFullName.slice(0, i);
    const namespace = podFullName.slice(i + 1);
    try {
      await this.client.coreV1.pods(namespace).delete(name, {
        gracePeriodSeconds: 0,
        ...(uid && { preconditions: { uid } }),
      });
      return true;
    } catch (err) {
      if (isNotFound(err)) return false;
      throw err;
    }
  }
}

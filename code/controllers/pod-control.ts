/**
 * PodControl — how a controller creates, deletes and patches the pods it owns, and the controller
 * ownerReference it stamps on them.
 * Mirrors kubernetes/kubernetes pkg/controller/controller_utils.go (PodControlInterface, RealPodControl,
 * CreatePods, DeletePod, PatchPod, GetPodFromTemplate, getPodsPrefix, validateControllerRef,
 * SlowStartInitialBatchSize) and apimachinery pkg/apis/meta/v1/controller_ref.go (NewControllerRef,
 * GetControllerOf).
 *
 * Solves:
 * - a pod made from a template must say who made it, in a way the rest of the cluster reads:
 *   one ownerReference with `controller: true` (only one owner may control it, so two
 *   ReplicaSets with overlapping selectors do not fight over it) and `blockOwnerDeletion: true`
 *   (a foreground deletion of the ReplicaSet waits for its pods — chapter 4's garbage collector);
 * - the controller loop is tested without a server by swapping this one interface.
 *
 * Invariants:
 * - every pod created carries the template's labels, annotations and finalizers, a generateName
 *   of `<owner>-`, and exactly the controllerRef given;
 * - createPods refuses a template without labels (the pod could never be matched back) and a
 *   controllerRef missing apiVersion, kind, `controller: true` or `blockOwnerDeletion: true`.
 *
 * @upstream kubernetes/kubernetes pkg/controller/controller_utils.go (PodControlInterface, RealPodControl, CreatePods, CreatePodsWithGenerateName, DeletePod, PatchPod, GetPodFromTemplate, getPodsPrefix, validateControllerRef, SlowStartInitialBatchSize, FailedCreatePodReason, SuccessfulCreatePodReason)
 * @upstream kubernetes/apimachinery pkg/apis/meta/v1/controller_ref.go (NewControllerRef, GetControllerOf)
 * @chapter 04-informers
 */

import type { Pod, PodTemplateSpec } from "../api/core.ts";
import type { KubeObject, OwnerReference } from "../api/meta.ts";
import type { GroupVersionKind } from "../api/schema.ts";
import type { Clientset } from "../client/kubernetes/clientset.ts";
import { StrategicMergePatchType } from "../client/rest/request.ts";

/** manageReplicas' first batch of creates (SlowStartInitialBatchSize). */
export const SlowStartInitialBatchSize = 1;

export const FailedCreatePodReason = "FailedCreate";
export const SuccessfulCreatePodReason = "SuccessfulCreate";
export const FailedDeletePodReason = "FailedDelete";
export const SuccessfulDeletePodReason = "SuccessfulDelete";

/** A controller error with upstream's message (fmt.Errorf in controller_utils.go). */
export class PodControlError extends Error {
  override name = "PodControlError";
}

/** Told of what PodControl did, as upstream's event recorder is (type Normal or Warning). */
export type EventRecorder = (
  object: KubeObject,
  type: "Normal" | "Warning",
  reason: string,
  message: string,
) => void;

// #region controller-ref
/** The ownerReference that makes `owner` the pod's controller (metav1.NewControllerRef). */
export function newControllerRef(owner: KubeObject, gvk: GroupVersionKind): OwnerReference {
  return {
    apiVersion: gvk.group ? `${gvk.group}/${gvk.version}` : gvk.version,
    kind: gvk.kind,
    name: owner.metadata.name ?? "",
    uid: owner.metadata.uid ?? "",
    controller: true,
    blockOwnerDeletion: true,
  };
}

/** The one ownerReference with `controller: true`, if any (metav1.GetControllerOf). */
export function getControllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}
// #endregion controller-ref

export function validateControllerRef(ref: OwnerReference | undefined): PodControlError | undefined {
  if (!ref) return new PodControlError("controllerRef is nil");
  if (!ref.apiVersion) return new PodControlError("controllerRef has empty APIVersion");
  if (!ref.kind) return new PodControlError("controllerRef has empty Kind");
  if (ref.controller !== true) return new PodControlError("controllerRef.Controller is not set to true");
  if (ref.blockOwnerDeletion !== true)
    return new PodControlError("controllerRef.BlockOwnerDeletion is not set");
  return undefined;
}

// #region pod-from-template
/** The pod a template describes, owned by `parent` (GetPodFromTemplate). */
export function getPodFromTemplate(
  template: PodTemplateSpec,
  parent: KubeObject,
  controllerRef?: OwnerReference,
): Pod {
  const meta = template.metadata ?? {};
  const pod: Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      labels: { ...meta.labels },
      annotations: { ...meta.annotations },
      // The server appends 5 random characters: web-x7k2p.
      generateName: `${parent.metadata.name ?? ""}-`,
      ...(meta.finalizers?.length ? { finalizers: [...meta.finalizers] } : {}),
      ...(controllerRef ? { ownerReferences: [{ ...controllerRef }] } : {}),
    },
    spec: structuredClone(template.spec),
  };
  return pod;
}
// #endregion pod-from-template

/** What a controller needs to change pods (PodControlInterface); tests swap it for a fake. */
export interface PodControlInterface {
  createPods(
    namespace: string,
    template: PodTemplateSpec,
    object: KubeObject,
    controllerRef: OwnerReference,
  ): Promise<void>;
  deletePod(namespace: string, podName: string, object: KubeObject): Promise<void>;
  /** A strategic merge patch of the pod (adoption and release of ownerReferences). */
  patchPod(namespace: string, name: string, data: object): Promise<void>;
}

// #region real-pod-control
export class RealPodControl implements PodControlInterface {
  constructor(
    private readonly client: Clientset,
    private readonly recorder: EventRecorder = () => {},
  ) {}

  async createPods(
    namespace: string,
    template: PodTemplateSpec,
    object: KubeObject,
    controllerRef: OwnerReference,
  ): Promise<void> {
    const bad = validateControllerRef(controllerRef);
    if (bad) throw bad;
    const pod = getPodFromTemplate(template, object, controllerRef);
    if (Object.keys(pod.metadata.labels ?? {}).length === 0)
      throw new PodControlError("unable to create pods, no labels");
    let created: Pod;
    try {
      created = await this.client.coreV1.pods(namespace).create(pod);
    } catch (err) {
      this.recorder(object, "Warning", FailedCreatePodReason, `Error creating: ${(err as Error).message}`);
      throw err;
    }
    this.recorder(object, "Normal", SuccessfulCreatePodReason, `Created pod: ${created.metadata.name}`);
  }

  async deletePod(namespace: string, podName: string, object: KubeObject): Promise<void> {
    try {
      await this.client.coreV1.pods(namespace).delete(podName);
    } catch (err) {
      this.recorder(object, "Warning", FailedDeletePodReason, `Error deleting: ${(err as Error).message}`);
      throw err;
    }
    this.recorder(object, "Normal", SuccessfulDeletePodReason, `Deleted pod: ${podName}`);
  }

  async patchPod(namespace: string, name: string, data: object): Promise<void> {
    await this.client.coreV1.pods(namespace).patch(name, StrategicMergePatchType, data);
  }
}
// #endregion real-pod-control

/**
 * pods/binding — the scheduler's one write: "run this pod on node n1".
 * The request is `POST /api/v1/namespaces/default/pods/web/binding`. Upstream: `BindingREST` in
 * kubernetes pkg/registry/core/pod/storage/storage.go.
 *
 * Solves:
 * - the scheduler does not update the pod (it could clobber a concurrent change); it posts a
 *   Binding, and the registry sets `spec.nodeName` only if it is still empty — two schedulers
 *   (or two tries) cannot both bind the pod: the second gets 409 Conflict;
 * - a pod already being deleted is not bound.
 *
 * Invariants: spec.nodeName goes from "" to a node exactly once; the pod's PodScheduled
 * condition becomes True in the same write; the answer is a Status Success (201).
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/pod/storage/storage.go (BindingREST.Create, assignPod, setPodHostAndAnnotations)
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidatePodBinding)
 * @chapter 02-apiserver
 */
import { type FieldError, notSupported, required } from "../../../api/field-errors.ts";
import type { KubeObject, Status } from "../../../api/meta.ts";
import { isStatusError, newBadRequest, newConflict, newInvalid, newNotFound } from "../../errors.ts";
import { nowRFC3339, type Store } from "../store.ts";

export interface Binding extends KubeObject {
  target?: { kind?: string; name?: string; apiVersion?: string };
}

interface PodCondition {
  type: string;
  status: string;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
}

// #region assign-pod
/**
 * BindingREST.Create: check the Binding, then set `spec.nodeName` inside guaranteedUpdate, so
 * "is it still unbound?" is asked again of whatever a retry reads.
 */
export async function createBinding(
  pods: Store,
  namespace: string,
  podName: string,
  binding: Binding,
): Promise<Status> {
  binding.metadata.name ||= podName;
  if (binding.metadata.name !== podName) {
    throw newBadRequest("name in URL does not match name in Binding object");
  }
  const errs: FieldError[] = [];
  const target = binding.target ?? {};
  if (target.kind && target.kind !== "Node")
    errs.push(notSupported("target.kind", target.kind, ["Node", "<empty>"]));
  if (!target.name) errs.push(required("target.name", ""));
  if (errs.length > 0) throw newInvalid("", "Binding", podName, errs);

  const key = pods.keyFor(namespace, podName);
  try {
    await pods.storage.guaranteedUpdate(key, {}, (current) => {
      if (!current) throw newNotFound(pods.gr, podName);
      const pod = current; // guaranteedUpdate hands each try a copy of its own
      pod.spec ??= {};
      const spec = pod.spec as { nodeName?: string };
      if (pod.metadata.deletionTimestamp) {
        throw conflict(podName, `pod ${podName} is being deleted, cannot be assigned to a host`);
      }
      if (spec.nodeName)
        throw conflict(podName, `pod ${podName} is already assigned to node "${spec.nodeName}"`);
      spec.nodeName = target.name;
      pod.metadata.annotations = {
        ...(pod.metadata.annotations ?? {}),
        ...(binding.metadata.annotations ?? {}),
      };
      if (Object.keys(pod.metadata.annotations).length === 0) delete pod.metadata.annotations;
      setPodScheduled(pod);
      return pod;
    });
  } catch (e) {
    if (isStatusError(e) && e.reason === "NotFound") throw newNotFound(pods.gr, podName);
    throw e;
  }
  return { kind: "Status", apiVersion: "v1", metadata: {}, status: "Success", code: 201 };
}
// #endregion assign-pod

/** Upstream's assignPod reports every refusal as a Conflict on `pods/binding`. */
function conflict(name: string, message: string) {
  return newConflict({ group: "", resource: "pods/binding" }, name, message);
}

/** api.UpdatePodCondition(PodScheduled=True): add the condition, or flip it and stamp the transition. */
function setPodScheduled(pod: KubeObject): void {
  pod.status ??= {};
  const status = pod.status as { conditions?: PodCondition[] };
  status.conditions ??= [];
  const conditions = status.conditions;
  const now = nowRFC3339();
  const existing = conditions.find((c) => c.type === "PodScheduled");
  if (!existing)
    conditions.push({ type: "PodScheduled", status: "True", lastProbeTime: null, lastTransitionTime: now });
  else if (existing.status !== "True") {
    existing.status = "True";
    existing.lastTransitionTime = now;
  }
}

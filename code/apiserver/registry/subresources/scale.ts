/**
 * deployments/scale and replicasets/scale — the `autoscaling/v1` Scale view of a workload.
 * It has `spec.replicas` to set, `status.replicas` and the label selector to read. Upstream:
 * `ScaleREST` in kubernetes pkg/registry/apps/deployment/storage/storage.go (and replicaset's).
 *
 * Solves: `kubectl scale` and autoscalers change the replica count of any scalable kind through
 * one small object, without knowing (or racing on) the rest of the Deployment.
 *
 * Invariants:
 * - a Scale's name, namespace, uid, resourceVersion and creationTimestamp are its parent's; a
 *   Scale update with a resourceVersion is a precondition on the parent;
 * - only `spec.replicas` of the parent changes.
 *
 * @upstream kubernetes/kubernetes pkg/registry/apps/deployment/storage/storage.go (ScaleREST, scaleFromDeployment, scaleUpdatedObjectInfo)
 * @upstream kubernetes/kubernetes pkg/apis/autoscaling/validation/validation.go (ValidateScale)
 * @chapter 02-apiserver
 */
import { invalid } from "../../../api/field-errors.ts";
import { type LabelSelector, labelSelectorAsSelector, selectorToString } from "../../../api/labels.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { newBadRequest, newInvalid } from "../../errors.ts";
import type { Store } from "../store.ts";

export interface Scale extends KubeObject {
  spec?: { replicas?: number };
  status?: { replicas: number; selector?: string };
}

// #region scale-from-parent
/** The Scale view of a Deployment or ReplicaSet. */
export function scaleFromParent(parent: KubeObject): Scale {
  const spec = (parent.spec ?? {}) as { replicas?: number; selector?: LabelSelector };
  const status = (parent.status ?? {}) as { replicas?: number };
  const selector = labelSelectorAsSelector(spec.selector);
  const m = parent.metadata;
  return {
    apiVersion: "autoscaling/v1",
    kind: "Scale",
    metadata: {
      name: m.name,
      namespace: m.namespace,
      uid: m.uid,
      resourceVersion: m.resourceVersion,
      creationTimestamp: m.creationTimestamp,
    },
    spec: { replicas: spec.replicas ?? 0 },
    status: { replicas: status.replicas ?? 0, selector: selector.ok ? selectorToString(selector.value) : "" },
  };
}
// #endregion scale-from-parent

export async function getScale(store: Store, namespace: string, name: string): Promise<Scale> {
  return scaleFromParent(await store.get(namespace, name));
}

/**
 * Updates the parent's replicas from the Scale that `change` makes of the current Scale (a PUT
 * body or a patch applied to it).
 */
export async function updateScale(
  store: Store,
  namespace: string,
  name: string,
  change: (current: Scale) => Scale,
): Promise<Scale> {
  const { obj } = await store.update(namespace, name, (parent) => {
    // Only for a resource that creates on PUT (Deployments and ReplicaSets do not) is this
    // called without a parent; the store has already answered 404 otherwise.
    if (!parent) throw newBadRequest(`${store.info.kind} "${name}" not found`);
    const scale = change(scaleFromParent(parent));
    if (scale.kind && scale.kind !== "Scale") {
      throw newBadRequest(`expected Scale, got ${scale.kind}`);
    }
    if (scale.metadata?.name && scale.metadata.name !== name) {
      throw newBadRequest(
        `the name of the object (${scale.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    const replicas = scale.spec?.replicas ?? 0;
    if (!Number.isInteger(replicas) || replicas < 0) {
      throw newInvalid("autoscaling", "Scale", name, [
        invalid("spec.replicas", replicas, "must be greater than or equal to 0"),
      ]);
    }
    const next = structuredClone(parent);
    (next.spec as { replicas?: number }).replicas = replicas;
    // The Scale's resourceVersion (if any) is a precondition on the parent.
    next.metadata.resourceVersion = scale.metadata?.resourceVersion || parent.metadata.resourceVersion;
    return next;
  });
  return scaleFromParent(obj);
}

/**
 * ReplicaSet strategy — the controller owns the status; the generation counts spec versions.
 * The generation lets the controller say which version of the spec its status describes.
 * Upstream: kubernetes pkg/registry/apps/replicaset/strategy.go.
 *
 * Solves:
 * - "has the controller caught up with my change?": every spec change bumps
 *   `metadata.generation`, the controller copies the generation it acted on into
 *   `status.observedGeneration`, and a client waits until the two are equal;
 * - a scale to 3 replicas must not be undone by a controller's stale status write, nor a
 *   controller's count by a user's stale `kubectl apply`: two writers, two halves;
 * - the selector decides which pods the ReplicaSet owns; changing it would orphan or steal
 *   pods, so apps/v1 forbids it.
 *
 * Invariants:
 * - after prepareForCreate: status = {replicas: 0}, generation = 1;
 * - after prepareForUpdate: status = old status; generation = old + 1 iff the spec changed
 *   (semantically: absent and empty are equal), else old;
 * - the status strategy keeps the old spec (and generation).
 *
 * @upstream kubernetes/kubernetes pkg/registry/apps/replicaset/strategy.go (rsStrategy, rsStatusStrategy, ToSelectableFields)
 * @upstream kubernetes/kubernetes pkg/apis/apps/v1/conversion.go (field label conversion for ReplicaSet)
 * @chapter 02-apiserver
 */
import type { ReplicaSet } from "../../../api/apps.ts";
import type { KubeObject } from "../../../api/meta.ts";
import type { RESTStrategy } from "../strategy.ts";
import {
  baseStrategy,
  keepFromOld,
  objectMetaFieldsSet,
  semanticDeepEqual,
  statusStrategy,
} from "./helpers.ts";
import { immutableSelector } from "./selector-immutable.ts";
import { validateStatusUpdate } from "./validation.ts";

// #region replicaset-generation
function prepareForCreate(obj: KubeObject): void {
  // ReplicaSetStatus.replicas has no omitempty upstream: an empty status prints as {replicas: 0}.
  obj.status = { replicas: 0 };
  obj.metadata.generation = 1;
}

function prepareForUpdate(obj: KubeObject, old: KubeObject): void {
  keepFromOld(obj, old, "status");
  const oldGeneration = old.metadata.generation ?? 0;
  // A status-only or metadata-only write is not a new version of the desired state.
  obj.metadata.generation = semanticDeepEqual(obj.spec, old.spec) ? oldGeneration : oldGeneration + 1;
}
// #endregion replicaset-generation

export function replicaSetSelectableFields(obj: KubeObject): Record<string, string> {
  return {
    ...objectMetaFieldsSet(obj, true),
    "status.replicas": String((obj as ReplicaSet).status?.replicas ?? 0),
  };
}

const base = baseStrategy(true);

export const replicaSetStrategy: RESTStrategy = {
  ...base,
  prepareForCreate,
  prepareForUpdate,
  validateUpdate: (obj, old) => immutableSelector(base.validateUpdate(obj, old), obj, old),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  selectableFields: replicaSetSelectableFields,
  fieldLabels: ["metadata.name", "metadata.namespace", "status.replicas"],
};

replicaSetStrategy.status = statusStrategy(replicaSetStrategy, {
  prepareForUpdate(obj, old) {
    keepFromOld(obj, old, "spec");
  },
  validateUpdate: validateStatusUpdate,
});

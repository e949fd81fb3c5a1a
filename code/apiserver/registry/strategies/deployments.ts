/**
 * Deployment strategy — a ReplicaSet's rules, except that annotations count as desired state.
 * Upstream: kubernetes pkg/registry/apps/deployment/strategy.go.
 *
 * Solves:
 * - the deployment controller copies a Deployment's annotations (`kubernetes.io/change-cause`,
 *   …) onto its ReplicaSets, so an annotation edit is a change the controller must act on:
 *   it bumps `metadata.generation` like a spec change does;
 * - `kubectl rollout status` waits for `status.observedGeneration >= metadata.generation`, so
 *   the generation must move on every such change, and only then;
 * - a controller's status write carries a labels copy it may have read long ago: the status
 *   subresource keeps the stored labels as well as the spec.
 *
 * Invariants:
 * - after prepareForCreate: status = {}, generation = 1;
 * - after prepareForUpdate: status = old status; generation = old + 1 iff spec or annotations
 *   changed, else old;
 * - the status strategy keeps the old spec and labels.
 *
 * @upstream kubernetes/kubernetes pkg/registry/apps/deployment/strategy.go (deploymentStrategy, deploymentStatusStrategy)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../../api/meta.ts";
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy, keepFromOld, semanticDeepEqual, statusStrategy } from "./helpers.ts";
import { immutableSelector } from "./selector-immutable.ts";
import { validateStatusUpdate } from "./validation.ts";

// #region deployment-generation
function prepareForCreate(obj: KubeObject): void {
  obj.status = {};
  obj.metadata.generation = 1;
}

function prepareForUpdate(obj: KubeObject, old: KubeObject): void {
  keepFromOld(obj, old, "status");
  const oldGeneration = old.metadata.generation ?? 0;
  const changed =
    !semanticDeepEqual(obj.spec, old.spec) ||
    !semanticDeepEqual(obj.metadata.annotations, old.metadata.annotations);
  obj.metadata.generation = changed ? oldGeneration + 1 : oldGeneration;
}
// #endregion deployment-generation

const base = baseStrategy(true);

export const deploymentStrategy: RESTStrategy = {
  ...base,
  prepareForCreate,
  prepareForUpdate,
  validateUpdate: (obj, old) => immutableSelector(base.validateUpdate(obj, old), obj, old),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

deploymentStrategy.status = statusStrategy(deploymentStrategy, {
  prepareForUpdate(obj, old) {
    keepFromOld(obj, old, "spec");
    keepFromOld(obj.metadata as Record<string, unknown>, old.metadata as Record<string, unknown>, "labels");
  },
  validateUpdate: validateStatusUpdate,
});

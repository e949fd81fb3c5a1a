/**
 * PodDisruptionBudget strategy — users own the budget (spec), the disruption controller owns the
 * count (status); the generation says which spec the count was computed from.
 * Upstream: kubernetes pkg/registry/policy/poddisruptionbudget/strategy.go.
 *
 * Solves:
 * - an evicter must not trust `disruptionsAllowed` computed for an older budget: every spec change
 *   bumps `metadata.generation`, and the controller copies the generation it used into
 *   `status.observedGeneration` (the eviction API refuses while they differ);
 * - a user's `kubectl apply` must not reset the controller's count, nor the controller's status
 *   write undo a user's edit: the main resource keeps the stored status, `/status` the stored spec.
 *
 * Invariants:
 * - after prepareForCreate: status = four zeros, generation = 1;
 * - after prepareForUpdate: status = old status; generation = old + 1 iff the spec changed;
 * - a PUT never creates (AllowCreateOnUpdate false); an update without resourceVersion is
 *   accepted (AllowUnconditionalUpdate true);
 * - field selectors: metadata.name and metadata.namespace only.
 *
 * @upstream kubernetes/kubernetes pkg/registry/policy/poddisruptionbudget/strategy.go (podDisruptionBudgetStrategy, podDisruptionBudgetStatusStrategy)
 * @upstream kubernetes/kubernetes pkg/registry/policy/poddisruptionbudget/storage/storage.go (REST, StatusREST)
 * @chapter 05-scheduler
 */
import type { KubeObject } from "../../../api/meta.ts";
import type { RESTStrategy } from "../strategy.ts";
import {
  baseStrategy,
  keepFromOld,
  objectMetaFieldsSet,
  semanticDeepEqual,
  statusStrategy,
} from "./helpers.ts";
import { validateStatusUpdate } from "./validation.ts";

// #region pdb-strategy
function prepareForCreate(obj: KubeObject): void {
  // A create may not set the status; the four counts have no omitempty, so "empty" is zeros.
  obj.status = { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 0, expectedPods: 0 };
  obj.metadata.generation = 1;
}

function prepareForUpdate(obj: KubeObject, old: KubeObject): void {
  keepFromOld(obj, old, "status");
  const oldGeneration = old.metadata.generation ?? 0;
  obj.metadata.generation = semanticDeepEqual(obj.spec, old.spec) ? oldGeneration : oldGeneration + 1;
}

export const podDisruptionBudgetStrategy: RESTStrategy = {
  ...baseStrategy(true),
  prepareForCreate,
  prepareForUpdate,
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
  selectableFields: (obj) => objectMetaFieldsSet(obj, true),
  fieldLabels: ["metadata.name", "metadata.namespace"],
};

podDisruptionBudgetStrategy.status = statusStrategy(podDisruptionBudgetStrategy, {
  // Status writes ignore the spec (and so never move the generation).
  prepareForUpdate(obj, old) {
    keepFromOld(obj, old, "spec");
  },
  validateUpdate: validateStatusUpdate,
});
// #endregion pdb-strategy

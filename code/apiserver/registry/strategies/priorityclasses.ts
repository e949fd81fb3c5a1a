/**
 * PriorityClass strategy — a cluster-scoped name for a priority value.
 * Upstream: kubernetes pkg/registry/scheduling/priorityclass/strategy.go.
 *
 * Solves: pods refer to a class by name and the Priority admission plugin copies its value
 * into the pod; the rules that keep that safe (value and preemptionPolicy never change, the
 * `system-` names are reserved) are validation's, so the strategy is the generic one.
 *
 * Invariants: prepareForCreate and prepareForUpdate change nothing.
 *
 * @upstream kubernetes/kubernetes pkg/registry/scheduling/priorityclass/strategy.go (priorityClassStrategy)
 * @chapter 02-apiserver
 */
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy } from "./helpers.ts";

export const priorityClassStrategy: RESTStrategy = {
  ...baseStrategy(false),
  allowCreateOnUpdate: false,
  allowUnconditionalUpdate: true,
};

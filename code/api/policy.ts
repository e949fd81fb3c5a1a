/**
 * PodDisruptionBudget (group policy, version v1) — "of the pods this selector matches, keep at
 * least N up" (or "let at most M be down"), said once so that everyone who evicts pods can ask.
 * Upstream: k8s.io/api's policy/v1/types.go.
 *
 * Solves:
 * - a node drain, a cluster autoscaler and the scheduler's preemption all take pods away on
 *   purpose; each alone cannot know that the other two just took the application's other
 *   replicas — the budget is the shared answer;
 * - "how many may I take now?" is computed once, by the disruption controller, into
 *   `status.disruptionsAllowed`, so an evicter reads one number instead of recounting pods.
 *
 * Invariants:
 * - at most one of `minAvailable` and `maxUnavailable` is set; each is a count or a percentage;
 * - an empty selector matches every pod of the namespace (policy/v1; v1beta1 matched none);
 * - the status is written by the disruption controller through `/status` only;
 *   `disruptionsAllowed`, `currentHealthy`, `desiredHealthy` and `expectedPods` have no
 *   omitempty: an empty status reads as four zeros.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/policy/v1/types.go (PodDisruptionBudget, PodDisruptionBudgetSpec, PodDisruptionBudgetStatus, UnhealthyPodEvictionPolicyType, DisruptionAllowedCondition)
 * @chapter 05-scheduler
 */

import type { IntOrString } from "./core.ts";
import type { LabelSelector } from "./labels.ts";
import type { KubeObject } from "./meta.ts";

// #region pdb-types
/** Which unhealthy (running but not Ready) pods an eviction may take. */
export type UnhealthyPodEvictionPolicyType = "IfHealthyBudget" | "AlwaysAllow";
export const supportedUnhealthyPodEvictionPolicies: readonly UnhealthyPodEvictionPolicyType[] = [
  "AlwaysAllow",
  "IfHealthyBudget",
];

export interface PodDisruptionBudgetSpec {
  /** Pods that must stay available after an eviction: `2` or `"50%"`. */
  minAvailable?: IntOrString;
  /** Pods matched; an empty selector matches every pod of the namespace. */
  selector?: LabelSelector;
  /** Pods that may be unavailable after an eviction: `1` or `"25%"`; needs the owners' scale. */
  maxUnavailable?: IntOrString;
  unhealthyPodEvictionPolicy?: UnhealthyPodEvictionPolicyType;
}

/** meta/v1 Condition: the standard condition shape newer types use. */
export interface MetaCondition {
  type: string;
  status: "True" | "False" | "Unknown";
  observedGeneration?: number;
  lastTransitionTime: string;
  reason: string;
  message: string;
}

export interface PodDisruptionBudgetStatus {
  /** The generation the controller computed this status from. */
  observedGeneration?: number;
  /** Pods evicted but not yet gone (name → eviction time); counted as unhealthy meanwhile. */
  disruptedPods?: Record<string, string>;
  disruptionsAllowed: number;
  currentHealthy: number;
  desiredHealthy: number;
  expectedPods: number;
  conditions?: MetaCondition[];
}

export interface PodDisruptionBudget extends KubeObject {
  spec?: PodDisruptionBudgetSpec;
  status?: PodDisruptionBudgetStatus;
}
// #endregion pdb-types

/** The one condition type, and its reasons. */
export const DisruptionAllowedCondition = "DisruptionAllowed";
export const SyncFailedReason = "SyncFailed";
export const SufficientPodsReason = "SufficientPods";
export const InsufficientPodsReason = "InsufficientPods";

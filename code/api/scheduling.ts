/**
 * PriorityClass (group scheduling.k8s.io, version v1) — a name for a pod priority, so that pods
 * say `priorityClassName: high` and the cluster decides what "high" is worth.
 * Upstream: k8s.io/api's scheduling/v1/types.go.
 *
 * Solves:
 * - the scheduler orders its queue and chooses preemption victims by a number, but users should
 *   not pick numbers: the Priority admission plugin copies `value` into `pod.spec.priority`;
 * - system components must always outrank user workloads: values above 1,000,000,000 are
 *   reserved for the two built-in `system-` classes.
 *
 * Invariants:
 * - a user-defined class has `value <= HIGHEST_USER_DEFINABLE_PRIORITY`; any name starting with
 *   `system-` must be one of the built-in classes with its exact value;
 * - `value` and `preemptionPolicy` never change after creation.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/scheduling/v1/types.go (PriorityClass)
 * @upstream kubernetes/kubernetes pkg/apis/scheduling/types.go (HighestUserDefinablePriority, SystemCriticalPriority, SystemPriorityClassPrefix)
 * @upstream kubernetes/kubernetes pkg/apis/scheduling/v1/helpers.go (systemPriorityClasses)
 * @chapter 02-apiserver
 */

import type { PreemptionPolicy } from "./core.ts";
import type { KubeObject } from "./meta.ts";

// #region priority-class
export interface PriorityClass extends KubeObject {
  value: number;
  globalDefault?: boolean;
  description?: string;
  /** Defaulted to PreemptLowerPriority. */
  preemptionPolicy?: PreemptionPolicy;
}

/** The highest priority a user may give a class. */
export const HIGHEST_USER_DEFINABLE_PRIORITY = 1_000_000_000;
/** The priority of system-cluster-critical; system-node-critical is 1000 above it. */
export const SYSTEM_CRITICAL_PRIORITY = 2 * HIGHEST_USER_DEFINABLE_PRIORITY;
export const SYSTEM_PRIORITY_CLASS_PREFIX = "system-";

/** The classes the API server creates at startup, and the only ones allowed the `system-` prefix. */
export const SYSTEM_PRIORITY_CLASSES: readonly { name: string; value: number; description: string }[] = [
  {
    name: "system-node-critical",
    value: SYSTEM_CRITICAL_PRIORITY + 1000,
    description: "Used for system critical pods that must not be moved from their current node.",
  },
  {
    name: "system-cluster-critical",
    value: SYSTEM_CRITICAL_PRIORITY,
    description:
      "Used for system critical pods that must run in the cluster, but can be moved to another node if necessary.",
  },
];
// #endregion priority-class

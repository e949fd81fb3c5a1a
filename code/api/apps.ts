/**
 * Workload kinds (group apps, version v1) — ReplicaSet and Deployment — and the autoscaling/v1
 * Scale object their `scale` subresource speaks, as TypeScript views of their JSON.
 * Upstream: k8s.io/api's apps/v1/types.go and autoscaling/v1/types.go.
 *
 * Solves:
 * - a controller and the API server agree on what "desired" (`spec.replicas`, the pod template)
 *   and "observed" (`status.readyReplicas`, `status.observedGeneration`) mean;
 * - `kubectl scale` works on either kind through one small object, `Scale`, without knowing
 *   the kind's full shape.
 *
 * Invariants:
 * - `spec.selector` must match `spec.template.metadata.labels` (validation enforces it): the
 *   controller owns exactly the pods its template stamps out;
 * - `status.observedGeneration == metadata.generation` means the controller has seen the
 *   latest spec; the API server bumps `generation` only when the spec changes.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/apps/v1/types.go (Deployment, DeploymentSpec, DeploymentStrategy, RollingUpdateDeployment, DeploymentStatus, ReplicaSet, ReplicaSetSpec, ReplicaSetStatus)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/autoscaling/v1/types.go (Scale, ScaleSpec, ScaleStatus)
 * @chapter 02-apiserver
 */

import type { ConditionStatus, IntOrString, PodTemplateSpec } from "./core.ts";
import type { LabelSelector } from "./labels.ts";
import type { KubeObject } from "./meta.ts";

// #region replicaset
export interface ReplicaSetSpec {
  /** Defaulted to 1. */
  replicas?: number;
  minReadySeconds?: number;
  selector: LabelSelector;
  template: PodTemplateSpec;
}

export interface ReplicaSetCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ReplicaSetStatus {
  replicas: number;
  fullyLabeledReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  observedGeneration?: number;
  conditions?: ReplicaSetCondition[];
}

export interface ReplicaSet extends KubeObject {
  spec: ReplicaSetSpec;
  status?: ReplicaSetStatus;
}
// #endregion replicaset

// #region deployment
export interface RollingUpdateDeployment {
  /** Defaulted to "25%". */
  maxUnavailable?: IntOrString;
  /** Defaulted to "25%". */
  maxSurge?: IntOrString;
}

export interface DeploymentStrategy {
  /** Defaulted to RollingUpdate. */
  type?: "Recreate" | "RollingUpdate";
  rollingUpdate?: RollingUpdateDeployment;
}

export interface DeploymentSpec {
  /** Defaulted to 1. */
  replicas?: number;
  selector: LabelSelector;
  template: PodTemplateSpec;
  strategy?: DeploymentStrategy;
  minReadySeconds?: number;
  /** Defaulted to 10 old ReplicaSets kept for rollback. */
  revisionHistoryLimit?: number;
  paused?: boolean;
  /** Defaulted to 600. */
  progressDeadlineSeconds?: number;
}

export interface DeploymentCondition {
  type: "Available" | "Progressing" | "ReplicaFailure" | string;
  status: ConditionStatus;
  lastUpdateTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface DeploymentStatus {
  observedGeneration?: number;
  replicas?: number;
  updatedReplicas?: number;
  readyReplicas?: number;
  availableReplicas?: number;
  unavailableReplicas?: number;
  conditions?: DeploymentCondition[];
  collisionCount?: number;
}

export interface Deployment extends KubeObject {
  spec: DeploymentSpec;
  status?: DeploymentStatus;
}
// #endregion deployment

// #region scale
/** autoscaling/v1 Scale: what GET/PUT on `deployments/<name>/scale` speak. */
export interface Scale extends KubeObject {
  spec?: { replicas?: number };
  /** `selector` is the label selector in its string form (`app=web`). */
  status?: { replicas: number; selector?: string };
}
// #endregion scale

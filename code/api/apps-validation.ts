/**
 * Workload validation — ReplicaSet, Deployment, and the autoscaling/v1 Scale written through
 * their `scale` subresource.
 * Upstream: kubernetes' pkg/apis/apps/validation/validation.go.
 *
 * Solves:
 * - a controller owns the pods its selector matches and creates pods from its template, so the
 *   two must agree: a template whose labels the selector does not match would make the
 *   controller create pods forever (it never sees them as its own) — refused with
 *   "`selector` does not match template `labels`";
 * - an empty selector would adopt every pod in the namespace — refused too;
 * - a controller's pods must be restarted forever (`restartPolicy: Always`), or "3 replicas"
 *   could quietly become 0.
 *
 * Invariants:
 * - the template is validated as a pod spec (pod-validation.ts), with template rules;
 * - the selector's immutability on update (apps/v1) is NOT here: upstream checks it in the
 *   registry strategies (pkg/registry/apps/{deployment,replicaset}/strategy.go), as ours do.
 *
 * @upstream kubernetes/kubernetes pkg/apis/apps/validation/validation.go (ValidateDeployment, ValidateDeploymentUpdate, ValidateDeploymentSpec, ValidateDeploymentStrategy, ValidateRollingUpdateDeployment, ValidatePositiveIntOrPercent, IsNotMoreThan100Percent, ValidateDeploymentStatus, ValidateDeploymentStatusUpdate, ValidateReplicaSet, ValidateReplicaSetUpdate, ValidateReplicaSetSpec, ValidateReplicaSetStatus, ValidateReplicaSetStatusUpdate, ValidatePodTemplateSpecForReplicaSet)
 * @upstream kubernetes/kubernetes pkg/apis/autoscaling/validation/validation.go (ValidateScale)
 * @chapter 02-apiserver
 */

import {
  childPath,
  type FieldError,
  forbidden,
  GoValue,
  goStringMap,
  goStringSlice,
  invalid,
  notSupported,
  required,
} from "./field-errors.ts";
import { isSet, type JSONObject, num, obj, str } from "./json.ts";
import { type LabelSelector, labelSelectorAsSelector, selectorMatches } from "./labels.ts";
import type { KubeObject } from "./meta.ts";
import {
  validateLabelSelector,
  validateNonnegativeField,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from "./object-meta-validation.ts";
import { validatePodTemplateSpec } from "./pod-validation.ts";
import { isValidPercent, nameIsDNSSubdomain } from "./string-validation.ts";

/**
 * A LabelSelector as upstream prints it in a message: Go's %#v of the struct,
 * `v1.LabelSelector{MatchLabels:map[string]string{"app":"web"}, MatchExpressions:[]v1.LabelSelectorRequirement(nil)}`.
 */
function selectorValue(selector: unknown): GoValue {
  const s = obj(selector);
  if (!s) return new GoValue("null", null);
  const labels = obj(s.matchLabels) as Record<string, string> | undefined;
  const expressions = Array.isArray(s.matchExpressions) ? s.matchExpressions : undefined;
  const requirement = (e: unknown): string => {
    const r = obj(e) ?? {};
    return `v1.LabelSelectorRequirement{Key:${JSON.stringify(str(r.key))}, Operator:${JSON.stringify(str(r.operator))}, Values:${goStringSlice(Array.isArray(r.values) ? r.values.map(String) : undefined).text}}`;
  };
  const matchExpressions = expressions
    ? `[]v1.LabelSelectorRequirement{${expressions.map(requirement).join(", ")}}`
    : "[]v1.LabelSelectorRequirement(nil)";
  return new GoValue(
    `v1.LabelSelector{MatchLabels:${goStringMap(labels).text}, MatchExpressions:${matchExpressions}}`,
    s,
  );
}

// #region selector-and-template
/**
 * The selector rules shared by ReplicaSet and Deployment: present, well-formed, not empty, and
 * matching the template's labels; then the template itself, which must restart always.
 */
function validateSelectorAndTemplate(spec: JSONObject, kind: "ReplicaSet" | "Deployment"): FieldError[] {
  const errors: FieldError[] = [];
  const selector = spec.selector;
  if (!isSet(selector)) errors.push(required("spec.selector"));
  else {
    errors.push(...validateLabelSelector(selector, "spec.selector"));
    const s = obj(selector) ?? {};
    const size =
      Object.keys(obj(s.matchLabels) ?? {}).length +
      (Array.isArray(s.matchExpressions) ? s.matchExpressions.length : 0);
    // Upstream says "deployment" for ReplicaSets too: the message is shared.
    if (size === 0)
      errors.push(
        invalid("spec.selector", selectorValue(selector), "empty selector is invalid for deployment"),
      );
  }
  const parsed = labelSelectorAsSelector(isSet(selector) ? (selector as LabelSelector) : null);
  if (!parsed.ok) {
    errors.push(invalid("spec.selector", selectorValue(selector), "invalid label selector"));
    return errors;
  }
  const template = obj(spec.template);
  if (!template) {
    errors.push(required("spec.template"));
    return errors;
  }
  const labels = obj(obj(template.metadata)?.labels) as Record<string, string> | undefined;
  // An absent selector parses to "nothing", which is not "empty": upstream skips the match check
  // only for an empty selector, so a missing one also reports the mismatch.
  if (parsed.value.requirements.length > 0 || !isSet(selector)) {
    if (!selectorMatches(parsed.value, labels ?? {})) {
      errors.push(
        invalid(
          "spec.template.metadata.labels",
          goStringMap(labels),
          "`selector` does not match template `labels`",
        ),
      );
    }
  }
  errors.push(...validatePodTemplateSpec(template, "spec.template"));
  const templateSpec = obj(template.spec) ?? {};
  const restartPolicy = str(templateSpec.restartPolicy);
  if (restartPolicy !== "Always")
    errors.push(notSupported("spec.template.spec.restartPolicy", restartPolicy, ["Always"]));
  if (isSet(templateSpec.activeDeadlineSeconds)) {
    errors.push(
      forbidden(
        "spec.template.spec.activeDeadlineSeconds",
        `activeDeadlineSeconds in ${kind} is not Supported`,
      ),
    );
  }
  return errors;
}
// #endregion selector-and-template

// #region replicaset
/** ValidateReplicaSetSpec: counts, then the selector and the template (see above). */
export function validateReplicaSetSpec(spec: unknown): FieldError[] {
  const s = obj(spec) ?? {};
  const errors = validateNonnegativeField(num(s.replicas), "spec.replicas");
  errors.push(...validateNonnegativeField(num(s.minReadySeconds), "spec.minReadySeconds"));
  errors.push(...validateSelectorAndTemplate(s, "ReplicaSet"));
  return errors;
}

export function validateReplicaSet(replicaSet: KubeObject): FieldError[] {
  return [
    ...validateObjectMeta(replicaSet.metadata, true, nameIsDNSSubdomain),
    ...validateReplicaSetSpec(replicaSet.spec),
  ];
}

export function validateReplicaSetUpdate(replicaSet: KubeObject, old: KubeObject): FieldError[] {
  return [
    ...validateObjectMetaUpdate(replicaSet.metadata, old.metadata),
    ...validateReplicaSetSpec(replicaSet.spec),
  ];
}

/** Counts are non-negative and nested: available ≤ ready ≤ replicas. */
function validateReplicaCounts(status: JSONObject, fields: string[]): FieldError[] {
  const errors: FieldError[] = [];
  for (const field of fields)
    errors.push(...validateNonnegativeField(num(status[field]), childPath("status", field)));
  const replicas = num(status.replicas);
  const message = "cannot be greater than status.replicas";
  for (const field of ["fullyLabeledReplicas", "updatedReplicas", "readyReplicas", "availableReplicas"]) {
    if (fields.includes(field) && num(status[field]) > replicas) {
      errors.push(invalid(childPath("status", field), num(status[field]), message));
    }
  }
  if (num(status.availableReplicas) > num(status.readyReplicas)) {
    errors.push(
      invalid(
        "status.availableReplicas",
        num(status.availableReplicas),
        "cannot be greater than readyReplicas",
      ),
    );
  }
  return errors;
}

/**
 * ValidateReplicaSetStatusUpdate: what the ReplicaSet controller writes through `/status` — only
 * the counts are checked; the spec is the old one again (the status strategy put it back).
 */
export function validateReplicaSetStatusUpdate(replicaSet: KubeObject, old: KubeObject): FieldError[] {
  const status = obj(replicaSet.status) ?? {};
  return [
    ...validateObjectMetaUpdate(replicaSet.metadata, old.metadata),
    ...validateReplicaCounts(status, [
      "replicas",
      "fullyLabeledReplicas",
      "readyReplicas",
      "availableReplicas",
      "observedGeneration",
    ]),
  ];
}
// #endregion replicaset

// #region deployment
/** getIntOrPercentValue: `2` → 2, `"25%"` → 25 — only to ask "is it zero?", never to compute a count. */
function intOrPercentValue(value: unknown): number {
  if (typeof value === "number") return value;
  if (typeof value === "string" && isValidPercent(value).length === 0) return Number(value.slice(0, -1));
  return 0;
}

/** ValidatePositiveIntOrPercent: `2` or `"25%"`. */
function validatePositiveIntOrPercent(value: unknown, path: string): FieldError[] {
  if (typeof value === "string") return isValidPercent(value).map((m) => invalid(path, value, m));
  if (typeof value === "number") return validateNonnegativeField(value, path);
  return [];
}

/**
 * ValidateDeploymentStrategy: `Recreate` (stop every old pod, then start the new ones) takes no
 * parameters; `RollingUpdate` needs room to move — some surge or some unavailability.
 */
function validateDeploymentStrategy(strategy: unknown): FieldError[] {
  const s = obj(strategy) ?? {};
  const errors: FieldError[] = [];
  const type = str(s.type);
  if (type === "Recreate") {
    if (isSet(s.rollingUpdate)) {
      errors.push(
        forbidden("spec.strategy.rollingUpdate", "may not be specified when strategy `type` is 'Recreate'"),
      );
    }
  } else if (type === "RollingUpdate") {
    const rollingUpdate = obj(s.rollingUpdate);
    if (!rollingUpdate) {
      errors.push(required("spec.strategy.rollingUpdate", "this should be defaulted and never be nil"));
    } else {
      const path = "spec.strategy.rollingUpdate";
      errors.push(
        ...validatePositiveIntOrPercent(rollingUpdate.maxUnavailable, childPath(path, "maxUnavailable")),
      );
      errors.push(...validatePositiveIntOrPercent(rollingUpdate.maxSurge, childPath(path, "maxSurge")));
      // With neither surge nor unavailability allowed, a rollout could never take a step.
      if (
        intOrPercentValue(rollingUpdate.maxUnavailable) === 0 &&
        intOrPercentValue(rollingUpdate.maxSurge) === 0
      ) {
        errors.push(
          invalid(
            childPath(path, "maxUnavailable"),
            rollingUpdate.maxUnavailable ?? 0,
            "may not be 0 when `maxSurge` is 0",
          ),
        );
      }
      const maxUnavailable = rollingUpdate.maxUnavailable;
      if (
        typeof maxUnavailable === "string" &&
        isValidPercent(maxUnavailable).length === 0 &&
        intOrPercentValue(maxUnavailable) > 100
      ) {
        errors.push(
          invalid(childPath(path, "maxUnavailable"), maxUnavailable, "must not be greater than 100%"),
        );
      }
    }
  } else {
    // Upstream passes the whole strategy struct as the bad value, printed with %#v (a set
    // rollingUpdate pointer would print as an address; JSON stands in for it then).
    const text = isSet(s.rollingUpdate)
      ? JSON.stringify(s)
      : `apps.DeploymentStrategy{Type:${JSON.stringify(type)}, RollingUpdate:(*apps.RollingUpdateDeployment)(nil)}`;
    errors.push(notSupported("spec.strategy", new GoValue(text, s), ["Recreate", "RollingUpdate"]));
  }
  return errors;
}

/**
 * ValidateDeploymentSpec: as a ReplicaSet's, plus the strategy and the rollout clock — a rollout is
 * "not progressing" after `progressDeadlineSeconds`, which must leave time for `minReadySeconds`.
 */
export function validateDeploymentSpec(spec: unknown): FieldError[] {
  const s = obj(spec) ?? {};
  const errors = validateNonnegativeField(num(s.replicas), "spec.replicas");
  errors.push(...validateSelectorAndTemplate(s, "Deployment"));
  errors.push(...validateDeploymentStrategy(s.strategy));
  errors.push(...validateNonnegativeField(num(s.minReadySeconds), "spec.minReadySeconds"));
  if (isSet(s.revisionHistoryLimit)) {
    errors.push(...validateNonnegativeField(num(s.revisionHistoryLimit), "spec.revisionHistoryLimit"));
  }
  if (isSet(s.progressDeadlineSeconds)) {
    const deadline = num(s.progressDeadlineSeconds);
    errors.push(...validateNonnegativeField(deadline, "spec.progressDeadlineSeconds"));
    if (deadline <= num(s.minReadySeconds)) {
      errors.push(invalid("spec.progressDeadlineSeconds", deadline, "must be greater than minReadySeconds"));
    }
  }
  return errors;
}

export function validateDeployment(deployment: KubeObject): FieldError[] {
  return [
    ...validateObjectMeta(deployment.metadata, true, nameIsDNSSubdomain),
    ...validateDeploymentSpec(deployment.spec),
  ];
}

export function validateDeploymentUpdate(deployment: KubeObject, old: KubeObject): FieldError[] {
  return [
    ...validateObjectMetaUpdate(deployment.metadata, old.metadata),
    ...validateDeploymentSpec(deployment.spec),
  ];
}

/**
 * ValidateDeploymentStatusUpdate: the counts, and `collisionCount`, which the controller bumps to
 * get a new ReplicaSet name after a hash collision — going back could reuse a taken name.
 */
export function validateDeploymentStatusUpdate(deployment: KubeObject, old: KubeObject): FieldError[] {
  const status = obj(deployment.status) ?? {};
  const errors = validateObjectMetaUpdate(deployment.metadata, old.metadata);
  errors.push(
    ...validateReplicaCounts(status, [
      "observedGeneration",
      "replicas",
      "updatedReplicas",
      "readyReplicas",
      "availableReplicas",
      "unavailableReplicas",
    ]),
  );
  if (isSet(status.collisionCount))
    errors.push(...validateNonnegativeField(num(status.collisionCount), "status.collisionCount"));
  const oldCount = obj(old.status)?.collisionCount;
  const newCount = status.collisionCount;
  if (isSet(oldCount) && (!isSet(newCount) || num(newCount) < num(oldCount))) {
    errors.push(invalid("status.collisionCount", num(newCount), "cannot be decremented"));
  }
  return errors;
}
// #endregion deployment

/** ValidateScale: a named scale of a namespaced object, never negative. */
export function validateScale(scale: KubeObject): FieldError[] {
  const errors = validateObjectMeta(scale.metadata, true, nameIsDNSSubdomain);
  const replicas = num(obj(scale.spec)?.replicas);
  if (replicas < 0) errors.push(invalid("spec.replicas", replicas, "must be greater than or equal to 0"));
  return errors;
}

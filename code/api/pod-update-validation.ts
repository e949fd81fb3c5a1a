/**
 * Pod update validation — which changes to an existing pod are allowed: by its owner through
 * PUT/PATCH, by the kubelet through `pods/<name>/status`, by the scheduler through
 * `pods/<name>/binding`.
 * Upstream: the update part of kubernetes' pkg/apis/core/validation/validation.go
 * (ValidatePodUpdate, ValidatePodStatusUpdate, ValidatePodBinding).
 *
 * Solves:
 * - the scheduler and the kubelet act on a pod's spec, so after creation it is (almost)
 *   frozen: only container images, `activeDeadlineSeconds` (downwards), added tolerations,
 *   removed scheduling gates and a negative grace period set to 1 may change — anything else is
 *   refused with upstream's "pod updates may not change fields other than …" message;
 * - the kubelet's status write must not move the pod to another node nor revive a container
 *   that terminated for good under `restartPolicy: Never`.
 *
 * Invariants:
 * - the allowed fields are "munged" back to their old values and the rest compared whole, so
 *   a new field added to the spec is immutable by default;
 * - the diff under the refusal lists changed top-level spec fields as JSON (upstream prints Go's
 *   cmp.Diff of the internal struct, which a JSON server cannot reproduce).
 *
 * Simplified: upstream also lets a pod that still has scheduling gates narrow its `nodeSelector`
 * and required node affinity (additions only, for queueing systems such as Kueue); here that is
 * refused like any other spec change.
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidatePodUpdate, updatablePodSpecFields, ValidateContainerUpdates, validateOnlyAddedTolerations, validateOnlyDeletedSchedulingGates, ValidatePodStatusUpdate, ValidateContainerStateTransition, ValidatePodBinding)
 * @chapter 02-apiserver
 */

import {
  childPath,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  notSupported,
  required,
} from "./field-errors.ts";
import { arr, isSet, type JSONObject, num, obj, str } from "./json.ts";
import type { KubeObject } from "./meta.ts";
import { deepEqual, validateImmutableField, validateObjectMetaUpdate } from "./object-meta-validation.ts";
import { validatePodMetadataAndSpec } from "./pod-validation.ts";
import { inclusiveRangeError, isValidIP, nameIsDNSSubdomain } from "./string-validation.ts";
import { validateTolerations } from "./toleration-validation.ts";

const MAX_INT32 = 2147483647;

// #region validate-pod-update
/** The fields a pod update may change, exactly as upstream lists them in its message. */
export const UPDATABLE_POD_SPEC_FIELDS = [
  "`spec.containers[*].image`",
  "`spec.initContainers[*].image`",
  "`spec.activeDeadlineSeconds`",
  "`spec.tolerations` (only additions to existing tolerations)",
  "`spec.terminationGracePeriodSeconds` (allow it to be set to 1 if it was previously negative)",
];

/** ValidateContainerUpdates: same number of containers, each still with an image. */
function validateContainerUpdates(
  newList: unknown[],
  oldList: unknown[],
  path: string,
): { errors: FieldError[]; stop: boolean } {
  if (newList.length !== oldList.length) {
    return { errors: [forbidden(path, "pod updates may not add or remove containers")], stop: true };
  }
  const errors: FieldError[] = [];
  newList.forEach((c, i) => {
    const image = str(obj(c)?.image);
    if (image.length === 0) errors.push(required(childPath(indexPath(path, i), "image")));
    if (image.trim().length !== image.length) {
      errors.push(
        invalid(
          childPath(indexPath(path, i), "image"),
          image,
          "must not have leading or trailing whitespace",
        ),
      );
    }
  });
  return { errors, stop: false };
}

/** validateOnlyAddedTolerations: every old toleration must still be there (its tolerationSeconds may change). */
function validateOnlyAddedTolerations(
  newTolerations: unknown[],
  oldTolerations: unknown[],
  path: string,
): FieldError[] {
  for (const old of oldTolerations) {
    const found = newTolerations.some((t) =>
      deepEqual(
        { ...(obj(old) ?? {}), tolerationSeconds: undefined },
        { ...(obj(t) ?? {}), tolerationSeconds: undefined },
      ),
    );
    if (!found)
      return [forbidden(path, "existing toleration can not be modified except its tolerationSeconds")];
  }
  return validateTolerations(newTolerations, path);
}

/**
 * validateOnlyDeletedSchedulingGates: a gate is a hold someone else will release; the scheduler
 * ignores a pod until its list is empty, so a gate may be removed but never added. One error per
 * added gate, in index order (upstream walks a Go map, in random order).
 */
function validateOnlyDeletedSchedulingGates(
  newGates: unknown[],
  oldGates: unknown[],
  path: string,
): FieldError[] {
  // Name → index, the last one winning for a repeated name, as upstream's map assignment does.
  const added = new Map<string, number>();
  newGates.forEach((g, i) => {
    added.set(str(obj(g)?.name), i);
  });
  for (const g of oldGates) added.delete(str(obj(g)?.name));
  return [...added]
    .sort((a, b) => a[1] - b[1])
    .map(([name, i]) =>
      forbidden(
        childPath(indexPath(path, i), "name"),
        `only deletion is allowed, but found new scheduling gate '${name}'`,
      ),
    );
}

/**
 * ValidatePodUpdate: the new pod must be valid, and its spec may differ from the old one only
 * in the updatable fields. Those are "munged" back to their old values; if anything still
 * differs, the update is refused with the list of what may change and a diff.
 */
export function validatePodUpdate(newPod: KubeObject, oldPod: KubeObject): FieldError[] {
  const errors = validateObjectMetaUpdate(newPod.metadata, oldPod.metadata);
  errors.push(...validatePodMetadataAndSpec(newPod));
  const newSpec = obj(newPod.spec) ?? {};
  const oldSpec = obj(oldPod.spec) ?? {};

  for (const list of ["containers", "initContainers"]) {
    const result = validateContainerUpdates(arr(newSpec[list]), arr(oldSpec[list]), childPath("spec", list));
    errors.push(...result.errors);
    if (result.stop) return errors;
  }

  if (isSet(newSpec.activeDeadlineSeconds)) {
    const value = num(newSpec.activeDeadlineSeconds);
    if (value < 0 || value > MAX_INT32) {
      errors.push(invalid("spec.activeDeadlineSeconds", value, inclusiveRangeError(0, MAX_INT32)));
      return errors;
    }
    // A deadline may be tightened, never relaxed: relaxing it could revive a pod due to die.
    if (isSet(oldSpec.activeDeadlineSeconds) && num(oldSpec.activeDeadlineSeconds) < value) {
      errors.push(
        invalid("spec.activeDeadlineSeconds", value, "must be less than or equal to previous value"),
      );
      return errors;
    }
  } else if (isSet(oldSpec.activeDeadlineSeconds)) {
    errors.push(
      invalid("spec.activeDeadlineSeconds", null, "must not update from a positive integer to nil value"),
    );
  }

  errors.push(
    ...validateOnlyAddedTolerations(arr(newSpec.tolerations), arr(oldSpec.tolerations), "spec.tolerations"),
  );
  errors.push(
    ...validateOnlyDeletedSchedulingGates(
      arr(newSpec.schedulingGates),
      arr(oldSpec.schedulingGates),
      "spec.schedulingGates",
    ),
  );
  if (deepEqual(newSpec, oldSpec)) return errors;

  const munged: JSONObject = structuredClone(newSpec);
  for (const list of ["containers", "initContainers"]) {
    arr(munged[list]).forEach((c, i) => {
      const container = obj(c);
      const oldImage = obj(arr(oldSpec[list])[i])?.image;
      if (container) {
        if (oldImage === undefined) delete container.image;
        else container.image = oldImage;
      }
    });
  }
  restoreField(munged, oldSpec, "activeDeadlineSeconds");
  restoreField(munged, oldSpec, "schedulingGates");
  restoreField(munged, oldSpec, "tolerations");
  const oldGrace = oldSpec.terminationGracePeriodSeconds;
  if (typeof oldGrace === "number" && oldGrace < 0 && munged.terminationGracePeriodSeconds === 1) {
    munged.terminationGracePeriodSeconds = oldGrace;
  }
  if (!deepEqual(munged, oldSpec)) {
    const allowed = UPDATABLE_POD_SPEC_FIELDS.join(",");
    errors.push(
      forbidden(
        "spec",
        `pod updates may not change fields other than ${allowed}\n${specDiff(oldSpec, munged)}`,
      ),
    );
  }
  return errors;
}

function restoreField(target: JSONObject, source: JSONObject, field: string): void {
  if (source[field] === undefined) delete target[field];
  else target[field] = structuredClone(source[field]);
}

/**
 * A readable diff of two specs in the spirit of upstream's cmp.Diff: one `-` line (old) and one
 * `+` line (new) per changed top-level field, values as JSON.
 */
export function specDiff(oldSpec: JSONObject, newSpec: JSONObject): string {
  const lines = ["  core.PodSpec{"];
  const keys = [...new Set([...Object.keys(oldSpec), ...Object.keys(newSpec)])];
  for (const key of keys) {
    if (deepEqual(oldSpec[key], newSpec[key])) continue;
    if (oldSpec[key] !== undefined) lines.push(`- \t${key}: ${JSON.stringify(oldSpec[key])},`);
    if (newSpec[key] !== undefined) lines.push(`+ \t${key}: ${JSON.stringify(newSpec[key])},`);
  }
  lines.push("  }");
  return lines.join("\n");
}
// #endregion validate-pod-update

// #region validate-pod-status-update
/**
 * ValidatePodStatusUpdate: what the kubelet may write through `pods/<name>/status`. The spec is
 * not validated (the status strategy copies it from the old pod), but `nodeName` may not move
 * and a container that terminated for good may not come back.
 */
export function validatePodStatusUpdate(newPod: KubeObject, oldPod: KubeObject): FieldError[] {
  const errors = validateObjectMetaUpdate(newPod.metadata, oldPod.metadata);
  const newSpec = obj(newPod.spec) ?? {};
  const oldSpec = obj(oldPod.spec) ?? {};
  const newStatus = obj(newPod.status) ?? {};
  const oldStatus = obj(oldPod.status) ?? {};
  if (str(newSpec.nodeName) !== str(oldSpec.nodeName)) {
    // Upstream reports it under status.nodeName although the field lives in the spec.
    errors.push(forbidden("status.nodeName", "may not be changed directly"));
  }
  const nominated = str(newStatus.nominatedNodeName);
  if (nominated !== str(oldStatus.nominatedNodeName) && nominated.length > 0) {
    for (const m of nameIsDNSSubdomain(nominated, false))
      errors.push(invalid("status.nominatedNodeName", nominated, m));
  }
  errors.push(...validateImmutableField(str(newStatus.qosClass), str(oldStatus.qosClass), "status.qosClass"));
  const restartPolicy = str(oldSpec.restartPolicy);
  if (restartPolicy !== "Always") {
    arr(oldStatus.containerStatuses).forEach((entry, i) => {
      const old = obj(entry) ?? {};
      const terminated = obj(obj(old.state)?.terminated);
      if (!terminated) return;
      if (num(terminated.exitCode) !== 0 && restartPolicy === "OnFailure") return;
      for (const n of arr(newStatus.containerStatuses)) {
        const current = obj(n) ?? {};
        if (str(current.name) === str(old.name) && !obj(obj(current.state)?.terminated)) {
          errors.push(
            forbidden(
              `status.containerStatuses[${i}].state`,
              "may not be transitioned to non-terminated state",
            ),
          );
        }
      }
    });
  }
  arr(newStatus.podIPs).forEach((entry, i) => {
    const ip = str(obj(entry)?.ip);
    for (const m of isValidIP(ip)) errors.push(invalid(`status.podIPs[${i}]`, ip, m));
  });
  const hostIPs = arr(newStatus.hostIPs);
  if (hostIPs.length > 0) {
    const first = str(obj(hostIPs[0])?.ip);
    if (str(newStatus.hostIP) !== first)
      errors.push(invalid("status.hostIPs[0].ip", first, "must be equal to `hostIP`"));
    hostIPs.forEach((entry, i) => {
      const ip = str(obj(entry)?.ip);
      for (const m of isValidIP(ip)) errors.push(invalid(`status.hostIPs[${i}]`, ip, m));
    });
  }
  return errors;
}
// #endregion validate-pod-status-update

/** ValidatePodBinding: the target must be a Node, named. */
export function validatePodBinding(binding: KubeObject): FieldError[] {
  const target = obj(binding.target) ?? {};
  const errors: FieldError[] = [];
  const kind = str(target.kind);
  if (kind.length > 0 && kind !== "Node") errors.push(notSupported("target.kind", kind, ["Node", "<empty>"]));
  if (str(target.name) === "") errors.push(required("target.name"));
  return errors;
}

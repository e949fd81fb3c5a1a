/**
 * Pod validation — is this pod runnable? The spec as a whole (restart and DNS policies, grace
 * period, host network, names, priority) and the pod or template around it; the parts have their
 * own files. Upstream does the same in pkg/apis/core/validation/validation.go (ValidatePodCreate,
 * ValidatePodSpec). Changes to an existing pod: pod-update-validation.ts.
 *
 * Solves:
 * - a bad pod must be refused when it is written, with every problem listed, not discovered
 *   later by a kubelet that cannot start it;
 * - the same rules guard the pod template of every ReplicaSet and Deployment, so a controller
 *   can never be told to stamp out pods the API server would refuse.
 *
 * Invariants:
 * - the same spec checks run for a Pod and for a template (`validatePodSpec`); checks that only
 *   make sense for real pods are flagged `resourceIsPod`;
 * - validation runs after defaulting, so a field the defaulters always set (restartPolicy,
 *   terminationGracePeriodSeconds, imagePullPolicy, probe periods) is reported as Required
 *   only if a client explicitly cleared it;
 * - messages, field paths and the order of errors follow upstream; where upstream iterates a
 *   Go map (resource lists) the order is the JSON order instead.
 *
 * The parts: container-validation.ts (containers, init containers, ports), env-validation.ts,
 * resource-validation.ts, probe-validation.ts (probes and lifecycle hooks), volume-validation.ts,
 * toleration-validation.ts, affinity-validation.ts.
 *
 * Simplified: security contexts, DNS config, topology spread, sysctls, OS-specific and most
 * volume-source checks are not validated (scheduling gates only as far as `nodeName` goes);
 * quantities are compared numerically and printed as written.
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidatePodCreate, validatePodMetadataAndSpec, ValidatePodSpec, ValidatePodTemplateSpec, validateRestartPolicy, validateDNSPolicy, ValidatePreemptionPolicy, validateContainersOnlyForPod)
 * @chapter 02-apiserver
 */

import { validateAffinity } from "./affinity-validation.ts";
import { validateContainers, validateInitContainers } from "./container-validation.ts";
import {
  childPath,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  notSupported,
  required,
} from "./field-errors.ts";
import { arr, isSet, num, obj, str } from "./json.ts";
import type { KubeObject } from "./meta.ts";
import { validateAnnotations, validateLabels, validateObjectMeta } from "./object-meta-validation.ts";
import { inclusiveRangeError, isDNS1123Label, nameIsDNSSubdomain } from "./string-validation.ts";
import { validateTolerations } from "./toleration-validation.ts";
import { validateVolumes } from "./volume-validation.ts";

export interface PodValidationOptions {
  /** The spec belongs to a Pod, not to a template inside a Deployment or ReplicaSet. */
  resourceIsPod: boolean;
}

const MAX_INT32 = 2147483647;

// #region validate-pod-spec
const RESTART_POLICIES = ["Always", "OnFailure", "Never"];
const DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
const PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"];

/**
 * ValidatePodSpec: everything inside `spec` of a Pod or of a pod template. Volumes come first:
 * their names are what the containers' mounts may use. The grace period goes down to the
 * containers because a `sleep` hook must fit inside it.
 */
export function validatePodSpec(spec: unknown, path: string, options: PodValidationOptions): FieldError[] {
  const s = obj(spec) ?? {};
  const errors: FieldError[] = [];
  if (!isSet(s.terminationGracePeriodSeconds))
    errors.push(required(childPath(path, "terminationGracePeriodSeconds")));
  const gracePeriod =
    typeof s.terminationGracePeriodSeconds === "number" ? s.terminationGracePeriodSeconds : undefined;

  const volumes = validateVolumes(s.volumes, childPath(path, "volumes"));
  errors.push(...volumes.errors);
  errors.push(...validateContainers(s.containers, volumes.names, gracePeriod, childPath(path, "containers")));
  errors.push(
    ...validateInitContainers(
      s.initContainers,
      s.containers,
      volumes.names,
      gracePeriod,
      childPath(path, "initContainers"),
    ),
  );

  if (s.hostNetwork === true) {
    // With the host's network, a container port is a host port: they must agree. A template
    // may leave hostPort 0 — it is defaulted when the pod is created.
    arr(s.containers).forEach((c, i) => {
      arr(obj(c)?.ports).forEach((p, j) => {
        const port = obj(p) ?? {};
        const hostPort = num(port.hostPort);
        if ((options.resourceIsPod || hostPort !== 0) && hostPort !== num(port.containerPort)) {
          const at = childPath(
            indexPath(childPath(indexPath(childPath(path, "containers"), i), "ports"), j),
            "hostPort",
          );
          errors.push(invalid(at, hostPort, "must match `containerPort` when `hostNetwork` is true"));
        }
      });
    });
  }

  const restartPolicy = str(s.restartPolicy);
  if (restartPolicy === "") errors.push(required(childPath(path, "restartPolicy")));
  else if (!RESTART_POLICIES.includes(restartPolicy)) {
    errors.push(notSupported(childPath(path, "restartPolicy"), restartPolicy, RESTART_POLICIES));
  }
  const dnsPolicy = str(s.dnsPolicy);
  if (dnsPolicy === "") errors.push(required(childPath(path, "dnsPolicy")));
  else if (!DNS_POLICIES.includes(dnsPolicy))
    errors.push(notSupported(childPath(path, "dnsPolicy"), dnsPolicy, DNS_POLICIES));
  errors.push(...validateLabels(s.nodeSelector, childPath(path, "nodeSelector")));
  errors.push(...validateAffinity(s.affinity, childPath(path, "affinity")));

  const serviceAccountName = str(s.serviceAccountName);
  if (serviceAccountName.length > 0) {
    for (const m of nameIsDNSSubdomain(serviceAccountName, false)) {
      errors.push(invalid(childPath(path, "serviceAccountName"), serviceAccountName, m));
    }
  }
  const nodeName = str(s.nodeName);
  if (nodeName.length > 0) {
    for (const m of nameIsDNSSubdomain(nodeName, false))
      errors.push(invalid(childPath(path, "nodeName"), nodeName, m));
  }
  if (isSet(s.activeDeadlineSeconds)) {
    const value = num(s.activeDeadlineSeconds);
    if (value < 1 || value > MAX_INT32) {
      errors.push(
        invalid(childPath(path, "activeDeadlineSeconds"), value, inclusiveRangeError(1, MAX_INT32)),
      );
    }
  }
  for (const field of ["hostname", "subdomain"]) {
    const value = str(s[field]);
    if (value.length > 0)
      for (const m of isDNS1123Label(value)) errors.push(invalid(childPath(path, field), value, m));
  }
  errors.push(...validateTolerations(s.tolerations, childPath(path, "tolerations")));
  const priorityClassName = str(s.priorityClassName);
  if (priorityClassName.length > 0) {
    for (const m of nameIsDNSSubdomain(priorityClassName, false)) {
      errors.push(invalid(childPath(path, "priorityClassName"), priorityClassName, m));
    }
  }
  if (isSet(s.preemptionPolicy))
    errors.push(...validatePreemptionPolicy(s.preemptionPolicy, childPath(path, "preemptionPolicy")));
  return errors;
}

/** ValidatePreemptionPolicy; a PriorityClass carries the same field (scheduling-validation.ts). */
export function validatePreemptionPolicy(policy: unknown, path: string): FieldError[] {
  const p = str(policy);
  if (p === "") return [required(path)];
  return PREEMPTION_POLICIES.includes(p) ? [] : [notSupported(path, p, PREEMPTION_POLICIES)];
}

/** ValidatePodTemplateSpec: the template's labels and annotations, and its spec as a template. */
export function validatePodTemplateSpec(template: unknown, path: string): FieldError[] {
  const t = obj(template) ?? {};
  const meta = obj(t.metadata) ?? {};
  const errors = validateLabels(meta.labels, childPath(path, "labels"));
  errors.push(...validateAnnotations(meta.annotations, childPath(path, "annotations")));
  errors.push(...validatePodSpec(t.spec, childPath(path, "spec"), { resourceIsPod: false }));
  if (arr(obj(t.spec)?.ephemeralContainers).length > 0) {
    errors.push(
      forbidden(
        childPath(path, "spec", "ephemeralContainers"),
        "ephemeral containers not allowed in pod template",
      ),
    );
  }
  return errors;
}
// #endregion validate-pod-spec

// #region validate-pod
/** validatePodMetadataAndSpec: the checks shared by create and update. */
export function validatePodMetadataAndSpec(pod: KubeObject): FieldError[] {
  const errors = validateObjectMeta(pod.metadata, true, nameIsDNSSubdomain);
  errors.push(...validatePodSpec(pod.spec, "spec", { resourceIsPod: true }));
  // Pods only, as upstream's validateContainersOnlyForPod: a template with such an image is still
  // accepted, and the pods stamped out from it are refused.
  for (const list of ["containers", "initContainers"]) {
    arr(obj(pod.spec)?.[list]).forEach((c, i) => {
      const image = str(obj(c)?.image);
      if (image.length !== image.trim().length) {
        errors.push(
          invalid(
            childPath(indexPath(childPath("spec", list), i), "image"),
            image,
            "must not have leading or trailing whitespace",
          ),
        );
      }
    });
  }
  return errors;
}

/**
 * ValidatePodCreate: what only a new pod must satisfy. Ephemeral containers are added later through
 * their own subresource (`kubectl debug`); a pod bound to a node must not still wait on scheduling gates.
 */
export function validatePod(pod: KubeObject): FieldError[] {
  const errors = validatePodMetadataAndSpec(pod);
  const spec = obj(pod.spec) ?? {};
  if (arr(spec.ephemeralContainers).length > 0) {
    errors.push(forbidden("spec.ephemeralContainers", "cannot be set on create"));
  }
  if (str(spec.nodeName) !== "" && arr(spec.schedulingGates).length > 0) {
    errors.push(forbidden("spec.nodeName", "cannot be set until all schedulingGates have been cleared"));
  }
  return errors;
}

// #endregion validate-pod

/**
 * Pod validation — is this pod spec runnable? (Changes to an existing pod: pod-update-validation.ts.)
 * Mirrors the pod part of k8s.io/kubernetes pkg/apis/core/validation/validation.go (the
 * upstream files are listed at the end of this header).
 *
 * Solves:
 * - a bad pod must be refused when it is written, with every problem listed, not discovered
 *   later by a kubelet that cannot start it: containers without an image, duplicate container
 *   names, ports out of range, a probe with two handlers or none, an unknown restart policy;
 * - the same rules guard the pod template of every ReplicaSet and Deployment, so a controller
 *   can never be told to stamp out pods the API server would refuse.
 *
 * Invariants:
 * - the same spec checks run for a Pod and for the pod template of a ReplicaSet/Deployment
 *   (`validatePodSpec`); checks that only make sense for real pods are flagged `resourceIsPod`;
 * - validation runs after defaulting, so a field the defaulters always set (restartPolicy,
 *   terminationGracePeriodSeconds, imagePullPolicy, probe periods) is reported as Required
 *   only if a client explicitly cleared it;
 * - messages, field paths and the order of errors follow upstream; where upstream iterates a
 *   Go map (resource lists) the order is the JSON order instead.
 *
 * Simplified (see the chapter's "What upstream does differently"): security contexts, DNS
 * config, topology spread, scheduling gates, sysctls, OS-specific and most volume-source
 * checks are not validated; quantities are compared numerically and printed as written.
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidatePodCreate, validatePodMetadataAndSpec, ValidatePodSpec, ValidatePodTemplateSpec, ValidateVolumes, validateContainers, validateInitContainers, validateContainerCommon, validateContainerPorts, ValidateEnv, validateProbe, validateHandler, validateRestartPolicy, validateDNSPolicy, ValidateTolerations, validateAffinity, ValidateNodeSelector, ValidateContainerResourceRequirements)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/validation/field/errors.go (NotSupported)
 * @chapter 02-apiserver
 */

import {
  childPath,
  duplicate,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  keyPath,
  notFound,
  notSupported,
  required,
} from "./field-errors.ts";
import { arr, isSet, type JSONObject, num, obj, str } from "./json.ts";
import { isQualifiedName, isValidLabelValue } from "./labels.ts";
import type { KubeObject } from "./meta.ts";
import {
  IS_NEGATIVE_ERROR_MSG,
  validateAnnotations,
  validateLabelName,
  validateLabelSelector,
  validateLabels,
  validateNonnegativeField,
  validateObjectMeta,
} from "./object-meta-validation.ts";
import {
  inclusiveRangeError,
  isConfigMapKey,
  isDNS1123Label,
  isEnvVarName,
  isHTTPHeaderName,
  isValidPortName,
  isValidPortNum,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
} from "./string-validation.ts";

export interface PodValidationOptions {
  /** The spec belongs to a Pod, not to a template inside a Deployment or ReplicaSet. */
  resourceIsPod: boolean;
}

const MAX_INT32 = 2147483647;

/** sets.List of supportedPortProtocols: sorted. */
const SUPPORTED_PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"];

// #region containers
function validateContainerPorts(ports: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  arr(ports).forEach((entry, i) => {
    const port = obj(entry) ?? {};
    const at = indexPath(path, i);
    const name = str(port.name);
    if (name.length > 0) {
      const messages = isValidPortName(name);
      if (messages.length > 0) for (const m of messages) errors.push(invalid(childPath(at, "name"), name, m));
      else if (names.has(name)) errors.push(duplicate(childPath(at, "name"), name));
      else names.add(name);
    }
    const containerPort = num(port.containerPort);
    if (containerPort === 0) errors.push(required(childPath(at, "containerPort")));
    else
      for (const m of isValidPortNum(containerPort))
        errors.push(invalid(childPath(at, "containerPort"), containerPort, m));
    const hostPort = num(port.hostPort);
    if (hostPort !== 0)
      for (const m of isValidPortNum(hostPort)) errors.push(invalid(childPath(at, "hostPort"), hostPort, m));
    const protocol = str(port.protocol);
    if (protocol === "") errors.push(required(childPath(at, "protocol")));
    else if (!SUPPORTED_PORT_PROTOCOLS.includes(protocol)) {
      errors.push(notSupported(childPath(at, "protocol"), protocol, SUPPORTED_PORT_PROTOCOLS));
    }
  });
  return errors;
}

/** The downward-API fields an env var may read (validEnvDownwardAPIFieldPathExpressions, sorted). */
const ENV_FIELD_PATHS = [
  "metadata.name",
  "metadata.namespace",
  "metadata.uid",
  "spec.nodeName",
  "spec.serviceAccountName",
  "status.hostIP",
  "status.hostIPs",
  "status.podIP",
  "status.podIPs",
];
/** What pods.ConvertDownwardAPIFieldLabel accepts for v1, before the env-specific list narrows it. */
const CONVERTIBLE_FIELD_LABELS = new Set([
  "metadata.annotations",
  "metadata.labels",
  "metadata.name",
  "metadata.namespace",
  "metadata.uid",
  "spec.nodeName",
  "spec.restartPolicy",
  "spec.serviceAccountName",
  "spec.schedulerName",
  "status.phase",
  "status.hostIP",
  "status.hostIPs",
  "status.podIP",
  "status.podIPs",
  "spec.host",
]);

function validateObjectFieldSelector(selector: JSONObject, path: string): FieldError[] {
  const apiVersion = str(selector.apiVersion);
  const fieldPath = str(selector.fieldPath);
  if (apiVersion === "") return [required(childPath(path, "apiVersion"))];
  if (fieldPath === "") return [required(childPath(path, "fieldPath"))];
  const subscripted = /^(metadata\.(?:labels|annotations))\['(.*)'\]$/.exec(fieldPath);
  let conversionError: string | undefined;
  if (apiVersion !== "v1") conversionError = `unsupported pod version: ${apiVersion}`;
  else if (!subscripted && /\[.*\]$/.test(fieldPath)) {
    conversionError = `field label does not support subscript: ${fieldPath}`;
  } else if (!subscripted && !CONVERTIBLE_FIELD_LABELS.has(fieldPath)) {
    conversionError = `field label not supported: ${fieldPath}`;
  }
  if (conversionError) {
    return [
      invalid(childPath(path, "fieldPath"), fieldPath, `error converting fieldPath: ${conversionError}`),
    ];
  }
  if (subscripted) {
    const [, base, key] = subscripted;
    const name = base === "metadata.annotations" ? key.toLowerCase() : key;
    return isQualifiedName(name).map((m) => invalid(path, name, m));
  }
  const internal = fieldPath === "spec.host" ? "spec.nodeName" : fieldPath;
  return ENV_FIELD_PATHS.includes(internal)
    ? []
    : [notSupported(childPath(path, "fieldPath"), internal, ENV_FIELD_PATHS)];
}

function validateKeySelector(selector: JSONObject, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const name = str(selector.name);
  for (const m of nameIsDNSSubdomain(name, false)) errors.push(invalid(childPath(path, "name"), name, m));
  const key = str(selector.key);
  if (key === "") errors.push(required(childPath(path, "key")));
  else for (const m of isConfigMapKey(key)) errors.push(invalid(childPath(path, "key"), key, m));
  return errors;
}

/** ValidateEnv: named variables, and at most one source per variable. */
export function validateEnv(env: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  arr(env).forEach((entry, i) => {
    const variable = obj(entry) ?? {};
    const at = indexPath(path, i);
    const name = str(variable.name);
    if (name === "") errors.push(required(childPath(at, "name")));
    else for (const m of isEnvVarName(name)) errors.push(invalid(childPath(at, "name"), name, m));
    const valueFrom = obj(variable.valueFrom);
    if (!valueFrom) return;
    const from = childPath(at, "valueFrom");
    let sources = 0;
    const fieldRef = obj(valueFrom.fieldRef);
    if (fieldRef) {
      sources++;
      errors.push(...validateObjectFieldSelector(fieldRef, childPath(from, "fieldRef")));
    }
    if (obj(valueFrom.resourceFieldRef)) sources++;
    for (const kind of ["configMapKeyRef", "secretKeyRef"]) {
      const ref = obj(valueFrom[kind]);
      if (ref) {
        sources++;
        errors.push(...validateKeySelector(ref, childPath(from, kind)));
      }
    }
    if (sources === 0) {
      errors.push(
        invalid(
          from,
          "",
          "must specify one of: `fieldRef`, `resourceFieldRef`, `configMapKeyRef` or `secretKeyRef`",
        ),
      );
    } else if (str(variable.value) !== "") {
      errors.push(invalid(from, "", "may not be specified when `value` is not empty"));
    } else if (sources > 1) {
      errors.push(invalid(from, "", "may not have more than one field specified at a time"));
    }
  });
  return errors;
}

function validateVolumeMounts(mounts: unknown, volumes: Set<string>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const mountPoints = new Set<string>();
  arr(mounts).forEach((entry, i) => {
    const mount = obj(entry) ?? {};
    const at = indexPath(path, i);
    const name = str(mount.name);
    const mountPath = str(mount.mountPath);
    if (name === "") errors.push(required(childPath(at, "name")));
    if (!volumes.has(name)) errors.push(notFound(childPath(at, "name"), name));
    if (mountPath === "") errors.push(required(childPath(at, "mountPath")));
    if (mountPoints.has(mountPath))
      errors.push(invalid(childPath(at, "mountPath"), mountPath, "must be unique"));
    mountPoints.add(mountPath);
  });
  return errors;
}

/** sets.List of supportedPullPolicies: sorted. */
const PULL_POLICIES = ["Always", "IfNotPresent", "Never"];

function validatePullPolicy(policy: unknown, path: string): FieldError[] {
  const p = str(policy);
  if (p === "") return [required(path)];
  return PULL_POLICIES.includes(p) ? [] : [notSupported(path, p, PULL_POLICIES)];
}
// #endregion containers

// #region resources
const QUANTITY = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const QUANTITY_SUFFIXES: Record<string, number> = {
  "": 1,
  n: 1e-9,
  u: 1e-6,
  m: 1e-3,
  k: 1e3,
  M: 1e6,
  G: 1e9,
  T: 1e12,
  P: 1e15,
  E: 1e18,
  Ki: 2 ** 10,
  Mi: 2 ** 20,
  Gi: 2 ** 30,
  Ti: 2 ** 40,
  Pi: 2 ** 50,
  Ei: 2 ** 60,
};

/** A quantity's value as a float, for comparisons; undefined when it does not parse. */
export function quantityValue(quantity: unknown): number | undefined {
  const text = typeof quantity === "number" ? String(quantity) : str(quantity);
  const match = QUANTITY.exec(text);
  if (!match) return undefined;
  const base = Number(match[1]);
  const suffix = match[2];
  if (Number.isNaN(base)) return undefined;
  if (suffix in QUANTITY_SUFFIXES) return base * QUANTITY_SUFFIXES[suffix];
  const exponent = /^[eE]([-+]?[0-9]+)$/.exec(suffix);
  return exponent ? base * 10 ** Number(exponent[1]) : undefined;
}

/** helper.IsStandardResourceName's set (compute, quota and object-count names). */
const STANDARD_RESOURCES = new Set([
  "cpu",
  "memory",
  "ephemeral-storage",
  "requests.cpu",
  "requests.memory",
  "requests.ephemeral-storage",
  "limits.cpu",
  "limits.memory",
  "limits.ephemeral-storage",
  "pods",
  "services",
  "replicationcontrollers",
  "resourcequotas",
  "secrets",
  "persistentvolumeclaims",
  "configmaps",
  "storage",
  "requests.storage",
  "services.nodeports",
  "services.loadbalancers",
]);
const STANDARD_CONTAINER_RESOURCES = new Set(["cpu", "memory", "ephemeral-storage"]);

const isHugePages = (name: string): boolean => name.startsWith("hugepages-");
const isNative = (name: string): boolean => !name.includes("/") || name.includes("kubernetes.io/");
/** Extended resources (`example.com/gpu`) and huge pages cannot be overcommitted: request must equal limit. */
const isOvercommitAllowed = (name: string): boolean => isNative(name) && !isHugePages(name);

function validateContainerResourceName(name: string, path: string): FieldError[] {
  const errors = isQualifiedName(name).map((m) => invalid(path, name, m));
  if (errors.length > 0) return errors;
  if (!name.includes("/")) {
    if (!STANDARD_RESOURCES.has(name) && !isHugePages(name)) {
      return [invalid(path, name, "must be a standard resource type or fully qualified")];
    }
    if (!STANDARD_CONTAINER_RESOURCES.has(name) && !isHugePages(name)) {
      return [invalid(path, name, "must be a standard resource for containers")];
    }
  } else if (!isNative(name) && name.startsWith("requests.")) {
    return [invalid(path, name, "doesn't follow extended resource name standard")];
  }
  return [];
}

/**
 * Upstream rejects an unparseable quantity while decoding the request (a 400 BadRequest,
 * "… cannot be handled as a Pod: quantities must match …"); objects stay JSON here, so the
 * same words come back as a field error instead of letting the scheduler or kubelet choke on it.
 */
export const QUANTITY_FORMAT_ERROR =
  "quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'";

export function validateResourceQuantity(name: string, quantity: unknown, path: string): FieldError[] {
  const parsed = quantityValue(quantity);
  if (parsed === undefined) return [invalid(path, String(quantity), QUANTITY_FORMAT_ERROR)];
  const value = parsed;
  const errors: FieldError[] = [];
  if (value < 0) errors.push(invalid(path, String(quantity), IS_NEGATIVE_ERROR_MSG));
  if (!isNative(name) && !Number.isInteger(value))
    errors.push(invalid(path, String(quantity), "must be an integer"));
  return errors;
}

export function validateResourceRequirements(resources: unknown, path: string): FieldError[] {
  const r = obj(resources) ?? {};
  const limits = obj(r.limits) ?? {};
  const requests = obj(r.requests) ?? {};
  const limitsPath = childPath(path, "limits");
  const requestsPath = childPath(path, "requests");
  const errors: FieldError[] = [];
  for (const [name, quantity] of Object.entries(limits)) {
    errors.push(...validateContainerResourceName(name, keyPath(limitsPath, name)));
    errors.push(...validateResourceQuantity(name, quantity, keyPath(limitsPath, name)));
  }
  for (const [name, quantity] of Object.entries(requests)) {
    errors.push(...validateContainerResourceName(name, keyPath(requestsPath, name)));
    errors.push(...validateResourceQuantity(name, quantity, keyPath(requestsPath, name)));
    if (name in limits) {
      const request = quantityValue(quantity) ?? 0;
      const limit = quantityValue(limits[name]) ?? 0;
      // The message names the `requests` map, not the key, as upstream.
      if (request !== limit && !isOvercommitAllowed(name)) {
        errors.push(
          invalid(
            requestsPath,
            String(quantity),
            `must be equal to ${name} limit of ${String(limits[name])}`,
          ),
        );
      } else if (request > limit) {
        errors.push(
          invalid(
            requestsPath,
            String(quantity),
            `must be less than or equal to ${name} limit of ${String(limits[name])}`,
          ),
        );
      }
    } else if (!isOvercommitAllowed(name)) {
      errors.push(required(limitsPath, "Limit must be set for non overcommitable resources"));
    }
  }
  return errors;
}
// #endregion resources

// #region probes
/** supportedHTTPSchemes, sorted. */
const HTTP_SCHEMES = ["HTTP", "HTTPS"];

function validatePortNumOrName(port: unknown, path: string): FieldError[] {
  if (typeof port === "number") return isValidPortNum(port).map((m) => invalid(path, port, m));
  if (typeof port === "string") return isValidPortName(port).map((m) => invalid(path, port, m));
  // An absent IntOrString decodes as the integer 0 upstream.
  return isValidPortNum(0).map((m) => invalid(path, 0, m));
}

/** validateHandler: exactly one of exec / httpGet / tcpSocket / grpc (/ sleep for lifecycle hooks). */
function validateHandler(handler: JSONObject, path: string, gracePeriod: number | undefined): FieldError[] {
  const errors: FieldError[] = [];
  let handlers = 0;
  const check = (name: string, validate: (h: JSONObject, at: string) => FieldError[]): void => {
    const h = obj(handler[name]);
    if (!h) return;
    if (handlers > 0)
      errors.push(forbidden(childPath(path, name), "may not specify more than 1 handler type"));
    else {
      handlers++;
      errors.push(...validate(h, childPath(path, name)));
    }
  };
  check("exec", (h, at) => (arr(h.command).length === 0 ? [required(childPath(at, "command"))] : []));
  check("httpGet", (h, at) => {
    const e: FieldError[] = [];
    if (str(h.path) === "") e.push(required(childPath(at, "path")));
    e.push(...validatePortNumOrName(h.port, childPath(at, "port")));
    const scheme = str(h.scheme);
    if (!HTTP_SCHEMES.includes(scheme)) e.push(notSupported(childPath(at, "scheme"), scheme, HTTP_SCHEMES));
    for (const header of arr(h.httpHeaders)) {
      const name = str(obj(header)?.name);
      for (const m of isHTTPHeaderName(name)) e.push(invalid(childPath(at, "httpHeaders"), name, m));
    }
    return e;
  });
  check("tcpSocket", (h, at) => validatePortNumOrName(h.port, childPath(at, "port")));
  check("grpc", (h, at) => validatePortNumOrName(num(h.port), childPath(at, "port")));
  check("sleep", (h, at) => {
    const seconds = num(h.seconds);
    if (gracePeriod !== undefined && (seconds <= 0 || seconds > gracePeriod)) {
      return [
        invalid(
          at,
          seconds,
          `must be greater than 0 and less than terminationGracePeriodSeconds (${gracePeriod}). Enable AllowPodLifecycleSleepActionZeroValue feature gate for zero sleep.`,
        ),
      ];
    }
    return [];
  });
  if (handlers === 0) errors.push(required(path, "must specify a handler type"));
  return errors;
}

function validateProbe(probe: JSONObject, path: string, gracePeriod: number | undefined): FieldError[] {
  // Probes have no sleep handler; pass only the probe handlers through.
  const handler = { exec: probe.exec, httpGet: probe.httpGet, tcpSocket: probe.tcpSocket, grpc: probe.grpc };
  const errors = validateHandler(handler, path, gracePeriod);
  for (const field of [
    "initialDelaySeconds",
    "timeoutSeconds",
    "periodSeconds",
    "successThreshold",
    "failureThreshold",
  ]) {
    errors.push(...validateNonnegativeField(num(probe[field]), childPath(path, field)));
  }
  const grace = probe.terminationGracePeriodSeconds;
  if (typeof grace === "number" && grace <= 0) {
    errors.push(invalid(childPath(path, "terminationGracePeriodSeconds"), grace, "must be greater than 0"));
  }
  return errors;
}

/** Liveness and startup probes decide "restart it" / "it has started": one success must be enough. */
function validateProbes(container: JSONObject, path: string, gracePeriod: number | undefined): FieldError[] {
  const errors: FieldError[] = [];
  const liveness = obj(container.livenessProbe);
  if (liveness) {
    errors.push(...validateProbe(liveness, childPath(path, "livenessProbe"), gracePeriod));
    if (num(liveness.successThreshold) !== 1) {
      errors.push(
        invalid(
          childPath(path, "livenessProbe", "successThreshold"),
          num(liveness.successThreshold),
          "must be 1",
        ),
      );
    }
  }
  const readiness = obj(container.readinessProbe);
  if (readiness) {
    errors.push(...validateProbe(readiness, childPath(path, "readinessProbe"), gracePeriod));
    if (isSet(readiness.terminationGracePeriodSeconds)) {
      errors.push(
        invalid(
          childPath(path, "readinessProbe", "terminationGracePeriodSeconds"),
          readiness.terminationGracePeriodSeconds,
          "must not be set for readinessProbes",
        ),
      );
    }
  }
  const startup = obj(container.startupProbe);
  if (startup) {
    errors.push(...validateProbe(startup, childPath(path, "startupProbe"), gracePeriod));
    if (num(startup.successThreshold) !== 1) {
      errors.push(
        invalid(
          childPath(path, "startupProbe", "successThreshold"),
          num(startup.successThreshold),
          "must be 1",
        ),
      );
    }
  }
  return errors;
}

function validateLifecycle(
  lifecycle: JSONObject,
  path: string,
  gracePeriod: number | undefined,
): FieldError[] {
  const errors: FieldError[] = [];
  for (const hook of ["postStart", "preStop"]) {
    const handler = obj(lifecycle[hook]);
    if (handler) errors.push(...validateHandler(handler, childPath(path, hook), gracePeriod));
  }
  return errors;
}
// #endregion probes

// #region validate-containers
/** validateContainerCommon: what every container (regular, init) must satisfy. */
function validateContainerCommon(container: JSONObject, volumes: Set<string>, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const name = str(container.name);
  if (name === "") errors.push(required(childPath(path, "name")));
  else for (const m of isDNS1123Label(name)) errors.push(invalid(childPath(path, "name"), name, m));
  if (str(container.image) === "") errors.push(required(childPath(path, "image")));
  const policy = str(container.terminationMessagePolicy);
  if (policy === "") errors.push(required(childPath(path, "terminationMessagePolicy")));
  else if (policy !== "File" && policy !== "FallbackToLogsOnError") {
    errors.push(
      notSupported(childPath(path, "terminationMessagePolicy"), policy, ["File", "FallbackToLogsOnError"]),
    );
  }
  errors.push(...validateContainerPorts(container.ports, childPath(path, "ports")));
  errors.push(...validateEnv(container.env, childPath(path, "env")));
  errors.push(...validateVolumeMounts(container.volumeMounts, volumes, childPath(path, "volumeMounts")));
  errors.push(...validatePullPolicy(container.imagePullPolicy, childPath(path, "imagePullPolicy")));
  errors.push(...validateResourceRequirements(container.resources, childPath(path, "resources")));
  return errors;
}

/** Two containers binding the same host port (same protocol and host IP) could never both start. */
function checkHostPortConflicts(containers: unknown[], path: string, seen = new Set<string>()): FieldError[] {
  const errors: FieldError[] = [];
  containers.forEach((entry, ci) => {
    arr(obj(entry)?.ports).forEach((p, pi) => {
      const port = obj(p) ?? {};
      const hostPort = num(port.hostPort);
      if (hostPort === 0) return;
      const key = `${str(port.protocol)}/${str(port.hostIP)}/${hostPort}`;
      if (seen.has(key))
        errors.push(
          duplicate(childPath(indexPath(childPath(indexPath(path, ci), "ports"), pi), "hostPort"), key),
        );
      else seen.add(key);
    });
  });
  return errors;
}

function validateContainers(
  containers: unknown,
  volumes: Set<string>,
  gracePeriod: number | undefined,
  path: string,
): FieldError[] {
  const list = arr(containers);
  if (list.length === 0) return [required(path)];
  const errors: FieldError[] = [];
  const names = new Set<string>();
  list.forEach((entry, i) => {
    const container = obj(entry) ?? {};
    const at = indexPath(path, i);
    errors.push(...validateContainerCommon(container, volumes, at));
    const name = str(container.name);
    if (names.has(name)) errors.push(duplicate(childPath(at, "name"), name));
    else names.add(name);
    const lifecycle = obj(container.lifecycle);
    if (lifecycle) errors.push(...validateLifecycle(lifecycle, childPath(at, "lifecycle"), gracePeriod));
    errors.push(...validateProbes(container, at, gracePeriod));
    if (isSet(container.restartPolicy)) {
      errors.push(forbidden(childPath(at, "restartPolicy"), "may not be set for non-init containers"));
    }
  });
  errors.push(...checkHostPortConflicts(list, path));
  return errors;
}

function validateInitContainers(
  initContainers: unknown,
  containers: unknown,
  volumes: Set<string>,
  gracePeriod: number | undefined,
  path: string,
): FieldError[] {
  const errors: FieldError[] = [];
  const names = new Set(arr(containers).map((c) => str(obj(c)?.name)));
  arr(initContainers).forEach((entry, i) => {
    const container = obj(entry) ?? {};
    const at = indexPath(path, i);
    errors.push(...validateContainerCommon(container, volumes, at));
    let sidecar = false;
    if (isSet(container.restartPolicy)) {
      const policy = str(container.restartPolicy);
      if (policy !== "Always")
        errors.push(notSupported(childPath(at, "restartPolicy"), container.restartPolicy, ["Always"]));
      sidecar = policy === "Always";
    }
    const name = str(container.name);
    if (names.has(name)) errors.push(duplicate(childPath(at, "name"), name));
    else if (name.length > 0) names.add(name);
    // Init containers run one at a time, so only conflicts within one container matter.
    errors.push(...checkHostPortConflicts([container], path));
    if (sidecar) {
      const lifecycle = obj(container.lifecycle);
      if (lifecycle) errors.push(...validateLifecycle(lifecycle, childPath(at, "lifecycle"), gracePeriod));
      errors.push(...validateProbes(container, at, gracePeriod));
    } else {
      // A plain init container runs to completion: there is nothing to probe or hook.
      for (const field of ["lifecycle", "livenessProbe", "readinessProbe", "startupProbe"]) {
        if (isSet(container[field])) {
          errors.push(
            forbidden(
              childPath(at, field),
              "may not be set for init containers without restartPolicy=Always",
            ),
          );
        }
      }
    }
  });
  return errors;
}
// #endregion validate-containers

// #region volumes
/**
 * The volume sources in the order upstream checks them, with the path upstream reports a
 * second source under — including its typos (`downwarAPI`) and spellings (`cephFS`).
 */
const VOLUME_SOURCES: readonly [json: string, reportedAs: string][] = [
  ["emptyDir", "emptyDir"],
  ["hostPath", "hostPath"],
  ["gitRepo", "gitRepo"],
  ["gcePersistentDisk", "gcePersistentDisk"],
  ["awsElasticBlockStore", "awsElasticBlockStore"],
  ["secret", "secret"],
  ["nfs", "nfs"],
  ["iscsi", "iscsi"],
  ["glusterfs", "glusterfs"],
  ["flocker", "flocker"],
  ["persistentVolumeClaim", "persistentVolumeClaim"],
  ["rbd", "rbd"],
  ["cinder", "cinder"],
  ["cephfs", "cephFS"],
  ["quobyte", "quobyte"],
  ["downwardAPI", "downwarAPI"],
  ["fc", "fc"],
  ["flexVolume", "flexVolume"],
  ["configMap", "configMap"],
  ["azureFile", "azureFile"],
  ["vsphereVolume", "vsphereVolume"],
  ["photonPersistentDisk", "photonPersistentDisk"],
  ["portworxVolume", "portworxVolume"],
  ["azureDisk", "azureDisk"],
  ["storageos", "storageos"],
  ["projected", "projected"],
  ["scaleIO", "scaleIO"],
  ["csi", "csi"],
  ["ephemeral", "ephemeral"],
  ["image", "image"],
];

const FILE_MODE_ERROR_MSG = "must be a number between 0 and 0777 (octal), both inclusive";

function validateKeyToPaths(items: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  arr(items).forEach((entry, i) => {
    const item = obj(entry) ?? {};
    const at = indexPath(path, i);
    if (str(item.key) === "") errors.push(required(childPath(at, "key")));
    if (str(item.path) === "") errors.push(required(childPath(at, "path")));
    const mode = item.mode;
    if (typeof mode === "number" && (mode > 0o777 || mode < 0))
      errors.push(invalid(childPath(at, "mode"), mode, FILE_MODE_ERROR_MSG));
  });
  return errors;
}

function validateVolumeSource(volume: JSONObject, path: string): FieldError[] {
  const errors: FieldError[] = [];
  let sources = 0;
  for (const [json, reportedAs] of VOLUME_SOURCES) {
    const source = obj(volume[json]);
    if (!source) continue;
    if (sources > 0) {
      errors.push(forbidden(childPath(path, reportedAs), "may not specify more than 1 volume type"));
      continue;
    }
    sources++;
    const at = childPath(path, json);
    if (json === "hostPath" && str(source.path) === "") errors.push(required(childPath(at, "path")));
    if (json === "secret" || json === "configMap") {
      const nameField = json === "secret" ? "secretName" : "name";
      if (str(source[nameField]) === "") errors.push(required(childPath(at, nameField)));
      const mode = source.defaultMode;
      if (typeof mode === "number" && (mode > 0o777 || mode < 0)) {
        errors.push(invalid(childPath(at, "defaultMode"), mode, FILE_MODE_ERROR_MSG));
      }
      errors.push(...validateKeyToPaths(source.items, childPath(at, "items")));
    }
    if (json === "persistentVolumeClaim" && str(source.claimName) === "")
      errors.push(required(childPath(at, "claimName")));
  }
  if (sources === 0) errors.push(required(path, "must specify a volume type"));
  return errors;
}

/** ValidateVolumes: named (DNS label), unique, exactly one source each; returns the usable names. */
function validateVolumes(volumes: unknown, path: string): { names: Set<string>; errors: FieldError[] } {
  const errors: FieldError[] = [];
  const names = new Set<string>();
  arr(volumes).forEach((entry, i) => {
    const volume = obj(entry) ?? {};
    const at = indexPath(path, i);
    const name = str(volume.name);
    const volumeErrors = validateVolumeSource(volume, at);
    if (name === "") volumeErrors.push(required(childPath(at, "name")));
    else for (const m of isDNS1123Label(name)) volumeErrors.push(invalid(childPath(at, "name"), name, m));
    if (names.has(name)) volumeErrors.push(duplicate(childPath(at, "name"), name));
    // A broken volume is not mountable: mounts that name it get "Not found" too, as upstream.
    if (volumeErrors.length === 0) names.add(name);
    else errors.push(...volumeErrors);
  });
  return { names, errors };
}
// #endregion volumes

// #region scheduling-fields
const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/** ValidateTolerations: empty key only with Exists; tolerationSeconds only for NoExecute. */
export function validateTolerations(tolerations: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  arr(tolerations).forEach((entry, i) => {
    const t = obj(entry) ?? {};
    const at = indexPath(path, i);
    const key = str(t.key);
    const operator = str(t.operator);
    const value = str(t.value);
    const effect = str(t.effect);
    if (key.length > 0) errors.push(...validateLabelName(key, childPath(at, "key")));
    if (key.length === 0 && operator !== "Exists") {
      errors.push(
        invalid(
          childPath(at, "operator"),
          operator,
          'operator must be Exists when `key` is empty, which means "match all values and all keys"',
        ),
      );
    }
    if (isSet(t.tolerationSeconds) && effect !== "NoExecute") {
      errors.push(
        invalid(
          childPath(at, "effect"),
          effect,
          "effect must be 'NoExecute' when `tolerationSeconds` is set",
        ),
      );
    }
    switch (operator) {
      case "Equal":
      case "": {
        const messages = isValidLabelValue(value);
        if (messages.length > 0) errors.push(invalid(childPath(at, "operator"), value, messages.join(";")));
        break;
      }
      case "Exists":
        if (value.length > 0) {
          errors.push(
            invalid(childPath(at, "operator"), value, "value must be empty when `operator` is 'Exists'"),
          );
        }
        break;
      default:
        errors.push(notSupported(childPath(at, "operator"), operator, ["Equal", "Exists"]));
    }
    if (effect.length > 0 && !TAINT_EFFECTS.includes(effect)) {
      errors.push(notSupported(childPath(at, "effect"), effect, TAINT_EFFECTS));
    }
  });
  return errors;
}

function validateNodeSelectorRequirement(requirement: JSONObject, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const values = arr(requirement.values).map(String);
  switch (requirement.operator) {
    case "In":
    case "NotIn":
      if (values.length === 0) {
        errors.push(
          required(childPath(path, "values"), "must be specified when `operator` is 'In' or 'NotIn'"),
        );
      }
      break;
    case "Exists":
    case "DoesNotExist":
      if (values.length > 0) {
        errors.push(
          forbidden(
            childPath(path, "values"),
            "may not be specified when `operator` is 'Exists' or 'DoesNotExist'",
          ),
        );
      }
      break;
    case "Gt":
    case "Lt":
      if (values.length !== 1) {
        errors.push(
          required(
            childPath(path, "values"),
            "must be specified single value when `operator` is 'Lt' or 'Gt'",
          ),
        );
      }
      break;
    default:
      errors.push(
        invalid(childPath(path, "operator"), str(requirement.operator), "not a valid selector operator"),
      );
  }
  errors.push(...validateLabelName(str(requirement.key), childPath(path, "key")));
  values.forEach((value, i) => {
    for (const m of isValidLabelValue(value))
      errors.push(invalid(indexPath(childPath(path, "values"), i), value, m));
  });
  return errors;
}

function validateNodeSelectorTerm(term: JSONObject, path: string): FieldError[] {
  const errors: FieldError[] = [];
  arr(term.matchExpressions).forEach((e, j) => {
    errors.push(
      ...validateNodeSelectorRequirement(obj(e) ?? {}, indexPath(childPath(path, "matchExpressions"), j)),
    );
  });
  arr(term.matchFields).forEach((e, j) => {
    const field = obj(e) ?? {};
    const at = indexPath(childPath(path, "matchFields"), j);
    const values = arr(field.values).map(String);
    if (field.operator === "In" || field.operator === "NotIn") {
      if (values.length !== 1) {
        errors.push(
          required(
            childPath(at, "values"),
            "must be only one value when `operator` is 'In' or 'NotIn' for node field selector",
          ),
        );
      }
    } else {
      errors.push(invalid(childPath(at, "operator"), str(field.operator), "not a valid selector operator"));
    }
    if (field.key !== "metadata.name")
      errors.push(invalid(childPath(at, "key"), str(field.key), "not a valid field selector key"));
    else {
      values.forEach((v, i) => {
        for (const m of nameIsDNSSubdomain(v, false))
          errors.push(invalid(indexPath(childPath(at, "values"), i), v, m));
      });
    }
  });
  return errors;
}

function validatePodAffinityTerm(term: JSONObject, path: string): FieldError[] {
  const errors = validateLabelSelector(term.labelSelector, childPath(path, "labelSelector"));
  errors.push(...validateLabelSelector(term.namespaceSelector, childPath(path, "namespaceSelector")));
  for (const namespace of arr(term.namespaces).map(String)) {
    for (const m of nameIsDNSLabel(namespace, false))
      errors.push(invalid(childPath(path, "namespace"), namespace, m));
  }
  const topologyKey = str(term.topologyKey);
  if (topologyKey === "") errors.push(required(childPath(path, "topologyKey"), "can not be empty"));
  errors.push(...validateLabelName(topologyKey, childPath(path, "topologyKey")));
  return errors;
}

function validatePodAffinityTerms(terms: unknown, weighted: boolean, path: string): FieldError[] {
  const errors: FieldError[] = [];
  arr(terms).forEach((entry, i) => {
    const term = obj(entry) ?? {};
    const at = indexPath(path, i);
    if (!weighted) {
      errors.push(...validatePodAffinityTerm(term, at));
      return;
    }
    const weight = num(term.weight);
    if (weight <= 0 || weight > 100)
      errors.push(invalid(childPath(at, "weight"), weight, "must be in the range 1-100"));
    errors.push(
      ...validatePodAffinityTerm(obj(term.podAffinityTerm) ?? {}, childPath(at, "podAffinityTerm")),
    );
  });
  return errors;
}

function validateAffinity(affinity: unknown, path: string): FieldError[] {
  const a = obj(affinity);
  if (!a) return [];
  const errors: FieldError[] = [];
  const nodeAffinity = obj(a.nodeAffinity);
  if (nodeAffinity) {
    const at = childPath(path, "nodeAffinity");
    const requiredTerms = obj(nodeAffinity.requiredDuringSchedulingIgnoredDuringExecution);
    if (requiredTerms) {
      const termsPath = childPath(at, "requiredDuringSchedulingIgnoredDuringExecution", "nodeSelectorTerms");
      const terms = arr(requiredTerms.nodeSelectorTerms);
      if (terms.length === 0) errors.push(required(termsPath, "must have at least one node selector term"));
      terms.forEach((t, i) => {
        errors.push(...validateNodeSelectorTerm(obj(t) ?? {}, indexPath(termsPath, i)));
      });
    }
    arr(nodeAffinity.preferredDuringSchedulingIgnoredDuringExecution).forEach((entry, i) => {
      const term = obj(entry) ?? {};
      const termPath = indexPath(childPath(at, "preferredDuringSchedulingIgnoredDuringExecution"), i);
      const weight = num(term.weight);
      if (weight <= 0 || weight > 100)
        errors.push(invalid(childPath(termPath, "weight"), weight, "must be in the range 1-100"));
      // Upstream validates preferred terms with invalid label values allowed.
      errors.push(
        ...validateNodeSelectorTerm(obj(term.preference) ?? {}, childPath(termPath, "preference")).filter(
          (e) => !e.field.includes(".values["),
        ),
      );
    });
  }
  for (const kind of ["podAffinity", "podAntiAffinity"]) {
    const podAffinity = obj(a[kind]);
    if (!podAffinity) continue;
    const at = childPath(path, kind);
    errors.push(
      ...validatePodAffinityTerms(
        podAffinity.requiredDuringSchedulingIgnoredDuringExecution,
        false,
        childPath(at, "requiredDuringSchedulingIgnoredDuringExecution"),
      ),
    );
    errors.push(
      ...validatePodAffinityTerms(
        podAffinity.preferredDuringSchedulingIgnoredDuringExecution,
        true,
        childPath(at, "preferredDuringSchedulingIgnoredDuringExecution"),
      ),
    );
  }
  return errors;
}
// #endregion scheduling-fields

// #region validate-pod-spec
const RESTART_POLICIES = ["Always", "OnFailure", "Never"];
const DNS_POLICIES = ["ClusterFirstWithHostNet", "ClusterFirst", "Default", "None"];
const PREEMPTION_POLICIES = ["PreemptLowerPriority", "Never"];

/** ValidatePodSpec: everything inside `spec` of a Pod or of a pod template. */
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
  // Only real pods: a template's image may still be a placeholder that a tool fills in.
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

/** ValidatePodCreate. */
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

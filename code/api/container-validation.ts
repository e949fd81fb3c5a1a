/**
 * Container validation — what every container of a pod must satisfy (a name, an image, ports, env,
 * volume mounts, a pull policy, resources), and the rules that span the `containers` and
 * `initContainers` lists: unique names, no two containers on one host port, probes and hooks only
 * where something runs long enough to probe. Upstream does the same in
 * pkg/apis/core/validation/validation.go (validateContainers, validateInitContainers).
 *
 * Solves:
 * - a container the kubelet could never start (no image, two ports named alike, a mount of a
 *   volume the pod does not have) is refused when the pod is written, not found on the node;
 * - init containers run one at a time to completion, except sidecars (`restartPolicy: Always`),
 *   which keep running: only sidecars may have probes and lifecycle hooks.
 *
 * Invariants:
 * - a container name is unique across `containers` and `initContainers`;
 * - every volume mount names a volume that validated cleanly (see volume-validation.ts).
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (validateContainers, validateInitContainers, validateContainerCommon, validateContainerPorts, ValidateVolumeMounts, validatePullPolicy, checkHostPortConflicts)
 * @chapter 02-apiserver
 */

import { validateEnv } from "./env-validation.ts";
import {
  childPath,
  duplicate,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  notFound,
  notSupported,
  required,
} from "./field-errors.ts";
import { arr, isSet, type JSONObject, num, obj, str } from "./json.ts";
import { validateLifecycle, validateProbes } from "./probe-validation.ts";
import { validateResourceRequirements } from "./resource-validation.ts";
import { isDNS1123Label, isValidPortName, isValidPortNum } from "./string-validation.ts";

/** Sorted, as upstream's message lists them (sets.List of supportedPortProtocols). */
const SUPPORTED_PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"];

/**
 * validateContainerPorts: a port name is what a Service's `targetPort` or a probe's `port` refers
 * to, so it must be unique in the container; `protocol` is always set after defaulting (TCP).
 */
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

/**
 * ValidateVolumeMounts: every mount names a volume the pod has (and that validated cleanly), and
 * no two mounts share a path — the kubelet could not honour both.
 */
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

/** Sorted, as upstream's message lists them (sets.List of supportedPullPolicies). */
const PULL_POLICIES = ["Always", "IfNotPresent", "Never"];

function validatePullPolicy(policy: unknown, path: string): FieldError[] {
  const p = str(policy);
  if (p === "") return [required(path)];
  return PULL_POLICIES.includes(p) ? [] : [notSupported(path, p, PULL_POLICIES)];
}

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
function checkHostPortConflicts(containers: unknown[], path: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Set<string>();
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

/**
 * validateContainers: at least one container, names unique, host ports free. Regular containers
 * run for the pod's whole life, so they may have probes and hooks; `restartPolicy` per container
 * exists only to mark init containers as sidecars.
 */
export function validateContainers(
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

/**
 * validateInitContainers: names unique across both lists (`kubectl logs -c` and the kubelet's
 * status both find a container by name alone). An init container with `restartPolicy: Always` is a
 * sidecar — it keeps running beside the regular containers, so it may have probes and hooks;
 * a plain one runs to completion before the next starts.
 */
export function validateInitContainers(
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

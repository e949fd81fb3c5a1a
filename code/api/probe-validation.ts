/**
 * Probe and lifecycle-hook validation — a container's `livenessProbe`, `readinessProbe`,
 * `startupProbe` and `lifecycle.postStart`/`preStop`: exactly one handler each (exec, HTTP GET,
 * TCP socket, gRPC, or sleep for hooks), with ports and thresholds the kubelet can use. Upstream
 * does the same in pkg/apis/core/validation/validation.go (validateProbe, validateLifecycle).
 *
 * Solves:
 * - the kubelet's prober (chapter 7) runs whatever handler it finds: a probe with two handlers
 *   or none is refused here, so there is never a question which one counts.
 *
 * Invariants:
 * - liveness and startup probes have `successThreshold` 1 (one success means "alive", "started");
 * - a sleep hook never outlasts the pod's grace period.
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (validateProbe, validateHandler, validateLifecycle, validateSleepAction, validateHTTPGetAction, ValidatePortNumOrName)
 * @chapter 02-apiserver
 */

import { childPath, type FieldError, forbidden, invalid, notSupported, required } from "./field-errors.ts";
import { arr, isSet, type JSONObject, num, obj, str } from "./json.ts";
import { validateNonnegativeField } from "./object-meta-validation.ts";
import { isHTTPHeaderName, isValidPortName, isValidPortNum } from "./string-validation.ts";

/** Sorted, as upstream's message lists them (supportedHTTPSchemes). */
const HTTP_SCHEMES = ["HTTP", "HTTPS"];

/** ValidatePortNumOrName: an IntOrString — a port number, or the name of one of the container's ports. */
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

/**
 * validateProbe: one handler and non-negative timings. A probe's own
 * `terminationGracePeriodSeconds` replaces the pod's when the kubelet kills a container that failed
 * it, so it must be positive.
 */
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
export function validateProbes(
  container: JSONObject,
  path: string,
  gracePeriod: number | undefined,
): FieldError[] {
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

/** validateLifecycle: `postStart` and `preStop` hooks, each with exactly one handler. */
export function validateLifecycle(
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

/**
 * Resource validation — a container's `resources`: which resource names a container may ask for,
 * quantities that parse and are not negative, requests no larger than limits, and request = limit
 * for what cannot be overcommitted. Upstream does the same in
 * pkg/apis/core/validation/validation.go (ValidateResourceRequirements).
 *
 * Solves:
 * - the scheduler adds up requests and the kubelet enforces limits: a quantity neither can read,
 *   or a request above its limit, would stop them later, so it is refused when the pod is written;
 * - core-validation.ts checks a node's capacity and a quota's amounts with the same quantity rules.
 *
 * Invariants:
 * - quantities are compared by value (`1Gi` = `1024Mi`) and printed in messages as the client
 *   wrote them; our `quantityValue` is a float, where upstream's resource.Quantity is exact.
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidateResourceRequirements, validateContainerResourceName, ValidateResourceQuantityValue)
 * @upstream kubernetes/kubernetes pkg/apis/core/helper/helpers.go (IsStandardResourceName, IsStandardContainerResourceName, IsOvercommitAllowed)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go (ParseQuantity)
 * @chapter 02-apiserver
 */

import { childPath, type FieldError, invalid, keyPath, required } from "./field-errors.ts";
import { obj, str } from "./json.ts";
import { IS_NEGATIVE_ERROR_MSG } from "./object-meta-validation.ts";
import { isQualifiedName } from "./string-validation.ts";

/**
 * A quantity is a number and a suffix: decimal SI (`k`, `M`, `G`, … and `m` for milli), binary
 * (`Ki`, `Mi`, `Gi`, …) or an exponent (`1e3`). The regular expression is upstream's, word for word,
 * because its text is part of the error message below.
 */
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

/**
 * A name without a `/` must be one Kubernetes defines, and one that makes sense per container
 * (`pods` is a quota, not something a container consumes); a name with one is an extended resource
 * (`example.com/gpu`), where `requests.` is reserved for quotas.
 */
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

/** ValidateResourceQuantityValue: parses, is not negative, and is whole for an extended resource (half a GPU is no GPU). */
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

/**
 * ValidateResourceRequirements: each name and quantity, then each request against its limit. A
 * request without a limit is fine (the limit is then the node's capacity), except for resources
 * that cannot be overcommitted.
 */
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

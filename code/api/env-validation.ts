/**
 * Environment variable validation — a container's `env`: each variable named, and at most one
 * source for its value (a literal, a field of the pod, a resource, a ConfigMap or Secret key).
 * Upstream does the same in pkg/apis/core/validation/validation.go (ValidateEnv).
 *
 * Solves:
 * - a `fieldRef` may read only the pod fields the kubelet can fill in when it starts the
 *   container (the downward API); anything else is refused here, in upstream's words, instead of
 *   starting a container with an empty variable.
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidateEnv, validateEnvVarValueFrom, validateObjectFieldSelector, validateConfigMapKeySelector, validateSecretKeySelector)
 * @upstream kubernetes/kubernetes pkg/apis/core/pods/helpers.go (ConvertDownwardAPIFieldLabel)
 * @chapter 02-apiserver
 */

import { childPath, type FieldError, indexPath, invalid, notSupported, required } from "./field-errors.ts";
import { arr, type JSONObject, obj, str } from "./json.ts";
import { isConfigMapKey, isEnvVarName, isQualifiedName, nameIsDNSSubdomain } from "./string-validation.ts";

/** The downward-API fields an env var may read (validEnvDownwardAPIFieldPathExpressions), sorted as the message lists them. */
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

/**
 * validateObjectFieldSelector, in upstream's two steps: first the field label must convert for the
 * pod's API version (else "error converting fieldPath: …"), then it must be one an env var may
 * read. A single label or annotation (`metadata.labels['app']`) passes when its key is a valid name;
 * `spec.host` is the old spelling of `spec.nodeName`.
 */
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

/** A `configMapKeyRef` or `secretKeyRef`: the object's name and a key it could hold. */
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

/**
 * Decoding a patched object — what upstream's patch handler does after applying a patch: the
 * result is decoded into the kind's Go struct, so a patch cannot store what a create could not
 * (`kubectl patch pod web -p '{"spec":{"activeDeadlineSeconds":"soon"}}'`), and field validation
 * applies to patches as to bodies.
 *
 * Solves:
 * - JSON patch, merge patch and strategic merge patch: a wrongly typed value, or (under
 *   fieldValidation=Strict) an unknown or duplicate field, is a 422 in upstream's form: `patch:
 *   Invalid value: "<the patched object, or the patch map>": strict decoding error: unknown
 *   field "spec.foo"` — what kubectl prints as `The request is invalid: …`; under Warn each one
 *   is a warning and the field is dropped;
 * - server-side apply: the configuration is checked against the schema first
 *   (typed-patch-object.ts) — unknown fields, wrong types, duplicate keys — then duplicate YAML
 *   keys are field validation's business (`error strict decoding YAML: …`), and the merged
 *   object is decoded with full types (a bad quantity is refused there).
 *
 * Invariants:
 * - every outcome is a Status error or warnings; the object handed on is the decoded one (unknown
 *   fields dropped, as decoding into a Go struct drops them);
 * - duplicate keys are found in the patch body itself, before JSON.parse forgets them.
 *
 * What upstream does differently: where upstream's decode of a merged apply object fails it
 * answers 500 (`failed to convert new object …`); we answer 400 BadRequest with the decode error.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (jsonPatcher.applyPatchToCurrentObject, applyJSPatch, strategicPatchObject, applyPatchToObject, applyPatcher.applyPatchToCurrentObject)
 * @chapter 02-apiserver
 */
import { invalid } from "../../api/field-errors.ts";
import type { KubeObject } from "../../api/meta.ts";
import { newBadRequest, newInvalid } from "../errors.ts";
import { patchTypes } from "../patch/patch-options.ts";
import { messageFor } from "../protobuf/registry.ts";
import { duplicateFields, JSONSyntaxError, parseJSONTree } from "./json-tree.ts";
import {
  type GroupVersionKind,
  newStrictDecodingError,
  unmarshalObject,
  yamlDuplicateKeys,
} from "./serializer.ts";
import { objectGVKNN, typedPatchErrors, validationErrorsText } from "./typed-patch-object.ts";

/** Whether the directive asks for strict errors at all (Strict or Warn, the default). */
const wantsStrict = (directive: string | null) => directive !== "Ignore";

// #region patch-strict-errors
/**
 * The strict errors of the patch body itself: its duplicate keys, as upstream's
 * kjson.UnmarshalStrict (JSON patch ops are named `json patch duplicate field "[0].op"`).
 */
export function patchBodyStrictErrors(body: Buffer, patchType: string, directive: string | null): string[] {
  if (!wantsStrict(directive) || patchType === patchTypes.apply) return [];
  let dups: string[];
  try {
    dups = duplicateFields(parseJSONTree(body.toString("utf8")));
  } catch (e) {
    if (e instanceof JSONSyntaxError) return []; // the patch's own parse reports it
    throw e;
  }
  return patchType === patchTypes.json ? dups.map((d) => `json patch ${d}`) : dups;
}
// #endregion patch-strict-errors

// #region decode-patched
/**
 * The patched object, decoded as `expected`'s kind. Throws 422 Invalid (field `patch`) for a
 * decode error, or for strict errors under Strict; under Warn, pushes them to `warnings`.
 */
export function decodePatchedObject(
  patched: KubeObject,
  opts: {
    patchType: string;
    patch: unknown;
    expected: GroupVersionKind;
    directive: string | null;
    patchStrictErrors: readonly string[];
    warnings: string[];
  },
): KubeObject {
  const decoded = unmarshalObject(patched, opts.expected, wantsStrict(opts.directive));
  // Upstream shows the patched JSON for JSON and merge patches, the patch map (%+v) for strategic ones.
  const shown = () =>
    opts.patchType === patchTypes.strategic ? goMapText(opts.patch) : JSON.stringify(patched);
  const refuse = (detail: string) => newInvalid("", "", "", [invalid("patch", shown(), detail)]);
  if ("error" in decoded) throw refuse(decoded.error);
  const strictErrors = [...opts.patchStrictErrors, ...decoded.strictErrors];
  if (strictErrors.length > 0) {
    if (opts.directive === "Strict") throw refuse(newStrictDecodingError(strictErrors));
    opts.warnings.push(...strictErrors);
  }
  return decoded.obj;
}
// #endregion decode-patched

// #region typed-apply
/**
 * Server-side apply's checks around the merge: before it, the configuration against the schema
 * (400, upstream's `failed to create typed patch object` — a 500 upstream).
 */
export function checkApplyConfiguration(
  config: Record<string, unknown>,
  expected: GroupVersionKind,
  namespace: string,
  name: string,
): void {
  const message = messageFor(expected.apiVersion, expected.kind);
  if (!message) return;
  const errors = typedPatchErrors(config, message);
  if (errors.length === 0) return;
  const meta = (config.metadata ?? {}) as { name?: unknown; namespace?: unknown };
  const ns = typeof meta.namespace === "string" ? meta.namespace : namespace;
  const n = typeof meta.name === "string" ? meta.name : name;
  throw newBadRequest(
    `failed to create typed patch object (${objectGVKNN(ns, n, expected.apiVersion, expected.kind)}): ${validationErrorsText(errors)}`,
  );
}

/**
 * After the merge: the applied object decoded with full types (a quantity that does not parse,
 * an int out of range), then field validation of the apply body's duplicate keys.
 */
export function decodeAppliedObject(
  applied: KubeObject,
  body: string,
  expected: GroupVersionKind,
  where: { namespace: string; name: string; directive: string | null; warnings: string[] },
): KubeObject {
  const { directive, warnings } = where;
  const decoded = unmarshalObject(applied, expected, false);
  if ("error" in decoded) {
    const meta = applied.metadata ?? {};
    const gvknn = objectGVKNN(
      meta.namespace || where.namespace,
      meta.name || where.name,
      expected.apiVersion,
      expected.kind,
    );
    throw newBadRequest(`failed to convert new object (${gvknn}) to proper version: ${decoded.error}`);
  }
  if (wantsStrict(directive)) {
    const dups = yamlDuplicateKeys(body);
    if (dups) {
      const err = `error converting YAML to JSON: ${dups}`;
      if (directive === "Strict") throw newBadRequest(`error strict decoding YAML: ${err}`);
      warnings.push(err);
    }
  }
  return decoded.obj;
}
// #endregion typed-apply

/** Go's %+v of a map[string]interface{} from JSON: `map[spec:map[replicas:3]]`, keys sorted. */
export function goMapText(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (Array.isArray(v)) return `[${v.map(goMapText).join(" ")}]`;
  if (typeof v === "object") {
    const o = v as Record<string, unknown>;
    return `map[${Object.keys(o)
      .sort()
      .map((k) => `${k}:${goMapText(o[k])}`)
      .join(" ")}]`;
  }
  return String(v);
}

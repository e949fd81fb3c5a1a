/**
 * The typed patch object — a server-side apply configuration checked against its kind's schema
 * before it is merged, as structured-merge-diff checks it when the field manager converts it to a
 * typed value (`failed to create typed patch object (default/web; /v1, Kind=Pod): .spec.foo:
 * field not declared in schema`).
 * Mirrors upstream's kubernetes-sigs/structured-merge-diff typed/validate.go.
 *
 * Solves:
 * - an apply body is read as untyped YAML, so nothing else refuses `spec.foo` or
 *   `replicas: "three"`: without this check the unknown field is stored and the string kept;
 * - a list merged by key (containers by name) cannot hold two items with the same key: the
 *   merge would not know which one the applier owns (`duplicate entries for key [name="c"]`).
 *
 * Invariants:
 * - the schema is the .proto description (protobuf/registry.ts), as for every other decode; an
 *   embedded (inline) struct's fields belong to the outer object;
 * - paths are structured-merge-diff's: `.spec.containers[name="c"].image` for a list merged by
 *   key, `[0]` for any other list, `.key` for a map entry;
 * - Quantity, IntOrString, FieldsV1 and RawExtension are untyped here (any value); the merged
 *   object is decoded with full types afterwards (patched-object.ts), which refuses a bad quantity;
 * - recursion follows the schema; an unknown field is reported, never descended into.
 *
 * What upstream does differently: this error reaches the client as a 500 InternalError, because
 * structuredmerge.go returns it as a plain error (kubernetes/kubernetes#122480, #139253, open);
 * a client's mistake is a 400 BadRequest here, with upstream's words. Upstream keys container
 * ports by containerPort and protocol; our schema knows one merge key per list.
 *
 * @upstream kubernetes-sigs/structured-merge-diff typed/validate.go (validatingObjectWalker: field not declared in schema, expected numeric/string/boolean, duplicate entries for key)
 * @upstream kubernetes-sigs/structured-merge-diff typed/helpers.go (expected map, expected list)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/managedfields/internal/structuredmerge.go (structuredMergeManager.Apply, objectGVKNN)
 * @chapter 02-apiserver
 */
import protobuf from "protobufjs";
import {
  FIELDS_V1,
  fullNameOf,
  goShape,
  INT_OR_STRING,
  QUANTITY,
  RAW_EXTENSION,
} from "../protobuf/registry.ts";

const untyped = new Set([QUANTITY, INT_OR_STRING, FIELDS_V1, RAW_EXTENSION]);

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

/** Go's %T of a value decoded from JSON into interface{}. */
function goTypeName(v: unknown): string {
  if (typeof v === "string") return "string";
  if (typeof v === "boolean") return "bool";
  if (typeof v === "number") return Number.isInteger(v) ? "int64" : "float64";
  if (Array.isArray(v)) return "[]interface {}";
  return "map[string]interface {}";
}

/** Go's %v of a value from JSON (`map[a:1]`, `[x y]`, `<nil>`). */
function goV(v: unknown): string {
  if (v === null || v === undefined) return "<nil>";
  if (Array.isArray(v)) return `[${v.map(goV).join(" ")}]`;
  if (isMap(v))
    return `map[${Object.keys(v)
      .sort()
      .map((k) => `${k}:${goV(v[k])}`)
      .join(" ")}]`;
  return String(v);
}

/** Go's %#v of the same (`"x"`, `5`, `map[string]interface {}{"a":1}`). */
function goSharpV(v: unknown): string {
  if (typeof v === "string") return JSON.stringify(v);
  if (v === null) return "interface {}(nil)";
  if (Array.isArray(v)) return `[]interface {}{${v.map(goSharpV).join(", ")}}`;
  if (isMap(v))
    return `map[string]interface {}{${Object.keys(v)
      .sort()
      .map((k) => `${JSON.stringify(k)}:${goSharpV(v[k])}`)
      .join(", ")}}`;
  return String(v);
}

/** A value.Value as %v prints the pointer to its unstructured holder: `&{5}`. */
const valueV = (v: unknown) => `&{${goV(v)}}`;

function fieldsOf(t: protobuf.Type): Map<string, protobuf.Field> {
  const out = new Map<string, protobuf.Field>();
  const inline: protobuf.Type[] = [];
  for (const f of t.fieldsArray) {
    if (goShape(f).inline && f.resolvedType instanceof protobuf.Type) inline.push(f.resolvedType);
    else out.set(f.name, f);
  }
  for (const sub of inline) for (const [k, f] of fieldsOf(sub)) if (!out.has(k)) out.set(k, f);
  return out;
}

/** A list item's key, as structured-merge-diff prints a key path element: `[name="c"]`. */
function keyElement(key: string, item: unknown): string | undefined {
  if (!isMap(item) || item[key] === undefined || item[key] === null) return undefined;
  return `[${key}=${JSON.stringify(item[key])}]`;
}

// #region validate
/**
 * The errors structured-merge-diff reports for `obj` as a `t` (TypeMeta's apiVersion and kind
 * are known too), each `<path>: <message>`; empty when the configuration fits the schema.
 */
export function typedPatchErrors(obj: Record<string, unknown>, t: protobuf.Type): string[] {
  const errors: string[] = [];
  const scalar = (v: unknown, protoType: string, path: string) => {
    if (v === null) return;
    if (protoType === "string" || protoType === "bytes") {
      if (typeof v !== "string")
        errors.push(`${path}: expected string, got &value.valueUnstructured{Value:${goSharpV(v)}}`);
    } else if (protoType === "bool") {
      if (typeof v !== "boolean") errors.push(`${path}: expected boolean, got ${valueV(v)}`);
    } else if (typeof v !== "number") {
      errors.push(`${path}: expected numeric (int or float), got ${goTypeName(v)}`);
    }
  };
  const element = (v: unknown, field: protobuf.Field, path: string) => {
    const sub = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    if (!sub) return scalar(v, field.type, path);
    const name = fullNameOf(sub);
    if (untyped.has(name)) return;
    if (sub.name === "Time" || sub.name === "MicroTime") return scalar(v, "string", path);
    struct(v, sub, path);
  };
  const struct = (v: unknown, type: protobuf.Type, path: string, extra: readonly string[] = []) => {
    if (v === null) return;
    if (!isMap(v)) {
      errors.push(`${path}: expected map, got ${valueV(v)}`);
      return;
    }
    const fields = fieldsOf(type);
    for (const [k, child] of Object.entries(v)) {
      const p = `${path}.${k}`;
      const field = fields.get(k);
      if (!field) {
        if (extra.includes(k)) scalar(child, "string", p);
        else errors.push(`${p}: field not declared in schema`);
        continue;
      }
      if (child === null) continue;
      const shape = goShape(field);
      if (field.map) {
        if (!isMap(child)) errors.push(`${p}: expected map, got ${valueV(child)}`);
        else for (const [key, item] of Object.entries(child)) element(item, field, `${p}.${key}`);
      } else if (field.repeated) {
        if (!Array.isArray(child)) {
          errors.push(`${p}: expected list, got ${valueV(child)}`);
          continue;
        }
        const keyed =
          shape.mergeKey && field.resolvedType instanceof protobuf.Type ? shape.mergeKey : undefined;
        const seen = new Set<string>();
        child.forEach((item, i) => {
          let pe = `[${i}]`;
          if (keyed) {
            const key = keyElement(keyed, item);
            if (!key) {
              errors.push(
                `${p}: element ${i}: associative list with keys has an element that omits key field "${keyed}"`,
              );
              return;
            }
            if (seen.has(key)) errors.push(`${p}: duplicate entries for key ${key}`);
            seen.add(key);
            pe = key;
          }
          element(item, field, `${p}${pe}`);
        });
      } else element(child, field, p);
    }
  };
  struct(obj, t, "", ["apiVersion", "kind"]);
  return errors;
}
// #endregion validate

/** structured-merge-diff's ValidationErrors.Error(): one error as it is, several as a list. */
export function validationErrorsText(errors: readonly string[]): string {
  if (errors.length === 1) return errors[0];
  return ["errors:", ...errors.map((e) => `  ${e}`)].join("\n");
}

/** objectGVKNN: `default/web; /v1, Kind=Pod` (schema.GroupVersionKind's String()). */
export function objectGVKNN(namespace: string, name: string, apiVersion: string, kind: string): string {
  const gv = apiVersion.includes("/") ? apiVersion : `/${apiVersion}`;
  return `${namespace}/${name}; ${gv}, Kind=${kind}`;
}

/**
 * Field validation — what the server does with fields it does not know: `?fieldValidation=`
 * Strict (refuse with 400), Warn (accept, and say so in a `Warning` header; the default) or
 * Ignore (drop silently). Upstream decides it in k8s.io/apiserver's handlers/rest.go
 * (fieldValidation) and finds the fields while decoding, with apimachinery's strict JSON decoder.
 *
 * Solves: `spec.containers[0].imagePullPolicy` misspelt `imagePulPolicy` would otherwise be
 * dropped without a word and the pod run with the default; kubectl sends
 * `fieldValidation=Strict` so the user sees `strict decoding error: unknown field …`.
 *
 * Invariants: the check reads the decoded body before defaulting (defaults are known fields).
 *
 * How: the object is walked against its kind's schema in the OpenAPI v3 document the server
 * publishes (openapi.ts), at any depth (`spec.containers[0].imagePulPolicy`). A kind without a
 * schema there (Binding, Scale) or with an open one (Node, Event, Endpoints: no .proto yet) is
 * checked at its top level and in `metadata`, from the tables below.
 *
 * Kinds with a .proto message are decoded with their types (decoding/serializer.ts), which
 * reports unknown and duplicate fields while decoding, as upstream's strict decoder does; this
 * walk then finds nothing left. It still checks the kinds without one (Node, Event, Endpoints),
 * where duplicate keys go unreported.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go (fieldValidation, strict decoding)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/serializer/json/json.go (strict decoding errors: unknown field)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { newBadRequest } from "../errors.ts";
import { openAPIDocument } from "../openapi.ts";

const objectMetaFields = new Set([
  "name",
  "generateName",
  "namespace",
  "selfLink",
  "uid",
  "resourceVersion",
  "generation",
  "creationTimestamp",
  "deletionTimestamp",
  "deletionGracePeriodSeconds",
  "labels",
  "annotations",
  "ownerReferences",
  "finalizers",
  "managedFields",
]);

const common = ["apiVersion", "kind", "metadata"];
const specStatus = [...common, "spec", "status"];
/** The top-level fields of each kind (from the kinds' Go types). */
const topLevelFields: Record<string, Set<string>> = {
  Pod: new Set(specStatus),
  Node: new Set(specStatus),
  Namespace: new Set(specStatus),
  Service: new Set(specStatus),
  ReplicaSet: new Set(specStatus),
  Deployment: new Set(specStatus),
  Scale: new Set(specStatus),
  Lease: new Set([...common, "spec"]),
  Binding: new Set([...common, "target"]),
  Endpoints: new Set([...common, "subsets"]),
  ConfigMap: new Set([...common, "data", "binaryData", "immutable"]),
  Secret: new Set([...common, "data", "stringData", "type", "immutable"]),
  ServiceAccount: new Set([...common, "secrets", "imagePullSecrets", "automountServiceAccountToken"]),
  PriorityClass: new Set([...common, "value", "globalDefault", "description", "preemptionPolicy"]),
  Event: new Set([
    ...common,
    "involvedObject",
    "reason",
    "message",
    "source",
    "firstTimestamp",
    "lastTimestamp",
    "count",
    "type",
    "eventTime",
    "series",
    "action",
    "related",
    "reportingComponent",
    "reportingInstance",
  ]),
};

// #region unknown-fields
/** One unknown field: where it is (for the message) and how to remove it. */
interface UnknownField {
  path: string;
  parent: Record<string, unknown>;
  key: string;
}

interface Schema {
  type?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  allOf?: Schema[];
  $ref?: string;
}

type Schemas = Record<string, Schema>;
const documents = new Map<string, Schemas | null>();

/** The schemas of one group version's OpenAPI document (cached; null when none is published). */
function schemasOf(apiVersion: string): Schemas | null {
  let schemas = documents.get(apiVersion);
  if (schemas === undefined) {
    const [group, version] = apiVersion.includes("/") ? apiVersion.split("/") : ["", apiVersion];
    try {
      const doc = openAPIDocument(group, version) as { components?: { schemas?: Schemas } };
      schemas = doc.components?.schemas ?? null;
    } catch {
      schemas = null;
    }
    documents.set(apiVersion, schemas);
  }
  return schemas;
}

function resolve(schema: Schema, schemas: Schemas): Schema {
  let s = schema;
  for (let i = 0; i < 10; i++) {
    const ref = s.$ref ?? s.allOf?.[0]?.$ref;
    if (!ref) return s;
    s = schemas[ref.slice(ref.lastIndexOf("/") + 1)] ?? {};
  }
  return s;
}

const isMap = (v: unknown): v is Record<string, unknown> =>
  v !== null && typeof v === "object" && !Array.isArray(v);

function walk(value: unknown, schema: Schema, path: string, schemas: Schemas, out: UnknownField[]): void {
  const s = resolve(schema, schemas);
  if (Array.isArray(value)) {
    const items = s.items;
    if (items)
      value.forEach((v, i) => {
        walk(v, items, `${path}[${i}]`, schemas, out);
      });
    return;
  }
  if (!isMap(value)) return;
  const extra = typeof s.additionalProperties === "object" ? s.additionalProperties : undefined;
  if (!s.properties) {
    // A map (labels, data) or a free-form object (FieldsV1, RawExtension): no names to check.
    if (extra) for (const [k, v] of Object.entries(value)) walk(v, extra, `${path}.${k}`, schemas, out);
    return;
  }
  for (const [k, v] of Object.entries(value)) {
    const field = path ? `${path}.${k}` : k;
    const sub = s.properties[k] ?? extra;
    if (sub) walk(v, sub, field, schemas, out);
    else if (s.additionalProperties !== true) out.push({ path: field, parent: value, key: k });
  }
}

/** The unknown fields of an object, as upstream names them (`spec.foo`, `spec.containers[0].bar`). */
export function unknownFields(obj: KubeObject): UnknownField[] {
  const schemas = schemasOf(obj.apiVersion ?? "");
  const suffix = `.${(obj.apiVersion ?? "").split("/").pop()}.${obj.kind}`;
  const name = schemas ? Object.keys(schemas).find((n) => n.endsWith(suffix)) : undefined;
  const schema = schemas && name ? schemas[name] : undefined;
  const out: UnknownField[] = [];
  // A kind we hold no .proto for (Node, Event, Endpoints) is published as an open object: its
  // schema names no field, so it is checked from the tables instead.
  if (schemas && schema?.properties) {
    walk(obj, schema, "", schemas, out);
    return out;
  }
  const known = topLevelFields[obj.kind ?? ""];
  if (known) for (const k of Object.keys(obj)) if (!known.has(k)) out.push({ path: k, parent: obj, key: k });
  if (isMap(obj.metadata)) {
    for (const k of Object.keys(obj.metadata)) {
      if (!objectMetaFields.has(k)) out.push({ path: `metadata.${k}`, parent: obj.metadata, key: k });
    }
  }
  return out;
}

/**
 * Applies the directive: throws 400 for Strict, returns the warnings for Warn (the default),
 * nothing for Ignore. Unknown fields are removed from the object in every case, as decoding
 * into a Go struct drops them.
 */
export function checkFieldValidation(
  directive: string | null,
  obj: KubeObject,
  namesChecked = false,
): string[] {
  const mode = directive ?? "Warn";
  if (!["Strict", "Warn", "Ignore", ""].includes(mode)) {
    throw newBadRequest(`fieldValidation must be one of "Ignore", "Warn", or "Strict", got "${mode}"`);
  }
  // A typed decode already dropped and reported every unknown name (negotiation.ts, namesChecked).
  if (namesChecked) return [];
  const unknown = unknownFields(obj);
  if (unknown.length === 0) return [];
  if (mode === "Strict") {
    throw newBadRequest(
      `strict decoding error: ${unknown.map((f) => `unknown field "${f.path}"`).join(", ")}`,
    );
  }
  for (const f of unknown) delete f.parent[f.key];
  return mode === "Ignore" ? [] : unknown.map((f) => `unknown field "${f.path}"`);
}
// #endregion unknown-fields

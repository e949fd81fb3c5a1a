/**
 * OpenAPI v3 — the schema documents kubectl downloads to validate, explain and patch objects:
 * /openapi/v3 (an index of group versions) and /openapi/v3/api/v1, /openapi/v3/apis/apps/v1, ….
 * Upstream: kube-openapi's handler3/handler.go serves them; the API server builds them from the
 * Go types and its routes (k8s.io/apiserver's endpoints/openapi/openapi.go).
 *
 * Solves:
 * - `kubectl apply` checks the PATCH operation of the object's kind for a `fieldValidation`
 *   query parameter: found, it leaves field validation to the server (`?fieldValidation=Strict`);
 *   not found, it validates on the client against the component schemas;
 * - `kubectl apply` computes its strategic merge patch from the same schemas: lists with
 *   `x-kubernetes-patch-merge-key` (containers by name, ports by containerPort) are merged
 *   element by element, not replaced;
 * - `kubectl explain pod.spec` walks the component schemas from the one whose
 *   `x-kubernetes-group-version-kind` names the kind.
 *
 * Invariants:
 * - the schemas are generated from our .proto files (protobuf/registry.ts), the same description
 *   the protobuf decoder reads: a field's type and Go shape are written once; its patch strategy
 *   must match patch-meta.ts, which the server's own strategic merge patch reads (a test checks);
 * - paths and operations are generated from the resource table, only for verbs it lists;
 * - the index's `serverRelativeURL` carries `?hash=` of the document it points to, so a client
 *   caching by URL refetches exactly when the document changes.
 *
 * @upstream kubernetes/kube-openapi pkg/handler3/handler.go (OpenAPIService: /openapi/v3 index, serverRelativeURL, hash)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/openapi/openapi.go (operation ids, x-kubernetes-action, x-kubernetes-group-version-kind)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cli-runtime/pkg/resource/query_param_verifier_v3.go (supportsQueryParamV3: PATCH op + fieldValidation)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/kubectl/pkg/cmd/apply/patcher.go (gvkSupportsPatchOpenAPIV3: strategic-merge-patch content)
 * @upstream kubernetes/kube-openapi pkg/generators/openapi.go (v3 oneOf for IntOrString and Quantity)
 * @chapter 02-apiserver
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import protobuf from "protobufjs";
import { serveOpenAPIV2 } from "./openapi-v2.ts";
import {
  FIELDS_V1,
  fullNameOf,
  goShape,
  INT_OR_STRING,
  MICRO_TIME,
  messageFor,
  metaV1,
  protoRoot,
  QUANTITY,
  RAW_EXTENSION,
  TIME,
} from "./protobuf/registry.ts";
import { apiVersionOf, type ResourceInfo, resources } from "./resources.ts";

type Schema = Record<string, unknown>;

/**
 * Schema names as upstream spells them: the Go package path with its domain reversed, then the
 * type (`io.k8s.api.core.v1.Pod`); our proto packages spell it `k8s.io.api.core.v1`.
 */
export function openAPIName(protoName: string): string {
  return protoName.replace(/^k8s\.io\./, "io.k8s.");
}

export function schemaName(t: protobuf.Type): string {
  return openAPIName(fullNameOf(t));
}

const ref = (name: string) => `#/components/schemas/${name}`;

// #region schema-from-proto
/** Scalars and the messages whose JSON is a string or number. */
function inlineSchema(protoType: string): Schema | undefined {
  switch (protoType) {
    case "string":
      return { type: "string" };
    case "bool":
      return { type: "boolean" };
    case "int32":
    case "uint32":
    case "sint32":
      return { type: "integer", format: "int32" };
    case "int64":
    case "uint64":
    case "sint64":
      return { type: "integer", format: "int64" };
    case "bytes":
      return { type: "string", format: "byte" };
    default:
      return undefined;
  }
}

/** The component schema of a message with its own JSON form (Time, IntOrString, Quantity, …). */
function specialSchema(protoName: string): Schema | undefined {
  switch (protoName) {
    case TIME:
      return {
        description: "Time is RFC 3339 in UTC, seconds precision.",
        type: "string",
        format: "date-time",
      };
    case MICRO_TIME:
      return {
        description: "MicroTime is RFC 3339 in UTC with microseconds.",
        type: "string",
        format: "date-time",
      };
    case INT_OR_STRING:
      // Upstream's v3 form (IntOrString.OpenAPIV3OneOfTypes): either JSON type, format kept.
      return {
        description: "A number or a string.",
        oneOf: [{ type: "integer" }, { type: "string" }],
        format: "int-or-string",
      };
    case QUANTITY:
      return {
        description: 'A fixed-point number with a suffix: "100m", "128Mi", "2".',
        oneOf: [{ type: "string" }, { type: "number" }],
      };
    case FIELDS_V1:
      return { description: "FieldsV1 is a set of fields as JSON (server-side apply).", type: "object" };
    case RAW_EXTENSION:
      return { description: "Any JSON object.", type: "object" };
    default:
      return undefined;
  }
}

/** A .proto comment is wrapped at 100 columns; its description is one paragraph (kubectl wraps it). */
const oneLine = (comment: string) => comment.replace(/\s*\n\s*/g, " ").trim();

/**
 * Adds the schema of `t` and of every message it reaches to `out`. Inline (embedded) messages
 * are flattened into the parent, as Go's JSON flattens them.
 */
export function collectSchemas(t: protobuf.Type, out: Record<string, Schema>): void {
  const name = schemaName(t);
  if (out[name]) return;
  const special = specialSchema(fullNameOf(t));
  if (special) {
    out[name] = special;
    return;
  }
  const schema: Schema = { type: "object" };
  out[name] = schema; // before recursing: PodTemplateSpec → PodSpec → … must not loop
  if (t.comment) schema.description = oneLine(t.comment);
  const properties: Record<string, Schema> = {};
  const required: string[] = [];
  addProperties(t, properties, required, out);
  schema.properties = properties;
  if (required.length) schema.required = required;
}

function addProperties(
  t: protobuf.Type,
  properties: Record<string, Schema>,
  required: string[],
  out: Record<string, Schema>,
) {
  for (const field of t.fieldsArray) {
    const shape = goShape(field);
    const sub = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    if (shape.inline && sub) {
      addProperties(sub, properties, required, out);
      continue;
    }
    if (sub) collectSchemas(sub, out);
    const element: Schema = sub
      ? { $ref: ref(schemaName(sub)) }
      : (inlineSchema(field.type) ?? { type: "object" });
    let p: Schema;
    if (field.map) p = { type: "object", additionalProperties: element };
    else if (field.repeated) p = { type: "array", items: element };
    else if (sub)
      p = { allOf: [element], ...(shape.ptr ? {} : { default: {} }) }; // upstream wraps refs
    else p = { ...element };
    if (field.comment) p.description = oneLine(field.comment);
    // Lists and unions alike (a Deployment's `strategy` is `retainKeys`): kubectl apply builds its
    // patch from these, so `$retainKeys` is sent only where the schema says so.
    if (!field.map && shape.patch) {
      p["x-kubernetes-patch-strategy"] = shape.patch;
      if (field.repeated && shape.mergeKey) {
        p["x-kubernetes-patch-merge-key"] = shape.mergeKey;
        p["x-kubernetes-list-type"] = "map";
        p["x-kubernetes-list-map-keys"] = [shape.mergeKey];
      }
    }
    properties[field.name] = p;
    if (shape.required) required.push(field.name);
  }
}

/** TypeMeta's two fields, which every kind and list carries. */
const typeMetaDescriptions = {
  apiVersion:
    "APIVersion defines the versioned schema of this representation of an object. Servers convert recognized schemas to the latest internal value, and may reject unrecognized values.",
  kind: "Kind is a string value representing the REST resource this object represents, in CamelCase. Servers may infer it from the endpoint the client submits requests to; it cannot be updated.",
};

/** The schema of a kind: its message plus apiVersion, kind and x-kubernetes-group-version-kind. */
function kindSchema(r: ResourceInfo, t: protobuf.Type, out: Record<string, Schema>): string {
  collectSchemas(t, out);
  const name = schemaName(t);
  const s = out[name];
  s.properties = {
    apiVersion: { type: "string", description: typeMetaDescriptions.apiVersion },
    kind: { type: "string", description: typeMetaDescriptions.kind },
    ...(s.properties as Record<string, Schema>),
  };
  s["x-kubernetes-group-version-kind"] = [{ group: r.group, kind: r.kind, version: r.version }];
  return name;
}

/** `<Kind>List`: upstream generates one per kind; we build it from the kind's schema name. */
function listSchema(r: ResourceInfo, itemName: string, out: Record<string, Schema>): string {
  const listMeta = protoRoot().lookupType(`${metaV1}.ListMeta`);
  collectSchemas(listMeta, out);
  const name = `${itemName}List`;
  out[name] = {
    description: `${r.kind}List is a list of ${r.kind} objects.`,
    type: "object",
    required: ["items"],
    properties: {
      apiVersion: { type: "string", description: typeMetaDescriptions.apiVersion },
      items: { type: "array", items: { $ref: ref(itemName) }, description: `The ${r.kind} objects.` },
      kind: { type: "string", description: typeMetaDescriptions.kind },
      metadata: {
        allOf: [{ $ref: ref(schemaName(listMeta)) }],
        default: {},
        description: "Standard list metadata: the revision the list was read at, and the continue token.",
      },
    },
    "x-kubernetes-group-version-kind": [{ group: r.group, kind: `${r.kind}List`, version: r.version }],
  };
  return name;
}
// #endregion schema-from-proto

// #region paths
const queryParam = (name: string, description: string, type = "string"): Schema => ({
  name,
  in: "query",
  description,
  schema: { type, uniqueItems: true },
});
const dryRun = queryParam("dryRun", "When present, indicates that modifications should not be persisted.");
const fieldManager = queryParam(
  "fieldManager",
  "A name associated with the actor or entity that is making these changes.",
);
const fieldValidation = queryParam(
  "fieldValidation",
  "How the server treats unknown or duplicate fields in the request body: Ignore, Warn or Strict.",
);
const force = queryParam("force", 'Force is going to "force" Apply requests.', "boolean");
const pathParam = (name: string, description: string): Schema => ({
  name,
  in: "path",
  description,
  required: true,
  schema: { type: "string", uniqueItems: true },
});

/** `apps` → `Apps`, `authorization.k8s.io` → `Authorization`, core → `Core` (upstream's op ids). */
function groupWord(group: string): string {
  const label = group === "" ? "core" : (group.split(".")[0] ?? group);
  return label.charAt(0).toUpperCase() + label.slice(1);
}

function pathsFor(r: ResourceInfo, kindName: string, listName: string): Record<string, Schema> {
  const prefix = r.group === "" ? `/api/${r.version}` : `/apis/${r.group}/${r.version}`;
  const ns = r.namespaced ? "/namespaces/{namespace}" : "";
  const gvk = { group: r.group, kind: r.kind, version: r.version };
  const id = (verb: string, suffix = "") =>
    `${verb}${groupWord(r.group)}${r.version.charAt(0).toUpperCase()}${r.version.slice(1)}${r.namespaced ? "Namespaced" : ""}${r.kind}${suffix}`;
  const json = (name: string) => ({ "application/json": { schema: { $ref: ref(name) } } });
  const ok = (name: string) => ({ "200": { description: "OK", content: json(name) } });
  const statusName = openAPIName(`${metaV1}.Status`);
  const op = (action: string, operationId: string, extra: Schema): Schema => ({
    tags: [`${groupWord(r.group).toLowerCase()}_${r.version}`],
    operationId,
    "x-kubernetes-action": action,
    "x-kubernetes-group-version-kind": gvk,
    ...extra,
  });
  const body = (name: string) => ({ required: true, content: json(name) });
  const patchBody = {
    required: true,
    content: Object.fromEntries(
      [
        "application/apply-patch+yaml",
        "application/json-patch+json",
        "application/merge-patch+json",
        "application/strategic-merge-patch+json",
      ].map((t) => [t, { schema: { $ref: ref(openAPIName(`${metaV1}.Patch`)) } }]),
    ),
  };
  const has = (verb: string) => r.verbs.includes(verb);
  const namespaceParam = r.namespaced
    ? [pathParam("namespace", "object name and auth scope, such as for teams and projects")]
    : [];

  const collection: Schema = { parameters: namespaceParam };
  if (has("list")) collection.get = op("list", id("list"), { responses: ok(listName) });
  if (has("create"))
    collection.post = op("post", id("create"), {
      parameters: [dryRun, fieldManager, fieldValidation],
      requestBody: body(kindName),
      responses: { ...ok(kindName), "201": { description: "Created", content: json(kindName) } },
    });
  if (has("deletecollection"))
    collection.delete = op("deletecollection", id("deleteCollection"), { responses: ok(statusName) });

  const item: Schema = { parameters: [pathParam("name", `name of the ${r.kind}`), ...namespaceParam] };
  if (has("get")) item.get = op("get", id("read"), { responses: ok(kindName) });
  if (has("update"))
    item.put = op("put", id("replace"), {
      parameters: [dryRun, fieldManager, fieldValidation],
      requestBody: body(kindName),
      responses: ok(kindName),
    });
  if (has("patch"))
    item.patch = op("patch", id("patch"), {
      parameters: [dryRun, fieldManager, fieldValidation, force],
      requestBody: patchBody,
      responses: ok(kindName),
    });
  if (has("delete")) item.delete = op("delete", id("delete"), { responses: ok(statusName) });

  const paths: Record<string, Schema> = {};
  const base = `${prefix}${ns}/${r.resource}`;
  if (Object.keys(collection).length > 1) paths[base] = collection;
  if (Object.keys(item).length > 1) paths[`${base}/{name}`] = item;
  if (r.namespaced && has("list")) {
    paths[`${prefix}/${r.resource}`] = {
      get: op("list", id("list", "ForAllNamespaces").replace("Namespaced", ""), { responses: ok(listName) }),
    };
  }
  const status = r.subresources.find((s) => s.name === "status");
  if (status) {
    paths[`${base}/{name}/status`] = {
      parameters: item.parameters,
      get: op("get", id("read", "Status"), { responses: ok(kindName) }),
      put: op("put", id("replace", "Status"), {
        parameters: [dryRun, fieldManager, fieldValidation],
        requestBody: body(kindName),
        responses: ok(kindName),
      }),
      patch: op("patch", id("patch", "Status"), {
        parameters: [dryRun, fieldManager, fieldValidation, force],
        requestBody: patchBody,
        responses: ok(kindName),
      }),
    };
  }
  return paths;
}
// #endregion paths

// #region documents
/** The OpenAPI v3 document of one group version (`""`, `v1` for the core group). */
export function openAPIDocument(group: string, version: string): Schema {
  const schemas: Record<string, Schema> = {};
  const paths: Record<string, Schema> = {};
  for (const r of resources.filter((x) => x.group === group && x.version === version)) {
    const t = messageFor(apiVersionOf(r), r.kind);
    // A kind without a .proto still gets paths; its schema is an open object.
    let kindName: string;
    if (t) kindName = kindSchema(r, t, schemas);
    else {
      kindName = `${packageName(r)}.${r.kind}`;
      schemas[kindName] = {
        type: "object",
        "x-kubernetes-preserve-unknown-fields": true,
        "x-kubernetes-group-version-kind": [{ group: r.group, kind: r.kind, version: r.version }],
      };
    }
    const listName = listSchema(r, kindName, schemas);
    Object.assign(paths, pathsFor(r, kindName, listName));
  }
  collectSchemas(protoRoot().lookupType(`${metaV1}.Status`), schemas);
  schemas[openAPIName(`${metaV1}.Patch`)] = {
    description: "Patch is provided to give a concrete name and type to the patch body.",
    type: "object",
  };
  return {
    openapi: "3.0.0",
    info: { title: "Kubernetes", version: "v1.32.0" },
    paths,
    components: {
      schemas: Object.fromEntries(Object.entries(schemas).sort(([a], [b]) => a.localeCompare(b))),
    },
  };
}

function packageName(r: ResourceInfo): string {
  return `io.k8s.api.${r.group === "" ? "core" : r.group.split(".")[0]}.${r.version}`;
}

/** `api/v1`, `apis/apps/v1`: the key of a group version in the index and in the URL. */
export function openAPIPathOf(group: string, version: string): string {
  return group === "" ? `api/${version}` : `apis/${group}/${version}`;
}

const cache = new Map<string, { text: string; hash: string }>();

function documentText(key: string): { text: string; hash: string } | undefined {
  const hit = cache.get(key);
  if (hit) return hit;
  const gv = resources.find((r) => openAPIPathOf(r.group, r.version) === key);
  if (!gv) return undefined;
  const text = JSON.stringify(openAPIDocument(gv.group, gv.version));
  const entry = { text, hash: createHash("sha512").update(text).digest("hex").toUpperCase() };
  cache.set(key, entry);
  return entry;
}

/** GET /openapi/v3: `{"paths": {"api/v1": {"serverRelativeURL": "/openapi/v3/api/v1?hash=…"}}}`. */
export function openAPIIndex(): { paths: Record<string, { serverRelativeURL: string }> } {
  const keys = [...new Set(resources.map((r) => openAPIPathOf(r.group, r.version)))].sort();
  const paths: Record<string, { serverRelativeURL: string }> = {};
  for (const key of keys) {
    const doc = documentText(key);
    if (doc) paths[key] = { serverRelativeURL: `/openapi/v3/${key}?hash=${doc.hash}` };
  }
  return { paths };
}
// #endregion documents

// #region serve-openapi
/**
 * Serves /openapi/v3 and /openapi/v3/<group version>, and /openapi/v2 as far as kubectl reads it
 * (openapi-v2.ts). Anything else under /openapi/ is a 404.
 */
export function serveOpenAPI(req: IncomingMessage, res: ServerResponse, path: string, url: URL): boolean {
  if (req.method !== "GET" && req.method !== "HEAD") return false;
  if (path === "/openapi/v2") return serveOpenAPIV2(req, res);
  if (path === "/openapi/v3") return sendJSON(res, JSON.stringify(openAPIIndex()), "no-cache, private");
  if (!path.startsWith("/openapi/v3/")) return false;
  const doc = documentText(path.slice("/openapi/v3/".length));
  if (!doc) return false;
  // With the right hash the document can never change under that URL: cache it for good.
  const immutable = url.searchParams.get("hash") === doc.hash;
  res.setHeader("ETag", `"${doc.hash}"`);
  if (req.headers["if-none-match"] === `"${doc.hash}"`) {
    res.writeHead(304);
    res.end();
    return true;
  }
  return sendJSON(res, doc.text, immutable ? "public, immutable" : "no-cache, private");
}

function sendJSON(res: ServerResponse, text: string, cacheControl: string): true {
  res.writeHead(200, {
    "Content-Type": "application/json",
    "Cache-Control": cacheControl,
    "Content-Length": Buffer.byteLength(text),
  });
  res.end(text);
  return true;
}
// #endregion serve-openapi

/**
 * Schema values — a fully populated object of a kind, generated from the kind's OpenAPI schema
 * (openapi.ts), and the same object encoded as protobuf the way kubectl would send it.
 * No upstream counterpart: test harness.
 *
 * Solves: "every field of every served kind round-trips through JSON, YAML and protobuf" is a
 * claim about hundreds of fields; a test can only make it by walking the published schema and
 * filling every field with a non-zero value of its type, then decoding the object each way.
 *
 * Invariants:
 * - every property of every reachable schema gets a value (a list or map gets one element), so
 *   a field the decoder drops makes the round trip unequal; values are non-zero, because Go's JSON
 *   omits zero values of omitempty fields and a zero would not tell "dropped" from "omitted";
 * - the generated object is what Go would write back: Time at seconds precision, MicroTime with
 *   microseconds, IntOrString as a number, Quantity as a canonical string, bytes as base64;
 * - recursion is bounded (a schema that reaches itself stops after `maxDepth` levels; our kinds'
 *   schemas have no cycle and are far shallower).
 *
 * @upstream none — test harness
 * @chapter 02-apiserver
 */
import protobuf from "protobufjs";
import { protoEncodingPrefix } from "../protobuf/decode.ts";
import {
  FIELDS_V1,
  fullNameOf,
  goShape,
  INT_OR_STRING,
  MICRO_TIME,
  messageFor,
  protoRoot,
  QUANTITY,
  RAW_EXTENSION,
  TIME,
  UNKNOWN,
} from "../protobuf/registry.ts";

type Schema = {
  type?: string;
  format?: string;
  properties?: Record<string, Schema>;
  additionalProperties?: Schema | boolean;
  items?: Schema;
  allOf?: Schema[];
  oneOf?: Schema[];
  $ref?: string;
  description?: string;
};

const maxDepth = 30;

// #region values
/** A value for every property of `schema` (a component of `schemas`), keyed by field names. */
export function populate(schema: Schema, schemas: Record<string, Schema>, depth = 0, name = "x"): unknown {
  const ref = schema.$ref ?? schema.allOf?.[0]?.$ref;
  if (ref) return populate(schemas[ref.slice(ref.lastIndexOf("/") + 1)] ?? {}, schemas, depth, name);
  if (schema.format === "int-or-string") return 8080;
  if (schema.oneOf) return "250m"; // Quantity
  if (schema.format === "date-time") {
    return schema.description?.includes("microseconds")
      ? "2024-05-06T07:08:09.123456Z"
      : "2024-05-06T07:08:09Z";
  }
  switch (schema.type) {
    case "string":
      return schema.format === "byte" ? Buffer.from(`bytes of ${name}`).toString("base64") : `v-${name}`;
    case "boolean":
      return true;
    case "integer":
      return schema.format === "int64" ? 4_000_000_000 : 7;
    case "number":
      return 1.5;
    case "array":
      return depth > maxDepth ? [] : [populate(schema.items ?? {}, schemas, depth + 1, name)];
    default: {
      if (!schema.properties) {
        const extra = schema.additionalProperties;
        if (typeof extra === "object") return { [`k-${name}`]: populate(extra, schemas, depth + 1, name) };
        return { "f:metadata": { "f:name": {} } }; // FieldsV1 / free-form JSON
      }
      const out: Record<string, unknown> = {};
      if (depth > maxDepth) return out;
      for (const [k, sub] of Object.entries(schema.properties)) {
        if (depth === 0 && (k === "apiVersion" || k === "kind")) continue; // the caller sets TypeMeta
        out[k] = populate(sub, schemas, depth + 1, k);
      }
      return out;
    }
  }
}
// #endregion values

// #region protobuf
/** The JSON object as the protobuf message `t` (the inverse of decode.ts's objectOf). */
export function toProtoObject(t: protobuf.Type, json: Record<string, unknown>): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const field of t.fieldsArray) {
    const sub = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    if (goShape(field).inline && sub) {
      out[field.name] = toProtoObject(sub, json);
      continue;
    }
    const v = json[field.name];
    if (v === undefined || v === null) continue;
    const one = (x: unknown) =>
      sub ? special(sub, x) : field.type === "bytes" ? Buffer.from(x as string, "base64") : x;
    if (field.map)
      out[field.name] = Object.fromEntries(Object.entries(v as object).map(([k, x]) => [k, one(x)]));
    else if (field.repeated) out[field.name] = (v as unknown[]).map(one);
    else out[field.name] = one(v);
  }
  return out;
}

function special(t: protobuf.Type, v: unknown): unknown {
  switch (fullNameOf(t)) {
    case TIME:
    case MICRO_TIME: {
      const ms = Date.parse(v as string);
      const micros = /\.(\d{6})Z$/.exec(v as string)?.[1];
      return { seconds: Math.floor(ms / 1000), nanos: micros ? Number(micros) * 1000 : 0 };
    }
    case INT_OR_STRING:
      return typeof v === "number" ? { type: 0, intVal: v } : { type: 1, strVal: v };
    case QUANTITY:
      return { string: String(v) };
    case FIELDS_V1:
      return { Raw: Buffer.from(JSON.stringify(v)) };
    case RAW_EXTENSION:
      return { raw: Buffer.from(JSON.stringify(v)) };
    default:
      return toProtoObject(t, v as Record<string, unknown>);
  }
}

/** The body kubectl sends for the object: `k8s\0` and a runtime.Unknown holding the message. */
export function encodeProtobuf(apiVersion: string, kind: string, json: Record<string, unknown>): Buffer {
  const t = messageFor(apiVersion, kind);
  if (!t) throw new Error(`no .proto message for ${apiVersion} ${kind}`);
  const raw = t.encode(t.fromObject(toProtoObject(t, json))).finish();
  const unknown = protoRoot().lookupType(UNKNOWN);
  const bytes = unknown.encode(unknown.create({ typeMeta: { apiVersion, kind }, raw })).finish();
  return Buffer.concat([Buffer.from(protoEncodingPrefix), Buffer.from(bytes)]);
}
// #endregion protobuf

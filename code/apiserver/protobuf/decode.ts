/**
 * decodeProtobuf — turns an `application/vnd.kubernetes.protobuf` request body into the JSON
 * object the client would have sent as `application/json`. Upstream: the protobuf Serializer of
 * apimachinery's runtime/serializer/protobuf/protobuf.go, which decodes into the Go struct (whose
 * JSON we then write as encoding/json would).
 *
 * Solves:
 * - the real kubectl sends the objects it builds (`kubectl create namespace|configmap|secret|
 *   deployment|service|serviceaccount|priorityclass`, `kubectl auth can-i`) as protobuf, not
 *   JSON; the rest of our API server speaks JSON only, so the body is translated at the door;
 * - the translation must give the JSON Go would have written from the same Go struct, because
 *   that JSON is what gets stored and served back: `creationTimestamp: null`, `spec: {}`,
 *   `resources: {}`, a pointer `replicas: 0` kept but a plain zero `hostPort` dropped
 *   (omitempty), Secret data as base64, IntOrString as a bare number or string.
 *
 * Invariants:
 * - the body is the 4 bytes `k8s\0` then a runtime.Unknown {typeMeta, raw}; raw is the message
 *   named by typeMeta (registry.ts, messageFor);
 * - every field on the wire is one our .proto declares: an unknown field number is refused
 *   (400) rather than silently dropped, so no data is lost without the client being told;
 * - a field present on the wire is present in Go; whether JSON keeps it then depends only on
 *   its Go shape (registry.ts, goShape): pointer → kept, no omitempty → kept, else kept if non-zero.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/serializer/protobuf/protobuf.go (Serializer.Decode, protoEncodingPrefix)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/types_proto.go (Unknown)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/time.go (Time.MarshalJSON: RFC 3339, zero is null)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/intstr/intstr.go (IntOrString.MarshalJSON)
 * @chapter 02-apiserver
 */
import protobuf from "protobufjs";
import type { KubeObject } from "../../api/meta.ts";
import { newBadRequest, newUnsupportedMediaTypeError, type StatusError } from "../errors.ts";
import { findKind } from "../resources.ts";
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
} from "./registry.ts";

/** The four bytes every Kubernetes protobuf body starts with: "k8s" and a zero byte. */
export const protoEncodingPrefix = new Uint8Array([0x6b, 0x38, 0x73, 0x00]);

type Msg = Record<string, unknown>;

// #region decode-protobuf
/**
 * Decodes a protobuf request body. Throws a StatusError: 400 BadRequest for bytes that are not a
 * Kubernetes protobuf message or carry fields we do not know, 415 UnsupportedMediaType for a
 * kind we serve only as JSON.
 */
export function decodeProtobuf(body: Uint8Array): KubeObject {
  const prefix = body.subarray(0, protoEncodingPrefix.length);
  if (prefix.length < 4 || !prefix.every((b, i) => b === protoEncodingPrefix[i])) {
    throw newBadRequest(
      `provided data does not appear to be a protobuf message, expected prefix [${protoEncodingPrefix.join(" ")}]`,
    );
  }
  const unknownType = protoRoot().lookupType(UNKNOWN);
  const envelope = decodeChecked(unknownType, body.subarray(4));
  const typeMeta = (envelope.typeMeta ?? {}) as Msg;
  const apiVersion = (typeMeta.apiVersion as string | undefined) ?? "";
  const kind = (typeMeta.kind as string | undefined) ?? "";
  if (!kind) throw newBadRequest("Object 'Kind' is missing in protobuf body");
  if (envelope.contentEncoding) {
    throw newBadRequest(`unsupported content encoding "${envelope.contentEncoding}" in protobuf body`);
  }

  const type = messageFor(apiVersion, kind);
  if (!type) throw unknownKind(apiVersion, kind);
  const raw = (envelope.raw as Uint8Array | undefined) ?? new Uint8Array();
  const message = decodeChecked(type, raw);
  // Go's TypeMeta writes kind before apiVersion.
  return { kind, apiVersion, ...objectOf(type, message) } as KubeObject;
}
// #endregion decode-protobuf

function unknownKind(apiVersion: string, kind: string): StatusError {
  // A kind we serve but hold no .proto for (none today: round-trip.test.ts checks every served
  // kind has one): the client can resend as JSON.
  if (findKind(apiVersion, kind)) {
    return newUnsupportedMediaTypeError(["application/json", "application/yaml"]);
  }
  return newBadRequest(`no kind "${kind}" is registered for version "${apiVersion}"`);
}

/** Refuses unknown fields, then decodes with protobufjs; bad bytes become a 400. */
function decodeChecked(type: protobuf.Type, bytes: Uint8Array): Msg {
  try {
    checkKnownFields(type, protobuf.Reader.create(bytes), bytes.length, fullNameOf(type));
    return type.decode(bytes) as unknown as Msg;
  } catch (e) {
    if (e instanceof Error && e.name === "StatusError") throw e;
    throw newBadRequest(`unable to decode protobuf body: ${(e as Error).message}`);
  }
}

// #region known-fields
/**
 * Walks the wire format and fails on a field number `type` does not declare. protobufjs (like
 * Go's generated code) would skip it; for us that would mean storing an object without a field
 * the client set, so we refuse instead and name the field number.
 */
function checkKnownFields(type: protobuf.Type, r: protobuf.Reader, end: number, path: string): void {
  while (r.pos < end) {
    const tag = r.uint32();
    const number = tag >>> 3;
    const wireType = tag & 7;
    const field = type.fieldsById[number];
    if (!field) {
      throw newBadRequest(
        `unable to decode protobuf body: field number ${number} of ${path} is not known to this API server; send the object as application/json`,
      );
    }
    const valueType = field.resolvedType;
    if (wireType === 2 && field.map && valueType instanceof protobuf.Type) {
      // A map entry is a message {1: key, 2: value}; only the value can hold further fields.
      const entryEnd = r.uint32() + r.pos;
      while (r.pos < entryEnd) {
        const entryTag = r.uint32();
        if (entryTag >>> 3 === 2 && (entryTag & 7) === 2) {
          const len = r.uint32();
          checkKnownFields(valueType, r, r.pos + len, `${path}.${field.name}`);
        } else r.skipType(entryTag & 7);
      }
    } else if (wireType === 2 && !field.map && valueType instanceof protobuf.Type) {
      const len = r.uint32();
      checkKnownFields(valueType, r, r.pos + len, `${path}.${field.name}`);
    } else {
      r.skipType(wireType);
    }
  }
}
// #endregion known-fields

// #region go-json
/** The JSON object Go's encoding/json writes for a decoded message. */
function objectOf(type: protobuf.Type, msg: Msg): Msg {
  const out: Msg = {};
  for (const field of type.fieldsArray) {
    const shape = goShape(field);
    const present = Object.hasOwn(msg, field.name);
    const value = msg[field.name];
    const sub = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;

    if (field.map) {
      // encoding/json writes map keys sorted by their bytes.
      const entries = Object.entries((present ? value : {}) as Msg).sort(([a], [b]) =>
        a < b ? -1 : a > b ? 1 : 0,
      );
      if (entries.length > 0) {
        out[field.name] = Object.fromEntries(entries.map(([k, v]) => [k, elementOf(field, sub, v as Msg)]));
      } else if (shape.always) out[field.name] = null; // a nil Go map without omitempty
      continue;
    }
    if (field.repeated) {
      const items = (present ? value : []) as unknown[];
      if (items.length > 0) out[field.name] = items.map((v) => elementOf(field, sub, v as Msg));
      else if (shape.always) out[field.name] = null; // a nil Go slice without omitempty
      continue;
    }
    if (sub) {
      // A Go struct that is not a pointer always exists: gogo writes it even when empty, and
      // encoding/json ignores omitempty on structs. A pointer exists only if it was sent.
      if (!present && shape.ptr) {
        if (shape.always) out[field.name] = null; // a nil pointer without omitempty
        continue;
      }
      const v = goJSONOf(sub, (present ? value : {}) as Msg);
      if (shape.inline) Object.assign(out, v);
      else out[field.name] = v;
      continue;
    }
    if (!present) {
      if (shape.always) out[field.name] = shape.ptr ? null : zeroOf(field.type);
      continue;
    }
    const v = scalarOf(field.type, value);
    if (shape.ptr || shape.always || !isZero(v)) out[field.name] = v;
  }
  return out;
}

function elementOf(field: protobuf.Field, sub: protobuf.Type | undefined, v: unknown): unknown {
  return sub ? goJSONOf(sub, v as Msg) : scalarOf(field.type, v);
}

/** Messages with their own JSON form (MarshalJSON in Go); every other message is an object. */
function goJSONOf(type: protobuf.Type, msg: Msg): unknown {
  switch (fullNameOf(type)) {
    case TIME:
      return rfc3339(msg, 0);
    case MICRO_TIME:
      return rfc3339(msg, 6);
    case INT_OR_STRING:
      return Number(msg.type ?? 0) === 1 ? (msg.strVal ?? "") : Number(msg.intVal ?? 0);
    case QUANTITY:
      return (msg.string as string | undefined) || "0";
    case FIELDS_V1:
      return rawJSON(msg.Raw);
    case RAW_EXTENSION:
      return rawJSON(msg.raw);
    default:
      return objectOf(type, msg);
  }
}

/** metav1.Time: RFC 3339 in UTC with `fractionDigits` digits of second (0 or 6); zero is null. */
function rfc3339(msg: Msg, fractionDigits: number): string | null {
  const seconds = Number(msg.seconds ?? 0);
  const nanos = Number(msg.nanos ?? 0);
  if (seconds === 0 && nanos === 0) return null;
  const whole = new Date(seconds * 1000).toISOString().slice(0, 19);
  const fraction = fractionDigits ? `.${String(nanos).padStart(9, "0").slice(0, fractionDigits)}` : "";
  return `${whole}${fraction}Z`;
}

function rawJSON(bytes: unknown): unknown {
  const b = bytes as Uint8Array | undefined;
  if (!b || b.length === 0) return null;
  return JSON.parse(Buffer.from(b).toString("utf8"));
}

function scalarOf(protoType: string, v: unknown): unknown {
  if (protoType === "bytes") return Buffer.from(v as Uint8Array).toString("base64");
  if (protoType === "int64" || protoType === "uint64" || protoType === "sint64") return Number(v);
  return v;
}

function zeroOf(protoType: string): unknown {
  if (protoType === "string" || protoType === "bytes") return "";
  if (protoType === "bool") return false;
  return 0;
}

function isZero(v: unknown): boolean {
  return v === "" || v === 0 || v === false;
}
// #endregion go-json

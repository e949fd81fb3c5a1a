/**
 * Typed unmarshalling — a JSON tree decoded into a kind's fields as Go's encoding/json decodes it
 * into the kind's Go struct (with sigs.k8s.io/json's strict options), using the types our .proto
 * files describe. The result is the JSON object the rest of the server works on.
 *
 * Solves:
 * - `terminationGracePeriodSeconds: "thirty"` must never be stored: Go cannot put a string in an
 *   int64, and answers `json: cannot unmarshal string into Go struct field
 *   PodSpec.spec.terminationGracePeriodSeconds of type int64` — so must we, for every typed field
 *   of every served kind at any depth (numbers, int32/int64 range, booleans, strings, objects,
 *   lists, maps, IntOrString, Quantity, Time, base64 bytes);
 * - `containers: {}` or `cpu: {}` must be a decode error, not a value that later code trips on;
 * - strict field validation needs every unknown field and every duplicate key, named as
 *   sigs.k8s.io/json names them (`spec.containers[0].imagePulPolicy`, `metadata.name`).
 *
 * Invariants:
 * - the first type mismatch wins, as in Go (`saveError`): decoding goes on, later type errors are
 *   dropped; an error raised by a type's own UnmarshalJSON (Quantity, Time) stops decoding at once
 *   and wins over a saved one; strict errors count only when there is no other error;
 * - error context is Go's: `Struct` is the Go struct that holds the field (an embedded struct's
 *   fields belong to the outer one), `Field` the JSON names from the root without list indexes;
 *   strict paths do carry indexes and map keys;
 * - unknown fields are dropped from the result (Go has nowhere to put them); `null` leaves a field
 *   at its zero value: absent, or `0`/`""`/`false` where Go writes zeros (no omitempty);
 * - recursion follows the schema, which is finite; free-form values (FieldsV1, RawExtension) are
 *   converted without recursion, so no body can overflow the stack.
 *
 * What upstream does differently: Go re-encodes the decoded struct, so a client's `"1.0"` CPU comes
 * back as `"1"` and keys come back in struct order; we keep the client's values and order. An int64
 * beyond 2^53 loses precision in a JS number.
 *
 * @upstream kubernetes-sigs/json internal/golang/encoding/json/decode.go (UnmarshalTypeError, errorContext, addErrorContext, saveError, literalStore)
 * @upstream kubernetes-sigs/json internal/golang/encoding/json/kubernetes_patch.go (strictError: unknown field, duplicate field)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/intstr/intstr.go (IntOrString.UnmarshalJSON)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go (Quantity.UnmarshalJSON, ErrFormatWrong, ErrSuffix)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/time.go (Time.UnmarshalJSON)
 * @chapter 02-apiserver
 */
import protobuf from "protobufjs";
import {
  FIELDS_V1,
  fullNameOf,
  goShape,
  INT_OR_STRING,
  MICRO_TIME,
  QUANTITY,
  RAW_EXTENSION,
  TIME,
} from "../protobuf/registry.ts";
import { type JSONNode, toValue } from "./json-tree.ts";
import { parseQuantityError } from "./quantity.ts";
import { parseTimeError, rfc3339Layout, rfc3339MicroLayout } from "./time.ts";

/** A decode failure, with the text of Go's error (`json: cannot unmarshal …`). */
export class UnmarshalError extends Error {
  constructor(message: string) {
    super(message);
    this.name = "UnmarshalError";
  }
}

export interface Unmarshalled {
  value: Record<string, unknown>;
  /** `unknown field "spec.foo"`, `duplicate field "metadata.name"`, in document order (strict only). */
  strictErrors: string[];
}

/**
 * Where the decoder is: Go's errorContext (Struct, FieldStack) and the strict field path.
 * A link to its parent and one step: the field list and the path are spelled out only when an
 * error needs them (chapter 5's bind benchmark: copying them for every field of every body was
 * a third of a pod's decode).
 */
class Context {
  constructor(
    readonly struct: string,
    private readonly parent?: Context,
    /** A field's JSON name, a map key, or a list index. */
    private readonly step = "",
    private readonly stepKind: "field" | "key" | "index" = "field",
  ) {}

  static readonly root = new Context("");

  field(struct: string, key: string): Context {
    return new Context(struct, this, key, "field");
  }
  /** A map's key: in the strict path, not in Go's error context. */
  key(key: string): Context {
    return new Context(this.struct, this, key, "key");
  }
  /** A list's index: in the strict path, not in Go's error context. */
  index(i: number): Context {
    return new Context(this.struct, this, String(i), "index");
  }

  /** Go's FieldStack: the JSON names from the root, without list indexes or map keys. */
  get fields(): string[] {
    const out: string[] = [];
    for (let c: Context | undefined = this; c?.parent; c = c.parent)
      if (c.stepKind === "field") out.push(c.step);
    return out.reverse();
  }

  /** The strict path: `spec.containers[0].name`, `metadata.labels.app`. */
  get path(): string {
    if (!this.parent) return "";
    const up = this.parent.path;
    if (this.stepKind === "index") return `${up}[${this.step}]`;
    return up ? `${up}.${this.step}` : this.step;
  }
}

/** A stop raised by a type's own UnmarshalJSON: it ends decoding at once (Go returns it). */
class HardStop {
  constructor(readonly message: string) {}
}

// #region go-types
/** The Go type of one field (without the pointer), as reflect's Type.String() prints it. */
function goTypeOf(field: protobuf.Field, element: boolean): string {
  const shape = goShape(field);
  if (!element && shape.goType) return shape.goType;
  const sub = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
  const base = sub ? goNameOf(sub) : (scalarGoTypes[field.type] ?? field.type);
  if (element) return base;
  if (field.map) return `map[string]${base}`;
  if (field.repeated) return `[]${base}`;
  return base;
}

const scalarGoTypes: Record<string, string> = {
  string: "string",
  bool: "bool",
  int32: "int32",
  int64: "int64",
  uint32: "uint32",
  uint64: "uint64",
  double: "float64",
  float: "float32",
  bytes: "[]uint8",
};

/** `k8s.io.api.core.v1.PodSpec` → `v1.PodSpec`: Go prints a named type with its package's name. */
function goNameOf(t: protobuf.Type): string {
  const parts = fullNameOf(t).split(".");
  return `${parts[parts.length - 2]}.${parts[parts.length - 1]}`;
}
// #endregion go-types

/** A message's JSON fields, an embedded (inline) struct's fields flattened in, outer names first. */
const fieldTables = new WeakMap<protobuf.Type, Map<string, protobuf.Field>>();
function jsonFieldsOf(t: protobuf.Type): Map<string, protobuf.Field> {
  let table = fieldTables.get(t);
  if (table) return table;
  table = new Map();
  const inline: protobuf.Type[] = [];
  for (const f of t.fieldsArray) {
    if (goShape(f).inline && f.resolvedType instanceof protobuf.Type) inline.push(f.resolvedType);
    else table.set(f.name, f);
  }
  for (const sub of inline) for (const [k, f] of jsonFieldsOf(sub)) if (!table.has(k)) table.set(k, f);
  fieldTables.set(t, table);
  return table;
}

// #region unmarshal
/**
 * Decodes `root` (a JSON object) into message `t`. `extraStrings` are fields Go holds outside the
 * message (TypeMeta's apiVersion and kind, inline at the top of every kind). Throws UnmarshalError.
 */
export function unmarshal(
  root: JSONNode,
  t: protobuf.Type,
  opts: { strict: boolean; extraStrings?: readonly string[] },
): Unmarshalled {
  let saved: string | undefined;
  const strictErrors: string[] = [];
  const seen = new Set<string>();
  const saveError = (message: string) => {
    saved ??= message;
  };
  const typeError = (node: JSONNode, goType: string, ctx: Context, value = node.kind as string) => {
    saveError(unmarshalTypeError(value, goType, ctx));
  };
  const strictError = (message: string) => {
    if (!opts.strict || strictErrors.length >= 100 || seen.has(message)) return;
    seen.add(message);
    strictErrors.push(message);
  };
  const join = (path: string, key: string) => (path ? `${path}.${key}` : key);

  /** Decodes an object node into a struct; returns the JSON object Go would hold. */
  const decodeStruct = (
    node: JSONNode,
    type: protobuf.Type,
    ctx: Context,
    extra: readonly string[] = [],
  ): Record<string, unknown> | undefined => {
    if (node.kind !== "object") {
      typeError(node, goNameOf(type), ctx);
      return undefined;
    }
    const fields = jsonFieldsOf(type);
    const out: Record<string, unknown> = {};
    const keys = new Set<string>();
    const structName = type.name;
    for (const [key, child] of node.entries) {
      const field = fields.get(key);
      if (!field && !extra.includes(key)) {
        strictError(`unknown field ${JSON.stringify(join(ctx.path, key))}`);
        continue;
      }
      if (keys.has(key)) strictError(`duplicate field ${JSON.stringify(join(ctx.path, key))}`);
      keys.add(key);
      const inner = ctx.field(structName, key);
      if (!field) {
        // TypeMeta's strings.
        if (child.kind === "string") setKey(out, key, child.value);
        else if (child.kind !== "null") typeError(child, "string", inner);
        continue;
      }
      const v = decodeField(child, field, inner);
      if (v === undefined) delete out[key];
      else setKey(out, key, v);
    }
    return out;
  };

  /** A field's value: a list, a map, or one element. undefined: leave the field out. */
  const decodeField = (node: JSONNode, field: protobuf.Field, ctx: Context): unknown => {
    const shape = goShape(field);
    if (node.kind === "null") {
      // Go leaves the zero value; JSON shows it only where the tag has no omitempty.
      if (shape.always && !shape.ptr && !field.map && !field.repeated && !isMessage(field)) {
        return zeroOf(field.type);
      }
      return undefined;
    }
    if (field.map) {
      if (node.kind !== "object") {
        typeError(node, goTypeOf(field, false), ctx);
        return undefined;
      }
      const out: Record<string, unknown> = {};
      const keys = new Set<string>();
      for (const [key, child] of node.entries) {
        const inner = ctx.key(key);
        if (keys.has(key)) strictError(`duplicate field ${JSON.stringify(inner.path)}`);
        keys.add(key);
        // A map's keys do not enter Go's error context (only its strict path).
        setKey(out, key, decodeElement(child, field, inner));
      }
      return out;
    }
    if (field.repeated) {
      if (node.kind !== "array") {
        typeError(node, goTypeOf(field, false), ctx);
        return undefined;
      }
      return node.items.map((item, i) => decodeElement(item, field, ctx.index(i)));
    }
    return decodeElement(node, field, ctx);
  };

  /** One value of the field's element type (the field itself, or one item of its list or map). */
  const decodeElement = (node: JSONNode, field: protobuf.Field, ctx: Context): unknown => {
    const sub = field.resolvedType instanceof protobuf.Type ? field.resolvedType : undefined;
    if (sub) return decodeMessage(node, sub, ctx);
    return decodeScalar(node, field.type, ctx);
  };

  const decodeMessage = (node: JSONNode, type: protobuf.Type, ctx: Context): unknown => {
    switch (fullNameOf(type)) {
      case QUANTITY: {
        // Quantity.UnmarshalJSON: the bytes, unquoted, must parse (any JSON kind reaches it).
        if (node.kind === "null") return "0";
        const text = node.kind === "string" ? node.value : node.kind === "number" ? node.text : rawText(node);
        const err = parseQuantityError(text.trim());
        if (err) throw new HardStop(err);
        if (node.kind === "number") return Number(node.text);
        return node.kind === "string" ? node.value : text;
      }
      case INT_OR_STRING:
        // IntOrString.UnmarshalJSON: a quoted value is the string; anything else must be an int32.
        if (node.kind === "string") return node.value;
        if (node.kind === "null") return 0;
        if (node.kind === "number" && isInt(node.text, 32)) return Number(node.text);
        throw new HardStop(
          unmarshalTypeError(node.kind === "number" ? `number ${node.text}` : node.kind, "int32", ctx),
        );
      case TIME:
      case MICRO_TIME: {
        // Time.UnmarshalJSON: a JSON string (else Go's "cannot unmarshal … of type string"), RFC 3339.
        if (node.kind === "null") return null;
        if (node.kind !== "string") throw new HardStop(unmarshalTypeError(node.kind, "string", ctx));
        const err = parseTimeError(
          node.value,
          fullNameOf(type) === TIME ? rfc3339Layout : rfc3339MicroLayout,
        );
        if (err) throw new HardStop(err);
        return node.value;
      }
      case FIELDS_V1:
      case RAW_EXTENSION:
        // Any JSON at all: kept as it came.
        return toValue(node);
      default:
        if (node.kind === "null") return {};
        return decodeStruct(node, type, ctx) ?? {};
    }
  };

  const decodeScalar = (node: JSONNode, protoType: string, ctx: Context): unknown => {
    const goType = scalarGoTypes[protoType] ?? protoType;
    if (node.kind === "null") return zeroOf(protoType);
    switch (protoType) {
      case "string":
        if (node.kind === "string") return node.value;
        break;
      case "bool":
        if (node.kind === "bool") return node.value;
        break;
      case "bytes":
        if (node.kind === "string") {
          const bad = base64ErrorOffset(node.value);
          if (bad !== undefined) saveError(`illegal base64 data at input byte ${bad}`);
          return node.value;
        }
        break;
      case "double":
      case "float":
        if (node.kind === "number") return Number(node.text);
        break;
      default: {
        // Integers: Go's strconv.ParseInt of the literal; a fraction, an exponent or an overflow fails.
        if (node.kind === "number") {
          const bits = protoType.endsWith("32") ? 32 : 64;
          const unsigned = protoType.startsWith("u");
          if (isInt(node.text, bits, unsigned)) return Number(node.text);
          typeError(node, goType, ctx, `number ${node.text}`);
          return undefined;
        }
      }
    }
    typeError(node, goType, ctx);
    return undefined;
  };

  try {
    if (root.kind !== "object") {
      // The caller checks this first (Interpret); kept for direct use.
      throw new UnmarshalError(unmarshalTypeError(root.kind, goNameOf(t), Context.root));
    }
    const value = decodeStruct(root, t, Context.root, opts.extraStrings) ?? {};
    if (saved) throw new UnmarshalError(saved);
    return { value, strictErrors };
  } catch (e) {
    if (e instanceof HardStop) throw new UnmarshalError(e.message);
    throw e;
  }
}
// #endregion unmarshal

/** Go's UnmarshalTypeError.Error(), with the context addErrorContext adds. */
function unmarshalTypeError(value: string, goType: string, ctx: Context): string {
  if (ctx.struct || ctx.fields.length > 0) {
    return `json: cannot unmarshal ${value} into Go struct field ${ctx.struct}.${ctx.fields.join(".")} of type ${goType}`;
  }
  return `json: cannot unmarshal ${value} into Go value of type ${goType}`;
}

const isMessage = (f: protobuf.Field) => f.resolvedType instanceof protobuf.Type;

function zeroOf(protoType: string): unknown {
  if (protoType === "string" || protoType === "bytes") return "";
  if (protoType === "bool") return false;
  return 0;
}

/** strconv.ParseInt(text, 10, bits) succeeds (ParseUint for unsigned). */
function isInt(text: string, bits: number, unsigned = false): boolean {
  if (!(unsigned ? /^[0-9]+$/ : /^-?[0-9]+$/).test(text)) return false;
  const n = BigInt(text);
  const max = unsigned ? (1n << BigInt(bits)) - 1n : (1n << BigInt(bits - 1)) - 1n;
  const min = unsigned ? 0n : -(1n << BigInt(bits - 1));
  return n >= min && n <= max;
}

/** The JSON text of a container node, as the bytes Go hands a type's UnmarshalJSON. */
function rawText(node: JSONNode): string {
  return node.kind === "bool" ? String(node.value) : JSON.stringify(toValue(node));
}

/** base64.StdEncoding.Decode: the offset of the first byte it refuses, or undefined. */
function base64ErrorOffset(s: string): number | undefined {
  const text = s.replace(/[\r\n]/g, "");
  for (let i = 0; i < text.length; i++) {
    const c = text[i];
    if (c === "=") {
      // Padding: only at the end, completing a group of four.
      const rest = text.slice(i);
      const group = i % 4;
      if (group < 2 || !/^=+$/.test(rest) || (group === 2 ? rest !== "==" : rest !== "=")) return i;
      return undefined;
    }
    if (!/[A-Za-z0-9+/]/.test(c)) return i;
  }
  return text.length % 4 === 0 ? undefined : text.length - (text.length % 4 === 1 ? 1 : 0);
}

function setKey(out: Record<string, unknown>, key: string, value: unknown): void {
  if (key === "__proto__") {
    Object.defineProperty(out, key, { value, enumerable: true, writable: true, configurable: true });
  } else out[key] = value;
}

/**
 * The protobuf schema registry — our .proto files loaded once, and the way from an apiVersion
 * and kind to the message that encodes it. Upstream: the generated.proto files of k8s.io/api, and
 * the runtime.Scheme that maps a kind to its Go type.
 *
 * Solves:
 * - a protobuf body names its type only as `apiVersion` + `kind` (in runtime.Unknown), so the
 *   decoder must find the message from those two strings, as upstream's scheme does;
 * - protobuf alone cannot say how Go would have written the object as JSON (is a zero `replicas`
 *   "not set" or "set to 0"?), so each field carries our options — (ptr), (always), (inline),
 *   (required), (mergeKey), (patch), (goType) — read here by decode.ts and openapi.ts, the one place
 *   both learn a field's Go shape.
 *
 * Invariants:
 * - field numbers and types are upstream's generated.proto ones; field names are the JSON names;
 * - the message for (apiVersion, kind) is `k8s.io.api.<group's first label or "core">.<version>.<kind>`,
 *   upstream's package naming.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/core/v1/generated.proto (package k8s.io.api.core.v1)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/scheme.go (Scheme: kind to Go type)
 * @chapter 02-apiserver
 */
import { dirname, join } from "node:path";
import { fileURLToPath } from "node:url";
import protobuf from "protobufjs";

const here = dirname(fileURLToPath(import.meta.url));
const protoFiles = [
  "runtime.proto",
  "intstr.proto",
  "resource.proto",
  "meta.proto",
  "core.proto",
  "apps.proto",
  "authentication.proto",
  "authorization.proto",
  "scheduling.proto",
  "coordination.proto",
  "rbac.proto", // chapter 3: RBAC
  "admissionregistration.proto", // chapter 3: webhooks and ValidatingAdmissionPolicy
  "policy.proto", // chapter 5: PodDisruptionBudgets
  "discovery.proto", // chapter 4: EndpointSlices
];

let root: protobuf.Root | undefined;

/** All our messages, parsed with field names kept as written (they are the JSON names). */
export function protoRoot(): protobuf.Root {
  if (!root) {
    const r = new protobuf.Root();
    r.loadSync(
      protoFiles.map((f) => join(here, f)),
      { keepCase: true, alternateCommentMode: true },
    );
    r.resolveAll();
    root = r;
  }
  return root;
}

// Messages whose JSON is not an object of their fields (see decode.ts, goJSONOf).
export const metaV1 = "k8s.io.apimachinery.pkg.apis.meta.v1";
export const TIME = `${metaV1}.Time`;
export const MICRO_TIME = `${metaV1}.MicroTime`;
export const FIELDS_V1 = `${metaV1}.FieldsV1`;
export const INT_OR_STRING = "k8s.io.apimachinery.pkg.util.intstr.IntOrString";
export const QUANTITY = "k8s.io.apimachinery.pkg.api.resource.Quantity";
export const RAW_EXTENSION = "k8s.io.apimachinery.pkg.runtime.RawExtension";
export const UNKNOWN = "k8s.io.apimachinery.pkg.runtime.Unknown";

/** The protobuf package upstream uses for a group and version: `apps/v1` → `k8s.io.api.apps.v1`. */
export function packageOf(apiVersion: string): string {
  const [group, version] = apiVersion.includes("/") ? apiVersion.split("/", 2) : ["", apiVersion];
  const label = group === "" ? "core" : group.split(".")[0];
  return `k8s.io.api.${label}.${version}`;
}

/** The message that encodes (apiVersion, kind), or undefined when we have no .proto for it. */
export function messageFor(apiVersion: string, kind: string): protobuf.Type | undefined {
  // Chapter 5 (the bind benchmark's profile): Root.lookup walks the namespaces on every call —
  // 1.5 % of the API server's CPU under create + bind — so each answer is remembered.
  const name = `${packageOf(apiVersion)}.${kind}`;
  if (messages.has(name)) return messages.get(name);
  const found = protoRoot().lookup(name);
  const type = found instanceof protobuf.Type ? found : undefined;
  messages.set(name, type);
  return type;
}
const messages = new Map<string, protobuf.Type | undefined>();

export function fullNameOf(t: protobuf.Type): string {
  // apiceil (chapter 5, the bind benchmark): asked for every message of every decoded body;
  // a loaded .proto never changes, so each name is worked out once.
  let name = fullNames.get(t);
  if (name === undefined) {
    name = t.fullName.replace(/^\./, "");
    fullNames.set(t, name);
  }
  return name;
}
const fullNames = new WeakMap<protobuf.Type, string>();

// #region go-shape
/** How Go holds and writes one field; read from the field's options in our .proto files. */
export interface GoShape {
  /** A pointer in Go: present means set, even when the value is zero; with `always`, unset is null. */
  ptr: boolean;
  /** No `omitempty` in the json tag: a zero scalar is written, an empty list is `null`. */
  always: boolean;
  /** An embedded struct: JSON flattens its fields into the parent. */
  inline: boolean;
  /** Listed in the schema's `required` (openapi.ts). */
  required: boolean;
  /** Strategic merge patch: lists merged element-wise by this key. */
  mergeKey?: string;
  /** Strategic merge patch strategy: `merge` (finalizers), `merge,retainKeys` (volumes), `retainKeys`. */
  patch?: string;
  /**
   * The Go type's name where it is a named type (`v1.ResourceList`, `v1.RestartPolicy`), as a
   * decode error prints it (decoding/unmarshal.ts); absent, the name follows from the proto type.
   */
  goType?: string;
}

export function goShape(field: protobuf.Field): GoShape {
  // apiceil (chapter 5, the bind benchmark): asked for every field of every decoded body; the
  // options never change once loaded, so each field's shape is read once and shared, frozen.
  let shape = shapes.get(field);
  if (!shape) {
    shape = Object.freeze(readShape(field));
    shapes.set(field, shape);
  }
  return shape;
}
const shapes = new WeakMap<protobuf.Field, GoShape>();

function readShape(field: protobuf.Field): GoShape {
  const o = field.options ?? {};
  const mergeKey = o["(mergeKey)"] as string | undefined;
  return {
    ptr: o["(ptr)"] === true,
    always: o["(always)"] === true,
    inline: o["(inline)"] === true,
    required: o["(required)"] === true,
    mergeKey,
    patch: (o["(patch)"] as string | undefined) ?? (mergeKey ? "merge" : undefined),
    goType: o["(goType)"] as string | undefined,
  };
}
// #endregion go-shape

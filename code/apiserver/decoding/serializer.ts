/**
 * The JSON and YAML serializer's decode — a request body (`application/json` or
 * `application/yaml`) to a typed object, with upstream's errors: syntax, kind, types, and the
 * strict (unknown and duplicate field) errors field validation decides about.
 *
 * Solves:
 * - one decoder for every kind, driven by the kind's .proto message (protobuf/registry.ts), so a
 *   body is checked against the same types the protobuf decoder and the OpenAPI documents use;
 * - the 400 a client gets reads as upstream's create/update handlers write it
 *   (transformDecodeError): `Pod in version "v1" cannot be handled as a Pod: json: cannot
 *   unmarshal string into Go struct field PodSpec.spec.terminationGracePeriodSeconds of type
 *   int64`, or, before the kind is known, `the object provided is unrecognized (must be of type
 *   Pod): couldn't get version/kind; json parse error: … (7b22…)`.
 *
 * Invariants:
 * - YAML is converted to JSON first and then decoded as JSON, as upstream's YAMLToJSON does; a
 *   duplicate YAML key is one more strict error (`yaml: unmarshal errors: line 4: key "name"
 *   already set in map`);
 * - a kind without a .proto message is decoded as free-form JSON (no types, no strict errors);
 * - nothing here recurses over the body's depth (json-tree.ts, unmarshal.ts).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/serializer/json/json.go (Serializer.Decode, Serializer.unmarshal)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/serializer/json/meta.go (SimpleMetaFactory.Interpret)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go (transformDecodeError, summarizeData)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/error.go (NewStrictDecodingError)
 * @chapter 02-apiserver
 */
import { parseDocument } from "yaml";
import type { KubeObject } from "../../api/meta.ts";
import { newBadRequest, type StatusError } from "../errors.ts";
import { messageFor } from "../protobuf/registry.ts";
import { fromValue, type JSONNode, JSONSyntaxError, parseJSONTree, toValue } from "./json-tree.ts";
import { UnmarshalError, unmarshal } from "./unmarshal.ts";

export interface GroupVersionKind {
  apiVersion: string;
  kind: string;
}

export interface DecodedObject {
  obj: KubeObject;
  /** Unknown and duplicate fields; what happens to them is field validation's call. */
  strictErrors: string[];
  /** `Pod in version "v1" cannot be handled as a Pod`: the prefix of every later decode error. */
  errorPrefix: string;
  /**
   * Decoded against the kind's message: every field it does not know was dropped (and named in
   * strictErrors), so there is nothing left for field validation's name check to find.
   */
  typed: boolean;
}

/** The Go type of the anonymous struct Interpret decodes into, as Go prints it in an error. */
const findKindType =
  'struct { APIVersion string "json:\\"apiVersion,omitempty\\""; Kind string "json:\\"kind,omitempty\\"" }';

// #region decode
/**
 * Decodes a JSON (or YAML) body as `expected`'s kind. `strict` asks for unknown and duplicate
 * fields (fieldValidation Warn or Strict). Throws a 400 StatusError with upstream's text.
 */
export function decodeObject(
  body: Buffer,
  format: "json" | "yaml",
  expected: GroupVersionKind,
  strict: boolean,
): DecodedObject {
  const unrecognized = (err: string): StatusError =>
    newBadRequest(
      `the object provided is unrecognized (must be of type ${expected.kind}): ${err} (${summarizeData(body, 30)})`,
    );
  const strictErrors: string[] = [];
  let text = body.toString("utf8");
  if (format === "yaml") {
    const converted = yamlToJSON(text, strict);
    if ("error" in converted) throw unrecognized(`error converting YAML to JSON: ${converted.error}`);
    text = converted.json;
    strictErrors.push(...converted.strictErrors);
  }

  let tree: JSONNode;
  try {
    tree = parseJSONTree(text);
  } catch (e) {
    if (!(e instanceof JSONSyntaxError)) throw e;
    throw unrecognized(`couldn't get version/kind; json parse error: ${e.message}`);
  }
  const interpretError = interpret(tree);
  if (interpretError) throw unrecognized(`couldn't get version/kind; json parse error: ${interpretError}`);
  if (tree.kind === "null") tree = { kind: "object", entries: [] };
  if (tree.kind !== "object") throw unrecognized("couldn't get version/kind");

  const typeMeta = (key: string) => {
    const entry = tree.kind === "object" ? tree.entries.findLast(([k]) => k === key) : undefined;
    return entry && entry[1].kind === "string" ? entry[1].value : "";
  };
  const apiVersion = typeMeta("apiVersion") || expected.apiVersion;
  const kind = typeMeta("kind") || expected.kind;
  const version = apiVersion.split("/").pop() ?? "";
  const errorPrefix = `${kind} in version ${JSON.stringify(version)} cannot be handled as a ${expected.kind}`;

  const message = messageFor(apiVersion, kind) ?? messageFor(expected.apiVersion, expected.kind);
  if (!message) {
    // No .proto for this kind (none served today; round-trip.test.ts checks): free-form JSON,
    // whose names handlers/field-validation.ts checks.
    return { obj: toValue(tree) as KubeObject, strictErrors, errorPrefix, typed: false };
  }
  try {
    const decoded = unmarshal(tree, message, { strict, extraStrings: ["apiVersion", "kind"] });
    strictErrors.push(...decoded.strictErrors);
    return { obj: decoded.value as KubeObject, strictErrors, errorPrefix, typed: true };
  } catch (e) {
    if (e instanceof UnmarshalError) throw newBadRequest(`${errorPrefix}: ${e.message}`);
    throw e;
  }
}
// #endregion decode

/**
 * SimpleMetaFactory.Interpret: apiVersion and kind read with Go's plain decoder into an anonymous
 * struct, so a body that is not an object, or a non-string kind, fails here — before any type.
 */
function interpret(tree: JSONNode): string | undefined {
  if (tree.kind === "null") return undefined;
  if (tree.kind !== "object")
    return `json: cannot unmarshal ${tree.kind} into Go value of type ${findKindType}`;
  for (const [k, v] of tree.entries) {
    if ((k === "apiVersion" || k === "kind") && v.kind !== "string" && v.kind !== "null") {
      return `json: cannot unmarshal ${v.kind} into Go struct field .${k} of type string`;
    }
  }
  return undefined;
}

/** summarizeData: the start of a body for an error message, hex unless it looks like JSON. */
export function summarizeData(data: Buffer, maxLength: number): string {
  if (data.length === 0) return "<empty>";
  const head = data.subarray(0, maxLength);
  const more = data.length > maxLength ? " ..." : "";
  if (data[0] === 0x7b) return `${head.toString("utf8")}${more}`;
  return `${head.toString("hex")}${more}`;
}

// #region yaml-to-json
/**
 * sigs.k8s.io/yaml's YAMLToJSON: the first document as JSON text. With `strict`, a key given
 * twice in one mapping is also reported, as YAMLToJSONStrict reports it.
 */
function yamlToJSON(
  text: string,
  strict: boolean,
): { json: string; strictErrors: string[] } | { error: string } {
  const doc = parseDocument(text, { uniqueKeys: false, logLevel: "silent" });
  const fatal = doc.errors[0];
  if (fatal) return { error: `yaml: ${fatal.message.split(" at line")[0]}${lineOf(fatal.linePos)}` };
  let json: string;
  try {
    json = JSON.stringify(doc.toJS({ maxAliasCount: 100 })) ?? "null";
  } catch (e) {
    return { error: `yaml: ${(e as Error).message.split("\n")[0]}` };
  }
  const duplicates = strict ? yamlDuplicateKeys(text) : undefined;
  return { json, strictErrors: duplicates ? [duplicates] : [] };
}

/**
 * goyaml's strict error for keys given twice in one mapping (`yaml: unmarshal errors:\n  line 5:
 * key "name" already set in map`), or undefined when there are none.
 */
export function yamlDuplicateKeys(text: string): string | undefined {
  const duplicates = parseDocument(text, { logLevel: "silent" }).errors.filter(
    (e) => e.code === "DUPLICATE_KEY",
  );
  if (duplicates.length === 0) return undefined;
  const lines = text.split("\n");
  const each = duplicates.map((e) => {
    const line = e.linePos?.[0].line ?? 0;
    const key = (lines[line - 1] ?? "")
      .trim()
      .replace(/^- /, "")
      .split(":")[0]
      .replace(/^["']|["']$/g, "");
    return `  line ${line}: key ${JSON.stringify(key)} already set in map`;
  });
  return `yaml: unmarshal errors:\n${each.join("\n")}`;
}

function lineOf(pos: { line: number }[] | undefined): string {
  return pos?.[0] ? ` (line ${pos[0].line})` : "";
}
// #endregion yaml-to-json

/**
 * Decodes an object already in memory (a patched object) as `expected`'s kind, as upstream
 * decodes the patched JSON into the Go struct. Returns Go's error text instead of throwing.
 */
export function unmarshalObject(
  value: unknown,
  expected: GroupVersionKind,
  strict: boolean,
): { obj: KubeObject; strictErrors: string[] } | { error: string } {
  const tree = fromValue(value);
  const message = messageFor(expected.apiVersion, expected.kind);
  if (!message || tree.kind !== "object") return { obj: value as KubeObject, strictErrors: [] };
  try {
    const decoded = unmarshal(tree, message, { strict, extraStrings: ["apiVersion", "kind"] });
    return { obj: decoded.value as KubeObject, strictErrors: decoded.strictErrors };
  } catch (e) {
    if (e instanceof UnmarshalError) return { error: e.message };
    throw e;
  }
}

// #region strict-outcome
/**
 * What field validation makes of a decode's strict errors (upstream's create and update
 * handlers): Strict refuses the body, `Pod in version "v1" cannot be handled as a Pod: strict
 * decoding error: unknown field "spec.foo"`; Warn (the default) returns each as a warning; Ignore
 * never asked for them.
 */
export function strictDecodingOutcome(directive: string | null, decoded: DecodedObject): string[] {
  if (directive === "Strict") {
    throw newBadRequest(`${decoded.errorPrefix}: ${newStrictDecodingError(decoded.strictErrors)}`);
  }
  return directive === "Ignore" ? [] : [...decoded.strictErrors];
}

/** runtime.NewStrictDecodingError(errs).Error(). */
export function newStrictDecodingError(errs: readonly string[]): string {
  return `strict decoding error: ${errs.join(", ")}`;
}
// #endregion strict-outcome

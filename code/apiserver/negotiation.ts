/**
 * Content negotiation — which format a request body is in (Content-Type) and which format the
 * client wants back (Accept), including the Table view kubectl asks for. Upstream: k8s.io/apiserver's
 * handlers/negotiation/negotiate.go.
 *
 * Solves:
 * - `kubectl apply -f pod.yaml` sends JSON, `curl --data-binary @pod.yaml -H 'Content-Type:
 *   application/yaml'` sends YAML, `kubectl create deployment` sends protobuf: the handlers want
 *   one object whatever came;
 * - `kubectl get pods` sends `Accept: application/json;as=Table;v=v1;g=meta.k8s.io,
 *   application/json` and prints the server's columns: the server must recognise that media
 *   type with its parameters, and fall back to plain JSON for a client that accepts both;
 * - a body in a format the server cannot read is a 415 and names the formats it can.
 *
 * Invariants:
 * - a request body decodes to an object with `apiVersion` and `kind` (filled from the URL when
 *   absent, as upstream's decoder defaults them); an apiVersion that disagrees is a 400;
 * - a JSON or YAML body is decoded against its kind's types (decoding/serializer.ts): a value of
 *   the wrong type is a 400, never stored;
 * - responses are JSON; the Accept header only chooses between an object and a Table.
 *
 * What upstream does differently: it can also answer in YAML and protobuf, and in
 * PartialObjectMetadata form; we answer JSON to every client, even one that asked only for YAML
 * (JSON is valid YAML).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/negotiation/negotiate.go (NegotiateInputSerializer, NegotiateOutputMediaType, MediaTypeOptions)
 * @upstream munnerz/goautoneg autoneg.go (ParseAccept: the Accept header's entries by weight)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go (transformDecodeError)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go (transformResponseObject, asTable)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../api/meta.ts";
import { type DecodedObject, decodeObject, strictDecodingOutcome } from "./decoding/serializer.ts";
import {
  isStatusError,
  newBadRequest,
  newNotAcceptableError,
  newUnsupportedMediaTypeError,
} from "./errors.ts";

export const jsonMediaType = "application/json";
export const yamlMediaType = "application/yaml";
export const protobufMediaType = "application/vnd.kubernetes.protobuf";
/** The request body formats we read, in upstream's order. */
export const supportedMediaTypes = [jsonMediaType, yamlMediaType, protobufMediaType];

/** A protobuf decoder, when one is plugged in (code/apiserver/protobuf/). */
export type ProtobufDecoder = (body: Uint8Array) => KubeObject;

/** A media type and its parameters: `application/json;as=Table;v=v1;g=meta.k8s.io`. */
export interface MediaType {
  type: string;
  params: Record<string, string>;
}

export function parseMediaType(value: string): MediaType {
  const [type, ...rest] = value.split(";");
  const params: Record<string, string> = {};
  for (const p of rest) {
    const eq = p.indexOf("=");
    if (eq > 0)
      params[p.slice(0, eq).trim().toLowerCase()] = p
        .slice(eq + 1)
        .trim()
        .replace(/^"|"$/g, "");
  }
  return { type: type.trim().toLowerCase(), params };
}

/** One entry of an Accept header: a media type with its `q` weight (its other parameters kept). */
export interface MediaRange extends MediaType {
  q: number;
}

/**
 * goautoneg.ParseAccept, as far as we need it: the entries of an Accept header, most wanted
 * first (by `q`; among equal weights the client's order decides), without those of weight 0.
 * No header at all accepts anything.
 */
export function parseAccept(header: string | undefined): MediaRange[] {
  if (!header) return [{ type: "*/*", params: {}, q: 1 }];
  const ranges = header.split(",").map((entry): MediaRange => {
    const { type, params } = parseMediaType(entry);
    const q = params.q === undefined ? 1 : Number(params.q);
    delete params.q;
    return { type, params, q: Number.isNaN(q) ? 0 : q };
  });
  return ranges.filter((r) => r.q > 0).sort((a, b) => b.q - a.q);
}

// #region decode-body
/**
 * Field validation's view of a decode: the directive (`?fieldValidation=`, null for the default
 * Warn) and where the Warn directive's warnings go.
 */
export interface FieldValidation {
  directive: string | null;
  warnings: string[];
  /**
   * Set by decodeBody when the body was decoded against the kind's message (JSON or YAML): the
   * OpenAPI schema is generated from the same .proto, so the name check by schema
   * (handlers/field-validation.ts) would find nothing; it is skipped.
   */
  namesChecked?: boolean;
}

/**
 * Decodes a request body to an object. `expected` is the apiVersion and kind the URL implies;
 * they fill a body that leaves them out. JSON and YAML are decoded against the kind's types
 * (decoding/serializer.ts); with `fieldValidation`, unknown and duplicate fields are refused
 * (Strict) or reported (Warn).
 */
export function decodeBody(
  contentType: string | undefined,
  body: Buffer,
  expected: { apiVersion: string; kind: string },
  decodeProtobuf?: ProtobufDecoder,
  fieldValidation?: FieldValidation,
): KubeObject {
  // Upstream treats a missing Content-Type as JSON.
  const media = parseMediaType(contentType || jsonMediaType);
  let obj: unknown;
  let decoded: DecodedObject | undefined;
  const strict = fieldValidation !== undefined && fieldValidation.directive !== "Ignore";
  if (media.type === jsonMediaType || media.type === "*/*") {
    decoded = decodeObject(body, "json", expected, strict);
    obj = decoded.obj;
  } else if (media.type === yamlMediaType || media.type === "application/yml" || media.type === "text/yaml") {
    decoded = decodeObject(body, "yaml", expected, strict);
    obj = decoded.obj;
  } else if (media.type === protobufMediaType && decodeProtobuf) {
    try {
      obj = decodeProtobuf(body);
    } catch (e) {
      // The decoder already answers in upstream's words (400 for bad bytes, 415 for a kind it has
      // no message for); only an unexpected failure gets wrapped here.
      if (isStatusError(e)) throw e;
      throw newBadRequest(`failed to decode protobuf body: ${(e as Error).message}`);
    }
  } else {
    throw newUnsupportedMediaTypeError(
      decodeProtobuf ? supportedMediaTypes : supportedMediaTypes.slice(0, 2),
    );
  }
  if (obj === null || typeof obj !== "object" || Array.isArray(obj)) {
    throw newBadRequest("Object 'Kind' is missing in the request body: the body must be a JSON object");
  }
  const o = obj as KubeObject;
  o.apiVersion ??= expected.apiVersion;
  o.kind ??= expected.kind;
  if (o.apiVersion !== expected.apiVersion) {
    throw newBadRequest(
      `the API version in the data (${o.apiVersion}) does not match the expected API version (${expected.apiVersion})`,
    );
  }
  if (o.kind !== expected.kind) {
    throw newBadRequest(
      `the kind in the data (${o.kind}) does not match the expected kind (${expected.kind})`,
    );
  }
  if (o.metadata === null || o.metadata === undefined) o.metadata = {};
  else if (typeof o.metadata !== "object" || Array.isArray(o.metadata)) {
    throw newBadRequest(
      `json: cannot unmarshal ${typeof o.metadata} into Go struct field ${o.kind}.metadata of type v1.ObjectMeta`,
    );
  }
  if (decoded?.typed && fieldValidation) fieldValidation.namesChecked = true;
  if (decoded && fieldValidation && decoded.strictErrors.length > 0) {
    fieldValidation.warnings.push(...strictDecodingOutcome(fieldValidation.directive, decoded));
  }
  return o;
}
// #endregion decode-body

/** JSON.parse with upstream's wording for a body it cannot read. */
export function parseJSON(body: Buffer): unknown {
  try {
    return JSON.parse(body.toString("utf8"));
  } catch (e) {
    throw newBadRequest(`couldn't get version/kind; json parse error: ${(e as Error).message}`);
  }
}

// #region negotiate-output
export type OutputKind = { as: "object" } | { as: "table"; version: "v1" | "v1beta1" };

/**
 * Reads the Accept header: the most wanted acceptable entry wins (by `q`, then the client's
 * order). A JSON, YAML or wildcard entry without `as=` means the object; a Table is served only
 * when asked for with group meta.k8s.io.
 */
export function negotiateOutput(accept: string | undefined): OutputKind {
  for (const m of parseAccept(accept)) {
    if (
      m.type !== jsonMediaType &&
      m.type !== "*/*" &&
      m.type !== "application/*" &&
      m.type !== yamlMediaType
    ) {
      continue;
    }
    if (m.params.as === undefined) return { as: "object" };
    if (
      m.params.as === "Table" &&
      m.params.g === "meta.k8s.io" &&
      (m.params.v === "v1" || m.params.v === "v1beta1")
    ) {
      return { as: "table", version: m.params.v };
    }
    // Other transformations (PartialObjectMetadata…) we do not serve: try the next entry.
  }
  throw newNotAcceptableError([jsonMediaType, yamlMediaType]);
}
// #endregion negotiate-output

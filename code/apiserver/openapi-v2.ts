/**
 * OpenAPI v2 — the document at /openapi/v2, served only as far as kubectl 1.32 reads it: a
 * gnostic protobuf (or JSON) Swagger 2.0 document without definitions.
 *
 * Solves: `kubectl apply -f widget.yaml` (a kind no group serves) must say what upstream's says,
 * `no matches for kind "Widget" in version "v1"`. kubectl first asks OpenAPI v3 whether the
 * server validates that kind's fields; for a kind v3 does not describe it validates on the
 * client, against OpenAPI v2 — and without a v2 document it stops with `failed to download
 * openapi`. With a v2 document that describes no kind, its validator finds no schema and lets
 * the object through ("resource is not present, let's just skip validation"), and the apply then
 * fails where upstream's does: mapping the kind to a resource.
 *
 * Invariants:
 * - kinds this server serves are described in v3 (openapi.ts), which kubectl 1.32 prefers: it
 *   reads v2 only for a kind v3 lacks, so a v2 document without definitions changes no answer;
 * - the protobuf body is gnostic's openapi_v2.Document: field 1 `swagger`, field 2 `info`
 *   (title 1, version 2), what kubectl's discovery client unmarshals.
 *
 * What upstream does differently: its v2 document has every kind's definitions and every path
 * (kube-openapi's handler builds both documents from the same Go types).
 *
 * @upstream kubernetes/kube-openapi pkg/handler/handler.go (OpenAPIService: /openapi/v2, application/com.github.proto-openapi.spec.v2@v1.0+protobuf)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/discovery/discovery_client.go (OpenAPISchema: openAPIV2mimePb)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/kubectl/pkg/validation/schema.go (ParamVerifyingSchema)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/kubectl/pkg/util/openapi/validation/validation.go (SchemaValidation.validateResource: no schema, no validation)
 * @chapter 02-apiserver
 */
import type { IncomingMessage, ServerResponse } from "node:http";

/** What kubectl asks for in Accept. */
export const openAPIV2ProtobufType = "application/com.github.proto-openapi.spec.v2@v1.0+protobuf";
/** What upstream answers in Content-Type: the same with "." for "@", which Go's mime parser refuses. */
export const openAPIV2ProtobufContentType = "application/com.github.proto-openapi.spec.v2.v1.0+protobuf";

const title = "Kubernetes";
const version = "v1.32.0";

/** A length-delimited protobuf field: tag (number, wire type 2), length, bytes. */
function field(number: number, bytes: Buffer): Buffer {
  if (bytes.length > 127) throw new Error("openapi-v2: field too long for a one-byte length");
  return Buffer.concat([Buffer.from([(number << 3) | 2, bytes.length]), bytes]);
}

/** gnostic's Document{swagger: "2.0", info: {title, version}}. */
export function openAPIV2Protobuf(): Buffer {
  const info = Buffer.concat([field(1, Buffer.from(title)), field(2, Buffer.from(version))]);
  return Buffer.concat([field(1, Buffer.from("2.0")), field(2, info)]);
}

/** GET /openapi/v2: protobuf when asked for it (kubectl), JSON otherwise. */
export function serveOpenAPIV2(req: IncomingMessage, res: ServerResponse): true {
  const wantsProtobuf = (req.headers.accept ?? "").includes(openAPIV2ProtobufType);
  const body = wantsProtobuf
    ? openAPIV2Protobuf()
    : Buffer.from(JSON.stringify({ swagger: "2.0", info: { title, version }, paths: {}, definitions: {} }));
  res.writeHead(200, {
    "Content-Type": wantsProtobuf ? openAPIV2ProtobufContentType : "application/json",
    "Content-Length": body.length,
    "Cache-Control": "no-cache, private",
  });
  res.end(req.method === "HEAD" ? undefined : body);
  return true;
}

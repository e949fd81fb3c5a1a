/**
 * The request scope and the helpers every REST handler shares: read the body (with its size
 * limit), answer an object, answer an error as a Status, and turn objects into the Table kubectl
 * prints. Upstream spreads the same jobs over k8s.io/apiserver's handlers/rest.go,
 * handlers/response.go and handlers/responsewriters/writers.go.
 *
 * Solves:
 * - every handler answers the same way: JSON with `kind` and `apiVersion` set, errors as a
 *   `Status` whose `code` is the HTTP status, a body over 3 MiB refused before it is parsed;
 * - `kubectl get` asks for a Table (`as=Table;g=meta.k8s.io;v=v1`): the rows come from the
 *   resource's printer, and each row carries the object (or only its metadata) as
 *   `includeObject` asks, so `--show-labels` and `-o wide` work from the same answer.
 *
 * Invariants:
 * - a handler writes exactly one response; after the headers are sent (a watch), errors travel
 *   inside the stream, never as a second status line;
 * - objects leave with their `kind` and `apiVersion` (storage keeps them, but a subresource or
 *   a created-on-update object may lack them).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go (RequestScope, limitedReadBody, transformDecodeError)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/writers.go (WriteObjectNegotiated, ErrorNegotiated)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go (transformResponseObject, asTable)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/config.go (MaxRequestBodyBytes: 3 MiB)
 * @chapter 02-apiserver
 */

import type { IncomingMessage, ServerResponse } from "node:http";
import { type FieldError, notSupported } from "../../api/field-errors.ts";
import type { KubeObject, ListMeta, Status } from "../../api/meta.ts";
import { addEvent } from "../../tracing/tracing.ts"; // chapter 8: tracing
import type { AdmissionChain } from "../admission/chain.ts";
import type { RequestAudit } from "../audit/request.ts";
import type { UserInfo } from "../authn/user.ts";
import { errorToAPIStatus, newBadRequest, newInvalid, newRequestEntityTooLargeError } from "../errors.ts";
import { tagPod } from "../filters/traces.ts";
import type { OutputKind, ProtobufDecoder } from "../negotiation.ts";
import { canonicalJSON } from "../patch/json-value.ts";
import { updateManagedFields } from "../patch/server-side-apply.ts";
import { convertToTable } from "../printers/printers.ts";
import { setIncludeObject, type Table } from "../printers/table.ts";
import type { Store } from "../registry/store.ts";
import { queryBool, type RequestInfo } from "../request-info.ts";
import { apiVersionOf, type ResourceInfo } from "../resources.ts";

/** Upstream's default --max-request-body-bytes (DefaultMaxRequestSizeBytes is 3 MiB). */
export const maxRequestBodyBytes = 3 * 1024 * 1024;

/** Everything a handler needs about one request. */
export interface RequestScope {
  req: IncomingMessage;
  res: ServerResponse;
  info: RequestInfo;
  resource: ResourceInfo;
  store: Store;
  query: URLSearchParams;
  output: OutputKind;
  decodeProtobuf?: ProtobufDecoder;
  /** Applies defaults to a decoded body (upstream defaults during decode). */
  setDefaults: (obj: KubeObject) => void;
  /** Who sent the request, as authentication decided (chapter 3); absent on the insecure port. */
  user?: UserInfo;
  /** The admission chain (chapter 3); absent: writes are not admitted (chapters 1–2). */
  admission?: AdmissionChain;
  /** Chapter 3 audit: this request's audit event (absent: no audit policy). */
  audit?: RequestAudit;
}

// #region read-body
/** Reads the body, refusing (413) one larger than the limit before reading it all. */
export function readBody(req: IncomingMessage, limit = maxRequestBodyBytes): Promise<Buffer> {
  return new Promise((resolve, reject) => {
    const declared = Number(req.headers["content-length"] ?? "0");
    if (declared > limit) {
      reject(newRequestEntityTooLargeError(`limit is ${limit}`));
      req.resume();
      return;
    }
    const chunks: Buffer[] = [];
    let size = 0;
    let tooLarge = false;
    req.on("data", (chunk: Buffer) => {
      if (tooLarge) return;
      size += chunk.length;
      if (size > limit) {
        tooLarge = true;
        reject(newRequestEntityTooLargeError(`limit is ${limit}`));
        return;
      }
      chunks.push(chunk);
    });
    req.on("end", () => {
      if (!tooLarge) resolve(Buffer.concat(chunks));
    });
    req.on("error", reject);
  });
}
// #endregion read-body

// #region write
/** Sets `kind` and `apiVersion` from the resource when an object lacks them. */
export function withTypeMeta(obj: KubeObject, resource: ResourceInfo): KubeObject {
  if (obj.kind === "Status") return obj;
  return { apiVersion: apiVersionOf(resource), kind: resource.kind, ...obj };
}

export function writeJSON(
  res: ServerResponse,
  code: number,
  body: unknown,
  extraHeaders: Record<string, string> = {},
) {
  // A Buffer, not a string: Node then writes the headers as Latin-1 bytes, which is what lets a
  // Warning carry UTF-8 (handlers/warnings.ts); with a string body it would re-encode them.
  const bytes = Buffer.from(`${JSON.stringify(body)}\n`, "utf8");
  res.writeHead(code, {
    "Content-Type": "application/json",
    "Content-Length": bytes.length,
    ...extraHeaders,
  });
  res.end(bytes);
}

/**
 * Answers a failure as a Status. Once the headers are out (a watch), a second status line is
 * impossible: the connection is cut, and the client sees its stream end (a reflector watches again).
 */
export function writeError(res: ServerResponse, e: unknown): void {
  if (res.headersSent) {
    res.destroy();
    return;
  }
  // ErrorToAPIStatus: a StatusError as it is, anything else a 500 with the error's text.
  const status = errorToAPIStatus(e).status;
  // ErrorNegotiated: a Status that asks the client to come back later says so in the header as
  // well — the header, not the body, is what client-go reads before it retries a 429 or a 5xx.
  const retryAfter = status.details?.retryAfterSeconds ?? 0;
  writeJSON(res, status.code, status, retryAfter > 0 ? { "Retry-After": String(retryAfter) } : {});
}

/** Answers one object, or its Table when the client asked for one. */
export function writeObject(scope: RequestScope, code: number, obj: KubeObject | Status): void {
  // chapter 8: tracing — the pod this request wrote or read, by uid, on its spans.
  addEvent("About to write a response");
  if (scope.resource.kind === "Pod" && obj.kind !== "Status") tagPod(obj as KubeObject);
  if (obj.kind === "Status") {
    writeJSON(scope.res, code, obj);
    return;
  }
  const typed = withTypeMeta(obj as KubeObject, scope.resource);
  if (scope.output.as === "table") {
    writeJSON(scope.res, code, asTable(scope, [typed], { resourceVersion: typed.metadata.resourceVersion }));
    return;
  }
  writeJSON(scope.res, code, typed);
}
// #endregion write

// #region as-table
/**
 * asTable: objects → Table from the resource's printer. `includeObject`: None (no object),
 * Metadata (the default: a PartialObjectMetadata), Object (the whole object).
 */
export function asTable(scope: RequestScope, objs: KubeObject[], listMeta: ListMeta): Table {
  const include = scope.query.get("includeObject") ?? "Metadata";
  if (include !== "None" && include !== "Metadata" && include !== "Object") {
    throw newBadRequest(
      `includeObject: Unsupported value: "${include}": supported values: "None", "Metadata", "Object"`,
    );
  }
  const version = scope.output.as === "table" ? scope.output.version : "v1";
  const metadata: ListMeta = {};
  if (listMeta.resourceVersion) metadata.resourceVersion = listMeta.resourceVersion;
  if (listMeta.continue) metadata.continue = listMeta.continue;
  if (listMeta.remainingItemCount !== undefined) metadata.remainingItemCount = listMeta.remainingItemCount;
  const table = convertToTable(scope.resource.group, scope.resource.resource, objs, new Date(), {
    listMeta: metadata,
    noHeaders: boolParam(scope.query, "noHeaders"),
    apiVersion: `meta.k8s.io/${version}`,
  });
  return setIncludeObject(table, objs, include);
}
// #endregion as-table

// #region managed-fields
/**
 * The field manager of a write: `?fieldManager=`, else the User-Agent up to its first "/"
 * (`kubectl/v1.32.0 (linux/amd64)` → `kubectl`), as upstream's prefixFromUserAgent.
 */
export function fieldManagerOf(scope: RequestScope): string {
  const given = scope.query.get("fieldManager");
  if (given) return given;
  const agent = scope.req.headers["user-agent"] ?? "";
  return agent.split("/")[0].slice(0, 128) || "unknown";
}

/**
 * Records the writer's fields in managedFields (an Update entry) — but only when the write
 * changes something, so that a no-op update stays a no-op (no new resourceVersion, no event).
 */
export function trackManagedFields(
  scope: RequestScope,
  current: KubeObject | undefined,
  obj: KubeObject,
): KubeObject {
  if (scope.info.subresource) return obj; // status writes: ownership is per subresource upstream; not tracked here
  const strip = (o: KubeObject) => ({
    ...o,
    metadata: { ...o.metadata, managedFields: undefined, resourceVersion: undefined },
  });
  if (current && canonicalJSON(strip(current)) === canonicalJSON(strip(obj))) {
    if (current.metadata.managedFields) obj.metadata.managedFields = current.metadata.managedFields;
    else delete obj.metadata.managedFields;
    return obj;
  }
  if (!current) delete obj.metadata.managedFields;
  else obj.metadata.managedFields = current.metadata.managedFields;
  const tracked = updateManagedFields(current, obj, fieldManagerOf(scope), apiVersionOf(scope.resource));
  if (tracked.metadata.managedFields?.length === 0) delete tracked.metadata.managedFields;
  return tracked;
}

// #endregion managed-fields

// #region query
/** An integer query parameter (undefined when absent or empty), or a 400 naming it. */
export function intParam(query: URLSearchParams, name: string): number | undefined {
  const v = query.get(name);
  if (v === null || v === "") return undefined;
  const n = Number(v);
  if (!Number.isInteger(n)) throw newBadRequest(`invalid value for ${name}: ${v}`);
  return n;
}

/** ValidateDryRun: "All" is the only value (none: a real write). */
export function validateDryRun(values: readonly string[]): FieldError[] {
  return values.some((v) => v !== "All") ? [notSupported("dryRun", values, ["All"])] : [];
}

/** `?dryRun=All`: do everything but write. */
export function dryRunParam(query: URLSearchParams, optionsKind: string): boolean {
  const values = query.getAll("dryRun");
  const errs = validateDryRun(values);
  if (errs.length > 0) throw newInvalid("meta.k8s.io", optionsKind, "", errs);
  return values.length > 0;
}

/** A boolean query flag, decoded as upstream's parameter codec does (`queryBool`). */
export function boolParam(query: URLSearchParams, name: string): boolean {
  return queryBool(query.get(name));
}
// #endregion query

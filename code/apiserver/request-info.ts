/**
 * RequestInfo — what a URL and an HTTP method ask for, in the API's words.
 * The verb (get, list, watch, create, update, patch, delete, deletecollection), the group and
 * version, the namespace, the resource, the object's name and the subresource. Upstream:
 * k8s.io/apiserver pkg/endpoints/request/requestinfo.go.
 *
 * Solves:
 * - every later step speaks in these terms, not in URLs: authorization (chapter 3) asks "may
 *   alice *list* *pods* in *default*?", the handler picks list or watch, the registry builds the
 *   storage key from namespace and name;
 * - the same request has several spellings: `GET /api/v1/pods?watch=true`, the legacy
 *   `GET /api/v1/watch/pods`, `GET /api/v1/namespaces/default/pods?watch=1` are all a watch.
 *
 * Invariants:
 * - a resource request has a verb, an apiVersion and a resource; everything else (`/version`,
 *   `/healthz`, discovery paths like `/apis`) is a non-resource request whose verb is the
 *   lower-case HTTP method;
 * - `namespaces` itself is cluster-scoped: `/api/v1/namespaces/foo` is the namespace `foo`
 *   (resource `namespaces`, name `foo`), and `/api/v1/namespaces/foo/status` its status;
 * - a GET without a name is `list` (or `watch`), a DELETE without a name `deletecollection`.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go (RequestInfoFactory, NewRequestInfo, specialVerbs, namespaceSubresources)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/conversion.go (Convert_Slice_string_To_bool)
 * @chapter 02-apiserver
 */

export interface RequestInfo {
  /** False for `/version`, `/healthz`, `/api`, `/apis`, `/apis/apps` and other non-resource paths. */
  isResourceRequest: boolean;
  path: string;
  verb: string;
  /** `api` or `apis`. */
  apiPrefix: string;
  /** "" for the core group. */
  apiGroup: string;
  apiVersion: string;
  namespace: string;
  resource: string;
  subresource: string;
  name: string;
  /** The path segments after the version (after `watch/` was taken off). */
  parts: string[];
}

const apiPrefixes = new Set(["api", "apis"]);
/** The core group has no group segment: `/api/v1/pods`. */
const grouplessApiPrefixes = new Set(["api"]);
/** Verbs that can appear as the first segment after the version (only `watch` is still served). */
const specialVerbs = new Set(["proxy", "watch"]);
/** Subresources of a namespace, which must not be read as a namespaced resource. */
const namespaceSubresources = new Set(["status", "finalize"]);

// #region request-info
/**
 * Reads a request as upstream's RequestInfoFactory does. `url` is the request target
 * (path and query), as node:http gives it.
 */
export function newRequestInfo(method: string, url: string): RequestInfo {
  const parsed = new URL(url, "http://localhost");
  const path = parsed.pathname;
  const info: RequestInfo = {
    isResourceRequest: false,
    path,
    verb: method.toLowerCase(),
    apiPrefix: "",
    apiGroup: "",
    apiVersion: "",
    namespace: "",
    resource: "",
    subresource: "",
    name: "",
    parts: [],
  };
  let parts = splitPath(path);
  // /api/v1/... or /apis/apps/v1/...; anything shorter is discovery or not the API at all.
  if (parts.length < 3 || !apiPrefixes.has(parts[0])) return info;
  info.apiPrefix = parts[0];
  parts = parts.slice(1);
  if (!grouplessApiPrefixes.has(info.apiPrefix)) {
    // /apis/apps/v1 — needs group, version and at least a resource.
    if (parts.length < 3) return info;
    info.apiGroup = parts[0];
    parts = parts.slice(1);
  }
  info.apiVersion = parts[0];
  parts = parts.slice(1);

  // The legacy watch spelling: /api/v1/watch/namespaces/default/pods.
  if (specialVerbs.has(parts[0])) {
    if (parts.length < 2) return info; // "/api/v1/watch" alone is nothing.
    info.verb = parts[0];
    parts = parts.slice(1);
  } else {
    info.verb = verbForMethod(method);
  }
  info.isResourceRequest = true;

  // /namespaces/{ns}/{resource}/... — but /namespaces/{ns} and /namespaces/{ns}/status are the
  // namespace object itself.
  if (parts[0] === "namespaces") {
    if (parts.length > 1) {
      info.namespace = parts[1];
      if (parts.length > 2 && !namespaceSubresources.has(parts[2])) parts = parts.slice(2);
    }
  } else {
    info.namespace = "";
  }
  info.parts = parts;
  // resource, name, subresource; more segments than that are for proxies, which we do not serve.
  if (parts.length >= 3) info.subresource = parts[2];
  if (parts.length >= 2) info.name = parts[1];
  if (parts.length >= 1) info.resource = parts[0];

  // Without a name, GET is a collection read and DELETE a collection delete.
  if (info.name === "" && info.verb === "get") {
    info.verb = queryBool(parsed.searchParams.get("watch")) ? "watch" : "list";
  }
  if (info.name === "" && info.verb === "delete") info.verb = "deletecollection";
  return info;
}
// #endregion request-info

function verbForMethod(method: string): string {
  switch (method.toUpperCase()) {
    case "POST":
      return "create";
    case "GET":
    case "HEAD":
      return "get";
    case "PUT":
      return "update";
    case "PATCH":
      return "patch";
    case "DELETE":
      return "delete";
    default:
      return "";
  }
}

/**
 * A boolean query parameter as upstream decodes it (runtime.Convert_Slice_string_To_bool), not as
 * strconv.ParseBool would: only "0" and "false" (any case) are false; any other value — `yes`, `f`,
 * even an empty `?watch=` — is true. Every boolean option of the query string goes through it:
 * `watch`, `allowWatchBookmarks`, `orphanDependents`, `force`, `noHeaders`.
 */
export function queryBool(value: string | null): boolean {
  return value !== null && value !== "0" && value.toLowerCase() !== "false";
}

function splitPath(path: string): string[] {
  const trimmed = path.replace(/^\/+|\/+$/g, "");
  return trimmed === "" ? [] : trimmed.split("/").map(decodeURIComponent);
}

/**
 * Discovery — the documents a client reads before it touches any object: /version, /api,
 * /apis, /api/v1, /apis/<group>/<version>, and the aggregated form of /api and /apis. Upstream:
 * k8s.io/apiserver's endpoints/discovery/ package (aggregated/handler.go for the aggregated form).
 *
 * Solves:
 * - kubectl turns `kubectl get po` into a URL only through discovery: it learns that `po` is a
 *   short name of `pods`, that pods are namespaced, that they live under /api/v1, that `get`
 *   is allowed; without these documents no command that names a resource works;
 * - kubectl asks for the aggregated form first (one response with every group, version and
 *   resource) and reads the answer's Content-Type to know which form it got — so the answer
 *   must carry exactly `application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList`
 *   (or v2beta1) when it is aggregated, and plain `application/json` when it is not;
 * - the kubectl on this machine is a dispatcher that runs the kubectl binary matching the
 *   server's /version minor, so /version must say 1.32.
 *
 * Invariants:
 * - everything here is computed from the resource table (resources.ts): discovery, routing and
 *   OpenAPI cannot disagree;
 * - groups are listed in upstream's priority order (apps first), which decides which group wins
 *   when two groups serve the same resource name;
 * - an aggregated answer carries an ETag (hash of the body); a request whose If-None-Match
 *   equals it gets 304, as upstream, so clients can cache discovery cheaply.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/discovery/aggregated/handler.go (resourceDiscoveryManager.ServeHTTP)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/discovery/aggregated/etag.go (ServeHTTPWithETag, calculateETag)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/discovery/legacy.go (legacyRootAPIHandler: /api)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/discovery/root.go (rootAPIsHandler: /apis)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/discovery/version.go (APIResourceList per group version)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/discovery/storageversionhash.go (StorageVersionHash)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/responsewriters/writers.go (generateMediaTypeWithGVK: the answer's Content-Type)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/discovery/discovery_client.go (AcceptV2, AcceptV2Beta1, ContentTypeIsGVK)
 * @upstream kubernetes/kubernetes pkg/controlplane/apiserver/aggregator.go (DefaultGenericAPIServicePriorities: authentication.k8s.io 17700, authorization.k8s.io 17600, coordination.k8s.io 16500, discovery.k8s.io 16200)
 * @upstream kubernetes/kubernetes cmd/kube-apiserver/app/aggregator.go (apiVersionPriorities: apps 17800, rbac.authorization.k8s.io 17000, scheduling.k8s.io 16600)
 * @chapter 02-apiserver
 */
import { createHash } from "node:crypto";
import type { IncomingMessage, ServerResponse } from "node:http";
import { newNotAcceptableError, type StatusError } from "./errors.ts";
import { parseAccept } from "./negotiation.ts";
import { serveOpenAPI } from "./openapi.ts";
import { apiVersionOf, type ResourceInfo, resources } from "./resources.ts";

// #region version
/** The body of GET /version (version.Info). */
export const versionInfo = {
  major: "1",
  minor: "32",
  gitVersion: "v1.32.0",
  gitCommit: "70d3cc986aa8221cd1dfb1121852688902d3bf53",
  gitTreeState: "clean",
  buildDate: "2024-12-11T17:57:30Z",
  goVersion: "go1.23.3",
  compiler: "gc",
  platform: `${process.platform}/${process.arch === "x64" ? "amd64" : process.arch}`,
};
// #endregion version

/** Upstream's group order (highest priority first); unknown groups sort after, by name. */
// chapter 3: authentication.k8s.io (17700) sits between apps (17800) and authorization.k8s.io (17600).
const groupPriority = [
  "",
  "apps",
  "authentication.k8s.io",
  "authorization.k8s.io",
  "policy", // chapter 5: PodDisruptionBudgets (17100)
  "rbac.authorization.k8s.io", // chapter 3: RBAC (17000)
  "admissionregistration.k8s.io", // chapter 3: webhooks (16700)
  "scheduling.k8s.io",
  "coordination.k8s.io",
  "discovery.k8s.io", // EndpointSlices (16200)
];

export function groupNames(): string[] {
  const names = [...new Set(resources.map((r) => r.group))];
  const rank = (g: string) => (groupPriority.includes(g) ? groupPriority.indexOf(g) : groupPriority.length);
  return names.sort((a, b) => rank(a) - rank(b) || a.localeCompare(b));
}

function versionsOf(group: string): string[] {
  return [...new Set(resources.filter((r) => r.group === group).map((r) => r.version))];
}

/** The resources of one group version, sorted by name as upstream lists them. */
function resourcesOf(group: string, version: string): ResourceInfo[] {
  return resources
    .filter((r) => r.group === group && r.version === version)
    .sort((a, b) => a.resource.localeCompare(b.resource));
}

// #region storage-version-hash
/**
 * Upstream's storageVersionHash: the first 8 bytes of sha256("group/version/kind"), base64.
 * Clients (the storage version migrator) compare it to see that the stored encoding changed.
 */
export function storageVersionHash(group: string, version: string, kind: string): string {
  return createHash("sha256")
    .update(`${group}/${version}/${kind}`)
    .digest()
    .subarray(0, 8)
    .toString("base64");
}
// #endregion storage-version-hash

// #region legacy-discovery
/** GET /api: the versions of the core group (APIVersions). */
export function apiVersions(serverAddress: string) {
  return {
    kind: "APIVersions",
    versions: versionsOf(""),
    serverAddressByClientCIDRs: [{ clientCIDR: "0.0.0.0/0", serverAddress }],
  };
}

/** GET /apis: every named group with its versions (APIGroupList). */
export function apiGroupList() {
  return {
    kind: "APIGroupList",
    apiVersion: "v1",
    groups: groupNames()
      .filter((g) => g !== "")
      .map((name) => {
        const versions = versionsOf(name).map((version) => ({ groupVersion: `${name}/${version}`, version }));
        return { name, versions, preferredVersion: versions[0] };
      }),
  };
}

/** GET /api/v1 or /apis/<group>/<version>: the resources and subresources (APIResourceList). */
export function apiResourceList(group: string, version: string) {
  const list: Record<string, unknown>[] = [];
  for (const r of resourcesOf(group, version)) {
    list.push({
      name: r.resource,
      singularName: r.singularName,
      namespaced: r.namespaced,
      kind: r.kind,
      verbs: r.verbs,
      ...(r.shortNames ? { shortNames: r.shortNames } : {}),
      ...(r.categories ? { categories: r.categories } : {}),
      ...(r.stored === false ? {} : { storageVersionHash: storageVersionHash(group, version, r.kind) }),
    });
    for (const s of [...r.subresources].sort((a, b) => a.name.localeCompare(b.name))) {
      list.push({
        name: `${r.resource}/${s.name}`,
        singularName: "",
        namespaced: r.namespaced,
        ...(s.group !== undefined ? { group: s.group, version: s.version } : {}),
        kind: s.kind,
        verbs: s.verbs,
      });
    }
  }
  return {
    kind: "APIResourceList",
    apiVersion: "v1",
    groupVersion: apiVersionOf({ group, version }),
    resources: list,
  };
}
// #endregion legacy-discovery

// #region aggregated-discovery
export type AggregatedVersion = "v2" | "v2beta1";

/** The media type kubectl asks for, and we answer with, for aggregated discovery. */
export function aggregatedMediaType(v: AggregatedVersion): string {
  return `application/json;g=apidiscovery.k8s.io;v=${v};as=APIGroupDiscoveryList`;
}

/**
 * The aggregated document (APIGroupDiscoveryList): for /api the core group alone (its name is
 * ""), for /apis every named group. One response replaces one request per group version.
 */
export function aggregatedDiscovery(legacy: boolean, v: AggregatedVersion) {
  const groups = groupNames().filter((g) => (legacy ? g === "" : g !== ""));
  return {
    kind: "APIGroupDiscoveryList",
    apiVersion: `apidiscovery.k8s.io/${v}`,
    metadata: {},
    items: groups.map((group) => ({
      metadata: { ...(group ? { name: group } : {}), creationTimestamp: null },
      versions: versionsOf(group).map((version) => ({
        version,
        resources: resourcesOf(group, version).map((r) => ({
          resource: r.resource,
          responseKind: { group, version, kind: r.kind },
          scope: r.namespaced ? "Namespaced" : "Cluster",
          singularResource: r.singularName,
          verbs: r.verbs,
          ...(r.shortNames ? { shortNames: r.shortNames } : {}),
          ...(r.categories ? { categories: r.categories } : {}),
          ...(r.subresources.length
            ? {
                subresources: [...r.subresources]
                  .sort((a, b) => a.name.localeCompare(b.name))
                  .map((s) => ({
                    subresource: s.name,
                    responseKind: { group: s.group ?? group, version: s.version ?? version, kind: s.kind },
                    verbs: s.verbs,
                  })),
              }
            : {}),
        })),
        freshness: "Current",
      })),
    })),
  };
}
// #endregion aggregated-discovery

// #region negotiation
export type DiscoveryFormat = { aggregated: AggregatedVersion } | { aggregated: false };

/**
 * Picks the form of /api and /apis: the first acceptable range that we can serve. An
 * aggregated range names its group, version and kind in parameters (`g`, `v`, `as`); plain
 * JSON or a wildcard means the unaggregated document. Nothing servable → 406.
 */
export function negotiateDiscovery(
  accept: string | undefined,
  allowAggregated: boolean,
): DiscoveryFormat | StatusError {
  for (const r of parseAccept(accept)) {
    const json = r.type === "application/json" || r.type === "application/*" || r.type === "*/*";
    if (!json) continue;
    if (r.params.as !== undefined || r.params.g !== undefined || r.params.v !== undefined) {
      const v = r.params.v;
      if (
        allowAggregated &&
        r.params.g === "apidiscovery.k8s.io" &&
        r.params.as === "APIGroupDiscoveryList" &&
        (v === "v2" || v === "v2beta1")
      ) {
        return { aggregated: v };
      }
      continue;
    }
    return { aggregated: false };
  }
  return newNotAcceptableError(acceptedMediaTypes);
}

const acceptedMediaTypes = ["application/json", "application/yaml"];
// #endregion negotiation

// #region serve-discovery
/**
 * Answers the discovery and OpenAPI paths; returns false for every other path so the caller
 * can route the request on. Mount it first in the API server.
 */
export function serveDiscovery(req: IncomingMessage, res: ServerResponse): boolean {
  const url = new URL(req.url ?? "/", "http://localhost");
  const path = url.pathname.replace(/\/+$/, "") || "/";
  if (path.startsWith("/openapi/")) return serveOpenAPI(req, res, path, url);
  const accept = req.headers.accept;

  if (path === "/version") return send(res, 200, versionInfo);
  if (path === "/api" || path === "/apis") {
    if (req.method !== "GET" && req.method !== "HEAD") return false;
    const format = negotiateDiscovery(accept, true);
    if (!("aggregated" in format)) return send(res, format.code, format.status);
    if (format.aggregated) {
      const body = JSON.stringify(aggregatedDiscovery(path === "/api", format.aggregated));
      return sendWithETag(req, res, body, aggregatedMediaType(format.aggregated));
    }
    const host = req.headers.host ?? `127.0.0.1:${req.socket.localPort ?? 0}`;
    return send(res, 200, path === "/api" ? apiVersions(host) : apiGroupList());
  }
  const core = /^\/api\/([^/]+)$/.exec(path);
  const named = /^\/apis\/([^/]+)\/([^/]+)$/.exec(path);
  if (core || named) {
    const [group, version] = core ? ["", core[1]] : [named?.[1] ?? "", named?.[2] ?? ""];
    if (!versionsOf(group).includes(version)) return false; // 404 is the router's to give
    const format = negotiateDiscovery(accept, false);
    if (!("aggregated" in format)) return send(res, format.code, format.status);
    return send(res, 200, apiResourceList(group, version));
  }
  if (/^\/apis\/[^/]+$/.test(path)) {
    const name = path.slice("/apis/".length);
    const group = apiGroupList().groups.find((g) => g.name === name);
    if (!group) return false;
    return send(res, 200, { kind: "APIGroup", apiVersion: "v1", ...group });
  }
  return false;
}

function send(res: ServerResponse, code: number, body: unknown): true {
  const text = JSON.stringify(body);
  res.writeHead(code, { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(text) });
  res.end(text);
  return true;
}

/** ETag = hash of the body; If-None-Match with the same tag gets 304 and no body. */
export function sendWithETag(
  req: IncomingMessage,
  res: ServerResponse,
  body: string,
  contentType: string,
): true {
  const etag = `"${createHash("sha512").update(body).digest("hex").toUpperCase()}"`;
  const headers = { ETag: etag, Vary: "Accept", "Cache-Control": "public" };
  if (req.headers["if-none-match"] === etag) {
    res.writeHead(304, headers);
    res.end();
    return true;
  }
  res.writeHead(200, { ...headers, "Content-Type": contentType, "Content-Length": Buffer.byteLength(body) });
  res.end(req.method === "HEAD" ? undefined : body);
  return true;
}
// #endregion serve-discovery

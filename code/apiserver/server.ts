/**
 * The API server — one HTTP server that routes every request from its URL to a registry store
 * and back: discovery first, then `/api/v1/...` and `/apis/<group>/<version>/...` resources, with
 * one log line per request. Upstream: k8s.io/apiserver's handler chain (server/config.go) around
 * the routes endpoints/installer.go registers for each resource.
 *
 * Solves:
 * - the only door to the cluster's state: kubectl, controllers, the scheduler and kubelets all
 *   read and write objects here, over HTTP, never in etcd directly — so validation, defaults,
 *   optimistic concurrency and (chapter 3) authorization happen in one place;
 * - the request path in one function a reader can follow (`handle`): request info → discovery
 *   and health checks → resource → scope check → subresource or verb → handler → store → storage;
 *   this file only routes — what a resource or subresource does is its handler's (handlers/) and
 *   its registry's (registry/, registry/subresources/);
 * - every failure, whatever layer raised it, reaches the client as a `Status` with its HTTP
 *   code; a 3 MiB body limit guards the server from huge writes.
 *
 * Invariants:
 * - a path that names no served resource is a 404 Status, a served resource with a method it
 *   does not support a 405 Status;
 * - one registry store per resource, all over one storage backend; the server owns the backend
 *   and closes it last;
 * - the namespaces `default`, `kube-system`, `kube-public` and `kube-node-lease` exist from
 *   the start, as upstream's system-namespaces controller makes sure.
 *
 * What upstream does differently: filters for authentication, audit, priority and fairness,
 * authorization and panic recovery run around the handlers (chapter 3 adds authentication,
 * authorization and admission); it serves HTTPS only, and routes with go-restful.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/config.go (DefaultBuildHandlerChain)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/installer.go (APIInstaller.registerResourceHandlers: the routes per resource and scope)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/httplog/httplog.go (respLogger: the per-request log line)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/handler.go (serviceErrorHandler: go-restful's 404 and 405)
 * @upstream kubernetes/kubernetes pkg/controlplane/controller/systemnamespaces/system_namespaces_controller.go (the system namespaces)
 * @upstream kubernetes/kubernetes pkg/registry/rbac/rest/storage_rbac.go (chapter 3: the policy-based RBAC storage and the bootstrap-roles hook)
 * @chapter 02-apiserver
 */
import { randomUUID } from "node:crypto";
import { readFile } from "node:fs/promises";
import { createServer, type IncomingMessage, type Server, type ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setDefaults } from "../api/defaults.ts";
import type { KubeObject } from "../api/meta.ts";
import type { EtcdServer } from "../store/etcdserver/server.ts"; // chapter 4: informer fault tests
import type { ComponentTracerProvider } from "../tracing/provider.ts"; // chapter 8: tracing
import { withSpan } from "../tracing/tracing.ts";
import { ensureAdmissionObjects, withDefaultServiceAccounts } from "./admission/bootstrap.ts";
import type { AdmissionChain } from "./admission/chain.ts";
import { type AdmissionOptions, newAdmissionChain } from "./admission/plugins.ts";
import { type Auditor, isPanic, RequestAudit } from "./audit/request.ts";
import type { Authenticator } from "./authn/authenticator.ts";
import { type AuthenticationOptions, newAuthenticator } from "./authn/config.ts";
import type { UserInfo } from "./authn/user.ts";
import type { Authorizer } from "./authz/authorizer.ts";
import { type AuthorizationRuntime, startAuthorization } from "./authz/config.ts";
import { withEscalationChecks } from "./authz/rbac/escalation.ts";
import { serveDiscovery } from "./discovery.ts";
import { isStatusError, newBadRequest, newGenericServerResponse, type StatusError } from "./errors.ts";
import { authenticateRequest } from "./filters/authentication.ts";
import { authorizeRequest, authorizerAttributes } from "./filters/authorization.ts";
import { impersonateRequest } from "./filters/impersonation.ts";
import { tagRequest, traceFields, withTracing } from "./filters/traces.ts"; // chapter 8: tracing
import { createResource } from "./handlers/create.ts";
import { deleteResource } from "./handlers/delete.ts";
import { deleteCollection } from "./handlers/deletecollection.ts";
import { getResource } from "./handlers/get.ts";
import { listResource } from "./handlers/list.ts";
import { patchResource } from "./handlers/patch.ts";
import { type RequestScope, readBody, writeError, writeJSON } from "./handlers/rest.ts";
import {
  createBindingResource,
  createEvictionResource,
  createTokenRequestResource,
  getPodLog,
  getScaleResource,
  patchScaleResource,
  updateScaleResource,
} from "./handlers/subresources.ts";
import { updateResource } from "./handlers/update.ts";
import { serveUpgrade, type UpgradeDeps } from "./handlers/upgrade.ts";
import { watchResource } from "./handlers/watch.ts";
import { decodeBody, negotiateOutput } from "./negotiation.ts";
import { decodeProtobuf } from "./protobuf/decode.ts";
import {
  createLocalSubjectAccessReview,
  createSelfSubjectAccessReview,
  createSelfSubjectRulesReview,
  createSubjectAccessReview,
  type ReviewDeps,
} from "./registry/access-reviews.ts";
import { newRESTStorage } from "./registry/rest-storage.ts";
import { createSelfSubjectReview } from "./registry/selfsubjectreview.ts";
import type { Store } from "./registry/store.ts";
import { updateFinalize } from "./registry/subresources/finalize.ts";
import type { KubeletClientConfig } from "./registry/subresources/kubelet-client.ts";
import { newTokenREST, type TokenREST, type TokenRESTOptions } from "./registry/subresources/token.ts";
import { newRequestInfo, type RequestInfo } from "./request-info.ts";
import { findResource, type ResourceInfo } from "./resources.ts";
import { newSecureServer, type SecureServingOptions, servingCertKey } from "./serving.ts";
import { newStorageBackend } from "./storage/factory.ts";
import { withStageTiming } from "./testing/stage-timing.ts"; // benchmark (issue 12)

export interface APIServerOptions {
  /** `--etcd-servers`; none: the embedded store. */
  etcdServers?: string[];
  /** The embedded store's data directory; none: in memory. */
  dataDir?: string;
  /** `--insecure-bind-address`, default 127.0.0.1. */
  insecureBindAddress?: string;
  /** `--insecure-port`; 0 picks a free port (tests). Default 8080. */
  insecurePort?: number;
  /** Where the per-request log lines go (default: nowhere). */
  log?: (line: string) => void;
  /** Serve lists and watches through the watch cache (upstream's default). Default true. */
  watchCache?: boolean;
  /** `--etcd-compaction-interval` in milliseconds (default 5 minutes; 0 never compacts). */
  compactionIntervalMs?: number;
  /**
   * Chapter 5 (watch fan-out): a fixed watch-cache ring of this many events per resource, for
   * tests that must outrun it; unset, the ring keeps ~75 s of history (100 to 100 × 1024 events).
   */
  watchCacheCapacity?: number;
  /** Chapter 3: who sent a request (absent: everyone is the insecure port's superuser). */
  authenticator?: Authenticator;
  /** Chapter 3: may they do it (absent: AlwaysAllow). Ignored when `authorizationModes` is given. */
  authorizer?: Authorizer;
  /** Chapter 3: the admission plugins (absent: no admission, as chapters 1–2 run). */
  admission?: AdmissionOptions;
  // chapter 3: Node authorizer — an authorizer that reads the registry (its graph watches pods)
  // is built once the stores exist; it takes the place of `authorizer`.
  authorizerFromStores?: (stores: Map<string, Store>) => Authorizer;
  // chapter 3: service-account tokens
  /**
   * The signer and limits of the `serviceaccounts/token` subresource (TokenRequest, `kubectl
   * create token`); absent: that subresource answers 404.
   */
  serviceAccountTokens?: TokenRESTOptions;
  /**
   * An authenticator that reads the cluster's objects (service-account tokens check that their
   * ServiceAccount still exists), built once the stores exist; when given, used instead of
   * `authenticator`.
   */
  authenticatorFromStores?: (stores: ReadonlyMap<string, Store>) => Authenticator;
  /** chapter 3: RBAC — `--authorization-mode`, in order (RBAC, AlwaysAllow, …); absent: `authorizer`. */
  authorizationModes?: string[];
  /** Chapter 3 audit: `--audit-policy-file` and the log backend (absent: no auditing). */
  audit?: Auditor;
  // chapter 3: serving and authentication. HTTPS is served only when `securePort` is given; plain
  // HTTP when `insecurePort` is given or HTTPS is not (chapters 1–2 call startAPIServer() as before).
  /** `--secure-port`; 0 picks a free port (tests). Absent: no HTTPS. */
  securePort?: number;
  /** `--bind-address`, `--tls-cert-file`, `--tls-private-key-file`, `--cert-dir` (serving.ts). */
  secureServing?: SecureServingOptions;
  /**
   * `--client-ca-file`, `--token-auth-file`, `--anonymous-auth` and the service-account token
   * flags (authn/config.ts): the secure port's authenticator; ignored when `authenticator` is given.
   */
  authentication?: AuthenticationOptions;
  /** Told once how the serving certificate was found (`Generated self-signed cert in-memory`). */
  onServingCert?: (origin: string) => void;
  // chapter 4: controller-manager — the serviceaccounts controller's stand-in.
  /**
   * With the ServiceAccount admission plugin on, the server itself makes `default` in every
   * namespace (admission/bootstrap.ts), standing in for chapter 4's serviceaccounts controller.
   * Default true (chapters 2–3, and kube-apiserver, which has no flag for it); false for a
   * cluster whose kube-controller-manager runs that controller.
   */
  defaultServiceAccountsStandIn?: boolean;
  // chapter 4: informer fault tests — a restart that keeps the data.
  /**
   * An embedded store the caller owns: used instead of a new one, and left open by `close()`, so
   * a test can stop this server, start another on the same store (a restart that keeps every
   * object and revision) and compact it. Ignored when `etcdServers` is given.
   */
  embeddedStore?: EtcdServer;
  // chapter 7: the kubelet — pods/log and pods/exec are proxied to the pod's kubelet.
  /**
   * `--kubelet-client-certificate`, `--kubelet-client-key`, `--kubelet-certificate-authority`
   * and `--kubelet-preferred-address-types` (contents, not paths); absent: no client certificate.
   */
  kubeletClient?: KubeletClientConfig;
  // chapter 8: tracing
  /** `--tracing-config-file`'s provider: a span per request and below; absent or no-op: none. */
  tracerProvider?: ComponentTracerProvider;
}

export interface APIServer {
  /** The secure URL when serving HTTPS (`https://127.0.0.1:<port>`), else the insecure one. */
  url: string;
  /** chapter 3: `http://127.0.0.1:<port>`, when plain HTTP is served. */
  insecureURL?: string;
  /** chapter 3: `https://127.0.0.1:<port>`, when HTTPS is served. */
  secureURL?: string;
  /** chapter 3: the serving certificate's PEM (leaf first; a self-signed one ends with its CA). */
  servingCert?: string;
  close(): Promise<void>;
}

export const systemNamespaces = ["default", "kube-system", "kube-public", "kube-node-lease"];

/** What every request of one server shares: the stores and the gates behind them. */
interface ServerContext {
  stores: Map<string, Store>;
  log: (line: string) => void;
  opts: APIServerOptions;
  authz: AuthorizationRuntime;
  admission?: AdmissionChain;
  tokens?: TokenREST;
}

// #region start
/**
 * Storage, one registry store per resource, the system namespaces, the gates (authorization,
 * admission), then the listeners: HTTPS with its authenticator, and plain HTTP without one.
 */
export async function startAPIServer(opts: APIServerOptions = {}): Promise<APIServer> {
  const backend = await newStorageBackend({
    etcdServers: opts.etcdServers,
    dataDir: opts.dataDir,
    compactionIntervalMs: opts.compactionIntervalMs,
    embeddedStore: opts.embeddedStore, // chapter 4: informer fault tests
    watchCacheCapacity: opts.watchCacheCapacity, // chapter 5: tests that outrun the ring
  });
  const servers: Server[] = [];
  const stops: (() => void)[] = [];
  const closeAll = async () => {
    // Watches never end by themselves: cut every open connection.
    await Promise.all(
      servers.map(
        (s) =>
          new Promise<void>((resolve) => {
            s.close(() => resolve());
            s.closeAllConnections();
          }),
      ),
    );
    for (const stop of stops) stop();
    await backend.close();
  };
  try {
    const stores = newRESTStorage(backend, opts.watchCache ?? true);
    await ensureSystemNamespaces(stores.get("/namespaces") as Store);
    const log = opts.log ?? (() => {});
    // chapter 3: Node authorizer (tests build one over the stores)
    if (opts.authorizerFromStores) opts = { ...opts, authorizer: opts.authorizerFromStores(stores) };
    // chapter 3: RBAC and Node — the authorizer, the reviews' and the escalation checks' dependencies.
    const authz = await startAuthorization(stores, opts.authorizationModes, opts.authorizer, log);
    stops.push(() => authz.stop());
    // chapter 3: service-account tokens
    const tokens = opts.serviceAccountTokens && newTokenREST(stores, opts.serviceAccountTokens);
    const admission = opts.admission
      ? startAdmission(opts.admission, stores, { ...opts, authorizer: authz.authorizer }, log)
      : undefined;
    if (admission) {
      stops.push(() => admission.close());
      // chapter 3: admission — the system priority classes and `default` service accounts.
      const enabled = admission.plugins.map((p) => p.name);
      // chapter 4: controller-manager — the stand-in can be turned off (the controller does it).
      const standIn = opts.defaultServiceAccountsStandIn ?? true;
      await ensureAdmissionObjects(stores, enabled, systemNamespaces, { defaultServiceAccounts: standIn });
      if (standIn && enabled.includes("ServiceAccount"))
        withDefaultServiceAccounts(
          stores.get("/namespaces") as Store,
          stores.get("/serviceaccounts") as Store,
        );
    }
    // chapter 3 audit
    if (opts.audit) stops.push(() => opts.audit?.backend.shutdown());
    const ctx: ServerContext = { stores, log, opts, authz, admission, tokens };

    const secure = opts.securePort === undefined ? undefined : await listenSecurely(ctx, servers);
    let insecureURL: string | undefined;
    if (opts.insecurePort !== undefined || !secure) {
      // The insecure port: no TLS; with HTTPS beside it, no authentication either (its user is the
      // insecure superuser, as upstream's pre-1.20 insecure port), so it stays on loopback by default.
      const authenticator = secure
        ? undefined
        : (opts.authenticatorFromStores?.(stores) ?? opts.authenticator);
      const server = createServer((req, res) => void handle(ctx, authenticator, req, res));
      // chapter 7: `kubectl exec` upgrades its connection.
      server.on(
        "upgrade",
        (req, socket, head) => void serveUpgrade(upgradeDeps(ctx), authenticator, req, socket, head),
      );
      // The secure port's 90 s idle timeout (serving.ts), not Node's 5 s: a client that reuses a
      // kept-alive socket just as the server closes it gets ECONNRESET on a request it sent —
      // under the scheduler benchmark, hundreds of bindings and evictions a run.
      server.keepAliveTimeout = 90_000;
      servers.push(server);
      insecureURL = await listen(
        server,
        "http",
        opts.insecurePort ?? 8080,
        opts.insecureBindAddress ?? "127.0.0.1",
      );
    }
    return {
      url: secure?.url ?? (insecureURL as string),
      insecureURL,
      secureURL: secure?.url,
      servingCert: secure?.cert,
      close: closeAll,
    };
  } catch (e) {
    await closeAll();
    throw e;
  }
}
// #endregion start

/** chapter 7: what an upgrade (`kubectl exec`) needs of the server: its gates and stores. */
function upgradeDeps(ctx: ServerContext): UpgradeDeps {
  return {
    authorizer: ctx.authz.authorizer,
    pods: ctx.stores.get("/pods") as Store,
    nodes: ctx.stores.get("/nodes") as Store,
    kubeletClient: ctx.opts.kubeletClient ?? {},
    log: ctx.log,
  };
}

// #region listen-securely
/** chapter 3: the HTTPS listener: its certificate, its authenticator, its port. */
async function listenSecurely(ctx: ServerContext, servers: Server[]): Promise<{ url: string; cert: string }> {
  const { opts, stores } = ctx;
  const authenticator =
    opts.authenticatorFromStores?.(stores) ??
    opts.authenticator ??
    (await newAuthenticator(opts.authentication ?? {}, stores));
  const cert = await servingCertKey(opts.secureServing ?? {});
  opts.onServingCert?.(cert.origin);
  const clientCAFile = opts.authentication?.clientCAFile;
  const clientCA = clientCAFile ? await readFile(clientCAFile, "utf8") : undefined;
  // benchmark (issue 12): per-stage timing of the gates — unchanged unless the benchmark's child
  // turned it on (testing/stage-timing.ts).
  const gates = withStageTiming(ctx, authenticator);
  const server = newSecureServer(
    cert,
    clientCA,
    (req, res) => void handle(gates.ctx, gates.authenticator, req, res),
  );
  // chapter 7: `kubectl exec` upgrades its connection; the same gates run first.
  server.on(
    "upgrade",
    (req, socket, head) => void serveUpgrade(upgradeDeps(gates.ctx), gates.authenticator, req, socket, head),
  );
  servers.push(server as unknown as Server);
  const url = await listen(
    server,
    "https",
    opts.securePort as number,
    opts.secureServing?.bindAddress ?? "127.0.0.1",
  );
  return { url, cert: cert.cert };
}
// #endregion listen-securely

/** Listens on host:port (0: a free port) and returns the URL a client on this machine dials. */
async function listen(
  server: Pick<Server, "once" | "off" | "listen" | "address">,
  scheme: string,
  port: number,
  host: string,
): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(port, host, () => {
      server.off("error", reject);
      resolve();
    });
  });
  const bound = (server.address() as AddressInfo).port;
  const urlHost = host.includes(":")
    ? host === "::"
      ? "127.0.0.1"
      : `[${host}]`
    : host === "0.0.0.0"
      ? "127.0.0.1"
      : host;
  return `${scheme}://${urlHost}:${bound}`;
}

/** The admission chain of the enabled plugins, logged as upstream logs it at start. */
function startAdmission(
  options: AdmissionOptions,
  stores: Map<string, Store>,
  opts: APIServerOptions,
  log: (line: string) => void,
): AdmissionChain {
  const { chain, skipped } = newAdmissionChain(options, {
    store: (group, resource) => stores.get(`${group}/${resource}`),
    authorizer: opts.authorizer,
  });
  const names = (ps: readonly { name: string }[]) => ps.map((p) => p.name).join(",");
  log(
    `Loaded ${chain.mutating.length} mutating admission controller(s) successfully in the following order: ${names(chain.mutating)}.`,
  );
  log(
    `Loaded ${chain.validating.length} validating admission controller(s) successfully in the following order: ${names(chain.validating)}.`,
  );
  if (skipped.length > 0)
    log(`Admission plugins enabled but not built in this miniature (skipped): ${skipped.join(",")}.`);
  return chain;
}

async function ensureSystemNamespaces(namespaces: Store): Promise<void> {
  for (const name of systemNamespaces) {
    try {
      await namespaces.get("", name);
    } catch (e) {
      if (!(isStatusError(e) && e.code === 404)) throw e;
      const ns: KubeObject = { apiVersion: "v1", kind: "Namespace", metadata: { name } };
      setDefaults(ns);
      await namespaces.create("", ns).catch((err) => {
        if (!(isStatusError(err) && err.code === 409)) throw err;
      });
    }
  }
}

/** chapter 8: tracing — the request inside its span (filters/traces.ts), when the server traces. */
function handle(
  ctx: ServerContext,
  authenticator: Authenticator | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  return withTracing(ctx.opts.tracerProvider, req, res, () => serveRequest(ctx, authenticator, req, res));
}

// #region handle
/** The whole request path. Every branch ends in exactly one response. */
async function serveRequest(
  ctx: ServerContext,
  authenticator: Authenticator | undefined,
  req: IncomingMessage,
  res: ServerResponse,
): Promise<void> {
  const { stores, log, opts, authz, admission, tokens } = ctx;
  const started = process.hrtime.bigint();
  let info: RequestInfo = newRequestInfo(req.method ?? "GET", "/");
  // Every request gets an audit ID, returned to the client and logged, to match the two up.
  const auditID = randomUUID();
  res.setHeader("Audit-Id", auditID);
  res.once("close", () => log(httpLogLine(req, res, info, started, auditID)));
  // Chapter 3 audit: one event per stage; nothing is created without a policy.
  const audit = opts.audit ? new RequestAudit(opts.audit, req, res, auditID) : undefined;
  try {
    info = parseRequestInfo(req);
    // The gates (chapter 3): who is it, and may they? Before any handler reads the body.
    const authenticated = await withSpan("authentication", {}, () => authenticateRequest(req, authenticator));
    // Chapter 3 audit: as upstream's WithAudit, after authentication and before impersonation, so
    // the event's user is who really sent the request and the policy is chosen for them.
    audit?.begin(authenticated, info);
    const user = await impersonateRequest(req, authenticated, authz.authorizer);
    if (user !== authenticated) audit?.logImpersonatedUser(user);
    tagRequest(info, req.method ?? "GET", user); // chapter 8: tracing
    const query = new URL(req.url ?? "/", "http://localhost").searchParams;
    await authorizeRequest(authorizerAttributes(user, info, query), authz.authorizer, audit?.recordDecision);
    if (serveDiscovery(req, res)) return;
    if (["/healthz", "/livez", "/readyz"].includes(info.path.replace(/\/+$/, ""))) {
      res.writeHead(200, { "Content-Type": "text/plain; charset=utf-8" });
      res.end("ok");
      return;
    }
    if (!info.isResourceRequest) throw serviceError(404);
    const resource = findResource(info.apiGroup, info.apiVersion, info.resource);
    if (!resource) throw serviceError(404);
    checkScope(resource, info);
    // chapter 3: serving and authentication — `kubectl auth whoami`.
    if (resource.group === "authentication.k8s.io" && resource.resource === "selfsubjectreviews") {
      await serveSelfSubjectReview(req, res, info, user);
      return;
    }
    if (resource.group === "authorization.k8s.io") {
      await serveAccessReview(req, res, info, resource, user, authz.reviews);
      return;
    }
    const scope: RequestScope = {
      req,
      res,
      info,
      resource,
      // chapter 3: RBAC — roles and bindings are written only without escalation.
      store: withEscalationChecks(
        stores.get(`${resource.group}/${resource.resource}`) as Store,
        user,
        authz.escalation,
      ),
      query, // the one parsed for authorization (apiceil: one URL parse a request)
      output: negotiateOutput(req.headers.accept),
      decodeProtobuf,
      setDefaults,
      user,
      admission,
      audit, // chapter 3 audit
    };
    if (info.subresource)
      await serveSubresource(
        scope,
        tokens,
        stores.get("/nodes") as Store,
        opts.kubeletClient,
        stores.get("policy/poddisruptionbudgets") as Store,
      );
    else await serveResource(scope);
  } catch (e) {
    if (isPanic(e)) audit?.panic(e); // chapter 3 audit: the Panic stage
    writeError(res, e);
  }
}
// #endregion handle

// #region routes
/** Namespaced resources live under /namespaces/{ns}/, except lists and watches across all of them. */
function checkScope(resource: ResourceInfo, info: RequestInfo): void {
  if (resource.namespaced && !info.namespace) {
    if (info.name) throw serviceError(404);
    if (info.verb !== "list" && info.verb !== "watch") throw serviceError(405);
  }
  if (!resource.namespaced && info.namespace && resource.resource !== "namespaces") throw serviceError(404);
}

async function serveResource(scope: RequestScope): Promise<void> {
  const { info, resource } = scope;
  if (info.verb === "watch" && info.name) {
    // The legacy /watch/.../pods/web: a watch of the one object.
    const selector = scope.query.get("fieldSelector");
    scope.query.set("fieldSelector", [selector, `metadata.name=${info.name}`].filter(Boolean).join(","));
  }
  if (!resource.verbs.includes(info.verb)) throw serviceError(405);
  switch (info.verb) {
    case "get":
      return getResource(scope);
    case "list":
      return listResource(scope);
    case "watch":
      return watchResource(scope);
    case "create":
      if (info.name) throw serviceError(405); // POST to an object's URL is not a route
      return traced(scope, "Create", () => createResource(scope));
    case "update":
      return traced(scope, "Update", () => updateResource(scope));
    case "patch":
      return traced(scope, "Patch", () => patchResource(scope));
    case "delete":
      return deleteResource(scope);
    case "deletecollection":
      return deleteCollection(scope);
    default:
      throw serviceError(405);
  }
}

async function serveSubresource(
  scope: RequestScope,
  tokens?: TokenREST,
  nodes?: Store, // chapter 7: pods/log finds the kubelet through the pod's Node
  kubeletClient: KubeletClientConfig = {},
  pdbs?: Store, // chapter 8: pods/eviction asks the pod's PodDisruptionBudget
): Promise<void> {
  const { info, resource, store } = scope;
  const sub = resource.subresources.find((s) => s.name === info.subresource);
  if (!sub || !info.name) throw serviceError(404);
  if (!sub.verbs.includes(info.verb)) throw serviceError(405);
  switch (`${sub.name}/${info.verb}`) {
    case "status/get":
      return getResource(scope);
    case "status/update":
      return traced(scope, "Update", () => updateResource(scope));
    case "status/patch":
      return traced(scope, "Patch", () => patchResource(scope));
    case "scale/get":
      return getScaleResource(scope);
    case "scale/update":
      return updateScaleResource(scope);
    case "scale/patch":
      return patchScaleResource(scope);
    case "binding/create":
      return traced(scope, "Create", () => createBindingResource(scope));
    case "eviction/create": // chapter 8: kubectl drain
      return createEvictionResource(scope, pdbs as Store);
    case "log/get":
      return getPodLog(scope, nodes as Store, kubeletClient);
    // chapter 7: exec is an upgrade (handleUpgrade); a plain request is upstream's 400.
    case "exec/get":
    case "exec/create":
      throw newBadRequest("Upgrade request required");
    case "finalize/update":
      return updateResource(scope, (_ns, name, updated, opts) => updateFinalize(store, name, updated, opts));
    case "token/create": // chapter 3: service-account tokens
      if (!tokens) throw serviceError(404);
      return createTokenRequestResource(scope, tokens);
    default:
      throw serviceError(405);
  }
}
// #endregion routes

/** chapter 8: tracing — a write handler's span (upstream's handlers start it: `Create`, `Update`, `Patch`). */
function traced(scope: RequestScope, name: string, serve: () => Promise<void>): Promise<void> {
  return withSpan(
    name,
    () => traceFields(scope.req, scope.res),
    async (span) => {
      await serve();
      span?.addEvent("Writing http response done");
    },
  );
}

/**
 * POST to an access review (chapter 3: RBAC): create only, v1 only, nothing stored; the answer
 * comes from the server's own authorizer.
 */
async function serveAccessReview(
  req: IncomingMessage,
  res: ServerResponse,
  info: RequestInfo,
  resource: ResourceInfo,
  user: UserInfo,
  deps: ReviewDeps,
): Promise<void> {
  if (info.verb !== "create" || info.name) throw serviceError(405);
  const review = decodeBody(
    req.headers["content-type"],
    await readBody(req),
    { apiVersion: "authorization.k8s.io/v1", kind: resource.kind },
    decodeProtobuf,
  );
  switch (resource.resource) {
    case "selfsubjectaccessreviews":
      return writeJSON(res, 201, await createSelfSubjectAccessReview(review, user, deps));
    case "subjectaccessreviews":
      return writeJSON(res, 201, await createSubjectAccessReview(review, deps));
    case "localsubjectaccessreviews":
      return writeJSON(res, 201, await createLocalSubjectAccessReview(review, info.namespace, deps));
    case "selfsubjectrulesreviews":
      return writeJSON(res, 201, await createSelfSubjectRulesReview(review, user, deps));
    default:
      throw serviceError(404);
  }
}

/** chapter 3: POST selfsubjectreviews (`kubectl auth whoami`): create only, v1 only, nothing stored. */
async function serveSelfSubjectReview(
  req: IncomingMessage,
  res: ServerResponse,
  info: RequestInfo,
  user: UserInfo,
): Promise<void> {
  if (info.apiVersion !== "v1") throw serviceError(404);
  if (info.verb !== "create" || info.name) throw serviceError(405);
  // The body is decoded only to refuse what is not a SelfSubjectReview; the answer ignores it.
  decodeBody(
    req.headers["content-type"],
    await readBody(req),
    { apiVersion: "authentication.k8s.io/v1", kind: "SelfSubjectReview" },
    decodeProtobuf,
  );
  writeJSON(res, 201, createSelfSubjectReview(user));
}

/** newRequestInfo, with a malformed path (`/api/v1/namespaces/%zz`) as a 400 rather than a crash. */
function parseRequestInfo(req: IncomingMessage): RequestInfo {
  try {
    return newRequestInfo(req.method ?? "GET", req.url ?? "/");
  } catch (e) {
    throw newBadRequest(`malformed request path: ${(e as Error).message}`);
  }
}

/**
 * serviceErrorHandler: go-restful's answer for a path no route serves (404) or a method a route
 * does not take (405), which upstream turns into a generic Status.
 */
function serviceError(code: 404 | 405): StatusError {
  return newGenericServerResponse(code, "", { group: "", resource: "" }, "", "", 0, false);
}

// #region httplog
/** One line per request, as upstream's httplog: verb, URI, latency, user agent, client, status. */
export function httpLogLine(
  req: IncomingMessage,
  res: ServerResponse,
  info: RequestInfo,
  started: bigint,
  auditID = "",
): string {
  const ms = Number(process.hrtime.bigint() - started) / 1e6;
  const latency =
    ms < 1 ? `${(ms * 1000).toFixed(0)}µs` : ms < 1000 ? `${ms.toFixed(3)}ms` : `${(ms / 1000).toFixed(3)}s`;
  const src = `${req.socket.remoteAddress ?? ""}:${req.socket.remotePort ?? ""}`;
  const code = res.headersSent ? res.statusCode : 0;
  return `"HTTP" verb="${info.verb.toUpperCase()}" URI="${req.url ?? ""}" latency="${latency}" userAgent="${req.headers["user-agent"] ?? ""}" audit-ID="${auditID}" srcIP="${src}" resp=${code}`;
}
// #endregion httplog

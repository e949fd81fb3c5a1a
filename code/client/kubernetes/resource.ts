/**
 * ResourceClient — the verbs of one resource in one namespace (get, list, watch, create, update,
 * updateStatus, patch, delete, deleteCollection, subresources), over a RESTClient.
 * Mirrors kubernetes/client-go gentype/type.go (Client, ClientWithList: the generic typed client every
 * generated `Pods(ns)`, `Nodes()` is an instance of) and dynamic/simple.go (Resource(gvr)).
 *
 * Solves:
 * - client-go generates a typed client per kind, hundreds of near-identical files; since 1.31
 *   they are all one generic type (gentype) — we write that one type and name instances of it;
 * - a component reaches any resource, built in or not, through the same verbs and options, so
 *   the reflector, controllers and the scheduler share one code path (and its rate limit).
 *
 * Invariants:
 * - `namespace` `""` addresses a cluster-scoped resource, or all namespaces for list and watch;
 * - options are sent as query parameters by their wire names (metav1.GetOptions, ListOptions,
 *   CreateOptions, UpdateOptions, PatchOptions); DeleteOptions go in the body, as upstream;
 * - every method rejects with a StatusError (code/client/errors.ts) on failure.
 *
 * @upstream kubernetes/client-go gentype/type.go (Client, ClientWithList, Get, List, Watch, Create, Update, UpdateStatus, Delete, DeleteCollection, Patch)
 * @upstream kubernetes/client-go dynamic/simple.go (dynamicResourceClient)
 * @upstream kubernetes/apimachinery pkg/apis/meta/v1/types.go (GetOptions, CreateOptions, UpdateOptions, PatchOptions, DeleteOptions)
 * @chapter 04-informers
 */
import type { KubeList, KubeObject, Status } from "../../api/meta.ts";
import type { RESTClient } from "../rest/client.ts";
import type { PatchType } from "../rest/request.ts";
import type { ListOptions, Watch } from "../tools/cache/listwatch.ts";

// #region options
export interface GetOptions {
  resourceVersion?: string;
}
/** Options of the writes: `dryRun: "All"`, the field manager (server-side apply), field validation. */
export interface CreateOptions {
  dryRun?: "All";
  fieldManager?: string;
  fieldValidation?: "Ignore" | "Warn" | "Strict";
}
export type UpdateOptions = CreateOptions;
export interface PatchOptions extends CreateOptions {
  /** Server-side apply: take fields other managers own. */
  force?: boolean;
}
export interface DeleteOptions {
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
  propagationPolicy?: "Orphan" | "Background" | "Foreground";
  dryRun?: ["All"];
}
/** Per-call settings every method takes: cancel with `signal`. */
export interface CallOptions {
  signal?: AbortSignal;
}
// #endregion options

// #region resource-client
export class ResourceClient<T extends KubeObject = KubeObject> {
  constructor(
    readonly client: RESTClient,
    /** The plural resource name: `pods`, `replicasets`, `leases`. */
    readonly resource: string,
    readonly namespace = "",
  ) {}

  async get(name: string, opts: GetOptions & CallOptions = {}): Promise<T> {
    const { signal, ...params } = opts;
    return this.request("GET").name(name).params(params).do<T>(signal);
  }

  async list(opts: ListOptions & CallOptions = {}): Promise<KubeList<T>> {
    const { signal, ...params } = opts;
    return this.request("GET").params(params).do<KubeList<T>>(signal);
  }

  /** Starts a watch; `stop()` it when done. */
  async watch(opts: ListOptions & CallOptions = {}): Promise<Watch<T>> {
    const { signal, ...params } = opts;
    return this.request("GET").params(params).watch<T>(signal);
  }

  async create(obj: T, opts: CreateOptions & CallOptions = {}): Promise<T> {
    const { signal, ...params } = opts;
    return this.request("POST").params(params).body(obj).do<T>(signal);
  }

  async update(obj: T, opts: UpdateOptions & CallOptions = {}): Promise<T> {
    const { signal, ...params } = opts;
    return this.request("PUT").name(nameOf(obj)).params(params).body(obj).do<T>(signal);
  }

  /** PUT to the `status` subresource: only the status is written; the spec is ignored. */
  async updateStatus(obj: T, opts: UpdateOptions & CallOptions = {}): Promise<T> {
    const { signal, ...params } = opts;
    return this.request("PUT").name(nameOf(obj)).subResource("status").params(params).body(obj).do<T>(signal);
  }

  /**
   * A patch of `name` (or of its subresource: `patch(name, MergePatchType, {...}, {}, "status")`).
   * `data` is an object (sent as JSON) or the patch text.
   */
  async patch(
    name: string,
    pt: PatchType,
    data: unknown,
    opts: PatchOptions & CallOptions = {},
    ...subresources: string[]
  ): Promise<T> {
    const { signal, ...params } = opts;
    return this.client
      .patch(pt)
      .namespace(this.namespace)
      .resource(this.resource)
      .name(name)
      .subResource(...subresources)
      .params(params)
      .body(data, pt)
      .do<T>(signal);
  }

  /** Deletes `name`; resolves with what the server answered (the object while finalizers hold it, or a Status). */
  async delete(name: string, opts: DeleteOptions & CallOptions = {}): Promise<T | Status> {
    const { signal, ...body } = opts;
    return this.request("DELETE").name(name).body(body).do<T | Status>(signal);
  }

  async deleteCollection(
    opts: DeleteOptions & CallOptions = {},
    listOpts: ListOptions = {},
  ): Promise<KubeList<T> | Status> {
    const { signal, ...body } = opts;
    return this.request("DELETE").params(listOpts).body(body).do<KubeList<T> | Status>(signal);
  }

  /** GET a subresource (`scale`). */
  async getSubresource<S = unknown>(name: string, subresource: string, opts: CallOptions = {}): Promise<S> {
    return this.request("GET").name(name).subResource(subresource).do<S>(opts.signal);
  }

  /** POST to a subresource (`binding`, `eviction`, `token`). */
  async createSubresource<S = unknown>(
    name: string,
    subresource: string,
    body: unknown,
    opts: CreateOptions & CallOptions = {},
  ): Promise<S> {
    const { signal, ...params } = opts;
    return this.request("POST").name(name).subResource(subresource).params(params).body(body).do<S>(signal);
  }

  private request(verb: "GET" | "POST" | "PUT" | "DELETE") {
    return this.client.verb(verb).namespace(this.namespace).resource(this.resource);
  }
}
// #endregion resource-client

function nameOf(obj: KubeObject): string {
  const name = obj.metadata?.name;
  if (!name) throw new Error("update needs the object's metadata.name");
  return name;
}

/**
 * Store — the generic registry: every resource's create, get, list, update, delete and watch.
 * It works over a storage.Interface and asks the resource's strategy what is special about it,
 * as upstream's `Store` in k8s.io/apiserver pkg/registry/generic/registry/store.go does.
 *
 * Solves:
 * - every resource gets upstream's object lifecycle from one place: names from generateName,
 *   a uid and creationTimestamp on create, optimistic concurrency on update (a stale
 *   resourceVersion is a 409 Conflict), deletion that waits for finalizers and grace periods;
 * - what differs between resources (a pod's status is not writable through the main resource,
 *   a pod on a node is deleted gracefully, a deployment's generation counts spec changes) is
 *   the strategy's business, not the store's;
 * - storage speaks keys (`/registry/pods/default/web`); the store turns its errors into the
 *   Status errors a client reads (`pods "web" not found`).
 *
 * Invariants:
 * - the key of an object is `<prefix>/<namespace>/<name>` (namespaced) or `<prefix>/<name>`;
 * - an update that changes nothing writes nothing: the answer is the stored object with its
 *   old resourceVersion, and no watch event is sent;
 * - an object with a deletionTimestamp is removed only once its grace period is over and its
 *   finalizers are gone — by the update that empties them, or by a delete after that;
 * - the namespace in the body equals the namespace in the URL (filled in when absent); a
 *   cluster-scoped object has none.
 *
 * Dry run (`dryRun=All`) runs every check and skips only the write: the storage is a
 * DryRunnableStorage (dryrun.ts), and every write passes it the request's dryRun.
 *
 * What upstream does differently: admission (chapter 3) runs between the strategy and the write;
 * TTLs and decorators are left out.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/generic/registry/store.go (Store, Create, Update, Get, List, Delete, DeleteCollection, Watch, updateForGracefulDeletionAndFinalizers, finalizeDelete)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/rest/create.go (BeforeCreate, FillObjectMetaSystemFields)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/rest/update.go (BeforeUpdate)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/names/generate.go (SimpleNameGenerator)
 * @chapter 02-apiserver
 */
import { randomInt, randomUUID } from "node:crypto";
import { type FieldError, GoValue, invalid, required } from "../../api/field-errors.ts";
import type { KubeObject, Status } from "../../api/meta.ts";
import {
  type GroupResource,
  isStatusError,
  newAlreadyExists,
  newBadRequest,
  newConflict,
  newInvalid,
  newNotFound,
  optimisticLockErrorMsg,
} from "../errors.ts";
import { canonicalJSON } from "../patch/json-value.ts";
import type { ResourceInfo } from "../resources.ts";
import { errResourceVersionSetOnCreate } from "../storage/errors.ts";
import type { Interface, ListResult, SelectionPredicate, Watch } from "../storage/interfaces.ts";
import { newSelectionPredicate } from "../storage/selection-predicate.ts";
import {
  beforeDelete,
  type DeleteOptions,
  deletionFinalizersForGarbageCollection,
  hasNamespaceFinalizers,
  shouldDeleteDuringUpdate,
} from "./delete.ts";
import { DryRunnableStorage } from "./dryrun.ts";
import { convertFieldLabel, type RESTStrategy } from "./strategy.ts";

export interface ListParams {
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: "" | "NotOlderThan" | "Exact";
}

export interface WatchParams {
  labelSelector?: string;
  fieldSelector?: string;
  resourceVersion?: string;
  allowWatchBookmarks?: boolean;
  /** When the server will end the watch (epoch ms): the watch cache sends a bookmark just before. */
  deadline?: number;
}

/** Turns the current object (undefined: there is none) into the object the client wants stored. */
/** rest.ValidateObjectFunc: validating admission of the object about to be created or deleted. */
export type ValidateObjectFunc = (obj: KubeObject) => Promise<void>;
/** rest.ValidateObjectUpdateFunc: validating admission of an update, with the stored object. */
export type ValidateObjectUpdateFunc = (obj: KubeObject, old: KubeObject) => Promise<void>;

export type UpdatedObjectFunc = (current: KubeObject | undefined) => KubeObject | Promise<KubeObject>;

/** Resources whose delete answers with the object rather than a Status (upstream's ReturnDeletedObject). */
const returnsDeletedObject = new Set(["pods", "services", "serviceaccounts", "namespaces", "nodes"]);

// #region name-generator
/** Upstream's SimpleNameGenerator: base (cut to 58 characters) + 5 characters with no vowels. */
const alphanums = "bcdfghjklmnpqrstvwxz2456789";
const maxNameLength = 63;
const randomLength = 5;
const maxGeneratedNameLength = maxNameLength - randomLength;

export function generateName(base: string): string {
  const cut = base.length > maxGeneratedNameLength ? base.slice(0, maxGeneratedNameLength) : base;
  let suffix = "";
  for (let i = 0; i < randomLength; i++) suffix += alphanums[randomInt(alphanums.length)];
  return cut + suffix;
}
// #endregion name-generator

/** RFC 3339 with whole seconds, as metav1.Time marshals. */
export function nowRFC3339(now = new Date()): string {
  return `${now.toISOString().slice(0, 19)}Z`;
}

export class Store {
  readonly gr: GroupResource;
  /** The storage, with a dry-run switch on every write (upstream's Store.Storage). */
  readonly storage: DryRunnableStorage;

  constructor(
    readonly info: ResourceInfo,
    storage: Interface,
    readonly strategy: RESTStrategy,
    /** The storage key prefix, upstream's `/registry/<resource>`. */
    readonly prefix: string,
  ) {
    this.gr = { group: info.group, resource: info.resource };
    this.storage = new DryRunnableStorage(storage, this.gr);
  }

  // #region keys
  /** The key of one object: `/registry/pods/default/web`, `/registry/nodes/n1`. */
  keyFor(namespace: string, name: string): string {
    return this.info.namespaced ? `${this.prefix}/${namespace}/${name}` : `${this.prefix}/${name}`;
  }

  /** The key under which a list or watch looks: one namespace, or all of them. */
  rootFor(namespace: string): string {
    return this.info.namespaced && namespace ? `${this.prefix}/${namespace}` : this.prefix;
  }
  // #endregion keys

  // #region create
  /**
   * Creates the object at its key: the server's fields and the strategy's checks first, then one
   * storage create that fails with 409 AlreadyExists if the key is taken.
   */
  async create(
    namespace: string,
    obj: KubeObject,
    opts: { dryRun?: boolean; createValidation?: ValidateObjectFunc } = {},
  ): Promise<KubeObject> {
    this.beforeCreate(namespace, obj);
    // Validating admission (chapter 3) judges the object as it will be stored.
    await opts.createValidation?.(obj);
    const name = obj.metadata.name as string;
    try {
      return await this.storage.create(this.keyFor(namespace, name), obj, opts.dryRun);
    } catch (e) {
      throw this.interpret(e, name);
    }
  }

  /** rest.BeforeCreate: fill what the server owns, then let the strategy prepare and validate. */
  private beforeCreate(namespace: string, obj: KubeObject): void {
    obj.metadata ??= {};
    const meta = obj.metadata;
    if (this.info.namespaced) {
      if (meta.namespace && namespace && meta.namespace !== namespace) {
        throw newBadRequest(
          "the namespace of the provided object does not match the namespace sent on the request",
        );
      }
      meta.namespace = namespace || meta.namespace;
    } else {
      delete meta.namespace;
    }
    if (meta.resourceVersion) {
      // The etcd3 store's refusal, which upstream reports as a bare 500 with this text; the
      // client's mistake is a 400 here, with the same words.
      throw newBadRequest(errResourceVersionSetOnCreate);
    }
    delete meta.deletionTimestamp;
    delete meta.deletionGracePeriodSeconds;
    this.strategy.prepareForCreate(obj);
    if (!meta.name && meta.generateName) meta.name = generateName(meta.generateName);
    meta.uid = randomUUID();
    meta.creationTimestamp = nowRFC3339();
    const errs: FieldError[] = [];
    if (!meta.name) errs.push(required("metadata.name", "name or generateName is required"));
    if (this.info.namespaced && !meta.namespace) errs.push(required("metadata.namespace", ""));
    if (errs.length === 0) errs.push(...this.strategy.validate(obj));
    if (errs.length > 0) throw newInvalid(this.info.group, this.info.kind, meta.name ?? "", errs);
    this.strategy.canonicalize?.(obj);
  }
  // #endregion create

  /** One object; with a `resourceVersion`, a state at least that new (the watch cache may answer). */
  async get(namespace: string, name: string, resourceVersion?: string): Promise<KubeObject> {
    try {
      const obj = await this.storage.get(this.keyFor(namespace, name), { resourceVersion });
      if (!obj) throw newNotFound(this.gr, name);
      return obj;
    } catch (e) {
      throw this.interpret(e, name);
    }
  }

  // #region list
  /**
   * The request's selectors as one test. A field the resource cannot select on is a 400, as
   * upstream's field label conversion answers; old spellings (`spec.host`) read their new field.
   */
  predicate(labelSelector = "", fieldSelector = ""): SelectionPredicate {
    return newSelectionPredicate(
      labelSelector,
      fieldSelector,
      (obj) => this.strategy.selectableFields(obj),
      (label) => convertFieldLabel(this.strategy, label),
    );
  }

  async list(namespace: string, p: ListParams): Promise<ListResult> {
    try {
      return await this.storage.getList(this.rootFor(namespace), {
        predicate: this.predicate(p.labelSelector, p.fieldSelector),
        limit: p.limit,
        continue: p.continue,
        resourceVersion: p.resourceVersion,
        resourceVersionMatch: p.resourceVersionMatch,
        recursive: true,
      });
    } catch (e) {
      throw this.interpret(e, "");
    }
  }
  // #endregion list

  /** A watch of one namespace or all, with the same selectors (and 400s) as a list. */
  async watch(namespace: string, p: WatchParams): Promise<Watch> {
    try {
      return await this.storage.watch(this.rootFor(namespace), {
        predicate: this.predicate(p.labelSelector, p.fieldSelector),
        resourceVersion: p.resourceVersion,
        allowWatchBookmarks: p.allowWatchBookmarks,
        deadline: p.deadline,
        recursive: true,
      });
    } catch (e) {
      throw this.interpret(e, "");
    }
  }

  // #region update
  /**
   * Replaces the object with what `updated` makes of the current one. `strategy` is the main
   * strategy or a subresource's (status). Returns the stored object and whether it was created.
   */
  async update(
    namespace: string,
    name: string,
    updated: UpdatedObjectFunc,
    opts: {
      strategy?: RESTStrategy;
      forceAllowCreate?: boolean;
      dryRun?: boolean;
      /** Validating admission for an update that creates (chapter 3). */
      createValidation?: ValidateObjectFunc;
      /** Validating admission for an update (chapter 3). */
      updateValidation?: ValidateObjectUpdateFunc;
    } = {},
  ): Promise<{ obj: KubeObject; created: boolean }> {
    const strategy = opts.strategy ?? this.strategy;
    const key = this.keyFor(namespace, name);
    let created = false;
    let emptiedFinalizers: KubeObject | undefined;
    let result: KubeObject;
    // #region optimistic-concurrency
    try {
      result = await this.storage.guaranteedUpdate(
        key,
        { ignoreNotFound: true },
        async (current) => {
          // Called again on every lost race: forget what the previous try decided.
          created = false;
          emptiedFinalizers = undefined;
          if (!current) {
            if (!(opts.forceAllowCreate || strategy.allowCreateOnUpdate)) throw newNotFound(this.gr, name);
            const obj = await updated(undefined);
            this.checkNameAndNamespace(obj, namespace, name);
            delete obj.metadata.resourceVersion;
            this.beforeCreate(namespace, obj);
            await opts.createValidation?.(obj);
            created = true;
            return obj;
          }
          const obj = await updated(structuredClone(current));
          this.checkNameAndNamespace(obj, namespace, name);
          const rv = obj.metadata.resourceVersion;
          if (!rv) {
            if (!strategy.allowUnconditionalUpdate) {
              throw newInvalid(this.info.group, this.info.kind, name, [
                // Go prints the uint64 0 with %#v: 0x0.
                invalid("metadata.resourceVersion", new GoValue("0x0", 0), "must be specified for an update"),
              ]);
            }
            obj.metadata.resourceVersion = current.metadata.resourceVersion;
          } else if (rv !== current.metadata.resourceVersion) {
            throw newConflict(this.gr, name, optimisticLockErrorMsg);
          }
          this.beforeUpdate(strategy, obj, current);
          // Inside the retry: on a lost race, admission judges the update against the new current.
          await opts.updateValidation?.(obj, current);
          if (sameObject(obj, current)) return current; // no-op: nothing to write
          // chapter 4: namespace controller — a terminating namespace still held by spec.finalizers
          // stays through its status updates (ShouldDeleteNamespaceDuringUpdate); only the
          // finalize that empties spec.finalizers lets it go.
          if (shouldDeleteDuringUpdate(obj, current) && !hasNamespaceFinalizers(this.info.resource, obj))
            emptiedFinalizers = obj;
          return obj;
        },
        opts.dryRun,
      );
    } catch (e) {
      throw this.interpret(e, name);
    }
    // #endregion optimistic-concurrency
    if (emptiedFinalizers) {
      // The last finalizer is gone from an object already being deleted: finish the delete.
      const deleted = await this.storage
        .delete(key, { resourceVersion: result.metadata.resourceVersion }, undefined, opts.dryRun)
        .catch((e) => {
          throw this.interpret(e, name);
        });
      return { obj: deleted, created: false };
    }
    return { obj: result, created };
  }

  private checkNameAndNamespace(obj: KubeObject, namespace: string, name: string): void {
    obj.metadata ??= {};
    if (obj.metadata.name && obj.metadata.name !== name) {
      throw newBadRequest(
        `the name of the object (${obj.metadata.name}) does not match the name on the URL (${name})`,
      );
    }
    obj.metadata.name = name;
    if (this.info.namespaced) {
      if (obj.metadata.namespace && obj.metadata.namespace !== namespace) {
        throw newBadRequest(
          "the namespace of the provided object does not match the namespace sent on the request",
        );
      }
      obj.metadata.namespace = namespace;
    } else {
      delete obj.metadata.namespace;
    }
  }

  /** rest.BeforeUpdate: fields the server owns keep their stored values; then prepare and validate. */
  private beforeUpdate(strategy: RESTStrategy, obj: KubeObject, old: KubeObject): void {
    const meta = obj.metadata;
    const errs: FieldError[] = [];
    if (meta.uid && meta.uid !== old.metadata.uid) {
      errs.push(invalid("metadata.uid", meta.uid, "field is immutable"));
    }
    meta.uid = old.metadata.uid;
    meta.creationTimestamp = old.metadata.creationTimestamp;
    copyOrDelete(meta, old.metadata, "deletionTimestamp");
    copyOrDelete(meta, old.metadata, "deletionGracePeriodSeconds");
    copyOrDelete(meta, old.metadata, "generation");
    strategy.prepareForUpdate(obj, old);
    errs.push(...strategy.validateUpdate(obj, old));
    if (errs.length > 0) throw newInvalid(this.info.group, this.info.kind, meta.name ?? "", errs);
    strategy.canonicalize?.(obj);
  }
  // #endregion update

  // #region delete
  // #region delete-or-mark
  /**
   * Deletes, or marks for deletion: an object with finalizers, or one the strategy deletes
   * gracefully (a pod on a node), gets a deletionTimestamp and stays. Returns what the client
   * receives (the object, or a Status for resources that answer so) and whether it is gone.
   */
  async delete(
    namespace: string,
    name: string,
    options: DeleteOptions = {},
    deleteValidation?: ValidateObjectFunc,
  ): Promise<{ obj: KubeObject | Status; deleted: boolean }> {
    const key = this.keyFor(namespace, name);
    const dryRun = options.dryRun?.includes("All") ?? false;
    const existing = await this.get(namespace, name);
    // Validating admission (chapter 3) sees the object about to be deleted.
    await deleteValidation?.(existing);
    const byKind = { group: this.info.group, resource: this.info.kind };
    const { graceful, pending } = beforeDelete(this.strategy, existing, options, byKind);
    if (pending) return { obj: this.finalizeDelete(existing), deleted: false };

    const finalizers = deletionFinalizersForGarbageCollection(existing, options);
    if (graceful || finalizers.length > 0 || hasNamespaceFinalizers(this.info.resource, existing)) {
      const marked = await this.updateForGracefulDeletionAndFinalizers(key, name, options, {
        graceful,
        finalizers,
        dryRun,
      });
      if (marked.keep) return { obj: this.finalizeDelete(marked.obj), deleted: false };
    }
    try {
      const gone = await this.storage.delete(key, options.preconditions, undefined, dryRun);
      return { obj: this.finalizeDelete(gone), deleted: true };
    } catch (e) {
      throw this.interpret(e, name);
    }
  }
  // #endregion delete-or-mark

  /**
   * updateForGracefulDeletionAndFinalizers: set deletionTimestamp (a grace period from now, or
   * now when only finalizers hold it, as markAsDeleting) and the finalizers; keep the object if
   * something must still happen. A dry run answers the marked object without writing it.
   */
  private async updateForGracefulDeletionAndFinalizers(
    key: string,
    name: string,
    options: DeleteOptions,
    { graceful, finalizers, dryRun }: { graceful: boolean; finalizers: string[]; dryRun: boolean },
  ): Promise<{ obj: KubeObject; keep: boolean }> {
    let keep = false;
    try {
      const obj = await this.storage.guaranteedUpdate(
        key,
        { preconditions: options.preconditions },
        (current) => {
          if (!current) throw newNotFound(this.gr, name);
          const next = structuredClone(current);
          const meta = next.metadata;
          meta.finalizers = finalizers.length > 0 ? finalizers : undefined;
          if (!meta.finalizers) delete meta.finalizers;
          const nsFinalizing = hasNamespaceFinalizers(this.info.resource, next);
          if (graceful) {
            const period = options.gracePeriodSeconds ?? 0;
            meta.deletionTimestamp = nowRFC3339(new Date(Date.now() + period * 1000));
            meta.deletionGracePeriodSeconds = period;
            keep = true;
          } else if (finalizers.length > 0 || nsFinalizing) {
            meta.deletionTimestamp ??= nowRFC3339();
            meta.deletionGracePeriodSeconds = 0;
            keep = true;
          }
          if (nsFinalizing) {
            // The namespace controller empties the namespace, then removes spec.finalizers.
            next.status = { ...((next.status as object) ?? {}), phase: "Terminating" };
          }
          return next;
        },
        dryRun,
      );
      return { obj, keep };
    } catch (e) {
      throw this.interpret(e, name);
    }
  }

  private finalizeDelete(obj: KubeObject): KubeObject | Status {
    if (returnsDeletedObject.has(this.info.resource)) return obj;
    return {
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Success",
      details: {
        name: obj.metadata.name,
        group: this.info.group,
        kind: this.info.resource,
        uid: obj.metadata.uid,
      },
      code: 200,
    };
  }
  // #endregion delete

  /** Deletes every object the selectors match; answers the list of what was deleted. */
  async deleteCollection(
    namespace: string,
    p: ListParams,
    options: DeleteOptions,
    deleteValidation?: ValidateObjectFunc,
  ): Promise<KubeObject[]> {
    const { items } = await this.list(namespace, {
      labelSelector: p.labelSelector,
      fieldSelector: p.fieldSelector,
    });
    const out: KubeObject[] = [];
    for (const item of items) {
      try {
        // A copy each: a delete settles gracePeriodSeconds on the options it is given.
        const { obj } = await this.delete(
          item.metadata.namespace ?? "",
          item.metadata.name ?? "",
          { ...options },
          deleteValidation,
        );
        out.push(obj.kind === "Status" ? item : (obj as KubeObject));
      } catch (e) {
        // Deleted by someone else meanwhile: that is what we wanted.
        if (!(isStatusError(e) && e.code === 404)) throw e;
      }
    }
    return out;
  }

  /**
   * storeerr.Interpret*Error: a NotFound or AlreadyExists that does not name this resource (a
   * storage that knows only keys) is restated for the object. Conflicts pass through: they carry
   * their own reason (a stale resourceVersion, a field owned by another manager).
   */
  private interpret(e: unknown, name: string): unknown {
    if (!isStatusError(e)) return e;
    const d = e.status.details;
    // Raised by this store or its strategy (it names this resource or kind already): keep it.
    if (d && d.group === this.info.group && (d.kind === this.info.resource || d.kind === this.info.kind))
      return e;
    if (!name) return e;
    switch (e.reason) {
      case "NotFound":
        return newNotFound(this.gr, name);
      case "AlreadyExists":
        return newAlreadyExists(this.gr, name);
      default:
        return e;
    }
  }
}

function copyOrDelete<T extends object>(to: T, from: T, field: keyof T): void {
  if (from[field] === undefined) delete to[field];
  else to[field] = from[field];
}

/** Equal apart from resourceVersion: the write would change nothing. */
function sameObject(a: KubeObject, b: KubeObject): boolean {
  const strip = (o: KubeObject) => ({ ...o, metadata: { ...o.metadata, resourceVersion: undefined } });
  return canonicalJSON(strip(a)) === canonicalJSON(strip(b));
}

/**
 * The garbage collector's API calls — get, delete and patch any object by its coordinates
 * (apiVersion, kind, namespace, name, UID), whatever its resource; and the patches it sends:
 * an owner reference removed, owner references made non-blocking, a finalizer removed.
 * Mirrors kubernetes/kubernetes pkg/controller/garbagecollector/operations.go (apiResource,
 * deleteObject, getObject, patchObject, removeFinalizer) and patch.go
 * (deleteOwnerRefStrategicMergePatch, unblockOwnerReferencesStrategicMergePatch).
 *
 * Solves:
 * - an owner reference names a kind, not a resource: `ReplicaSet` in `apps/v1` must become
 *   `/apis/apps/v1/namespaces/<ns>/replicasets`; discovery's kinds say so (the REST mapper);
 * - every write must hit *this* object, not a new one with the same name: deletes carry a UID
 *   precondition (and the resourceVersion the decision was made on), patches name the UID;
 * - the collector must not undo a write it did not see: a finalizer is removed by a merge patch
 *   that carries the resourceVersion read, so a concurrent change fails it (409) and it is retried.
 *
 * Invariants: a kind discovery did not report is a RESTMappingError (the worker retries: a new
 * resource may be discovered next sync); a NotFound is returned to the caller, never swallowed here.
 *
 * What upstream does differently: it writes through a metadata-only client, and for kinds
 * without strategic merge patch (custom resources) it sends a JSON merge patch of the whole
 * ownerReferences list; every resource of ours accepts the strategic merge patch.
 *
 * @upstream kubernetes/kubernetes pkg/controller/garbagecollector/operations.go (apiResource, deleteObject, getObject, patchObject, removeFinalizer)
 * @upstream kubernetes/kubernetes pkg/controller/garbagecollector/patch.go (deleteOwnerRefStrategicMergePatch, unblockOwnerReferencesStrategicMergePatch, objectForFinalizersPatch)
 * @upstream kubernetes/kubernetes pkg/controller/garbagecollector/errors.go (restMappingError)
 * @chapter 04-informers
 */
import type { KubeObject } from "../../api/meta.ts";
import type { GroupVersionResource } from "../../api/schema.ts";
import type { APIResourceList } from "../../client/discovery/discovery-client.ts";
import { groupVersionResources } from "../../client/discovery/helper.ts";
import { isConflict, isNotFound } from "../../client/errors.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { MergePatchType, type PatchType, StrategicMergePatchType } from "../../client/rest/request.ts";
import type { Node, ObjectReference } from "./graph.ts";

/** restMappingError: discovery knows no resource for this kind and version (yet). */
export class RESTMappingError extends Error {
  constructor(
    readonly kind: string,
    readonly version: string,
  ) {
    super(`unable to get REST mapping for ${kind}.${version}.`);
    this.name = "RESTMappingError";
  }
}

export type PropagationPolicy = "Orphan" | "Background" | "Foreground";

// #region rest-mapper
/** The kinds discovery reported, by `apiVersion/kind` (a RESTMapper reset on every sync). */
export class RESTMapper {
  private mappings = new Map<string, { gvr: GroupVersionResource; namespaced: boolean }>();

  /** Reset: the mappings of every version of every group (an owner reference may name any). */
  reset(lists: readonly APIResourceList[]): void {
    const next = new Map<string, { gvr: GroupVersionResource; namespaced: boolean }>();
    for (const r of groupVersionResources(lists)) {
      if (r.resource.includes("/")) continue;
      const apiVersion = r.group ? `${r.group}/${r.version}` : r.version;
      const key = `${apiVersion}/${r.kind}`;
      if (!next.has(key)) next.set(key, { gvr: r, namespaced: r.namespaced });
    }
    this.mappings = next;
  }

  /** apiResource: the resource and scope of `kind` in `apiVersion`. */
  apiResource(apiVersion: string, kind: string): { gvr: GroupVersionResource; namespaced: boolean } {
    const m = this.mappings.get(`${apiVersion}/${kind}`);
    if (!m) throw new RESTMappingError(kind, apiVersion);
    return m;
  }
}
// #endregion rest-mapper

// #region operations
export class Operations {
  constructor(
    private readonly client: Clientset,
    readonly restMapper: RESTMapper,
  ) {}

  /** The resource client for the object; a cluster-scoped kind ignores the namespace. */
  private resourceFor(item: ObjectReference) {
    const { gvr, namespaced } = this.restMapper.apiResource(item.apiVersion, item.kind);
    return { client: this.client.resource(gvr, namespaced ? item.namespace : ""), namespaced };
  }

  /** Is this kind namespaced? (Throws RESTMappingError for an unknown kind.) */
  isNamespaced(apiVersion: string, kind: string): boolean {
    return this.restMapper.apiResource(apiVersion, kind).namespaced;
  }

  async getObject(item: ObjectReference): Promise<KubeObject> {
    return this.resourceFor(item).client.get(item.name);
  }

  /**
   * deleteObject: with a UID precondition, and the resourceVersion the decision was made on. On
   * a conflict, if only something other than the owner references changed, delete again
   * without the resourceVersion; if the object is gone meanwhile, that is success.
   */
  async deleteObject(
    item: ObjectReference,
    resourceVersion: string,
    ownersAtResourceVersion: KubeObject["metadata"]["ownerReferences"],
    propagationPolicy: PropagationPolicy,
  ): Promise<void> {
    const { client } = this.resourceFor(item);
    try {
      await client.delete(item.name, {
        preconditions: { uid: item.uid, ...(resourceVersion ? { resourceVersion } : {}) },
        propagationPolicy,
      });
    } catch (err) {
      if (!isConflict(err) || !resourceVersion) throw err;
      let live: KubeObject;
      try {
        live = await client.get(item.name);
      } catch (e) {
        if (isNotFound(e)) return; // the object we wanted gone is gone
        throw err;
      }
      const sameOwners =
        JSON.stringify(live.metadata.ownerReferences ?? []) === JSON.stringify(ownersAtResourceVersion ?? []);
      if (live.metadata.uid === item.uid && live.metadata.resourceVersion !== resourceVersion && sameOwners) {
        return this.deleteObject(item, "", undefined, propagationPolicy);
      }
      throw err;
    }
  }

  /** A strategic merge patch of the object (patchObject). */
  async patchObject(
    item: ObjectReference,
    patch: unknown,
    pt: PatchType = StrategicMergePatchType,
  ): Promise<KubeObject> {
    return this.resourceFor(item).client.patch(item.name, pt, patch);
  }

  /**
   * removeFinalizer: GET, then a merge patch of the finalizers with the resourceVersion read;
   * on a conflict, again (upstream: retry.DefaultBackoff, 4 steps). An owner gone is done.
   */
  async removeFinalizer(owner: Node, finalizer: string): Promise<void> {
    for (let attempt = 1; ; attempt++) {
      let obj: KubeObject;
      try {
        obj = await this.getObject(owner.identity);
      } catch (e) {
        if (isNotFound(e)) return;
        throw e;
      }
      const finalizers = obj.metadata.finalizers ?? [];
      if (!finalizers.includes(finalizer)) return;
      const patch = {
        metadata: {
          resourceVersion: obj.metadata.resourceVersion,
          finalizers: finalizers.filter((f) => f !== finalizer),
        },
      };
      try {
        await this.patchObject(owner.identity, patch, MergePatchType);
        return;
      } catch (e) {
        if (isNotFound(e)) return;
        if (!isConflict(e) || attempt >= 4) throw e;
      }
    }
  }
}
// #endregion operations

// #region patches
/** deleteOwnerRefStrategicMergePatch: removes the references to `ownerUIDs`; names the dependent's UID. */
export function deleteOwnerRefStrategicMergePatch(dependentUID: string, ...ownerUIDs: string[]) {
  return {
    metadata: {
      ownerReferences: ownerUIDs.map((uid) => ({ $patch: "delete", uid })),
      uid: dependentUID,
    },
  };
}

/** unblockOwnerReferencesStrategicMergePatch: every blocking reference of `n` set to blockOwnerDeletion false. */
export function unblockOwnerReferencesStrategicMergePatch(n: Node) {
  return {
    metadata: {
      ownerReferences: n.owners
        .filter((o) => o.blockOwnerDeletion === true)
        .map((o) => ({ uid: o.uid, blockOwnerDeletion: false })),
      uid: n.identity.uid,
    },
  };
}
// #endregion patches

/**
 * GraphBuilder — keeps the garbage collector's graph (graph.ts) in step with the cluster: one
 * monitor (an informer) per deletable resource, all their events in one queue, processed one at
 * a time; and it decides which nodes the collector's workers must look at.
 * Mirrors kubernetes/kubernetes pkg/controller/garbagecollector/graph_builder.go (GraphBuilder,
 * monitor, event, syncMonitors, startMonitors, IsSynced, processGraphChanges, insertNode,
 * addDependentToOwners, removeNode, processTransitions, referencesDiffs, partitionDependents,
 * enqueueVirtualDeleteEvent, addUnblockedOwnersToDeleteQueue).
 *
 * Solves:
 * - the graph must not be edited by many handlers at once in an order nobody can reason about:
 *   every monitor's events go to `graphChanges`, and one loop applies them in arrival order;
 * - the builder only *notices*; it never calls the API server. What needs a decision goes to a
 *   queue: `attemptToDelete` (a dependent whose owner may be gone, an owner waiting for its
 *   dependents, a virtual owner to verify) and `attemptToOrphan` (an owner deleted with the
 *   `orphan` finalizer);
 * - a worker that found an owner gone tells the graph with a *virtual* delete event — the same
 *   queue as the informers', so the graph has one writer.
 *
 * Invariants:
 * - a node's dependents are enqueued when it is removed (its dependents may now be garbage),
 *   and its owners too when they are deleting their dependents (one fewer to wait for);
 * - a virtual delete event never removes a node an informer has observed under other coordinates;
 * - the transitions fire once: an object entering deletion with `orphan` goes to attemptToOrphan,
 *   with `foregroundDeletion` is marked deletingDependents and it and its dependents go to
 *   attemptToDelete; an update that changes neither fires nothing.
 *
 * What upstream does differently: monitors are metadata-only informers (PartialObjectMetadata,
 * a fraction of the memory) of the collector's own; ours are the shared factory's full-object
 * informers — our server serves no PartialObjectMetadata lists — so the garbage collector shares
 * the pods and ReplicaSets caches with the other controllers. Upstream also checks references
 * from a cluster-scoped dependent to a namespaced owner (reporting an OwnerRefInvalidNamespace
 * event); ours does not.
 *
 * @upstream kubernetes/kubernetes pkg/controller/garbagecollector/graph_builder.go (GraphBuilder, monitor, event, syncMonitors, startMonitors, IsSynced, processGraphChanges, insertNode, addDependentToOwners, removeNode, processTransitions, referencesDiffs, partitionDependents, getAlternateOwnerIdentity, enqueueVirtualDeleteEvent, addUnblockedOwnersToDeleteQueue, DefaultIgnoredResources)
 * @chapter 04-informers
 */
import type { KubeObject, OwnerReference } from "../../api/meta.ts";
import type { GroupVersionResource } from "../../api/schema.ts";
import type { DiscoveredResource } from "../../client/discovery/helper.ts";
import { DeletedFinalStateUnknown } from "../../client/tools/cache/delta-fifo.ts";
import { gvrString, type SharedInformerFactory } from "../../client/tools/cache/informer-factory.ts";
import type {
  ResourceEventHandlerRegistration,
  SharedIndexInformer,
} from "../../client/tools/cache/shared-informer.ts";
import { newTyped, type Typed } from "../../client/util/workqueue/queue.ts";
import type { TypedRateLimitingInterface } from "../../client/util/workqueue/rate-limiting-queue.ts";
import {
  Node,
  type ObjectReference,
  ownerReferenceMatchesCoordinates,
  type ReferenceCache,
  sameIdentity,
  UIDToNode,
} from "./graph.ts";

export const finalizerOrphanDependents = "orphan";
export const finalizerDeleteDependents = "foregroundDeletion";

/** DefaultIgnoredResources: events are never owners worth collecting, and there are many. */
export const defaultIgnoredResources = new Set(["/events", "events.k8s.io/events"]);

// #region event
export type EventType = "add" | "update" | "delete";

/** One change for the graph (event): from a monitor, or `virtual` from a worker's GET. */
export interface GraphEvent {
  /** The collector's own finding (a GET said NotFound or another UID), not an informer's. */
  virtual?: boolean;
  eventType: EventType;
  obj: KubeObject;
  oldObj?: KubeObject;
  /** From the monitor's resource: list items need not carry apiVersion and kind. */
  gvk: { apiVersion: string; kind: string };
}
// #endregion event

interface Monitor {
  resource: DiscoveredResource;
  informer: SharedIndexInformer;
  registration: ResourceEventHandlerRegistration;
}

export interface GraphBuilderOptions {
  /** Absent in unit tests: events are then fed to processGraphChange by hand. */
  informerFactory?: SharedInformerFactory;
  attemptToDelete: TypedRateLimitingInterface<Node>;
  attemptToOrphan: TypedRateLimitingInterface<Node>;
  absentOwnerCache: ReferenceCache;
  /** `group/resource` strings never monitored (default: events). */
  ignoredResources?: ReadonlySet<string>;
  log?: (line: string) => void;
}

const apiVersionOf = (r: { group: string; version: string }) =>
  r.group ? `${r.group}/${r.version}` : r.version;
const beingDeleted = (o: KubeObject) => o.metadata.deletionTimestamp !== undefined;
const hasFinalizer = (o: KubeObject, f: string) => (o.metadata.finalizers ?? []).includes(f);

/** identityFromEvent: the object's coordinates, its apiVersion and kind from the monitor. */
export function identityFromEvent(e: GraphEvent): ObjectReference {
  return {
    apiVersion: e.gvk.apiVersion,
    kind: e.gvk.kind,
    name: e.obj.metadata.name ?? "",
    uid: e.obj.metadata.uid ?? "",
    namespace: e.obj.metadata.namespace ?? "",
  };
}

export class GraphBuilder {
  readonly uidToNode = new UIDToNode();
  /** Every monitor's events, and the workers' virtual ones, in arrival order. */
  readonly graphChanges: Typed<GraphEvent> = newTyped<GraphEvent>();
  private readonly monitors = new Map<string, Monitor>();
  private readonly ignored: ReadonlySet<string>;
  private readonly log: (line: string) => void;

  constructor(private readonly opts: GraphBuilderOptions) {
    this.ignored = opts.ignoredResources ?? defaultIgnoredResources;
    this.log = opts.log ?? (() => {});
  }

  // #region monitors
  /**
   * syncMonitors: a monitor for every resource given, none for the others. A new monitor's
   * handler is registered now; the informer starts with startMonitors. A removed one only loses
   * our handler: the informer is shared and may have other users.
   */
  syncMonitors(resources: readonly DiscoveredResource[]): { added: number; removed: number } {
    const factory = this.opts.informerFactory;
    if (!factory) throw new Error("syncMonitors needs an informer factory");
    const wanted = new Map<string, DiscoveredResource>();
    for (const r of resources) {
      if (this.ignored.has(`${r.group}/${r.resource}`)) continue;
      wanted.set(gvrString(r), r);
    }
    let added = 0;
    let removed = 0;
    for (const [key, m] of this.monitors) {
      if (wanted.has(key)) continue;
      m.informer.removeEventHandler(m.registration);
      this.monitors.delete(key);
      removed++;
    }
    for (const [key, r] of wanted) {
      if (this.monitors.has(key)) continue;
      const gvr: GroupVersionResource = { group: r.group, version: r.version, resource: r.resource };
      const informer = factory.informerFor(gvr);
      const gvk = { apiVersion: apiVersionOf(r), kind: r.kind };
      const push = (e: Omit<GraphEvent, "gvk">) => this.graphChanges.add({ ...e, gvk });
      const registration = informer.addEventHandler(
        {
          onAdd: (obj) => push({ eventType: "add", obj }),
          onUpdate: (oldObj, obj) => push({ eventType: "update", obj, oldObj }),
          onDelete: (obj) => {
            // A deletion the informer inferred from a relist: its last known state will do.
            const last = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
            if (last) push({ eventType: "delete", obj: last });
          },
        },
        0, // no resync: a resync changes nothing in the graph
      );
      this.monitors.set(key, { resource: r, informer, registration });
      added++;
    }
    return { added, removed };
  }

  /** startMonitors: starts the informers not started yet (the factory skips running ones). */
  startMonitors(signal: AbortSignal): void {
    this.opts.informerFactory?.start(signal);
  }

  /** IsSynced: every monitor has delivered its initial list — and there is at least one. */
  isSynced(): boolean {
    if (this.monitors.size === 0) return false; // discovery has not answered yet
    return [...this.monitors.values()].every((m) => m.registration.hasSynced());
  }

  /** IsResourceSynced: that resource is monitored and synced (kept through a partial discovery). */
  isResourceSynced(r: GroupVersionResource): boolean {
    return this.monitors.get(gvrString(r))?.registration.hasSynced() ?? false;
  }

  monitoredResources(): DiscoveredResource[] {
    return [...this.monitors.values()].map((m) => m.resource);
  }
  // #endregion monitors

  /** runProcessGraphChanges: applies events one at a time until the queue shuts down. */
  async runProcessGraphChanges(): Promise<void> {
    for (;;) {
      const got = await this.graphChanges.get();
      if (got.shutdown) return;
      try {
        this.processGraphChange(got.item);
      } finally {
        this.graphChanges.done(got.item);
      }
    }
  }

  /** A worker's finding, as an event: the object with these coordinates is gone. */
  enqueueVirtualDeleteEvent(ref: ObjectReference): void {
    this.graphChanges.add({
      virtual: true,
      eventType: "delete",
      gvk: { apiVersion: ref.apiVersion, kind: ref.kind },
      obj: { metadata: { name: ref.name, namespace: ref.namespace || undefined, uid: ref.uid } },
    });
  }

  // #region process-graph-changes
  /** processGraphChanges' body: one event applied to the graph. */
  processGraphChange(event: GraphEvent): void {
    const obj = event.obj;
    const uid = obj.metadata.uid;
    if (!uid) return;
    let existing = this.uidToNode.read(uid);
    if (existing && !event.virtual && !existing.isObserved()) {
      // A virtual node meets its object. If a dependent named it with other coordinates, those
      // dependents may hold a bad reference: let the workers check them.
      const observed = identityFromEvent(event);
      if (!sameIdentity(observed, existing.identity)) {
        const { nonmatching } = partitionDependents([...existing.dependents], observed);
        for (const dep of nonmatching) this.opts.attemptToDelete.add(dep);
        existing = existing.clone();
        existing.identity = observed;
        this.uidToNode.write(existing);
      }
      existing.markObserved();
    }
    if (event.eventType !== "delete") {
      if (!existing) {
        const n = new Node(identityFromEvent(event));
        n.owners = obj.metadata.ownerReferences ?? [];
        n.beingDeleted = beingDeleted(obj);
        n.deletingDependents = n.beingDeleted && hasFinalizer(obj, finalizerDeleteDependents);
        this.insertNode(n);
        this.processTransitions(event.oldObj, obj, n);
        return;
      }
      const { added, removed, changed } = referencesDiffs(
        existing.owners,
        obj.metadata.ownerReferences ?? [],
      );
      if (added.length > 0 || removed.length > 0 || changed.length > 0) {
        // An owner waiting for this dependent (foreground) may wait no longer.
        this.addUnblockedOwnersToDeleteQueue(removed, changed);
        existing.owners = obj.metadata.ownerReferences ?? [];
        this.addDependentToOwners(existing, added);
        this.removeDependentFromOwners(existing, removed);
      }
      if (beingDeleted(obj)) existing.beingDeleted = true;
      this.processTransitions(event.oldObj, obj, existing);
      return;
    }
    if (!existing) return;
    this.processDelete(event, existing);
  }
  // #endregion process-graph-changes

  // #region process-delete
  /** A delete, observed or virtual: usually the node goes and its dependents are looked at. */
  private processDelete(event: GraphEvent, existing: Node): void {
    let removeExisting = true;
    if (event.virtual) {
      const deleted = identityFromEvent(event);
      if (existing.virtual) {
        // We never saw this owner; dependents may disagree on its coordinates (kind, name).
        const { matching, nonmatching } = partitionDependents([...existing.dependents], deleted);
        if (nonmatching.length > 0) {
          removeExisting = false;
          if (matching.length > 0) {
            this.opts.absentOwnerCache.add(deleted);
            for (const dep of matching) this.opts.attemptToDelete.add(dep);
          }
          if (sameIdentity(existing.identity, deleted)) {
            // Try the node again under coordinates another dependent gave.
            const alt = getAlternateOwnerIdentity(nonmatching, deleted);
            if (alt) {
              const replacement = existing.clone();
              replacement.identity = alt;
              this.uidToNode.write(replacement);
              this.opts.attemptToDelete.addRateLimited(replacement);
            }
          }
        }
      } else if (!sameIdentity(existing.identity, deleted)) {
        // An informer saw this object: a GET under other coordinates does not delete it. Only
        // dependents that used those coordinates are suspect.
        removeExisting = false;
        const { nonmatching } = partitionDependents([...existing.dependents], deleted);
        if (nonmatching.length > 0) {
          this.opts.absentOwnerCache.add(deleted);
          for (const dep of nonmatching) this.opts.attemptToDelete.add(dep);
        }
      }
    }
    if (!removeExisting) return;
    this.removeNode(existing);
    // The owner is gone: remember it, so its dependents need no GET to learn so.
    if (existing.dependents.size > 0) this.opts.absentOwnerCache.add(identityFromEvent(event));
    for (const dep of existing.dependents) this.opts.attemptToDelete.add(dep);
    for (const owner of existing.owners) {
      const ownerNode = this.uidToNode.read(owner.uid);
      // One fewer dependent for a foreground owner to wait for.
      if (ownerNode?.deletingDependents) this.opts.attemptToDelete.add(ownerNode);
    }
  }
  // #endregion process-delete

  private insertNode(n: Node): void {
    this.uidToNode.write(n);
    this.addDependentToOwners(n, n.owners);
  }

  // #region add-dependent-to-owners
  /**
   * addDependentToOwners: an owner not in the graph gets a virtual node (in the dependent's
   * namespace: owner references do not cross namespaces), queued so a worker verifies it.
   */
  private addDependentToOwners(n: Node, owners: readonly OwnerReference[]): void {
    for (const owner of owners) {
      let ownerNode = this.uidToNode.read(owner.uid);
      if (!ownerNode) {
        ownerNode = new Node(
          {
            apiVersion: owner.apiVersion,
            kind: owner.kind,
            name: owner.name,
            uid: owner.uid,
            namespace: n.identity.namespace,
          },
          true,
        );
        this.uidToNode.write(ownerNode);
        this.opts.attemptToDelete.add(ownerNode);
      }
      ownerNode.dependents.add(n);
    }
  }
  // #endregion add-dependent-to-owners

  private removeDependentFromOwners(n: Node, owners: readonly OwnerReference[]): void {
    for (const owner of owners) this.uidToNode.read(owner.uid)?.dependents.delete(n);
  }

  /** removeNode: out of the index and out of its owners' dependents (its own dependents stay). */
  private removeNode(n: Node): void {
    this.uidToNode.delete(n.identity.uid);
    this.removeDependentFromOwners(n, n.owners);
  }

  /** An owner in foreground deletion whose blocking reference went away or stopped blocking. */
  private addUnblockedOwnersToDeleteQueue(
    removed: readonly OwnerReference[],
    changed: readonly { oldRef: OwnerReference; newRef: OwnerReference }[],
  ): void {
    const unblocked = [
      ...removed.filter((r) => r.blockOwnerDeletion === true),
      ...changed
        .filter((c) => c.oldRef.blockOwnerDeletion === true && c.newRef.blockOwnerDeletion !== true)
        .map((c) => c.newRef),
    ];
    for (const ref of unblocked) {
      const node = this.uidToNode.read(ref.uid);
      if (node?.deletingDependents) this.opts.attemptToDelete.add(node);
    }
  }

  // #region process-transitions
  /** processTransitions: the moment an object starts waiting for its dependents to be orphaned or deleted. */
  private processTransitions(oldObj: KubeObject | undefined, obj: KubeObject, n: Node): void {
    if (deletionStartsWithFinalizer(oldObj, obj, finalizerOrphanDependents)) {
      this.log(
        `"add object to the attemptToOrphan queue" object="${n.identity.namespace}/${n.identity.name}"`,
      );
      this.opts.attemptToOrphan.add(n);
      return;
    }
    if (deletionStartsWithFinalizer(oldObj, obj, finalizerDeleteDependents)) {
      n.deletingDependents = true;
      for (const dep of n.dependents) this.opts.attemptToDelete.add(dep);
      this.opts.attemptToDelete.add(n);
    }
  }
  // #endregion process-transitions
}

/** deletionStartsWithFinalizer: `obj` is being deleted with `f`, and `oldObj` was not (or lacked `f`). */
export function deletionStartsWithFinalizer(
  oldObj: KubeObject | undefined,
  obj: KubeObject,
  f: string,
): boolean {
  if (!beingDeleted(obj) || !hasFinalizer(obj, f)) return false;
  if (!oldObj) return true;
  return !(beingDeleted(oldObj) && hasFinalizer(oldObj, f));
}

/** referencesDiffs: owner references added, removed, and changed (same UID, other fields), by UID. */
export function referencesDiffs(
  old: readonly OwnerReference[],
  next: readonly OwnerReference[],
): {
  added: OwnerReference[];
  removed: OwnerReference[];
  changed: { oldRef: OwnerReference; newRef: OwnerReference }[];
} {
  const oldByUID = new Map(old.map((r) => [r.uid, r]));
  const added: OwnerReference[] = [];
  const changed: { oldRef: OwnerReference; newRef: OwnerReference }[] = [];
  for (const r of next) {
    const o = oldByUID.get(r.uid);
    if (!o) added.push(r);
    else if (JSON.stringify(o) !== JSON.stringify(r)) changed.push({ oldRef: o, newRef: r });
    oldByUID.delete(r.uid);
  }
  return { added, removed: [...oldByUID.values()], changed };
}

/**
 * partitionDependents: those whose reference to the owner's UID agrees with `owner`'s coordinates,
 * and those with a reference that does not (or in another namespace than a namespaced owner).
 */
export function partitionDependents(
  dependents: readonly Node[],
  owner: ObjectReference,
): { matching: Node[]; nonmatching: Node[] } {
  const matching: Node[] = [];
  const nonmatching: Node[] = [];
  for (const dep of dependents) {
    let match = false;
    let mismatch = false;
    if (owner.namespace && owner.namespace !== dep.identity.namespace) mismatch = true;
    else {
      for (const ref of dep.owners) {
        if (ref.uid !== owner.uid) continue;
        if (ownerReferenceMatchesCoordinates(ref, owner)) match = true;
        else mismatch = true;
      }
    }
    if (match) matching.push(dep);
    if (mismatch) nonmatching.push(dep);
  }
  return { matching, nonmatching };
}

/** getAlternateOwnerIdentity: another dependent's coordinates for the owner, not the ones proved absent. */
function getAlternateOwnerIdentity(
  deps: readonly Node[],
  verifiedAbsent: ObjectReference,
): ObjectReference | undefined {
  for (const dep of deps) {
    for (const ref of dep.owners) {
      if (ref.uid !== verifiedAbsent.uid) continue;
      const alt: ObjectReference = {
        apiVersion: ref.apiVersion,
        kind: ref.kind,
        name: ref.name,
        uid: ref.uid,
        namespace: dep.identity.namespace,
      };
      if (!sameIdentity(alt, verifiedAbsent)) return alt;
    }
  }
  return undefined;
}

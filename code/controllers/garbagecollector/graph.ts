/**
 * The garbage collector's graph — one node per object the collector has heard of, keyed by UID,
 * with edges from each owner to its dependents (the objects whose `ownerReferences` name it).
 * Mirrors kubernetes/kubernetes pkg/controller/garbagecollector/graph.go (node, objectReference,
 * concurrentUIDToNode) and uid_cache.go (ReferenceCache).
 *
 * Solves:
 * - "who depends on X?" must be answered without listing every resource: the API server only
 *   knows the other direction (a dependent names its owners), so the collector builds the
 *   reverse index from the informers' events;
 * - a dependent may arrive before its owner (or its owner may never exist): the owner is then a
 *   *virtual* node, made from the reference alone, until an event shows the real object — or a
 *   live GET shows there is none;
 * - an owner is named by UID, not by name: a new object with the old name is another owner.
 *
 * Invariants:
 * - at most one node per UID (`UIDToNode`);
 * - if node D lists owner UID U in `owners`, the node of U (real or virtual) has D in `dependents`;
 *   removing D removes it from its owners' dependents;
 * - `virtual` is true until an informer event for that UID is seen (isObserved is its negation).
 *
 * What upstream does differently: its nodes are shared by the graph builder's goroutine and the
 * workers', so each field has a lock; here one event loop owns them, and no lock is needed.
 *
 * @upstream kubernetes/kubernetes pkg/controller/garbagecollector/graph.go (objectReference, node, concurrentUIDToNode, blockingDependents, ownerReferenceCoordinates, ownerReferenceMatchesCoordinates)
 * @upstream kubernetes/kubernetes pkg/controller/garbagecollector/uid_cache.go (ReferenceCache)
 * @chapter 04-informers
 */
import type { OwnerReference } from "../../api/meta.ts";

// #region object-reference
/** An object's coordinates (objectReference): an owner reference's fields plus the namespace. */
export interface ObjectReference {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  /** "" for a cluster-scoped object. */
  namespace: string;
}

/** Equal coordinates, as Go's `==` on objectReference. */
export function sameIdentity(a: ObjectReference, b: ObjectReference): boolean {
  return (
    a.uid === b.uid &&
    a.name === b.name &&
    a.kind === b.kind &&
    a.apiVersion === b.apiVersion &&
    a.namespace === b.namespace
  );
}

/** `[v1/ConfigMap, namespace: default, name: web, uid: 1234]`, as upstream's String(). */
export function identityString(r: ObjectReference): string {
  return `[${r.apiVersion}/${r.kind}, namespace: ${r.namespace}, name: ${r.name}, uid: ${r.uid}]`;
}

/** ownerReferenceMatchesCoordinates: same owner, same apiVersion, kind and name. */
export function ownerReferenceMatchesCoordinates(a: OwnerReference, b: ObjectReference): boolean {
  return a.uid === b.uid && a.name === b.name && a.kind === b.kind && a.apiVersion === b.apiVersion;
}
// #endregion object-reference

// #region node
export class Node {
  /** Who depends on this object: every node whose owners name this UID. */
  readonly dependents = new Set<Node>();
  /** The object's ownerReferences, as last observed. */
  owners: OwnerReference[] = [];
  /** deletionTimestamp is set. */
  beingDeleted = false;
  /** deletionTimestamp is set and the foregroundDeletion finalizer is on: dependents go first. */
  deletingDependents = false;

  constructor(
    public identity: ObjectReference,
    /** Made from a dependent's ownerReference; no event for this UID has been seen yet. */
    public virtual = false,
  ) {}

  isObserved(): boolean {
    return !this.virtual;
  }

  markObserved(): void {
    this.virtual = false;
  }

  /** The dependents whose reference to this node has blockOwnerDeletion: foreground waits for them. */
  blockingDependents(): Node[] {
    return [...this.dependents].filter((d) =>
      d.owners.some((o) => o.uid === this.identity.uid && o.blockOwnerDeletion === true),
    );
  }

  /** A copy with the same edges (the graph builder replaces a virtual node whose identity was wrong). */
  clone(): Node {
    const c = new Node({ ...this.identity }, this.virtual);
    for (const d of this.dependents) c.dependents.add(d);
    c.owners = this.owners;
    c.beingDeleted = this.beingDeleted;
    c.deletingDependents = this.deletingDependents;
    return c;
  }
}
// #endregion node

/** The graph's index (concurrentUIDToNode). */
export class UIDToNode {
  private readonly nodes = new Map<string, Node>();
  write(n: Node): void {
    this.nodes.set(n.identity.uid, n);
  }
  read(uid: string): Node | undefined {
    return this.nodes.get(uid);
  }
  delete(uid: string): void {
    this.nodes.delete(uid);
  }
  get size(): number {
    return this.nodes.size;
  }
}

// #region reference-cache
/**
 * ReferenceCache: owners a live GET (or a delete event) proved absent, so a hundred dependents
 * of one deleted owner cost one GET, not a hundred. Least recently used out first (upstream: 500).
 */
export class ReferenceCache {
  private readonly entries = new Map<string, ObjectReference>();
  constructor(private readonly maxSize = 500) {}

  private static key(r: ObjectReference): string {
    return `${r.uid}\u0000${r.apiVersion}\u0000${r.kind}\u0000${r.namespace}\u0000${r.name}`;
  }

  add(r: ObjectReference): void {
    const k = ReferenceCache.key(r);
    this.entries.delete(k);
    this.entries.set(k, r);
    if (this.entries.size > this.maxSize) {
      const oldest = this.entries.keys().next().value;
      if (oldest !== undefined) this.entries.delete(oldest);
    }
  }

  has(r: ObjectReference): boolean {
    const k = ReferenceCache.key(r);
    const hit = this.entries.get(k);
    if (!hit) return false;
    this.entries.delete(k); // touched: most recently used
    this.entries.set(k, hit);
    return true;
  }
}
// #endregion reference-cache

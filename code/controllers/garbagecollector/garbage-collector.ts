/**
 * GarbageCollector — deletes objects whose owners are gone, and carries out the three ways an
 * owner may be deleted: background (the owner goes now, its dependents after), foreground (the
 * `foregroundDeletion` finalizer holds the owner until its blocking dependents are gone) and
 * orphan (the `orphan` finalizer holds it until its dependents no longer name it).
 * Mirrors kubernetes/kubernetes pkg/controller/garbagecollector/garbagecollector.go
 * (GarbageCollector, Run, Sync, GetDeletableResources, attemptToDeleteWorker, attemptToDeleteItem,
 * classifyReferences, isDangling, processDeletingDependentsItem, attemptToOrphanWorker,
 * orphanDependents) and cmd/kube-controller-manager/app/core.go (startGarbageCollectorController).
 *
 * Solves:
 * - `kubectl delete rs web` returns at once, yet the pods must follow: nobody but the collector
 *   knows which objects name the ReplicaSet as owner (the graph), and it acts on every resource;
 * - an owner reference may be wrong or stale (its owner recreated under the same name, never
 *   created, or of a kind not yet discovered): before deleting a dependent the collector GETs
 *   each owner live and compares UIDs — the informers' caches may lag, and a wrong delete
 *   cannot be undone;
 * - new kinds (a CRD) arrive while it runs: discovery is read again every 30 s and monitors added.
 *
 * Invariants:
 * - a dependent is deleted only when none of its owners is solid (present with the referenced
 *   UID and not itself waiting for its dependents); dangling and waiting references are
 *   removed from a dependent that still has a solid owner;
 * - a foreground owner loses its finalizer only when no dependent blocks it; an orphaning
 *   owner only after every dependent's reference to it is removed;
 * - workers pause while the monitors are being changed (the worker lock), so no decision is
 *   made on a graph that is missing a resource's objects.
 *
 * What upstream does differently: its monitors are metadata-only informers and it raises the
 * client's QPS twofold (each deletion costs a GET and a DELETE); ours shares the manager's
 * informers and budget. Upstream reports deletion problems as events and metrics; ours logs.
 *
 * @upstream kubernetes/kubernetes pkg/controller/garbagecollector/garbagecollector.go (GarbageCollector, NewGarbageCollector, Run, Sync, resyncMonitors, GetDeletableResources, attemptToDeleteWorker, attemptToDeleteItem, classifyReferences, isDangling, processDeletingDependentsItem, attemptToOrphanWorker, orphanDependents, enqueuedVirtualDeleteEventErr, namespacedOwnerOfClusterScopedObjectErr)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/core.go (startGarbageCollectorController)
 * @chapter 04-informers
 */
import type { KubeObject, OwnerReference } from "../../api/meta.ts";
import {
  type DiscoveryClient,
  isGroupDiscoveryFailedError,
  newDiscoveryClientForClientset,
} from "../../client/discovery/discovery-client.ts";
import {
  type DiscoveredResource,
  filteredBy,
  groupVersionResources,
  supportsAllVerbs,
} from "../../client/discovery/helper.ts";
import { isNotFound } from "../../client/errors.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import {
  gvrString,
  type SharedInformerFactory,
  waitForCacheSync,
} from "../../client/tools/cache/informer-factory.ts";
import { defaultControllerRateLimiter } from "../../client/util/workqueue/rate-limiters.ts";
import {
  newTypedRateLimitingQueueWithConfig,
  type TypedRateLimitingInterface,
} from "../../client/util/workqueue/rate-limiting-queue.ts";
import type { ControllerContext, RunningController } from "../controller-context.ts";
import { identityString, type Node, type ObjectReference, ReferenceCache } from "./graph.ts";
import { finalizerDeleteDependents, finalizerOrphanDependents, GraphBuilder } from "./graph-builder.ts";
import {
  deleteOwnerRefStrategicMergePatch,
  Operations,
  type PropagationPolicy,
  RESTMapper,
  RESTMappingError,
  unblockOwnerReferencesStrategicMergePatch,
} from "./operations.ts";

/** startGarbageCollectorController's syncPeriod: how often discovery is read again. */
export const gcSyncPeriodMs = 30_000;

/** attemptToDeleteItem produced a virtual delete event: the graph will handle it, no retry. */
class EnqueuedVirtualDeleteEvent extends Error {
  constructor() {
    super("enqueued virtual delete event");
  }
}
/** A cluster-scoped object names a namespaced owner: invalid, and retrying will not fix it. */
class NamespacedOwnerOfClusterScopedObject extends Error {
  constructor() {
    super("cluster-scoped objects cannot refer to namespaced owners");
  }
}

type WorkItemAction = "forget" | "requeue";

export interface GarbageCollectorOptions {
  /** Writes (get, delete, patch) go through this client: the controller's own identity. */
  client: Clientset;
  discovery: DiscoveryClient;
  informerFactory?: SharedInformerFactory;
  ignoredResources?: ReadonlySet<string>;
  log?: (line: string) => void;
}

const hasFinalizer = (o: KubeObject, f: string) => (o.metadata.finalizers ?? []).includes(f);

export class GarbageCollector {
  readonly attemptToDelete: TypedRateLimitingInterface<Node>;
  readonly attemptToOrphan: TypedRateLimitingInterface<Node>;
  readonly absentOwnerCache = new ReferenceCache(500);
  readonly dependencyGraphBuilder: GraphBuilder;
  readonly ops: Operations;
  private readonly log: (line: string) => void;
  /** Set while monitors change (upstream's workerLock held for writing). */
  private paused: Promise<void> | undefined;
  /** The resources the monitors were last synced to (Sync's oldResources), by gvrString. */
  private oldResources = new Map<string, DiscoveredResource>();

  constructor(private readonly opts: GarbageCollectorOptions) {
    this.log = opts.log ?? (() => {});
    this.attemptToDelete = newTypedRateLimitingQueueWithConfig<Node>(defaultControllerRateLimiter(), {
      name: "garbage_collector_attempt_to_delete",
    });
    this.attemptToOrphan = newTypedRateLimitingQueueWithConfig<Node>(defaultControllerRateLimiter(), {
      name: "garbage_collector_attempt_to_orphan",
    });
    this.ops = new Operations(opts.client, new RESTMapper());
    this.dependencyGraphBuilder = new GraphBuilder({
      informerFactory: opts.informerFactory,
      attemptToDelete: this.attemptToDelete,
      attemptToOrphan: this.attemptToOrphan,
      absentOwnerCache: this.absentOwnerCache,
      ignoredResources: opts.ignoredResources,
      log: this.log,
    });
  }

  // #region sync
  /**
   * GetDeletableResources: the preferred version of every resource that can be deleted, listed
   * and watched. On a partial answer the failed groups' monitors are kept (if synced), so one
   * group's outage does not drop what is known about its objects.
   */
  private async deletableResources(): Promise<Map<string, DiscoveredResource>> {
    const { result, error } = await this.opts.discovery.serverPreferredResources();
    const found = new Map(
      groupVersionResources(filteredBy(supportsAllVerbs(["delete", "list", "watch"]), result)).map((r) => [
        gvrString(r),
        r,
      ]),
    );
    if (isGroupDiscoveryFailedError(error)) {
      this.log(`"failed to discover some groups" groups="${[...error.groups.keys()].join(",")}"`);
      for (const [k, r] of this.oldResources) {
        const gv = r.group ? `${r.group}/${r.version}` : r.version;
        if (error.groups.has(gv) && this.dependencyGraphBuilder.isResourceSynced(r)) found.set(k, r);
      }
    }
    return found;
  }

  /**
   * One round of Sync: discovery again; if the set of resources changed, pause the workers,
   * reset the REST mapper, add and remove monitors, start the new ones, wait for them, resume.
   * Returns whether the monitors changed.
   */
  async resyncMonitors(signal?: AbortSignal): Promise<boolean> {
    const next = await this.deletableResources();
    if (next.size === 0) {
      this.log('"no resources reported by discovery, skipping garbage collector sync"');
      return false;
    }
    const same =
      next.size === this.oldResources.size && [...next.keys()].every((k) => this.oldResources.has(k));
    if (same) return false;
    let resume = () => {};
    this.paused = new Promise<void>((r) => {
      resume = r;
    });
    try {
      const { result } = await this.opts.discovery.serverGroupsAndResources();
      this.ops.restMapper.reset(result.lists);
      const { added, removed } = this.dependencyGraphBuilder.syncMonitors([...next.values()]);
      this.log(
        `"syncing garbage collector with updated resources from discovery" added=${added} removed=${removed}`,
      );
      if (signal) {
        this.dependencyGraphBuilder.startMonitors(signal);
        await waitForCacheSync(signal, () => this.dependencyGraphBuilder.isSynced());
      }
      this.oldResources = next;
      return true;
    } finally {
      this.paused = undefined;
      resume();
    }
  }
  // #endregion sync

  // #region run
  /**
   * Run: the graph builder's loop, then — once every monitor has synced — `workers` workers on
   * each queue, and the periodic Sync. Resolves after the workers stopped.
   */
  async run(workers: number, signal: AbortSignal, syncPeriodMs = gcSyncPeriodMs): Promise<void> {
    this.log('"Starting controller" controller="garbagecollector"');
    const stop = () => {
      this.attemptToDelete.shutDown();
      this.attemptToOrphan.shutDown();
      this.dependencyGraphBuilder.graphChanges.shutDown();
    };
    if (signal.aborted) stop();
    signal.addEventListener("abort", stop, { once: true });
    const graph = this.dependencyGraphBuilder.runProcessGraphChanges();
    // Sync runs from the start: if discovery failed at start-up, it is what adds the monitors.
    let syncing = false;
    const timer = setInterval(() => {
      if (syncing) return; // a slow round (monitors waiting to sync) is not overlapped
      syncing = true;
      this.resyncMonitors(signal)
        .catch((e) => this.log(`"failed to sync resource monitors" err="${(e as Error).message}"`))
        .finally(() => {
          syncing = false;
        });
    }, syncPeriodMs);
    try {
      if (!(await waitForCacheSync(signal, () => this.dependencyGraphBuilder.isSynced()))) return;
      this.log('"All resource monitors have synced. Proceeding to collect garbage"');
      await Promise.all([
        ...Array.from({ length: workers }, () =>
          this.runWorker(this.attemptToDelete, (n) => this.attemptToDeleteWorker(n)),
        ),
        ...Array.from({ length: workers }, () =>
          this.runWorker(this.attemptToOrphan, (n) => this.attemptToOrphanWorker(n)),
        ),
      ]);
    } finally {
      clearInterval(timer);
      signal.removeEventListener("abort", stop);
      stop();
      await graph;
      this.log('"Shutting down controller" controller="garbagecollector"');
    }
  }

  private async runWorker(
    queue: TypedRateLimitingInterface<Node>,
    work: (n: Node) => Promise<WorkItemAction>,
  ): Promise<void> {
    for (;;) {
      const got = await queue.get();
      if (got.shutdown) return;
      const n = got.item;
      try {
        if (this.paused) await this.paused;
        const action = await work(n);
        if (action === "forget") queue.forget(n);
        else queue.addRateLimited(n);
      } finally {
        queue.done(n);
      }
    }
  }
  // #endregion run

  // #region attempt-to-delete-worker
  /** attemptToDeleteWorker: what to do with the node after one attempt. */
  async attemptToDeleteWorker(n: Node): Promise<WorkItemAction> {
    if (!n.isObserved()) {
      const inGraph = this.dependencyGraphBuilder.uidToNode.read(n.identity.uid);
      // A requeued virtual node whose object was seen or deleted meanwhile: nothing left to do.
      if (!inGraph || inGraph.isObserved()) return "forget";
    }
    try {
      await this.attemptToDeleteItem(n);
    } catch (err) {
      if (err instanceof EnqueuedVirtualDeleteEvent || err instanceof NamespacedOwnerOfClusterScopedObject)
        return "forget";
      // A kind not yet discovered (a CRD just created) may be known after the next sync: retry.
      if (!(err instanceof RESTMappingError) && !isNotFound(err))
        this.log(`"error syncing item" item="${identityString(n.identity)}" err="${(err as Error).message}"`);
      return "requeue";
    }
    // Not yet observed: retry, or a virtual node for an object added and removed while a watch
    // was being re-established would stay in the graph forever (kubernetes#56121).
    return n.isObserved() ? "forget" : "requeue";
  }
  // #endregion attempt-to-delete-worker

  // #region attempt-to-delete-item
  /** attemptToDeleteItem: look at the object live, classify its owners, and act. */
  async attemptToDeleteItem(item: Node): Promise<void> {
    // Being deleted (without foreground) is a one-way trip: wait for the delete event.
    if (item.beingDeleted && !item.deletingDependents) return;
    let latest: KubeObject;
    try {
      latest = await this.ops.getObject(item.identity);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      // A virtual owner that does not exist (or an object gone since): tell the graph.
      this.dependencyGraphBuilder.enqueueVirtualDeleteEvent(item.identity);
      throw new EnqueuedVirtualDeleteEvent();
    }
    if (latest.metadata.uid !== item.identity.uid) {
      // Same name, another object: the one this node stands for is gone.
      this.dependencyGraphBuilder.enqueueVirtualDeleteEvent(item.identity);
      throw new EnqueuedVirtualDeleteEvent();
    }
    if (item.deletingDependents) return this.processDeletingDependentsItem(item);
    const ownerReferences = latest.metadata.ownerReferences ?? [];
    if (ownerReferences.length === 0) return;
    const { solid, dangling, waitingForDependentsDeletion } = await this.classifyReferences(
      item,
      ownerReferences,
    );
    const rv = latest.metadata.resourceVersion ?? "";
    if (solid.length > 0) {
      // Still owned: keep it, but drop references that would keep an owner waiting forever.
      if (dangling.length === 0 && waitingForDependentsDeletion.length === 0) return;
      const uids = [...dangling, ...waitingForDependentsDeletion].map((r) => r.uid);
      await this.ops.patchObject(
        item.identity,
        deleteOwnerRefStrategicMergePatch(item.identity.uid, ...uids),
      );
      return;
    }
    if (waitingForDependentsDeletion.length > 0 && item.dependents.size > 0) {
      // An owner waits for this item in foreground, and the item has dependents of its own.
      // If one of them waits too, unblock our references first: a cycle would wait forever.
      for (const dep of item.dependents) {
        if (dep.deletingDependents) {
          this.log(`"unblocking owner references to avoid a cycle" item="${identityString(item.identity)}"`);
          await this.ops.patchObject(item.identity, unblockOwnerReferencesStrategicMergePatch(item));
          break;
        }
      }
      // Foreground: its own dependents go first, then it, then the owner waiting for it.
      await this.ops.deleteObject(item.identity, rv, latest.metadata.ownerReferences, "Foreground");
      return;
    }
    // No solid owner: garbage. Honour a finalizer it already carries, else background.
    let policy: PropagationPolicy = "Background";
    if (hasFinalizer(latest, finalizerOrphanDependents)) policy = "Orphan";
    else if (hasFinalizer(latest, finalizerDeleteDependents)) policy = "Foreground";
    this.log(`"Deleting item" item="${identityString(item.identity)}" propagationPolicy="${policy}"`);
    await this.ops.deleteObject(item.identity, rv, latest.metadata.ownerReferences, policy);
  }
  // #endregion attempt-to-delete-item

  // #region classify-references
  /**
   * classifyReferences: each owner reference is dangling (no such owner with that UID),
   * waiting (the owner is being deleted in foreground) or solid.
   */
  async classifyReferences(
    item: Node,
    refs: readonly OwnerReference[],
  ): Promise<{
    solid: OwnerReference[];
    dangling: OwnerReference[];
    waitingForDependentsDeletion: OwnerReference[];
  }> {
    const solid: OwnerReference[] = [];
    const dangling: OwnerReference[] = [];
    const waitingForDependentsDeletion: OwnerReference[] = [];
    for (const ref of refs) {
      const { isDangling, owner } = await this.isDangling(ref, item);
      if (isDangling || !owner) dangling.push(ref);
      else if (owner.metadata.deletionTimestamp && hasFinalizer(owner, finalizerDeleteDependents))
        waitingForDependentsDeletion.push(ref);
      else solid.push(ref);
    }
    return { solid, dangling, waitingForDependentsDeletion };
  }

  /**
   * isDangling: known absent (the cache), or a live GET says NotFound or shows another UID. The
   * GET is the point: the graph may lag, and deleting a dependent cannot be undone.
   */
  async isDangling(ref: OwnerReference, item: Node): Promise<{ isDangling: boolean; owner?: KubeObject }> {
    const key: ObjectReference = {
      apiVersion: ref.apiVersion,
      kind: ref.kind,
      name: ref.name,
      uid: ref.uid,
      namespace: "",
    };
    if (this.absentOwnerCache.has(key)) return { isDangling: true }; // a cluster-scoped owner
    key.namespace = item.identity.namespace;
    if (this.absentOwnerCache.has(key)) return { isDangling: true };
    const namespaced = this.ops.isNamespaced(ref.apiVersion, ref.kind);
    if (!namespaced) key.namespace = "";
    if (!item.identity.namespace && namespaced) throw new NamespacedOwnerOfClusterScopedObject();
    let owner: KubeObject;
    try {
      owner = await this.ops.getObject(key);
    } catch (e) {
      if (!isNotFound(e)) throw e;
      this.absentOwnerCache.add(key);
      return { isDangling: true };
    }
    if (owner.metadata.uid !== ref.uid) {
      this.absentOwnerCache.add(key);
      return { isDangling: true };
    }
    return { isDangling: false, owner };
  }
  // #endregion classify-references

  // #region process-deleting-dependents
  /** processDeletingDependentsItem: a foreground owner — its finalizer goes once nothing blocks it. */
  async processDeletingDependentsItem(item: Node): Promise<void> {
    const blocking = item.blockingDependents();
    if (blocking.length === 0) {
      this.log(`"remove DeleteDependents finalizer for item" item="${identityString(item.identity)}"`);
      await this.ops.removeFinalizer(item, finalizerDeleteDependents);
      return;
    }
    // Those already deleting their own dependents are on their way; the others, try now.
    for (const dep of blocking) if (!dep.deletingDependents) this.attemptToDelete.add(dep);
  }
  // #endregion process-deleting-dependents

  // #region attempt-to-orphan
  /** attemptToOrphanWorker: every dependent's reference to the owner removed, then the finalizer. */
  async attemptToOrphanWorker(owner: Node): Promise<WorkItemAction> {
    try {
      await this.orphanDependents(owner.identity, [...owner.dependents]);
      await this.ops.removeFinalizer(owner, finalizerOrphanDependents);
      return "forget";
    } catch (err) {
      this.log(
        `"orphaning failed" owner="${identityString(owner.identity)}" err="${(err as Error).message}"`,
      );
      return "requeue";
    }
  }

  /** orphanDependents: one patch per dependent, all at once; a dependent already gone is fine. */
  async orphanDependents(owner: ObjectReference, dependents: readonly Node[]): Promise<void> {
    const failures: string[] = [];
    await Promise.all(
      dependents.map(async (d) => {
        try {
          await this.ops.patchObject(
            d.identity,
            deleteOwnerRefStrategicMergePatch(d.identity.uid, owner.uid),
          );
        } catch (e) {
          if (!isNotFound(e))
            failures.push(`orphaning ${identityString(d.identity)} failed, ${(e as Error).message}`);
        }
      }),
    );
    if (failures.length > 0)
      throw new Error(
        `failed to orphan dependents of owner ${identityString(owner)}, got errors: ${failures.join("; ")}`,
      );
  }
  // #endregion attempt-to-orphan
}

// #region start
/**
 * startGarbageCollectorController: discovery and the first monitors before returning (so the
 * manager's factory starts them with the others), then Run with `--concurrent-gc-syncs`
 * workers per queue and a 30 s Sync.
 */
export async function startGarbageCollectorController(ctx: ControllerContext): Promise<RunningController> {
  const client = await ctx.clientFor("generic-garbage-collector");
  const gc = new GarbageCollector({
    client,
    discovery: newDiscoveryClientForClientset(client),
    informerFactory: ctx.informerFactory,
    log: ctx.log,
  });
  // No signal: the manager starts the factory after every controller registered its handlers.
  // A failed discovery does not stop the manager: the 30 s Sync tries again.
  await gc
    .resyncMonitors()
    .catch((e) =>
      ctx.log(`"failed to discover resources for the garbage collector" err="${(e as Error).message}"`),
    );
  return { done: gc.run(ctx.config.concurrentGCSyncs, ctx.signal) };
}
// #endregion start

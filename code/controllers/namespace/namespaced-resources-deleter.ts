/**
 * NamespacedResourcesDeleter — empties a terminating namespace: every namespaced resource the
 * server serves, one collection at a time; then removes the `kubernetes` finalizer through
 * `namespaces/{name}/finalize`, after which the API server deletes the namespace.
 * Mirrors kubernetes pkg/controller/namespace/deletion/namespaced_resources_deleter.go and
 * status_condition_utils.go.
 *
 * Solves:
 * - `kubectl delete namespace x` must delete what is in x, of every kind, including kinds the
 *   controller has never heard of: the kinds come from discovery, the deletes are generic;
 * - deletion takes time (graceful pods, objects with finalizers): the deleter does not wait, it
 *   answers "some content remains, look again in N seconds" (ResourcesRemainingError);
 * - a learner asking "why is my namespace stuck in Terminating?" gets the answer from the
 *   namespace itself: five status conditions, with upstream's reasons and messages.
 *
 * Invariants:
 * - nothing is done unless the namespace (read fresh, not from a cache) has a deletionTimestamp;
 * - the finalizer is removed only after a pass that deleted everything and found nothing left;
 * - the five conditions are written on every pass whose outcome changed: status True with a
 *   failure reason, or False with the "ok" reason once the problem is gone.
 *
 * @upstream kubernetes/kubernetes pkg/controller/namespace/deletion/namespaced_resources_deleter.go (Delete, deleteAllContent, deleteAllContentForGroupVersionResource, deleteCollection, deleteEachItem, listCollection, estimateGracefulTermination, finalizeNamespace, updateNamespaceStatusFunc, ResourcesRemainingError)
 * @upstream kubernetes/kubernetes pkg/controller/namespace/deletion/status_condition_utils.go (namespaceConditionUpdater, okMessages, okReasons, ProcessContentTotals, updateConditions)
 * @chapter 04-informers
 */
import type { Namespace, NamespaceCondition, Pod } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import { ErrGroupDiscoveryFailed } from "../../client/discovery/discovery-client.ts";
import type { DiscoveredResource } from "../../client/discovery/helper.ts";
import { isConflict, isNotFound, StatusError } from "../../client/errors.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";

export const finalizerKubernetes = "kubernetes";
/** A finalizer's default time to finish, when items wait on one (finalizerEstimateSeconds). */
export const finalizerEstimateSeconds = 15;

// #region resources-remaining
/** Content is still there: look again in about `estimate` seconds. */
export class ResourcesRemainingError extends Error {
  constructor(readonly estimate: number) {
    super(`some content remains in the namespace, estimate ${estimate} seconds before it is removed`);
    this.name = "ResourcesRemainingError";
  }
}
// #endregion resources-remaining

// #region conditions
const conditionTypes = [
  "NamespaceDeletionDiscoveryFailure",
  "NamespaceDeletionGroupVersionParsingFailure",
  "NamespaceDeletionContentFailure",
  "NamespaceContentRemaining",
  "NamespaceFinalizersRemaining",
] as const;
type ConditionType = (typeof conditionTypes)[number];

const okReasons: Record<ConditionType, string> = {
  NamespaceDeletionDiscoveryFailure: "ResourcesDiscovered",
  NamespaceDeletionGroupVersionParsingFailure: "ParsedGroupVersions",
  NamespaceDeletionContentFailure: "ContentDeleted",
  NamespaceContentRemaining: "ContentRemoved",
  NamespaceFinalizersRemaining: "ContentHasNoFinalizers",
};
const okMessages: Record<ConditionType, string> = {
  NamespaceDeletionDiscoveryFailure: "All resources successfully discovered",
  NamespaceDeletionGroupVersionParsingFailure: "All legacy kube types successfully parsed",
  NamespaceDeletionContentFailure: "All content successfully deleted, may be waiting on finalization",
  NamespaceContentRemaining: "All content successfully removed",
  NamespaceFinalizersRemaining: "All content-preserving finalizers finished",
};

/** The conditions one pass found (namespaceConditionUpdater); the rest are written as "ok". */
export class NamespaceConditionUpdater {
  readonly found = new Map<ConditionType, { reason: string; message: string }>();
  private readonly deleteErrors: string[] = [];

  processDiscoverResourcesErr(err: unknown): void {
    const message =
      err instanceof ErrGroupDiscoveryFailed
        ? `Discovery failed for some groups, ${err.groups.size} failing: ${err.message}`
        : String(err instanceof Error ? err.message : err);
    this.found.set("NamespaceDeletionDiscoveryFailure", { reason: "DiscoveryFailed", message });
  }

  processGroupVersionErr(err: Error): void {
    this.found.set("NamespaceDeletionGroupVersionParsingFailure", {
      reason: "GroupVersionParsingFailed",
      message: err.message,
    });
  }

  processDeleteContentErr(err: unknown): void {
    this.deleteErrors.push(err instanceof Error ? err.message : String(err));
  }

  /** ProcessContentTotals: what remains, by resource and by finalizer, sorted for stable updates. */
  processContentTotals(byResource: Map<string, number>, byFinalizer: Map<string, number>): void {
    const resources = [...byResource]
      .filter(([, n]) => n > 0)
      .map(([r, n]) => `${r} has ${n} resource instances`);
    if (byResource.size > 0)
      this.found.set("NamespaceContentRemaining", {
        reason: "SomeResourcesRemain",
        message: `Some resources are remaining: ${resources.sort().join(", ")}`,
      });
    const finalizers = [...byFinalizer]
      .filter(([, n]) => n > 0)
      .map(([f, n]) => `${f} in ${n} resource instances`);
    if (byFinalizer.size > 0)
      this.found.set("NamespaceFinalizersRemaining", {
        // Upstream's spelling: singular "Finalizer".
        reason: "SomeFinalizerRemain",
        message: `Some finalizers are remaining: ${finalizers.sort().join(", ")}`,
      });
  }

  /** Writes the five conditions into `ns.status`; true when anything changed (Update). */
  update(ns: Namespace, now: string): boolean {
    if (this.deleteErrors.length > 0 && !this.found.has("NamespaceDeletionContentFailure")) {
      const msgs = [...this.deleteErrors].sort();
      this.found.set("NamespaceDeletionContentFailure", {
        reason: "ContentDeletionFailed",
        message: `Failed to delete all resource types, ${msgs.length} remaining: ${msgs.join(", ")}`,
      });
    }
    ns.status ??= {};
    ns.status.conditions ??= [];
    const conditions: NamespaceCondition[] = ns.status.conditions;
    let changed = false;
    for (const type of conditionTypes) {
      const f = this.found.get(type);
      const want = f
        ? { status: "True" as const, ...f }
        : { status: "False" as const, reason: okReasons[type], message: okMessages[type] };
      const old = conditions.find((c) => c.type === type);
      if (!old) {
        conditions.push({ type, ...want, lastTransitionTime: now });
        changed = true;
      } else if (old.status !== want.status || old.reason !== want.reason || old.message !== want.message) {
        if (old.status !== want.status) old.lastTransitionTime = now;
        Object.assign(old, want);
        changed = true;
      }
    }
    return changed;
  }
}
// #endregion conditions

export interface DeleterOptions {
  /** The resources to empty, from discovery (ServerPreferredNamespacedResources). */
  discoverResources: () => Promise<{ resources: DiscoveredResource[]; error?: Error }>;
  now?: () => Date;
}

const gvrString = (r: { group: string; resource: string }) => `${r.resource}.${r.group}`;

export class NamespacedResourcesDeleter {
  // Resources found not to support an operation, so it is not tried again (opCache).
  private readonly notSupported = new Set<string>();
  private readonly now: () => Date;

  constructor(
    private readonly client: Clientset,
    private readonly opts: DeleterOptions,
  ) {
    this.now = opts.now ?? (() => new Date());
  }

  // #region delete
  /**
   * Delete: if the namespace is terminating, mark it so, empty it, and finalize it. Throws
   * ResourcesRemainingError while content remains, or the errors of a failed pass.
   */
  async delete(name: string): Promise<void> {
    const namespaces = this.client.coreV1.namespaces();
    let ns: Namespace;
    try {
      ns = await namespaces.get(name);
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
    if (!ns.metadata.deletionTimestamp) return;
    // The phase first: it tells admission (NamespaceLifecycle) to refuse new content.
    try {
      ns = await this.retryOnConflict(ns, (n) => this.updateNamespaceStatus(n));
    } catch (e) {
      if (isNotFound(e)) return;
      throw e;
    }
    if (!ns.metadata.deletionTimestamp) return;
    if ((ns.spec?.finalizers ?? []).length === 0) return; // finalized: the server deletes it
    const estimate = await this.deleteAllContent(ns);
    if (estimate > 0) throw new ResourcesRemainingError(estimate);
    try {
      await this.retryOnConflict(ns, (n) => this.finalizeNamespace(n));
    } catch (e) {
      // Another controller with the same finalizer finished first.
      if (isNotFound(e)) return;
      throw e;
    }
  }
  // #endregion delete

  /** retryOnConflictError: on 409 read again and retry, unless the namespace was replaced (new uid). */
  private async retryOnConflict(
    ns: Namespace,
    fn: (ns: Namespace) => Promise<Namespace>,
  ): Promise<Namespace> {
    let latest = ns;
    for (;;) {
      try {
        return await fn(latest);
      } catch (e) {
        if (!isConflict(e)) throw e;
      }
      const prev = latest;
      latest = await this.client.coreV1.namespaces().get(ns.metadata.name ?? "");
      if (prev.metadata.uid !== latest.metadata.uid)
        throw new Error("namespace uid has changed across retries");
    }
  }

  private async updateNamespaceStatus(ns: Namespace): Promise<Namespace> {
    if (!ns.metadata.deletionTimestamp || ns.status?.phase === "Terminating") return ns;
    const next = structuredClone(ns);
    next.status = { ...next.status, phase: "Terminating" };
    return this.client.coreV1.namespaces().updateStatus(next);
  }

  // #region finalize
  /** Removes our token from spec.finalizers through the finalize subresource. */
  private async finalizeNamespace(ns: Namespace): Promise<Namespace> {
    const next = structuredClone(ns);
    const rest = new Set((ns.spec?.finalizers ?? []).filter((f) => f !== finalizerKubernetes));
    next.spec = { ...next.spec, finalizers: [...rest].sort() };
    return this.client.coreV1
      .namespaces()
      .client.put()
      .resource("namespaces")
      .name(ns.metadata.name ?? "")
      .subResource("finalize")
      .body(next)
      .do<Namespace>();
  }
  // #endregion finalize

  // #region delete-all-content
  /** One pass over every deletable resource; the seconds to wait before the next, 0 when empty. */
  private async deleteAllContent(ns: Namespace): Promise<number> {
    const namespace = ns.metadata.name ?? "";
    const errors: unknown[] = [];
    const conditions = new NamespaceConditionUpdater();
    let resources: DiscoveredResource[] = [];
    try {
      const found = await this.opts.discoverResources();
      resources = found.resources;
      if (found.error) {
        // Not fatal: delete what was discovered, and say which groups failed.
        errors.push(found.error);
        conditions.processDiscoverResourcesErr(found.error);
      }
    } catch (e) {
      errors.push(e);
      conditions.processDiscoverResourcesErr(e);
    }
    // Only what can be deleted (discovery.FilteredBy(SupportsAllVerbs{"delete"})).
    const deletable = resources.filter((r) => r.verbs.includes("delete"));
    let estimate = 0;
    const remaining = new Map<string, number>();
    const finalizersRemaining = new Map<string, number>();
    for (const r of deletable) {
      try {
        const m = await this.deleteAllContentForResource(r, namespace);
        estimate = Math.max(estimate, m.estimate);
        if (m.remaining > 0) {
          remaining.set(gvrString(r), m.remaining);
          for (const [f, n] of m.finalizers)
            finalizersRemaining.set(f, (finalizersRemaining.get(f) ?? 0) + n);
        }
      } catch (e) {
        errors.push(e);
        conditions.processDeleteContentErr(e);
      }
    }
    conditions.processContentTotals(remaining, finalizersRemaining);
    // Always written when changed: a condition that was failing must say when it stops failing.
    if (
      conditions.update(
        ns,
        this.now()
          .toISOString()
          .replace(/\.\d{3}Z$/, "Z"),
      )
    ) {
      try {
        Object.assign(ns, await this.client.coreV1.namespaces().updateStatus(ns));
      } catch {
        // upstream: HandleError, and carry on; the next pass writes them again.
      }
    }
    if (errors.length > 0)
      throw new Error(errors.map((e) => (e instanceof Error ? e.message : String(e))).join(", "));
    return estimate;
  }
  // #endregion delete-all-content

  // #region delete-resource
  private async deleteAllContentForResource(
    r: DiscoveredResource,
    namespace: string,
  ): Promise<{ estimate: number; remaining: number; finalizers: Map<string, number> }> {
    const client = this.client.resource(r, namespace);
    // How long graceful deletions may still take (only pods have one).
    const estimate = r.group === "" && r.resource === "pods" ? await this.estimatePods(namespace) : 0;
    // Background: the namespace controller deletes every kind itself, so no orphan finalizer.
    if (!(await this.deleteCollection(r, namespace))) {
      const items = await this.listCollection(r, namespace);
      for (const item of items ?? []) {
        try {
          await client.delete(item.metadata.name ?? "", { propagationPolicy: "Background" });
        } catch (e) {
          if (!isNotFound(e) && !isMethodNotSupported(e)) throw e;
        }
      }
    }
    const items = await this.listCollection(r, namespace);
    if (items === undefined) return { estimate, remaining: 0, finalizers: new Map() };
    const finalizers = new Map<string, number>();
    for (const item of items)
      for (const f of item.metadata.finalizers ?? []) finalizers.set(f, (finalizers.get(f) ?? 0) + 1);
    if (estimate !== 0) return { estimate, remaining: items.length, finalizers };
    // Items waiting on finalizers are normal: give the finalizers time.
    if (finalizers.size > 0)
      return { estimate: finalizerEstimateSeconds, remaining: items.length, finalizers };
    if (items.length > 0)
      throw new Error(
        `unexpected items still remain in namespace: ${namespace} for gvr: ${r.group}/${r.version}, Resource=${r.resource}`,
      );
    return { estimate, remaining: 0, finalizers };
  }
  // #endregion delete-resource

  /** deleteCollection: true if the server supports it (and it succeeded). */
  private async deleteCollection(r: DiscoveredResource, namespace: string): Promise<boolean> {
    const key = `deletecollection ${gvrString(r)}`;
    if (this.notSupported.has(key) || !r.verbs.includes("deletecollection")) return false;
    try {
      await this.client.resource(r, namespace).deleteCollection({ propagationPolicy: "Background" });
      return true;
    } catch (e) {
      if (isMethodNotSupported(e) || isNotFound(e)) {
        this.notSupported.add(key);
        return false;
      }
      throw e;
    }
  }

  /** listCollection: the items, or undefined when the resource cannot be listed. */
  private async listCollection(r: DiscoveredResource, namespace: string): Promise<KubeObject[] | undefined> {
    const key = `list ${gvrString(r)}`;
    if (this.notSupported.has(key) || !r.verbs.includes("list")) return undefined;
    try {
      return (await this.client.resource(r, namespace).list()).items;
    } catch (e) {
      if (isMethodNotSupported(e) || isNotFound(e)) {
        this.notSupported.add(key);
        return undefined;
      }
      throw e;
    }
  }

  /** estimateGracefulTerminationForPods: the longest grace period of a pod not yet finished. */
  private async estimatePods(namespace: string): Promise<number> {
    const pods = (await this.client.coreV1.pods(namespace).list()).items as Pod[];
    let estimate = 0;
    for (const pod of pods) {
      const phase = pod.status?.phase;
      if (phase === "Succeeded" || phase === "Failed") continue;
      const grace = pod.spec?.terminationGracePeriodSeconds;
      if (grace !== undefined && grace > estimate) estimate = grace;
    }
    return estimate;
  }
}

function isMethodNotSupported(e: unknown): boolean {
  return e instanceof StatusError && e.code === 405;
}

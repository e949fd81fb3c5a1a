/**
 * QuotaMonitor — the resource quota controller's ears: a shared informer on every resource a
 * quota can count, whose deletions (and a few updates) say "some quota in this namespace may
 * have room again".
 * Upstream: kubernetes/kubernetes pkg/controller/resourcequota/resource_quota_monitor.go (QuotaMonitor).
 *
 * Solves:
 * - admission only ever adds to `status.used`; nobody tells a quota when a pod is deleted or
 *   finishes. Without a signal the room would come back only at the next full resync (five
 *   minutes by default), and a namespace at its limit would refuse work it has room for;
 * - a quota can count any kind (`count/widgets.example.com`), so the kinds are not a list in
 *   code: they are read from discovery — every namespaced resource that can be created, listed,
 *   watched and deleted (GetQuotableResources), less a few that are never counted.
 *
 * Invariants:
 * - a deletion of any monitored object is a replenishment signal; adds never are (admission has
 *   charged them already);
 * - an update is a signal only when it can lower usage: a pod that stops holding compute
 *   (turns Succeeded or Failed, or its deletion grace runs out), a service whose quota type
 *   changes, a claim whose storage request changes;
 * - the informers are the factory's shared ones, so the monitors cost no extra watch for kinds
 *   other controllers watch already, and the usage calculation reads the same caches.
 *
 * What upstream does differently: it re-reads discovery every 30 s and adds or removes monitors
 * as CRDs come and go (Sync, SyncMonitors); it watches metadata only for kinds without a
 * dedicated evaluator; and its handlers put events on a queue a worker drains. Ours reads
 * discovery once at start and calls the replenishment function from the handler (it only looks
 * up quotas in a cache and enqueues keys).
 *
 * @upstream kubernetes/kubernetes pkg/controller/resourcequota/resource_quota_monitor.go (QuotaMonitor, controllerFor, SyncMonitors, IsSynced)
 * @upstream kubernetes/kubernetes pkg/controller/resourcequota/resource_quota_controller.go (GetQuotableResources)
 * @upstream kubernetes/kubernetes pkg/quota/v1/install/registry.go (ignoredResources)
 * @upstream kubernetes/kubernetes pkg/quota/v1/evaluator/core/services.go (GetQuotaServiceType)
 * @upstream kubernetes/kubernetes pkg/quota/v1/evaluator/core/persistent_volume_claims.go (RequiresQuotaReplenish)
 * @chapter 04-informers
 */
import type { Pod, Service } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import type { GroupVersionResource } from "../../api/schema.ts";
import type { DiscoveredResource } from "../../client/discovery/helper.ts";
import { DeletedFinalStateUnknown } from "../../client/tools/cache/delta-fifo.ts";
import type { SharedInformerFactory } from "../../client/tools/cache/informer-factory.ts";
import type { NamespaceLister } from "../../client/tools/cache/listers.ts";
import type { ResourceEventHandlerRegistration } from "../../client/tools/cache/shared-informer.ts";
import { podHoldsCompute } from "../../quota/evaluator.ts";
import type { GroupResource } from "../../quota/usage.ts";

/** Told that objects of `gr` in `namespace` changed so that usage may have gone down. */
export type ReplenishmentFunc = (gr: GroupResource, namespace: string) => void;

const grKey = (r: GroupResource) => `${r.group}/${r.resource}`;

// #region quotable-resources
/** Kinds that are never counted: virtual (reviews, bindings) or never quota'd (events). */
export const ignoredResources: ReadonlySet<string> = new Set([
  "/bindings",
  "/componentstatuses",
  "/events",
  "events.k8s.io/events",
  "authentication.k8s.io/tokenreviews",
  "authentication.k8s.io/selfsubjectreviews",
  "authorization.k8s.io/subjectaccessreviews",
  "authorization.k8s.io/selfsubjectaccessreviews",
  "authorization.k8s.io/localsubjectaccessreviews",
  "authorization.k8s.io/selfsubjectrulesreviews",
]);

/** GetQuotableResources: namespaced, and `create`, `list`, `watch`, `delete` all served. */
export function quotableResources(
  discovered: readonly Pick<DiscoveredResource, "group" | "version" | "resource" | "verbs">[],
): GroupVersionResource[] {
  const needed = ["create", "list", "watch", "delete"];
  return discovered
    .filter((r) => needed.every((v) => r.verbs.includes(v)) && !ignoredResources.has(grKey(r)))
    .map(({ group, version, resource }) => ({ group, version, resource }));
}
// #endregion quotable-resources

// #region update-filter
/** GetQuotaServiceType: the type quota counts a service as (`services.nodeports`, …). */
const quotaServiceType = (s: Service) =>
  s.spec?.type === "NodePort" || s.spec?.type === "LoadBalancer" ? s.spec.type : "";

/**
 * The monitor's UpdateFunc filter: can this update lower a quota's usage? Most updates cannot
 * (a label, a status condition), and each signal costs a full recalculation of the quotas.
 */
export function requiresReplenishOnUpdate(
  gr: GroupResource,
  oldObj: KubeObject,
  newObj: KubeObject,
  now: Date,
): boolean {
  if (gr.group !== "") return false;
  switch (gr.resource) {
    case "pods": // QuotaV1Pod(old) && !QuotaV1Pod(new)
      return podHoldsCompute(oldObj as Pod, now) && !podHoldsCompute(newObj as Pod, now);
    case "services":
      return quotaServiceType(oldObj as Service) !== quotaServiceType(newObj as Service);
    case "persistentvolumeclaims": {
      // The course's API types have no PersistentVolumeClaim; only its storage request matters here.
      type Claim = { spec?: { resources?: { requests?: Record<string, string> } } };
      const storage = (c: KubeObject) => (c as Claim).spec?.resources?.requests?.storage;
      return storage(oldObj) !== storage(newObj);
    }
    default:
      return false;
  }
}
// #endregion update-filter

// #region monitor
export class QuotaMonitor {
  private readonly monitors = new Map<
    string,
    { registration: ResourceEventHandlerRegistration; lister: (ns: string) => NamespaceLister }
  >();

  constructor(
    private readonly factory: SharedInformerFactory,
    private readonly replenish: ReplenishmentFunc,
    private readonly opts: { now?: () => Date } = {},
  ) {}

  /** SyncMonitors: one handler on the shared informer of each resource not monitored yet. */
  syncMonitors(resources: readonly GroupVersionResource[]): void {
    const now = this.opts.now ?? (() => new Date());
    for (const gvr of resources) {
      const gr = { group: gvr.group, resource: gvr.resource };
      if (this.monitors.has(grKey(gr))) continue;
      const informer = this.factory.informerFor(gvr);
      const registration = informer.addEventHandler({
        onUpdate: (oldObj, newObj) => {
          if (requiresReplenishOnUpdate(gr, oldObj, newObj, now()))
            this.replenish(gr, newObj.metadata.namespace ?? "");
        },
        onDelete: (obj) => {
          // A deletion seen only in a relist comes as a tombstone: its last known state.
          const last = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
          const namespace =
            last?.metadata.namespace ??
            (obj instanceof DeletedFinalStateUnknown ? obj.key.split("/")[0] : "");
          this.replenish(gr, namespace);
        },
      });
      const lister = this.factory.lister(gvr);
      this.monitors.set(grKey(gr), { registration, lister: (ns) => lister.byNamespace(ns) });
    }
  }

  /** The cache of a monitored resource in one namespace; undefined if `gr` is not monitored. */
  listerFor(gr: GroupResource, namespace: string): NamespaceLister | undefined {
    return this.monitors.get(grKey(gr))?.lister(namespace);
  }

  /** Whether `gr` is monitored (the controller's registry has an evaluator for it). */
  has(gr: GroupResource): boolean {
    return this.monitors.has(grKey(gr));
  }

  /** IsSynced: every monitor's cache has its first list. */
  isSynced(): boolean {
    return [...this.monitors.values()].every((m) => m.registration.hasSynced());
  }
}
// #endregion monitor

/**
 * The webhook source — every webhook of every Mutating- or ValidatingWebhookConfiguration,
 * kept in memory from a list and a watch of their store, so that admitting a pod reads no
 * storage. Upstream: k8s.io/apiserver pkg/admission/configuration/mutating_webhook_manager.go
 * and validating_webhook_manager.go, fed by a shared informer.
 *
 * Solves:
 * - every write in the cluster asks "which webhooks apply?": the answer must be a read of
 *   memory, not a range over storage;
 * - a configuration created or deleted a moment ago takes effect a moment later — the watch
 *   delivers it — exactly as upstream's informer does (upstream's e2e tests wait for that too).
 *
 * Invariants:
 * - `webhooks()` lists the configurations sorted by name, each one's webhooks in their order;
 *   a webhook's uid is `<configuration>/<webhook>/<index>`, stable while the configuration is;
 * - `ready` resolves after the first list: before it, admission waits (upstream's WaitForReady);
 *   it rejects if that list fails, so admission refuses rather than waits forever;
 * - the list and watch are registry/store-informer.ts's, shared with the RBAC index and the
 *   Node graph: a watch that ends (compaction, a restart of storage) is followed by a new list,
 *   and what that list lacks is delivered as deleted.
 *
 * What upstream does differently: a shared informer (reflector, DeltaFIFO, indexer — chapter 4)
 * watches through the API server's own client, not the registry store directly.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/configuration/mutating_webhook_manager.go (mutatingWebhookConfigurationManager.Webhooks, mergeMutatingWebhookConfigurations)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/accessors.go (WebhookAccessor: GetUID, GetConfigurationName)
 * @chapter 03-api-security
 */
import type { MutatingWebhook, MutatingWebhookConfiguration } from "../../../api/admissionregistration.ts";
import type { KubeObject } from "../../../api/meta.ts";
import type { Store } from "../../registry/store.ts";
import { StoreInformer } from "../../registry/store-informer.ts";

/** One webhook with where it came from (upstream: WebhookAccessor). */
export interface WebhookAccessor {
  uid: string;
  configurationName: string;
  hook: MutatingWebhook;
}

/** What the dispatchers read (upstream: generic.Source — Webhooks, HasSynced). */
export interface HookSource {
  readonly ready: Promise<void>;
  webhooks(): WebhookAccessor[];
  stop(): void;
}

// #region source
export class WebhookSource implements HookSource {
  /** configuration name → the configuration as last seen. */
  private readonly configs = new Map<string, MutatingWebhookConfiguration>();
  /** webhooks() of the current configs; dropped on every change, rebuilt on the next read. */
  private cached: WebhookAccessor[] | undefined = [];
  private readonly informer: StoreInformer;
  readonly ready: Promise<void>;

  constructor(store: Store) {
    this.informer = new StoreInformer(store, {
      add: (obj) => this.put(obj),
      update: (_old, obj) => this.put(obj),
      delete: (obj) => this.remove(obj),
    });
    this.ready = this.informer.synced;
    // Admission awaits `ready` and sees a failed first list; a server that closes before any
    // request must not report it as an unhandled rejection.
    this.ready.catch(() => {});
    void this.informer.run();
  }

  /** Every webhook, configurations sorted by name (mergeMutatingWebhookConfigurations). */
  webhooks(): WebhookAccessor[] {
    if (!this.cached) {
      const names = [...this.configs.keys()].sort();
      this.cached = names.flatMap((name) =>
        (this.configs.get(name)?.webhooks ?? []).map((hook, i) => ({
          uid: `${name}/${hook.name}/${i}`,
          configurationName: name,
          hook,
        })),
      );
    }
    return this.cached;
  }

  stop(): void {
    this.informer.stop();
  }

  private put(obj: KubeObject): void {
    const name = obj.metadata?.name;
    if (!name) return;
    this.configs.set(name, obj as MutatingWebhookConfiguration);
    this.cached = undefined;
  }

  private remove(obj: KubeObject): void {
    if (this.configs.delete(obj.metadata?.name ?? "")) this.cached = undefined;
  }
}
// #endregion source

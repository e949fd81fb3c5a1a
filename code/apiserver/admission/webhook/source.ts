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
 * - a watch that ends (compaction, a restart of storage) is replaced by a new list and watch;
 *   a list that fails ends the source (the server is closing).
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
  private readonly configs = new Map<string, MutatingWebhookConfiguration>();
  private cached: WebhookAccessor[] | undefined = [];
  private stopped = false;
  private stopWatch: (() => void) | undefined;
  readonly ready: Promise<void>;

  constructor(private readonly store: Store) {
    let markReady: () => void = () => {};
    this.ready = new Promise<void>((resolve) => {
      markReady = resolve;
    });
    void this.run(markReady);
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
    this.stopped = true;
    this.stopWatch?.();
  }

  /** List, then watch from the list's revision; again whenever the watch ends. */
  private async run(markReady: () => void): Promise<void> {
    while (!this.stopped) {
      let rv: string;
      try {
        const list = await this.store.list("", {});
        this.configs.clear();
        for (const item of list.items) this.put(item);
        rv = list.resourceVersion;
      } catch {
        return; // the storage is closed: so is the server
      }
      markReady();
      try {
        const watch = await this.store.watch("", { resourceVersion: rv });
        this.stopWatch = () => watch.stop();
        for await (const event of watch) {
          if (event.type === "ADDED" || event.type === "MODIFIED") this.put(event.object);
          else if (event.type === "DELETED") this.remove(event.object);
          else if (event.type === "ERROR") break;
        }
      } catch {
        // The watch broke (too old a revision after compaction): list again.
      }
      if (!this.stopped) await new Promise((resolve) => setTimeout(resolve, 100).unref());
    }
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

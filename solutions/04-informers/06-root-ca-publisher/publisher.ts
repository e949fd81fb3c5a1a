/**
 * Exercise 4.6 (solution): the root CA publisher — a ConfigMap `kube-root-ca.crt` with the
 * cluster's CA in every namespace, so any pod can verify the API server it talks to.
 *
 * Level-triggered: whatever happened (a namespace added or changed, the ConfigMap edited or
 * deleted), the key is the namespace, and the sync compares the cache with what should be.
 * README.md has the rules.
 */
import type { ConfigMap, Namespace } from "../../../code/api/core.ts";
import type { KubeObject } from "../../../code/api/meta.ts";
import { isAlreadyExists, isForbidden, isNotFound } from "../../../code/client/errors.ts";
import type { Clientset } from "../../../code/client/kubernetes/clientset.ts";
import { DeletedFinalStateUnknown } from "../../../code/client/tools/cache/delta-fifo.ts";
import {
  type SharedInformerFactory,
  waitForCacheSync,
} from "../../../code/client/tools/cache/informer-factory.ts";
import type { Lister } from "../../../code/client/tools/cache/listers.ts";
import { defaultControllerRateLimiter } from "../../../code/client/util/workqueue/rate-limiters.ts";
import {
  newTypedRateLimitingQueueWithConfig,
  type TypedRateLimitingInterface,
} from "../../../code/client/util/workqueue/rate-limiting-queue.ts";

export const RootCACertConfigMapName = "kube-root-ca.crt";
export const DescriptionAnnotation = "kubernetes.io/description";
export const Description =
  "Contains a CA bundle that can be used to verify the kube-apiserver when using internal endpoints such as the internal service IP or kubernetes.default.svc. " +
  "No other usage is guaranteed across distributions of Kubernetes clusters.";

export const namespacesResource = { group: "", version: "v1", resource: "namespaces" };
export const configMapsResource = { group: "", version: "v1", resource: "configmaps" };

export class Publisher {
  readonly queue: TypedRateLimitingInterface<string>;
  protected readonly namespaces: Lister<Namespace>;
  protected readonly configMaps: Lister<ConfigMap>;
  protected readonly synced: (() => boolean)[];

  constructor(
    protected readonly client: Clientset,
    factory: SharedInformerFactory,
    protected readonly rootCA: string,
  ) {
    this.queue = newTypedRateLimitingQueueWithConfig<string>(defaultControllerRateLimiter(), {
      name: "root_ca_cert_publisher",
    });
    const cmInformer = factory.informerFor(configMapsResource);
    const nsInformer = factory.informerFor(namespacesResource);
    // Our ConfigMap deleted or changed: its namespace needs a look. Other ConfigMaps are not ours.
    const cmReg = cmInformer.addEventHandler({
      onUpdate: (_old, cm) => this.configMapChanged(cm),
      onDelete: (cm) => this.configMapChanged(cm),
    });
    // A namespace added or changed may lack its ConfigMap.
    const nsReg = nsInformer.addEventHandler({
      onAdd: (ns) => this.queue.add(ns.metadata.name ?? ""),
      onUpdate: (_old, ns) => this.queue.add(ns.metadata.name ?? ""),
    });
    this.namespaces = factory.lister(namespacesResource) as Lister<Namespace>;
    this.configMaps = factory.lister(configMapsResource) as Lister<ConfigMap>;
    this.synced = [() => cmReg.hasSynced(), () => nsReg.hasSynced()];
  }

  protected configMapChanged(obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): void {
    const cm = obj instanceof DeletedFinalStateUnknown ? obj.obj : obj;
    if (cm?.metadata?.name !== RootCACertConfigMapName) return;
    if (cm.metadata.namespace) this.queue.add(cm.metadata.namespace);
  }

  /** Waits for both caches, then runs `workers` workers until `signal` aborts. */
  async run(workers: number, signal: AbortSignal): Promise<void> {
    signal.addEventListener("abort", () => this.queue.shutDown(), { once: true });
    // Before the caches are full, "not in the cache" means "not seen yet", not "missing".
    if (!(await waitForCacheSync(signal, ...this.synced))) {
      this.queue.shutDown();
      return;
    }
    const worker = async () => {
      while (await this.processNextWorkItem()) {}
    };
    await Promise.all(Array.from({ length: workers }, worker));
  }

  protected async processNextWorkItem(): Promise<boolean> {
    const got = await this.queue.get();
    if (got.shutdown) return false;
    const key = got.item;
    try {
      await this.syncNamespace(key);
      this.queue.forget(key);
    } catch {
      this.queue.addRateLimited(key);
    } finally {
      this.queue.done(key);
    }
    return true;
  }

  /** Makes the namespace's ConfigMap what it should be, writing only when it is not. */
  protected async syncNamespace(name: string): Promise<void> {
    const ns = this.namespaces.get(name);
    if (ns?.status?.phase !== "Active") return; // gone, or being emptied
    await this.ensureConfigMap(name);
  }

  /** Creates the ConfigMap if the cache lacks it, updates it if it differs; else nothing. */
  protected async ensureConfigMap(name: string): Promise<void> {
    const data = { "ca.crt": this.rootCA };
    const cm = this.configMaps.byNamespace(name).get(RootCACertConfigMapName);
    if (!cm) {
      try {
        await this.client.coreV1.configMaps(name).create({
          apiVersion: "v1",
          kind: "ConfigMap",
          metadata: { name: RootCACertConfigMapName, annotations: { [DescriptionAnnotation]: Description } },
          data,
        });
      } catch (err) {
        // AlreadyExists: our cache is behind, the next event brings it. NotFound or
        // NamespaceTerminating: the namespace is going; nothing to publish.
        if (isAlreadyExists(err) || isNotFound(err) || isTerminatingCause(err)) return;
        throw err;
      }
      return;
    }
    if (sameData(cm.data, data) && cm.metadata.annotations?.[DescriptionAnnotation]) return;
    // A copy: the cache's object is shared with every other reader.
    const fixed = structuredClone(cm);
    fixed.data = data;
    fixed.metadata.annotations = { ...fixed.metadata.annotations, [DescriptionAnnotation]: Description };
    await this.client.coreV1.configMaps(name).update(fixed);
  }
}

function sameData(a: Record<string, string> | undefined, b: Record<string, string>): boolean {
  const ak = Object.keys(a ?? {});
  return ak.length === Object.keys(b).length && ak.every((k) => a?.[k] === b[k]);
}

function isTerminatingCause(err: unknown): boolean {
  if (!isForbidden(err)) return false;
  const causes = (err as { status?: { details?: { causes?: { type?: string }[] } } }).status?.details?.causes;
  return (causes ?? []).some((c) => c.type === "NamespaceTerminating");
}

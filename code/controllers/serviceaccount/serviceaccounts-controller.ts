/**
 * ServiceAccountsController — a `default` ServiceAccount in every active namespace, made again
 * whenever it is deleted.
 * Mirrors kubernetes/kubernetes pkg/controller/serviceaccount/serviceaccounts_controller.go.
 *
 * Solves:
 * - a pod names no account and gets `default`; the ServiceAccount admission plugin refuses a
 *   pod whose account does not exist, so every namespace must have one, from its first moment
 *   and after any `kubectl delete serviceaccount default`;
 * - level-triggered: the key is the namespace, whatever happened (a namespace added or updated,
 *   an account deleted), and the sync compares what is (the cache) with what should be.
 *
 * Invariants:
 * - a namespace that is not Active (Terminating) gets nothing: the API server would refuse the
 *   create anyway, and the account would only be deleted again;
 * - an account found in the cache is never created; AlreadyExists (the cache was behind) is
 *   success, as is NotFound of a namespace deleted meanwhile.
 *
 * What upstream does differently: its account list is configurable (only `default` is ever
 * used), and it records events for failures. Until this controller (chapter 4), the API server
 * stood in for it (code/apiserver/admission/bootstrap.ts, withDefaultServiceAccounts).
 *
 * @upstream kubernetes/kubernetes pkg/controller/serviceaccount/serviceaccounts_controller.go (ServiceAccountsController, NewServiceAccountsController, serviceAccountDeleted, namespaceAdded, namespaceUpdated, syncNamespace)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/core.go (startServiceAccountController: one worker)
 * @chapter 04-informers
 */
import type { Namespace, ServiceAccount } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import { isAlreadyExists, isForbidden, isNotFound } from "../../client/errors.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { DeletedFinalStateUnknown } from "../../client/tools/cache/delta-fifo.ts";
import { waitForCacheSync } from "../../client/tools/cache/informer-factory.ts";
import type { Lister } from "../../client/tools/cache/listers.ts";
import { defaultControllerRateLimiter } from "../../client/util/workqueue/rate-limiters.ts";
import {
  newTypedRateLimitingQueueWithConfig,
  type TypedRateLimitingInterface,
} from "../../client/util/workqueue/rate-limiting-queue.ts";
import { runWorkers } from "../../client/util/workqueue/worker.ts";
import type { ControllerContext, RunningController } from "../controller-context.ts";

export const namespacesResource = { group: "", version: "v1", resource: "namespaces" };
export const serviceAccountsResource = { group: "", version: "v1", resource: "serviceaccounts" };

/** The accounts every namespace gets (DefaultServiceAccountsControllerOptions). */
export const defaultServiceAccounts = ["default"];

// #region controller
export class ServiceAccountsController {
  readonly queue: TypedRateLimitingInterface<string>;
  private readonly namespaces: Lister<Namespace>;
  private readonly accounts: Lister<ServiceAccount>;
  private readonly synced: (() => boolean)[];

  constructor(
    private readonly client: Clientset,
    ctx: Pick<ControllerContext, "informerFactory">,
    private readonly log: (line: string) => void = () => {},
  ) {
    this.queue = newTypedRateLimitingQueueWithConfig<string>(defaultControllerRateLimiter(), {
      name: "serviceaccount",
    });
    const saInformer = ctx.informerFactory.informerFor(serviceAccountsResource);
    const nsInformer = ctx.informerFactory.informerFor(namespacesResource);
    // An account deleted: its namespace needs a look (serviceAccountDeleted).
    const saReg = saInformer.addEventHandler({
      onDelete: (obj) => this.enqueue(namespaceOf(obj)),
    });
    // A namespace added or changed: it may lack its accounts (namespaceAdded, namespaceUpdated).
    const nsReg = nsInformer.addEventHandler({
      onAdd: (ns) => this.enqueue(ns.metadata.name ?? ""),
      onUpdate: (_old, ns) => this.enqueue(ns.metadata.name ?? ""),
    });
    this.namespaces = ctx.informerFactory.lister(namespacesResource) as Lister<Namespace>;
    this.accounts = ctx.informerFactory.lister(serviceAccountsResource) as Lister<ServiceAccount>;
    this.synced = [() => saReg.hasSynced(), () => nsReg.hasSynced()];
  }

  private enqueue(namespace: string): void {
    if (namespace) this.queue.add(namespace);
  }

  /** Waits for the caches, then runs `workers` workers until `signal` aborts. */
  async run(workers: number, signal: AbortSignal): Promise<void> {
    this.log('"Starting service account controller"');
    this.log('"Waiting for caches to sync" controller="service account"');
    if (!(await waitForCacheSync(signal, ...this.synced))) {
      this.queue.shutDown();
      return;
    }
    this.log('"Caches are synced" controller="service account"');
    await runWorkers(this.queue, workers, (key) => this.syncNamespace(key), signal, {
      onError: (key, err) => this.log(`"Error syncing namespace" namespace="${key}" err="${String(err)}"`),
    });
    this.log('"Shutting down service account controller"');
  }
  // #endregion controller

  // #region sync-namespace
  /** Creates each missing account of an active namespace; the errors of the ones that failed. */
  async syncNamespace(name: string): Promise<void> {
    const ns = this.namespaces.get(name);
    if (!ns) return; // deleted: nothing to do
    // Only an Active namespace takes new objects; a Terminating one is being emptied.
    if (ns.status?.phase !== "Active") return;
    const failures: string[] = [];
    for (const accountName of defaultServiceAccounts) {
      if (this.accounts.byNamespace(name).get(accountName)) continue;
      const sa: ServiceAccount = {
        apiVersion: "v1",
        kind: "ServiceAccount",
        metadata: { name: accountName, namespace: name },
      };
      try {
        await this.client.coreV1.serviceAccounts(name).create(sa);
      } catch (err) {
        // The cache was behind, or the namespace went away (or began terminating) meanwhile.
        if (isAlreadyExists(err) || isNotFound(err) || isTerminatingCause(err)) continue;
        failures.push(String(err));
      }
    }
    if (failures.length > 0) throw new Error(failures.join(", "));
  }
  // #endregion sync-namespace
}

/** The Forbidden a create in a terminating namespace gets (NamespaceTerminatingCause). */
function isTerminatingCause(err: unknown): boolean {
  if (!isForbidden(err)) return false;
  const causes = (err as { status?: { details?: { causes?: { type?: string }[] } } }).status?.details?.causes;
  return (causes ?? []).some((c) => c.type === "NamespaceTerminating");
}

function namespaceOf(obj: KubeObject | DeletedFinalStateUnknown<KubeObject>): string {
  // A tombstone may have lost its object; its key still starts with the namespace.
  if (obj instanceof DeletedFinalStateUnknown) return obj.obj?.metadata?.namespace ?? obj.key.split("/")[0];
  return obj.metadata?.namespace ?? "";
}

/** startServiceAccountController: one worker, as upstream. */
export async function startServiceAccountsController(ctx: ControllerContext): Promise<RunningController> {
  const client = await ctx.clientFor("service-account-controller");
  const c = new ServiceAccountsController(client, ctx, ctx.log);
  return { done: c.run(1, ctx.signal) };
}

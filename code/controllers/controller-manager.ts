/**
 * The controller-manager — many control loops in one process: a registry of controllers by name,
 * the `--controllers` rule that picks which run, one clientset and one shared informer factory
 * for all of them, and one stop for everything.
 * Upstream: kubernetes/kubernetes cmd/kube-controller-manager/app/controllermanager.go, and the others listed below.
 *
 * Solves:
 * - thirty controllers as thirty processes would open thirty watches on pods and hold thirty
 *   caches; in one process they share one informer per resource (the factory) and one budget of
 *   requests (`--kube-api-qps`, `--kube-api-burst`);
 * - an operator must switch one loop off without rebuilding (`--controllers=*,-namespace`), and a
 *   typo must stop the start with the known names, not run silently without the loop;
 * - a controller must not act on a half-filled cache: every controller registers its handlers
 *   first, then the factory starts, and each controller waits for its own caches;
 * - SIGTERM stops the informers and shuts every queue down; the workers finish the key they hold.
 *
 * Invariants:
 * - `--controllers` is read left to right and the first entry naming a controller wins: `name`
 *   enables it, `-name` disables it; `*` enables every controller not disabled by default;
 * - a name in `--controllers` is a controller's name or one of its aliases (`namespace` for
 *   `namespace-controller`), or `*`; anything else is refused before anything starts;
 * - the informer factory starts after every enabled controller has registered its handlers.
 *
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/controllermanager.go (ControllerDescriptor, NewControllerDescriptors, KnownControllers, ControllersDisabledByDefault, CreateControllerContext, StartControllers, Run)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/options/options.go (KubeControllerManagerOptions.Validate)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/controller-manager/app/helper.go (IsControllerEnabled)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/names/controller_names.go (canonical names and aliases)
 * @chapter 04-informers
 */

import { setMaxListeners } from "node:events";
import { newSharedInformerFactory } from "../client/informers/factory.ts";
import type { Clientset } from "../client/kubernetes/clientset.ts";
import type { ComponentTracerProvider } from "../tracing/provider.ts";
import {
  type ControllerContext,
  type ControllerDescriptor,
  type ControllerManagerConfig,
  defaultControllerManagerConfig,
} from "./controller-context.ts";
import { startDeploymentController } from "./deployment/deployment-controller.ts";
import { startDisruptionController } from "./disruption/disruption.ts"; // chapter 5: PodDisruptionBudgets
import { startEndpointsController } from "./endpoint/endpoints-controller.ts"; // chapter 7
import { startEndpointSliceController } from "./endpointslice/endpointslice-controller.ts"; // EndpointSlices
import { startGarbageCollectorController } from "./garbagecollector/garbage-collector.ts";
import { startNamespaceController } from "./namespace/namespace-controller.ts";
import { startNodeLifecycleController } from "./nodelifecycle/node-lifecycle-controller.ts"; // chapter 7
import { startReplicaSetController } from "./replicaset/replica-set.ts";
import { startResourceQuotaController } from "./resourcequota/resource-quota-controller.ts";
import { startServiceAccountsController } from "./serviceaccount/serviceaccounts-controller.ts";
import { startTaintEvictionController } from "./tainteviction/taint-eviction.ts"; // chapter 7

export type {
  ControllerContext,
  ControllerDescriptor,
  ControllerManagerConfig,
  RunningController,
} from "./controller-context.ts";

// #region descriptors
/** Every controller this manager can run, by canonical name (NewControllerDescriptors). */
export function newControllerDescriptors(): Map<string, ControllerDescriptor> {
  const all: ControllerDescriptor[] = [
    {
      name: "serviceaccount-controller",
      aliases: ["serviceaccount"],
      clientName: "service-account-controller",
      start: startServiceAccountsController,
    },
    {
      name: "namespace-controller",
      aliases: ["namespace"],
      clientName: "namespace-controller",
      start: startNamespaceController,
    },
    {
      name: "replicaset-controller",
      aliases: ["replicaset"],
      clientName: "replicaset-controller",
      start: startReplicaSetController,
    },
    // resource quota controller: recounts status.used, gives back what deleted objects held
    {
      name: "resourcequota-controller",
      aliases: ["resourcequota"],
      clientName: "resourcequota-controller",
      start: startResourceQuotaController,
    },
    // ── the chapter's other controllers go here, in this shape ─────────────────────────────
    {
      name: "deployment-controller",
      aliases: ["deployment"],
      clientName: "deployment-controller",
      start: startDeploymentController,
    },
    {
      name: "garbage-collector-controller",
      aliases: ["garbagecollector"],
      clientName: "generic-garbage-collector",
      start: startGarbageCollectorController,
    },
    // chapter 5: the disruption controller keeps every PodDisruptionBudget's status (upstream's
    // names.DisruptionController, alias "disruption"; cmd/kube-controller-manager/app/policy.go).
    {
      name: "disruption-controller",
      aliases: ["disruption"],
      clientName: "disruption-controller",
      start: startDisruptionController,
    },
    // chapter 7: what the kubelet chapter needs (cmd/kube-controller-manager/app/core.go). The
    // Endpoints of every Service with a selector; silent nodes marked Unknown and tainted; pods
    // of NoExecute-tainted nodes evicted. Taint eviction runs as node-controller, as upstream.
    {
      name: "endpoints-controller",
      aliases: ["endpoint"],
      clientName: "endpoint-controller",
      start: startEndpointsController,
    },
    // The EndpointSlices of every Service with a selector (cmd/kube-controller-manager/app/discovery.go).
    {
      name: "endpointslice-controller",
      aliases: ["endpointslice"],
      clientName: "endpointslice-controller",
      start: startEndpointSliceController,
    },
    {
      name: "node-lifecycle-controller",
      aliases: ["nodelifecycle"],
      clientName: "node-controller",
      start: startNodeLifecycleController,
    },
    {
      name: "taint-eviction-controller",
      aliases: [],
      clientName: "node-controller",
      start: startTaintEvictionController,
    },
    // ─────────────────────────────────────────────────────────────────────────────────────────
  ];
  return new Map(all.map((d) => [d.name, d]));
}

/** The canonical names, sorted (KnownControllers). */
export function knownControllers(descriptors = newControllerDescriptors()): string[] {
  return [...descriptors.keys()].sort();
}
// #endregion descriptors

// #region controllers-flag
/**
 * Checks `--controllers` and turns aliases into canonical names (`-namespace` becomes
 * `-namespace-controller`). A name that is no controller's is upstream's error, plus the list.
 */
export function resolveControllers(
  controllers: readonly string[],
  descriptors = newControllerDescriptors(),
): string[] | Error {
  const byAlias = new Map<string, string>();
  for (const d of descriptors.values()) for (const a of d.aliases) byAlias.set(a, d.name);
  const out: string[] = [];
  const unknown: string[] = [];
  for (const entry of controllers) {
    if (entry === "*") {
      out.push(entry);
      continue;
    }
    const disable = entry.startsWith("-");
    const bare = disable ? entry.slice(1) : entry;
    const name = byAlias.get(bare) ?? bare;
    if (!descriptors.has(name)) unknown.push(`"${bare}" is not in the list of known controllers`);
    out.push(disable ? `-${name}` : name);
  }
  if (unknown.length > 0)
    return new Error(
      `${unknown.join(", ")} (known: ${knownControllers(descriptors).join(", ")}; use * for all, -name to disable one)`,
    );
  return out;
}

/** IsControllerEnabled: the first entry naming the controller decides; else `*` enables the default ones. */
export function isControllerEnabled(
  name: string,
  disabledByDefault: ReadonlySet<string>,
  controllers: readonly string[],
): boolean {
  let hasStar = false;
  for (const entry of controllers) {
    if (entry === name) return true;
    if (entry === `-${name}`) return false;
    if (entry === "*") hasStar = true;
  }
  return hasStar && !disabledByDefault.has(name);
}
// #endregion controllers-flag

export interface ControllerManagerOptions {
  client: Clientset;
  /** The clientset of one controller; default: the manager's own (SimpleControllerClientBuilder). */
  clientFor?: (clientName: string) => Promise<Clientset>;
  /** `--controllers`, already checked by resolveControllers. */
  controllers: readonly string[];
  config?: Partial<ControllerManagerConfig>;
  descriptors?: Map<string, ControllerDescriptor>;
  /** The informers' default resync; upstream picks 12–24 h (--min-resync-period). */
  resyncMs?: number;
  log?: (line: string) => void;
  /** chapter 8: tracing (course flag `--tracing-config-file`). */
  tracerProvider?: ComponentTracerProvider;
}

export interface RunningControllerManager {
  /** The canonical names of the controllers started, in start order. */
  started: string[];
  /** True once every started informer's cache has synced (false when stopped first). */
  synced: Promise<boolean>;
  /** Stops informers and queues; resolves once every worker and informer has stopped. */
  stop(): Promise<void>;
}

// #region start-controllers
/**
 * Run: the context, every enabled controller started (they register their handlers), then the
 * informers, then the wait for their caches. Upstream starts the factory after StartControllers
 * for the same reason: a handler registered late would still catch up, but a controller
 * asking for an informer after Start would get one nobody starts.
 */
export async function startControllerManager(
  opts: ControllerManagerOptions,
): Promise<RunningControllerManager> {
  const log = opts.log ?? (() => {});
  const descriptors = opts.descriptors ?? newControllerDescriptors();
  const abort = new AbortController();
  // Every informer, queue and worker loop listens on this one signal: more than node's 10.
  setMaxListeners(0, abort.signal);
  const factory = newSharedInformerFactory(opts.client, opts.resyncMs ?? 12 * 3600_000);
  const ctx: ControllerContext = {
    client: opts.client,
    clientFor: opts.clientFor ?? (async () => opts.client),
    informerFactory: factory,
    config: { ...defaultControllerManagerConfig, ...opts.config },
    signal: abort.signal,
    log,
    tracerProvider: opts.tracerProvider, // chapter 8
  };
  const disabledByDefault = new Set(
    [...descriptors.values()].filter((d) => d.disabledByDefault).map((d) => d.name),
  );
  const started: string[] = [];
  const running: Promise<void>[] = [];
  try {
    for (const d of descriptors.values()) {
      if (!isControllerEnabled(d.name, disabledByDefault, opts.controllers)) {
        log(`"Warning: controller is disabled" controller="${d.name}"`);
        continue;
      }
      log(`"Starting controller" controller="${d.name}"`);
      const controller = await d.start(ctx);
      running.push(controller.done);
      started.push(d.name);
      log(`"Started controller" controller="${d.name}"`);
    }
  } catch (e) {
    abort.abort();
    await Promise.allSettled(running);
    throw e;
  }
  factory.start(abort.signal);
  const synced = factory.waitForCacheSync(abort.signal).then((res) => [...res.values()].every(Boolean));
  return {
    started,
    synced,
    async stop() {
      abort.abort();
      await Promise.all(running);
      await factory.shutdown();
      opts.client.closeIdleConnections();
    },
  };
}
// #endregion start-controllers

/**
 * ControllerContext — what the controller-manager hands every controller it starts: the
 * clients, the shared informer factory, the stop signal and the component's configuration
 * (the `--concurrent-*-syncs`), and the descriptor a controller is registered by.
 *
 * Solves: a controller is a start function over this context, so the manager can start any
 * subset of them the same way, and a test can start one controller alone against a server.
 *
 * Invariants:
 * - a start function registers its handlers and returns at once (its workers wait for the
 *   caches themselves): the manager starts the informer factory only after every start returned;
 * - `signal` aborts once, on SIGTERM/SIGINT; `done` settles after the controller's workers stopped.
 *
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/controllermanager.go (ControllerContext, ControllerDescriptor, InitFunc)
 * @upstream kubernetes/kubernetes pkg/controller/apis/config/types.go (KubeControllerManagerConfiguration)
 * @chapter 04-informers
 */

import type { Clientset } from "../client/kubernetes/clientset.ts";
import type { SharedInformerFactory } from "../client/tools/cache/informer-factory.ts";
import type { ComponentTracerProvider } from "../tracing/provider.ts";

// #region component-config
/** What the controllers read of the component's configuration (KubeControllerManagerConfiguration). */
export interface ControllerManagerConfig {
  concurrentReplicaSetSyncs: number;
  concurrentDeploymentSyncs: number;
  concurrentGCSyncs: number;
  concurrentNamespaceSyncs: number;
  concurrentServiceAccountTokenSyncs: number;
  /** `--namespace-sync-period`: how often the namespace controller looks at every namespace again. */
  namespaceSyncPeriodMs: number;
  /** Not a flag: tests shorten the namespace controller's waits (its 5 s grace, its requeue delays). */
  namespaceControllerTestOptions?: {
    deletionGracePeriodMs?: number;
    remainingDelayMs?: (estimateSeconds: number) => number;
  };
  // ── resource quota controller (ResourceQuotaControllerConfiguration) ──
  /** `--concurrent-resource-quota-syncs`: workers on each of the controller's two queues. */
  concurrentResourceQuotaSyncs: number;
  /** `--resource-quota-sync-period`: how often every quota is recounted in full. */
  resourceQuotaSyncPeriodMs: number;
  // ── chapter 7: Endpoints controller (EndpointControllerConfiguration) ──
  /** `--concurrent-endpoint-syncs` */
  concurrentEndpointSyncs: number;
  /** `--endpoint-updates-batch-period`: pod changes wait this long before their Service syncs. */
  endpointUpdatesBatchPeriodMs: number;
  // ── EndpointSlice controller (EndpointSliceControllerConfiguration) ──
  /** `--concurrent-service-endpoint-syncs` */
  concurrentServiceEndpointSyncs: number;
  /** `--max-endpoints-per-slice` */
  maxEndpointsPerSlice: number;
  /** `--endpointslice-updates-batch-period`: pod changes wait this long before their Service syncs. */
  endpointSliceUpdatesBatchPeriodMs: number;
  // ── chapter 7: node lifecycle controller (NodeLifecycleControllerConfiguration) ──
  /** `--node-monitor-period`: how often every node's health is checked. */
  nodeMonitorPeriodMs: number;
  /** `--node-monitor-grace-period`: silence after which a registered node is Unknown. */
  nodeMonitorGracePeriodMs: number;
  /** `--node-startup-grace-period`: silence allowed to a node that never posted a Ready condition. */
  nodeStartupGracePeriodMs: number;
  /** `--node-eviction-rate`: nodes per second tainted NoExecute while their zone is healthy. */
  nodeEvictionRate: number;
  /** `--secondary-node-eviction-rate`: the same while their zone is unhealthy (large clusters only). */
  secondaryNodeEvictionRate: number;
  /** `--large-cluster-size-threshold` */
  largeClusterSizeThreshold: number;
  /** `--unhealthy-zone-threshold`: the fraction of not-ready nodes (at least 3) making a zone unhealthy. */
  unhealthyZoneThreshold: number;
}

export const defaultControllerManagerConfig: ControllerManagerConfig = {
  concurrentReplicaSetSyncs: 5,
  concurrentDeploymentSyncs: 5,
  concurrentGCSyncs: 20,
  concurrentNamespaceSyncs: 10,
  concurrentServiceAccountTokenSyncs: 5,
  namespaceSyncPeriodMs: 5 * 60_000,
  // resource quota controller
  concurrentResourceQuotaSyncs: 5,
  resourceQuotaSyncPeriodMs: 5 * 60_000,
  // chapter 7 (cmd/kube-controller-manager/app/options/endpointcontroller.go, nodelifecyclecontroller.go)
  concurrentEndpointSyncs: 5,
  endpointUpdatesBatchPeriodMs: 0,
  // pkg/controller/endpointslice/config/v1alpha1/defaults.go
  concurrentServiceEndpointSyncs: 5,
  maxEndpointsPerSlice: 100,
  endpointSliceUpdatesBatchPeriodMs: 0,
  nodeMonitorPeriodMs: 5_000,
  // 50 s since 1.32 (kubernetes/kubernetes#126287; 40 s before).
  nodeMonitorGracePeriodMs: 50_000,
  nodeStartupGracePeriodMs: 60_000,
  nodeEvictionRate: 0.1,
  secondaryNodeEvictionRate: 0.01,
  largeClusterSizeThreshold: 50,
  unhealthyZoneThreshold: 0.55,
};
// #endregion component-config

// #region controller-context
/** What every controller's start function gets (ControllerContext). */
export interface ControllerContext {
  /** The clientset a controller writes with: its own ServiceAccount's with --use-service-account-credentials (ClientBuilder.ClientOrDie). */
  clientFor(clientName: string): Promise<Clientset>;
  /** The manager's own clientset; the shared informers list and watch with it. */
  client: Clientset;
  informerFactory: SharedInformerFactory;
  config: ControllerManagerConfig;
  /** Aborted on SIGTERM/SIGINT: every controller stops its workers and queues. */
  signal: AbortSignal;
  log: (line: string) => void;
  /** chapter 8: tracing (a course addition: upstream 1.32's controllers do not trace). */
  tracerProvider?: ComponentTracerProvider;
}

/** A started controller: `done` settles once its workers have stopped. */
export interface RunningController {
  done: Promise<void>;
}

export interface ControllerDescriptor {
  /** The canonical name (`namespace-controller`), as `--controllers` and the logs say it. */
  name: string;
  /** Older names `--controllers` still accepts (`namespace`). */
  aliases: string[];
  /** Off unless named in `--controllers` (`*` does not enable it). */
  disabledByDefault?: boolean;
  /** The ServiceAccount in kube-system it runs as with --use-service-account-credentials. */
  clientName: string;
  start(ctx: ControllerContext): Promise<RunningController>;
}
// #endregion controller-context

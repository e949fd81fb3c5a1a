/**
 * KubeSchedulerConfiguration — what `kube-scheduler --config=F` reads: the client connection,
 * leader election, the queue's backoff, node sampling and the scheduling profiles.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/types.go (KubeSchedulerConfiguration, KubeSchedulerProfile, Plugins, PluginSet, Plugin, PluginConfig, DefaultPercentageOfNodesToScore)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/kube-scheduler/config/v1/types.go (KubeSchedulerConfiguration, SchedulerDefaultLockObjectNamespace, SchedulerDefaultLockObjectName)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/config/types.go (ClientConnectionConfiguration, LeaderElectionConfiguration, DebuggingConfiguration)
 * @chapter 05-scheduler
 *
 * Solves: the scheduler's behaviour is data. A cluster operator changes which plugins run, in
 * what order, with which weights and args — or runs two schedulers in one process — by editing
 * a file, not the code.
 *
 * Invariants:
 * - this is the internal type: every field is set (defaults applied), durations are numbers
 *   (milliseconds), and each profile's plugins are already merged with the default plugins.
 * - the file's shape (kubescheduler.config.k8s.io/v1: pointers, `15s` durations) lives only in
 *   load.ts; nothing else reads the versioned form.
 */

import type { LeaderElectionConfiguration } from "../../../leaderelection/config.ts";
import type { PluginRef, PluginSet, ProfileConfig } from "../../framework/runtime/registry.ts";

export type { PluginRef, PluginSet, ProfileConfig };

export const GroupName = "kubescheduler.config.k8s.io";
export const SchemeGroupVersion = `${GroupName}/v1`;
export const Kind = "KubeSchedulerConfiguration";

/** 0: the adaptive percentage (50 − nodes/125, at least 5). */
export const DefaultPercentageOfNodesToScore = 0;
export const SchedulerDefaultLockObjectNamespace = "kube-system";
export const SchedulerDefaultLockObjectName = "kube-scheduler";

// #region configuration
export interface ClientConnectionConfiguration {
  /** Empty: in-cluster config, or --kubeconfig. */
  kubeconfig: string;
  /** QPS of the client's rate limiter (the scheduler's default: 50). */
  qps: number;
  /** Requests above QPS the limiter lets through at once (the scheduler's default: 100). */
  burst: number;
  contentType: string;
  acceptContentTypes: string;
}

/** An extender is accepted and kept, not called: this scheduler has no extender client. */
export interface Extender {
  urlPrefix: string;
  [field: string]: unknown;
}

export interface KubeSchedulerConfiguration {
  /** Goroutines upstream uses for Filter and Score over nodes; kept for fidelity and validation. */
  parallelism: number;
  /** 0 = adaptive; a profile's own value wins over this one. */
  percentageOfNodesToScore: number;
  podInitialBackoffSeconds: number;
  podMaxBackoffSeconds: number;
  clientConnection: ClientConnectionConfiguration;
  leaderElection: LeaderElectionConfiguration;
  enableProfiling: boolean;
  enableContentionProfiling: boolean;
  delayCacheUntilActive: boolean;
  extenders: Extender[];
  /** One per schedulerName, plugins merged with the defaults and every args kind defaulted. */
  profiles: ProfileConfig[];
}
// #endregion configuration

// #region versioned
/**
 * The file's form (kubescheduler.config.k8s.io/v1) after YAML/JSON decoding: every field may be
 * absent, durations are Go duration strings. Only load.ts and defaults.ts see it.
 */
export interface KubeSchedulerConfigurationV1 {
  apiVersion?: string;
  kind?: string;
  parallelism?: number;
  leaderElection?: {
    leaderElect?: boolean;
    leaseDuration?: string;
    renewDeadline?: string;
    retryPeriod?: string;
    resourceLock?: string;
    resourceName?: string;
    resourceNamespace?: string;
  };
  clientConnection?: Partial<ClientConnectionConfiguration>;
  enableProfiling?: boolean;
  enableContentionProfiling?: boolean;
  percentageOfNodesToScore?: number;
  podInitialBackoffSeconds?: number;
  podMaxBackoffSeconds?: number;
  profiles?: KubeSchedulerProfileV1[];
  extenders?: Extender[];
  delayCacheUntilActive?: boolean;
}

export interface KubeSchedulerProfileV1 {
  schedulerName?: string;
  percentageOfNodesToScore?: number;
  plugins?: ProfileConfig["plugins"];
  pluginConfig?: { name: string; args?: Record<string, unknown> }[];
}
// #endregion versioned

/**
 * Registry — the plugin factories a scheduler knows by name, and the configuration types that
 * say which of them a profile runs where (extension points, plugin sets, a profile) plus the
 * Handle a factory receives.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/runtime/registry.go (Registry, PluginFactory)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/interface.go (Handle)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/types.go (Plugins, PluginSet, Plugin, KubeSchedulerProfile)
 * @chapter 05-scheduler
 *
 * Solves: a profile is data (names and weights in a configuration file), a plugin is code; the
 * registry is the one place where a name becomes a constructor, so the framework can build a
 * profile without importing any plugin.
 *
 * Invariants:
 * - a registry maps each name to exactly one factory; a factory is called once per profile.
 * - `extensionPoints` is the order the framework fills its lists in; `hookOf` names the method
 *   whose presence means "this plugin implements that point".
 */

import type { Pod } from "../../../api/core.ts";
import type { Clientset } from "../../../client/kubernetes/clientset.ts";
import type { SharedInformerFactory } from "../../../client/tools/cache/informer-factory.ts";
import type { Clock } from "../../../client/util/clock.ts";
import type { Snapshot } from "../../backend/cache/snapshot.ts";
import type { CycleState } from "../cycle-state.ts";
import type { Plugin, PodNominator } from "../interface.ts";
import type { NodeInfo } from "../node-info.ts";
import type { Status } from "../status.ts";
import type { PodInfo } from "../types.ts";
import type { WaitingPod } from "./waiting-pods-map.ts";

// #region config
export const extensionPoints = [
  "preEnqueue",
  "queueSort",
  "preFilter",
  "filter",
  "postFilter",
  "preScore",
  "score",
  "reserve",
  "permit",
  "preBind",
  "bind",
  "postBind",
] as const;
export type ExtensionPoint = (typeof extensionPoints)[number];

/** The method that tells whether a plugin implements an extension point. */
export const hookOf: Record<ExtensionPoint, string> = {
  preEnqueue: "preEnqueue",
  queueSort: "less",
  preFilter: "preFilter",
  filter: "filter",
  postFilter: "postFilter",
  preScore: "preScore",
  score: "score",
  reserve: "reserve",
  permit: "permit",
  preBind: "preBind",
  bind: "bind",
  postBind: "postBind",
};

export interface PluginRef {
  name: string;
  weight?: number;
}

export interface PluginSet {
  enabled?: PluginRef[];
  /** `{ name: "*" }` disables every multiPoint plugin at this point. */
  disabled?: { name: string }[];
}

/** A profile as KubeSchedulerConfiguration's `profiles[]` entry says it. */
export interface ProfileConfig {
  schedulerName: string;
  plugins: Partial<Record<ExtensionPoint | "multiPoint", PluginSet>>;
  pluginConfig?: { name: string; args: unknown }[];
  /** 0 or absent: the adaptive default. */
  percentageOfNodesToScore?: number;
}

/** Handle: what a plugin may use of its framework (its snapshot, the waiting pods, the clock). */
export interface Handle {
  snapshotSharedLister(): Snapshot;
  getWaitingPod(uid: string): WaitingPod | undefined;
  iterateOverWaitingPods(fn: (wp: WaitingPod) => void): void;
  rejectWaitingPod(uid: string): boolean;
  clock: Clock;
  /** The binary's API client (preemption deletes victims with it); undefined in a simulation. */
  clientSet(): Clientset | undefined;
  /** The binary's informers (listers for Services, PDBs, namespaces…); undefined in a simulation. */
  sharedInformerFactory(): SharedInformerFactory | undefined;
  /** Who is nominated to which node: the scheduling queue's nominator. */
  podNominator(): PodNominator | undefined;
  /**
   * PodActivator (upstream's Handle.Activate): move pods to activeQ now. Preemption uses it when a
   * victim's eviction fails, so the preemptor tries again instead of waiting for a deletion that
   * will not come. Absent in a simulation without a queue.
   */
  activate?(pods: Pod[]): void;
  // Preemption (issue 14): the framework's runners a PostFilter plugin drives on copies.
  runPreFilterExtensionAddPod(
    state: CycleState,
    pod: Pod,
    podInfoToAdd: PodInfo,
    nodeInfo: NodeInfo,
  ): Status | undefined;
  runPreFilterExtensionRemovePod(
    state: CycleState,
    pod: Pod,
    podInfoToRemove: PodInfo,
    nodeInfo: NodeInfo,
  ): Status | undefined;
  runFilterPluginsWithNominatedPods(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined;
}

export type PluginFactory = (args: unknown, handle: Handle) => Plugin;
export type Registry = Map<string, PluginFactory>;
// #endregion config

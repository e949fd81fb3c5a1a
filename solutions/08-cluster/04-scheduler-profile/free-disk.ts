// Exercise 8.4, the reference answer: a Score plugin whose raw score is the node's free disk in
// GB (any size: 480 is a fine raw score), and a NormalizeScore that scales the best node to 100 —
// the framework refuses a score outside [0, 100] after normalizing. The configuration has one
// profile, named as the pods ask, with FreeDisk enabled at score, and leader election on a Lease
// of its own: the cluster's scheduler keeps default-scheduler and its lock kube-system/kube-scheduler.
import type { Pod } from "../../../code/api/core.ts";
import type { CycleState } from "../../../code/scheduler/framework/cycle-state.ts";
import type { NodeScore, ScoreExtensions, ScorePlugin } from "../../../code/scheduler/framework/interface.ts";
import { MaxNodeScore } from "../../../code/scheduler/framework/interface.ts";
import type { NodeInfo } from "../../../code/scheduler/framework/node-info.ts";
import type { ExtensionPoint, PluginFactory } from "../../../code/scheduler/framework/runtime/registry.ts";
import type { Status } from "../../../code/scheduler/framework/status.ts";
import { defaultNormalizeScore } from "../../../code/scheduler/plugins/helper/normalize-score.ts";

export const Name = "FreeDisk";
export const freeDiskLabel = "course.dev/free-disk-gb";

class FreeDisk implements ScorePlugin, ScoreExtensions {
  name(): string {
    return Name;
  }

  /** The raw score: the node's free disk in GB; 0 for a node that does not say. */
  score(_state: CycleState, _pod: Pod, nodeInfo: NodeInfo): [number, Status | undefined] {
    const gb = Number(nodeInfo.node()?.metadata.labels?.[freeDiskLabel] ?? 0);
    return [Number.isFinite(gb) && gb > 0 ? Math.trunc(gb) : 0, undefined];
  }

  scoreExtensions(): ScoreExtensions {
    return this;
  }

  /** The most free disk → 100, the others in proportion (helper.DefaultNormalizeScore). */
  normalizeScore(_state: CycleState, _pod: Pod, scores: NodeScore[]): Status | undefined {
    defaultNormalizeScore(MaxNodeScore, false, scores);
    return undefined;
  }
}

export const New: PluginFactory = () => new FreeDisk();

export interface SchedulerConfigurationFile {
  apiVersion: "kubescheduler.config.k8s.io/v1";
  kind: "KubeSchedulerConfiguration";
  leaderElection?: {
    leaderElect?: boolean;
    resourceNamespace?: string;
    resourceName?: string;
  };
  profiles?: {
    schedulerName?: string;
    plugins?: Partial<
      Record<
        ExtensionPoint | "multiPoint",
        { enabled?: { name: string; weight?: number }[]; disabled?: { name: string }[] }
      >
    >;
    pluginConfig?: { name: string; args: unknown }[];
  }[];
}

export function schedulerConfiguration(schedulerName: string): SchedulerConfigurationFile {
  return {
    apiVersion: "kubescheduler.config.k8s.io/v1",
    kind: "KubeSchedulerConfiguration",
    // Two replicas of this scheduler may run: one leads. Its lock is its own, never the
    // default scheduler's kube-system/kube-scheduler.
    leaderElection: { leaderElect: true, resourceNamespace: "kube-system", resourceName: schedulerName },
    profiles: [
      {
        schedulerName,
        plugins: { score: { enabled: [{ name: Name, weight: 2 }] } },
      },
    ],
  };
}

// Exercise 8.4: a scheduler plugin of your own, deployed into the live cluster as a second
// profile. See README.md.
import type { ExtensionPoint, PluginFactory } from "../../../code/scheduler/framework/runtime/registry.ts";

/** The plugin's name: the configuration enables it by this name. */
export const Name = "FreeDisk";

/** Each node says how much disk it has free, in GB, with this label (`course.dev/free-disk-gb=480`). */
export const freeDiskLabel = "course.dev/free-disk-gb";

/**
 * The plugin's factory (upstream's `New(ctx, args, handle)`): called once per profile that enables
 * the plugin. It returns a Score plugin that prefers nodes with more free disk.
 */
export const New: PluginFactory = (args, handle) => {
  throw new Error(`TODO: the FreeDisk plugin (args ${typeof args}, handle ${typeof handle})`);
};

/** kubescheduler.config.k8s.io/v1 as written in a `--config` file — the parts this exercise needs. */
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

/**
 * The configuration of your scheduler, which runs beside the cluster's own: the pods that ask for
 * `schedulerName` are its pods. See README.md for what it must say.
 */
export function schedulerConfiguration(schedulerName: string): SchedulerConfigurationFile {
  throw new Error(`TODO: the configuration of scheduler ${schedulerName}`);
}

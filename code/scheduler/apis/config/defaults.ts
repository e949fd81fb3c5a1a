/**
 * Defaults — a KubeSchedulerConfiguration file says only what differs; this fills in the rest:
 * the default profile, the default plugins merged with the profile's own, every plugin's args.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/v1/defaults.go (SetDefaults_KubeSchedulerConfiguration, setDefaults_KubeSchedulerProfile, pluginsNames)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/v1/default_plugins.go (getDefaultPlugins, mergePlugins, mergePluginSet)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/config/v1alpha1/defaults.go (RecommendedDefaultLeaderElectionConfiguration)
 * @chapter 05-scheduler
 *
 * Solves: a profile that says "disable NodeResourcesBalancedAllocation" must still get every
 * other default plugin, in the default order; a profile that re-enables TaintToleration with
 * weight 5 must change its weight without moving it.
 *
 * Invariants:
 * - the default plugin list is the registry's `defaultMultiPoint` (plugins/registry.ts), the one
 *   source: a plugin added there is a default here.
 * - mergePluginSet keeps the defaults' order; a custom enabled plugin with a default's name
 *   replaces it in place (its weight wins), the others are appended in the file's order;
 *   `disabled: [{name: "*"}]` drops every default of that point (custom enabled ones stay).
 * - a single profile without a schedulerName is "default-scheduler"; with two or more, names are
 *   left as given (validation insists on them).
 * - a plugin enabled anywhere in the merged profile that has an args kind gets a pluginConfig
 *   entry (appended in name order, after the file's own entries).
 */
import { extensionPoints } from "../../framework/runtime/registry.ts";
import { DefaultSchedulerName, defaultMultiPoint } from "../../plugins/registry.ts";
import {
  DefaultPercentageOfNodesToScore,
  type KubeSchedulerConfiguration,
  type KubeSchedulerConfigurationV1,
  type KubeSchedulerProfileV1,
  type PluginRef,
  type PluginSet,
  type ProfileConfig,
  SchedulerDefaultLockObjectName,
  SchedulerDefaultLockObjectNamespace,
} from "./types.ts";
import { argsDefaulters, argsKinds, type PluginArgsByName } from "./types-pluginargs.ts";

/** The points a profile's `plugins` may name, multiPoint first (the order upstream merges them). */
export const pluginSetNames = ["multiPoint", ...extensionPoints] as const;
export type PluginSetName = (typeof pluginSetNames)[number];
type Plugins = ProfileConfig["plugins"];

// #region default-plugins
/** getDefaultPlugins: every default plugin at multiPoint, with its default weight. */
export function getDefaultPlugins(): Plugins {
  return { multiPoint: { enabled: defaultMultiPoint.map((p) => ({ ...p })) } };
}
// #endregion default-plugins

// #region merge-plugin-set
/**
 * mergePluginSet: the defaults minus what the file disables, a default the file re-enables
 * replaced in place, then the file's other enabled plugins appended.
 */
export function mergePluginSet(defaults: PluginSet, custom: PluginSet): PluginSet {
  // The defaults' own disabled list carries over too (upstream lets a default plugin be on at
  // multiPoint but off at one point); both tell the framework not to expand multiPoint there.
  const disabled = [...(custom.disabled ?? []), ...(defaults.disabled ?? [])].map((d) => ({ name: d.name }));
  const off = new Set(disabled.map((d) => d.name));
  const customEnabled = custom.enabled ?? [];
  const replaced = new Set<number>();
  const enabled: PluginRef[] = [];
  if (!off.has("*")) {
    for (const def of defaults.enabled ?? []) {
      if (off.has(def.name)) continue;
      // A duplicated custom name: the last one replaces the default, as upstream's map keeps the last.
      const at = customEnabled.findLastIndex((c) => c.name === def.name);
      if (at >= 0) replaced.add(at);
      enabled.push(at >= 0 ? { ...customEnabled[at]! } : { ...def });
    }
  }
  // Custom plugins that replaced none are appended; a duplicate stays, and building the
  // framework rejects it.
  customEnabled.forEach((c, i) => {
    if (!replaced.has(i)) enabled.push({ ...c });
  });
  const out: PluginSet = {};
  if (enabled.length > 0) out.enabled = enabled;
  if (disabled.length > 0) out.disabled = disabled;
  return out;
}

/** mergePlugins: each point merged on its own; a point neither side names stays absent. */
export function mergePlugins(defaults: Plugins, custom: Plugins | undefined): Plugins {
  if (!custom) return defaults;
  const out: Plugins = {};
  for (const point of pluginSetNames) {
    const merged = mergePluginSet(defaults[point] ?? {}, custom[point] ?? {});
    if (merged.enabled || merged.disabled) out[point] = merged;
  }
  return out;
}
// #endregion merge-plugin-set

// #region profile-defaults
/** pluginsNames: every plugin enabled at any point, sorted (the order default args are appended in). */
export function pluginsNames(plugins: Plugins): string[] {
  const names = new Set<string>();
  for (const point of pluginSetNames) for (const p of plugins[point]?.enabled ?? []) names.add(p.name);
  return [...names].sort();
}

function defaultArgs(name: string, given: Record<string, unknown>): Record<string, unknown> {
  return argsDefaulters[name as keyof PluginArgsByName](given);
}

export function setDefaultsProfile(
  prof: KubeSchedulerProfileV1,
  schedulerName: string | undefined,
): ProfileConfig {
  const plugins = mergePlugins(getDefaultPlugins(), prof.plugins);
  const pluginConfig: { name: string; args: unknown }[] = [];
  const existing = new Set<string>();
  for (const pc of prof.pluginConfig ?? []) {
    existing.add(pc.name);
    // An args kind we know is defaulted; anything else (an out-of-tree plugin) is kept as given.
    const args = argsKinds.has(pc.name) ? defaultArgs(pc.name, pc.args ?? {}) : pc.args;
    pluginConfig.push({ name: pc.name, args });
  }
  for (const name of pluginsNames(plugins)) {
    if (existing.has(name) || !argsKinds.has(name)) continue;
    pluginConfig.push({ name, args: defaultArgs(name, {}) });
  }
  const out: ProfileConfig = { schedulerName: schedulerName ?? "", plugins, pluginConfig };
  if (prof.percentageOfNodesToScore !== undefined)
    out.percentageOfNodesToScore = prof.percentageOfNodesToScore;
  return out;
}
// #endregion profile-defaults

// #region configuration-defaults
/**
 * SetDefaults_KubeSchedulerConfiguration, with the duration strings already turned into
 * milliseconds by the decoder (`durationsMs`; absent or zero means "use the default").
 */
export function setDefaults(
  obj: KubeSchedulerConfigurationV1,
  durationsMs: { leaseDuration?: number; renewDeadline?: number; retryPeriod?: number } = {},
): KubeSchedulerConfiguration {
  const profilesIn = obj.profiles?.length ? obj.profiles : [{}];
  // Only a lone profile gets the default name: with two, which one would be "default-scheduler"?
  const profiles = profilesIn.map((p) =>
    setDefaultsProfile(
      p,
      profilesIn.length === 1 ? (p.schedulerName ?? DefaultSchedulerName) : p.schedulerName,
    ),
  );
  const le = obj.leaderElection ?? {};
  const cc = obj.clientConnection ?? {};
  const enableProfiling = obj.enableProfiling ?? true;
  return {
    parallelism: obj.parallelism ?? 16,
    percentageOfNodesToScore: obj.percentageOfNodesToScore ?? DefaultPercentageOfNodesToScore,
    podInitialBackoffSeconds: obj.podInitialBackoffSeconds ?? 1,
    podMaxBackoffSeconds: obj.podMaxBackoffSeconds ?? 10,
    clientConnection: {
      kubeconfig: cc.kubeconfig ?? "",
      // The scheduler's own opinion (50/100), not client-go's generic 5/10: it writes a binding
      // and an event per pod.
      qps: cc.qps || 50,
      burst: cc.burst || 100,
      contentType: cc.contentType || "application/vnd.kubernetes.protobuf",
      acceptContentTypes: cc.acceptContentTypes ?? "",
    },
    leaderElection: {
      leaderElect: le.leaderElect ?? true,
      leaseDurationMs: durationsMs.leaseDuration || 15_000,
      renewDeadlineMs: durationsMs.renewDeadline || 10_000,
      retryPeriodMs: durationsMs.retryPeriod || 2_000,
      resourceLock: le.resourceLock || "leases",
      resourceName: le.resourceName || SchedulerDefaultLockObjectName,
      resourceNamespace: le.resourceNamespace || SchedulerDefaultLockObjectNamespace,
    },
    enableProfiling,
    // Contention profiling follows profiling unless set.
    enableContentionProfiling: obj.enableContentionProfiling ?? enableProfiling,
    delayCacheUntilActive: obj.delayCacheUntilActive ?? false,
    extenders: obj.extenders ?? [],
    profiles,
  };
}

/** The configuration kube-scheduler runs with when no --config is given. */
export function defaultConfiguration(): KubeSchedulerConfiguration {
  return setDefaults({});
}
// #endregion configuration-defaults

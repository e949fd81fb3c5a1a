/**
 * Profiles — one Framework per `profiles[]` entry, indexed by schedulerName: the pod's
 * `spec.schedulerName` picks which set of plugins schedules it.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/profile/profile.go (Map, NewMap, newProfile, cfgValidator.validate, HandlesSchedulerName)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/noderesources/fit.go (NewFit: ValidateNodeResourcesFitArgs)
 * @chapter 05-scheduler
 *
 * Solves: one kube-scheduler process can be two schedulers — `default-scheduler` spreading pods
 * and `bin-packing` filling nodes — sharing one cache, one queue and one informer set, so they
 * never double-book a node.
 *
 * Invariants:
 * - every profile has a non-empty, unique schedulerName;
 * - every profile sorts the queue with the same plugin and the same args: there is one queue,
 *   and a heap ordered two ways is not a heap;
 * - a profile that fails to build names its scheduler: `creating profile for scheduler name X: …`.
 */
import { aggregateMessage } from "../../api/field-errors.ts";
import type { ProfileConfig } from "../apis/config/types.ts";
import type { NodeResourcesFitArgs } from "../apis/config/types-pluginargs.ts";
import { validateNodeResourcesFitArgs } from "../apis/config/validation-pluginargs.ts";
import { Framework, type FrameworkOptions } from "../framework/runtime/framework.ts";
import type { Registry } from "../framework/runtime/registry.ts";

/** A profile the scheduler cannot start with; the message is upstream's. */
export class ProfileError extends Error {
  override readonly name = "ProfileError";
}

export type ProfileMap = Map<string, Framework>;

/**
 * NewFit refuses bad args when the plugin is built (configuration validation never sees them,
 * see validation.ts); the registry's Fit factory takes a simpler shape, so the check is here.
 */
function checkFitArgs(cfg: ProfileConfig): void {
  const enabled = Object.values(cfg.plugins).some((set) =>
    set?.enabled?.some((p) => p.name === "NodeResourcesFit"),
  );
  const args = cfg.pluginConfig?.find((pc) => pc.name === "NodeResourcesFit")?.args as
    | NodeResourcesFitArgs
    | undefined;
  if (!enabled || !args?.scoringStrategy) return;
  // NewFit validates with a nil path: fields print from the args' root (`scoringStrategy.type`).
  const errs = validateNodeResourcesFitArgs("", args);
  if (errs.length > 0) throw new Error(`initializing plugin "NodeResourcesFit": ${aggregateMessage(errs)}`);
}

// #region new-profile
function newProfile(cfg: ProfileConfig, registry: Registry, opts: FrameworkOptions): Framework {
  checkFitArgs(cfg);
  return new Framework(registry, cfg, opts);
}

/** NewMap: build each profile's framework, refusing what one queue and one name space cannot hold. */
export function newMap(cfgs: ProfileConfig[], registry: Registry, opts: FrameworkOptions): ProfileMap {
  const m: ProfileMap = new Map();
  let queueSort = "";
  let queueSortArgs: string | undefined;
  for (const cfg of cfgs) {
    let fwk: Framework;
    try {
      fwk = newProfile(cfg, registry, opts);
    } catch (e) {
      throw new ProfileError(
        `creating profile for scheduler name ${cfg.schedulerName}: ${(e as Error).message}`,
      );
    }
    if (fwk.profileName === "") throw new ProfileError("scheduler name is needed");
    if (m.has(fwk.profileName))
      throw new ProfileError(`duplicate profile with scheduler name "${fwk.profileName}"`);
    const sort = fwk.queueSortPlugins[0]!.name();
    const args = JSON.stringify(cfg.pluginConfig?.find((pc) => pc.name === sort)?.args);
    if (queueSort === "") {
      queueSort = sort;
      queueSortArgs = args;
    } else if (sort !== queueSort) {
      throw new ProfileError(
        `different queue sort plugins for profile "${cfg.schedulerName}": "${sort}", first: "${queueSort}"`,
      );
    } else if (args !== queueSortArgs) {
      throw new ProfileError(`different queue sort plugin args for profile "${cfg.schedulerName}"`);
    }
    m.set(fwk.profileName, fwk);
  }
  return m;
}
// #endregion new-profile

/** HandlesSchedulerName: whether a pod with this spec.schedulerName is ours to schedule. */
export function handlesSchedulerName(m: ProfileMap, name: string): boolean {
  return m.has(name);
}

/**
 * Validation — the checks kube-scheduler runs on its configuration before starting, with
 * upstream's field paths and messages, all reported at once.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/validation/validation.go (ValidateKubeSchedulerConfiguration, validateKubeSchedulerProfile, validatePluginConfig, validateCommonQueueSort, validatePercentageOfNodesToScore, validateExtenders)
 * @upstream kubernetes/component-base config/validation/validation.go (ValidateClientConnectionConfiguration, ValidateLeaderElectionConfiguration)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/errors/errors.go (NewAggregate, Flatten)
 * @chapter 05-scheduler
 *
 * Solves: a configuration can be well-formed and still wrong — two profiles with one name (which
 * would get the pod?), a max backoff below the initial one, a lease shorter than its renew
 * deadline. The operator gets the whole list in one message, not one error per restart.
 *
 * Invariants:
 * - the order of the errors is upstream's: client connection, leader election, parallelism,
 *   each profile (then its duplicate name), the common queue sort, percentageOfNodesToScore,
 *   backoff, extenders; the message is utilerrors' aggregate (one alone, several as `[a, b]`).
 * - only the explicit `queueSort` point is compared across profiles here (as upstream); a queue
 *   sort that differs through multiPoint is caught when the profiles are built (profile.ts).
 * - NodeResourcesFit's args are not validated here: upstream's table names it
 *   "NodeResourcesFitArgs", so no pluginConfig ever matches; the plugin validates its args
 *   when built, and profile.ts does the same.
 */
import {
  aggregateMessage,
  childPath,
  duplicate,
  type FieldError,
  GoValue,
  indexPath,
  invalid,
  required,
} from "../../../api/field-errors.ts";
import type { KubeSchedulerConfiguration, PluginSet, ProfileConfig } from "./types.ts";
import type {
  DefaultPreemptionArgs,
  InterPodAffinityArgs,
  NodeResourcesBalancedAllocationArgs,
  PodTopologySpreadArgs,
} from "./types-pluginargs.ts";
import {
  validateDefaultPreemptionArgs,
  validateInterPodAffinityArgs,
  validateNodeResourcesBalancedAllocationArgs,
  validatePodTopologySpreadArgs,
} from "./validation-pluginargs.ts";

/** An invalid configuration: `errors` for programs, `message` as upstream's aggregate prints it. */
export class ConfigValidationError extends Error {
  override readonly name = "ConfigValidationError";
  constructor(readonly errors: FieldError[]) {
    super(aggregateMessage(errors));
  }
}

/** Go's Duration.String() of whole milliseconds, the way a metav1.Duration bad value prints. */
export function goDurationString(ms: number): string {
  if (ms === 0) return "0s";
  if (ms < 0) return `-${goDurationString(-ms)}`;
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = `${(ms % 60_000) / 1000}s`;
  if (h > 0) return `${h}h${m}m${s}`;
  if (m > 0) return `${m}m${s}`;
  return s;
}
const duration = (ms: number) => new GoValue(goDurationString(ms), goDurationString(ms));

// #region client-leader
function validateClientConnection(
  cc: KubeSchedulerConfiguration["clientConnection"],
  path: string,
): FieldError[] {
  return cc.burst < 0 ? [invalid(childPath(path, "burst"), cc.burst, "must be non-negative")] : [];
}

function validateLeaderElection(
  le: KubeSchedulerConfiguration["leaderElection"],
  path: string,
): FieldError[] {
  // Durations only matter to a scheduler that elects.
  if (!le.leaderElect) return [];
  const errs: FieldError[] = [];
  const at = (f: string) => childPath(path, f);
  if (le.leaseDurationMs <= 0)
    errs.push(invalid(at("leaseDuration"), duration(le.leaseDurationMs), "must be greater than zero"));
  if (le.renewDeadlineMs <= 0)
    errs.push(invalid(at("renewDeadline"), duration(le.renewDeadlineMs), "must be greater than zero"));
  if (le.retryPeriodMs <= 0)
    errs.push(invalid(at("retryPeriod"), duration(le.retryPeriodMs), "must be greater than zero"));
  // The bad value shown is the renew deadline, as upstream's call passes it.
  if (le.leaseDurationMs <= le.renewDeadlineMs) {
    errs.push(
      invalid(
        at("leaseDuration"),
        duration(le.renewDeadlineMs),
        "LeaseDuration must be greater than RenewDeadline",
      ),
    );
  }
  if (!le.resourceLock) errs.push(invalid(at("resourceLock"), le.resourceLock, "resourceLock is required"));
  if (!le.resourceNamespace)
    errs.push(invalid(at("resourceNamespace"), le.resourceNamespace, "resourceNamespace is required"));
  if (!le.resourceName) errs.push(invalid(at("resourceName"), le.resourceName, "resourceName is required"));
  return errs;
}
// #endregion client-leader

// #region profiles
function validatePercentage(path: string, pct: number | undefined): FieldError[] {
  if (pct !== undefined && (pct < 0 || pct > 100)) return [invalid(path, pct, "not in valid range [0-100]")];
  return [];
}

type ArgsValidator = (path: string, args: never) => FieldError[];
const argsValidators: Record<string, ArgsValidator> = {
  DefaultPreemption: validateDefaultPreemptionArgs as (p: string, a: DefaultPreemptionArgs) => FieldError[],
  InterPodAffinity: validateInterPodAffinityArgs as (p: string, a: InterPodAffinityArgs) => FieldError[],
  NodeResourcesBalancedAllocation: validateNodeResourcesBalancedAllocationArgs as (
    p: string,
    a: NodeResourcesBalancedAllocationArgs,
  ) => FieldError[],
  PodTopologySpread: validatePodTopologySpreadArgs as (p: string, a: PodTopologySpreadArgs) => FieldError[],
};

function validatePluginConfig(path: string, profile: ProfileConfig): FieldError[] {
  const errs: FieldError[] = [];
  const seen = new Set<string>();
  (profile.pluginConfig ?? []).forEach((pc, i) => {
    const p = indexPath(childPath(path, "pluginConfig"), i);
    // Two entries for one plugin: which args would it get?
    if (seen.has(pc.name)) errs.push(duplicate(p, pc.name));
    seen.add(pc.name);
    const validate = argsValidators[pc.name];
    if (validate) errs.push(...validate(childPath(p, "args"), pc.args as never));
  });
  return errs;
}

function validateProfile(path: string, profile: ProfileConfig): FieldError[] {
  const errs: FieldError[] = [];
  if (!profile.schedulerName) errs.push(required(childPath(path, "schedulerName")));
  errs.push(
    ...validatePercentage(childPath(path, "percentageOfNodesToScore"), profile.percentageOfNodesToScore),
  );
  errs.push(...validatePluginConfig(path, profile));
  return errs;
}

/** Go's %#v of an internal config.PluginSet, the bad value of a queueSort mismatch. */
function goPluginSet(set: PluginSet | undefined): GoValue {
  const list = (ps: { name: string; weight?: number }[] | undefined) =>
    ps?.length
      ? `[]config.Plugin{${ps.map((p) => `config.Plugin{Name:${JSON.stringify(p.name)}, Weight:${p.weight ?? 0}}`).join(", ")}}`
      : "[]config.Plugin(nil)";
  return new GoValue(
    `config.PluginSet{Enabled:${list(set?.enabled)}, Disabled:${list(set?.disabled)}}`,
    set ?? {},
  );
}

const samePluginSet = (a: PluginSet | undefined, b: PluginSet | undefined) =>
  JSON.stringify(goPluginSet(a).text) === JSON.stringify(goPluginSet(b).text);

function validateCommonQueueSort(path: string, profiles: ProfileConfig[]): FieldError[] {
  const errs: FieldError[] = [];
  const canon = profiles[0]!.plugins.queueSort;
  const name = canon?.enabled?.[0]?.name ?? "";
  const n = canon?.enabled?.length ?? 0;
  if (n > 1)
    errs.push(
      invalid(
        childPath(indexPath(path, 0), "plugins", "queueSort", "Enabled"),
        n,
        "only one queue sort plugin can be enabled",
      ),
    );
  const canonArgs = name ? profiles[0]!.pluginConfig?.find((c) => c.name === name)?.args : undefined;
  for (let i = 1; i < profiles.length; i++) {
    const curr = profiles[i]!.plugins.queueSort;
    // Every profile shares one queue: it can only be sorted one way.
    if (!samePluginSet(canon, curr)) {
      errs.push(
        invalid(
          childPath(indexPath(path, i), "plugins", "queueSort"),
          goPluginSet(curr),
          "must be the same for all profiles",
        ),
      );
    }
    for (const cfg of profiles[i]!.pluginConfig ?? []) {
      if (cfg.name === name && JSON.stringify(cfg.args) !== JSON.stringify(canonArgs)) {
        errs.push(
          invalid(
            childPath(indexPath(path, i), "pluginConfig", "args"),
            cfg.args ?? null,
            "queueSort must be the same for all profiles",
          ),
        );
      }
    }
  }
  return errs;
}
// #endregion profiles

// #region validate-configuration
/** ValidateKubeSchedulerConfiguration: every problem, in upstream's order. */
export function validateKubeSchedulerConfigurationErrors(cc: KubeSchedulerConfiguration): FieldError[] {
  const errs: FieldError[] = [];
  errs.push(...validateClientConnection(cc.clientConnection, "clientConnection"));
  errs.push(...validateLeaderElection(cc.leaderElection, "leaderElection"));
  if (cc.leaderElection.leaderElect && cc.leaderElection.resourceLock !== "leases") {
    errs.push(
      invalid(
        "leaderElection.resourceLock",
        cc.leaderElection.resourceLock,
        `resourceLock value must be "leases"`,
      ),
    );
  }
  if (cc.parallelism <= 0)
    errs.push(invalid("parallelism", cc.parallelism, "should be an integer value greater than zero"));
  if (cc.profiles.length === 0) {
    errs.push(required("profiles"));
  } else {
    const seen = new Map<string, number>();
    cc.profiles.forEach((profile, i) => {
      const path = indexPath("profiles", i);
      errs.push(...validateProfile(path, profile));
      const first = seen.get(profile.schedulerName);
      if (first !== undefined) {
        // Upstream passes the first profile's *field.Path as the bad value; %#v prints the struct
        // with a heap address, which differs per run — we print the path it stands for.
        errs.push(
          duplicate(
            childPath(path, "schedulerName"),
            new GoValue(`${indexPath("profiles", first)}.schedulerName`, null),
          ),
        );
      }
      seen.set(profile.schedulerName, i);
    });
    errs.push(...validateCommonQueueSort("profiles", cc.profiles));
  }
  errs.push(...validatePercentage("percentageOfNodesToScore", cc.percentageOfNodesToScore));
  if (cc.podInitialBackoffSeconds <= 0) {
    errs.push(invalid("podInitialBackoffSeconds", cc.podInitialBackoffSeconds, "must be greater than 0"));
  }
  if (cc.podMaxBackoffSeconds < cc.podInitialBackoffSeconds) {
    errs.push(
      invalid(
        "podMaxBackoffSeconds",
        cc.podMaxBackoffSeconds,
        "must be greater than or equal to PodInitialBackoffSeconds",
      ),
    );
  }
  errs.push(...validateExtenders("extenders", cc.extenders));
  return errs;
}

/** Throws ConfigValidationError with the aggregate message, or returns. */
export function validateKubeSchedulerConfiguration(cc: KubeSchedulerConfiguration): void {
  const errs = validateKubeSchedulerConfigurationErrors(cc);
  if (errs.length > 0) throw new ConfigValidationError(errs);
}
// #endregion validate-configuration

function validateExtenders(path: string, extenders: KubeSchedulerConfiguration["extenders"]): FieldError[] {
  const errs: FieldError[] = [];
  let binders = 0;
  extenders.forEach((e, i) => {
    const weight = typeof e.weight === "number" ? e.weight : 0;
    if (e.prioritizeVerb && weight <= 0) {
      errs.push(
        invalid(childPath(indexPath(path, i), "weight"), weight, "must have a positive weight applied to it"),
      );
    }
    if (e.bindVerb) binders++;
  });
  if (binders > 1)
    errs.push(
      invalid(path, `found ${binders} extenders implementing bind`, "only one extender can implement bind"),
    );
  return errs;
}

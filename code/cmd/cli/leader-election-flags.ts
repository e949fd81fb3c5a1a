/**
 * Leader-election flags — the seven `--leader-elect*` flags every replicated Kubernetes component
 * takes, declared once for kube-scheduler and kube-controller-manager, with upstream's names,
 * help texts and defaults; and the candidate's identity, `<hostname>_<uuid>`.
 * Upstream: component-base config/options/leaderelectionconfig.go (BindLeaderElectionFlags).
 *
 * Solves:
 * - two binaries, one set of flags: a learner who has read kube-scheduler's `--help` finds the
 *   same seven lines in kube-controller-manager's, with only the Lease's name differing;
 * - kube-scheduler also reads the same settings from its `--config` file's `leaderElection`
 *   block. Upstream's rule, kept here: a flag given on the command line overrides the file,
 *   a flag left at its default does not (Options.ApplyLeaderElectionTo looks at `Changed`);
 * - a lock type the component cannot use is refused before anything starts, with client-go's
 *   words (`endpoints lock is removed, migrate to leases`): 1.32 only has Lease locks.
 *
 * Invariants:
 * - durations are milliseconds (our timers' resolution), read from Go duration text (`15s`);
 * - the identity is unique per process, not per host: two candidates on one machine must never
 *   both believe they are the holder, so a hostname alone is not enough (upstream's comment:
 *   "add a uniquifier so that two processes on the same host don't accidentally both become active").
 *
 * What upstream does differently: with `--config`, kube-scheduler validates the merged block
 * (our validation.ts does the same); without it, and in kube-controller-manager, a bad duration
 * is only caught when the elector is built (NewLeaderElector), after the server has started —
 * we refuse it with the elector's message while reading the flags. Upstream exits 1 there; our
 * commands exit 2 for every refused command line (cli/run.ts).
 *
 * @upstream kubernetes/component-base config/options/leaderelectionconfig.go (BindLeaderElectionFlags)
 * @upstream kubernetes/component-base config/types.go (LeaderElectionConfiguration)
 * @upstream kubernetes/kubernetes cmd/kube-scheduler/app/options/options.go (NewOptions LeaderElection defaults, ApplyLeaderElectionTo, makeLeaderElectionConfig)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/controllermanager.go (Run: the id, leaderElectAndRun)
 * @upstream kubernetes/client-go tools/leaderelection/resourcelock/interface.go (New: the lock types)
 * @upstream kubernetes/client-go tools/leaderelection/leaderelection.go (NewLeaderElector: the durations)
 * @chapter 06-leader-election
 */
import { randomUUID } from "node:crypto";
import { hostname } from "node:os";
import type { LeaderElectionConfiguration } from "../../leaderelection/config.ts";
import { validateLeaderElectionConfig } from "../../leaderelection/leader-elector.ts";
import { checkLockType } from "../../leaderelection/resourcelock/interface.ts";
import { DurationError, formatDuration, parseDuration } from "./duration.ts";
import { boolFlag, type Flag, FlagValueError, type FlagValues, stringFlag } from "./flag.ts";

/** A Go duration flag whose bad value gets Go's own message (`time: invalid duration "soon"`). */
function goDurationFlag(help: string, defaultMs: number): Flag<number> {
  return {
    help,
    default: defaultMs,
    set(text) {
      const ms = parseDuration(text);
      return ms instanceof DurationError ? new FlagValueError(ms.message) : ms;
    },
    shownDefault: formatDuration(defaultMs),
  };
}

// #region flags
/** BindLeaderElectionFlags: the seven flags, defaulted from `d`. Spread them into a command's table. */
export function leaderElectionFlags(d: LeaderElectionConfiguration) {
  return {
    "leader-elect": boolFlag(
      "Start a leader election client and gain leadership before executing the main loop. Enable this when running replicated components for high availability.",
      d.leaderElect,
    ),
    "leader-elect-lease-duration": goDurationFlag(
      "The duration that non-leader candidates will wait after observing a leadership renewal until attempting to acquire leadership of a led but unrenewed leader slot. This is effectively the maximum duration that a leader can be stopped before it is replaced by another candidate. This is only applicable if leader election is enabled.",
      d.leaseDurationMs,
    ),
    "leader-elect-renew-deadline": goDurationFlag(
      "The interval between attempts by the acting master to renew a leadership slot before it stops leading. This must be less than the lease duration. This is only applicable if leader election is enabled.",
      d.renewDeadlineMs,
    ),
    "leader-elect-retry-period": goDurationFlag(
      "The duration the clients should wait between attempting acquisition and renewal of a leadership. This is only applicable if leader election is enabled.",
      d.retryPeriodMs,
    ),
    "leader-elect-resource-lock": stringFlag(
      "The type of resource object that is used for locking during leader election. Supported options are 'leases'.",
      d.resourceLock,
    ),
    "leader-elect-resource-name": stringFlag(
      "The name of resource object that is used for locking during leader election.",
      d.resourceName,
    ),
    "leader-elect-resource-namespace": stringFlag(
      "The namespace of resource object that is used for locking during leader election.",
      d.resourceNamespace,
    ),
  };
}

type LeaderElectionFlags = ReturnType<typeof leaderElectionFlags>;

/** The flags' values as a command reads them. */
export type LeaderElectionFlagValues = FlagValues<LeaderElectionFlags>;
// #endregion flags

// #region apply
/**
 * ApplyLeaderElectionTo: `base` (a config file's block, or the defaults) with every flag the
 * command line gave written over it. A flag left at its default changes nothing, so a file's
 * `leaseDuration: 30s` survives a command line that does not mention the duration.
 */
export function applyLeaderElectionFlags(
  values: LeaderElectionFlagValues,
  given: ReadonlySet<string>,
  base: LeaderElectionConfiguration,
): LeaderElectionConfiguration {
  const out = { ...base };
  const fields: [keyof LeaderElectionFlags, keyof LeaderElectionConfiguration][] = [
    ["leader-elect", "leaderElect"],
    ["leader-elect-lease-duration", "leaseDurationMs"],
    ["leader-elect-renew-deadline", "renewDeadlineMs"],
    ["leader-elect-retry-period", "retryPeriodMs"],
    ["leader-elect-resource-lock", "resourceLock"],
    ["leader-elect-resource-name", "resourceName"],
    ["leader-elect-resource-namespace", "resourceNamespace"],
  ];
  for (const [flag, field] of fields) {
    if (given.has(flag)) (out as Record<string, unknown>)[field] = values[flag];
  }
  return out;
}
// #endregion apply

// #region problem
/**
 * Why the merged settings cannot make an elector, in upstream's words — resourcelock.New's
 * (`couldn't create resource lock: endpoints lock is removed, migrate to leases`: 1.32 has only
 * Lease locks) or NewLeaderElector's (`leaseDuration must be greater than renewDeadline`) — or
 * undefined. Nothing to say when the component does not elect.
 */
export function leaderElectionProblem(le: LeaderElectionConfiguration): string | undefined {
  if (!le.leaderElect) return undefined;
  const lock = checkLockType(le.resourceLock);
  if (lock) return `couldn't create resource lock: ${lock.message}`;
  // The elector's own checks; the callbacks and lock are stand-ins, only the durations are asked.
  const durations = validateLeaderElectionConfig({
    leaseDuration: le.leaseDurationMs,
    renewDeadline: le.renewDeadlineMs,
    retryPeriod: le.retryPeriodMs,
  });
  if (durations && !/callback|Lock/.test(durations.message))
    return `couldn't create leader elector: ${durations.message}`;
  return undefined;
}
// #endregion problem

// #region identity
/** The candidate's identity, `<hostname>_<uuid>`: what the Lease's holderIdentity will say. */
export function leaderElectionIdentity(host: string = hostname(), uuid: string = randomUUID()): string {
  return `${host}_${uuid}`;
}
// #endregion identity

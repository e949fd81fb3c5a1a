/**
 * LeaderElector — many replicas, one active: each candidate loops on tryAcquireOrRenew against one
 * lock; the one that wins runs its work until it cannot renew within renewDeadline, then stops.
 * Mirrors client-go tools/leaderelection/leaderelection.go (NewLeaderElector, LeaderElectionConfig,
 * LeaderCallbacks, LeaderElector.Run, acquire, renew, release, tryAcquireOrRenew, Check).
 *
 * @upstream kubernetes/client-go tools/leaderelection/leaderelection.go (JitterFactor, NewLeaderElector, LeaderElectionConfig, LeaderCallbacks, LeaderElector, Run, RunOrDie, GetLeader, IsLeader, acquire, renew, release, tryAcquireOrRenew, maybeReportTransition, Check)
 * @upstream kubernetes/apimachinery pkg/util/wait/backoff.go (JitterUntil, Until)
 * @upstream kubernetes/apimachinery pkg/util/wait/poll.go (PollUntilContextTimeout)
 * @upstream kubernetes/apimachinery pkg/util/wait/jitter.go (Jitter)
 * @chapter 06-leader-election
 *
 * Solves:
 * - two candidates that race for a free lock cannot both win: every write carries the
 *   resourceVersion it read (resourcelock/lease-lock.ts) and the API server lets one through;
 * - a dead leader is replaced within about leaseDuration + retryPeriod, judged on each
 *   follower's own clock (acquire-or-renew.ts), so clock skew between machines does not matter;
 * - a leader cut off from the API server stops acting: after renewDeadline without a successful
 *   renewal it stops leading (its `onStartedLeading` signal aborts, `onStoppedLeading` runs) —
 *   before the followers' leaseDuration is up, as leaseDuration > renewDeadline guarantees;
 * - a clean shutdown (releaseOnCancel) hands over at once instead of making the others wait.
 *
 * Invariants:
 * - leaseDuration > renewDeadline > retryPeriod × JitterFactor, all > 0 (newLeaderElector);
 * - `onStartedLeading` runs at most once per `run`, only after a successful write of the lock;
 *   `onStoppedLeading` runs exactly once when `run` ends, whether or not it ever led;
 * - `onNewLeader` is called once per change of the observed holder (the first one included);
 * - this is not fencing: nothing stops a leader that was paused past its lease from acting for
 *   the moment between waking and its next failed renewal. The chapter measures that window.
 *
 * What upstream does differently:
 * - durations are milliseconds here (Go: time.Duration); the Lease still gets whole seconds
 *   (`leaseDurationSeconds = floor(leaseDuration / 1 s)`), as upstream;
 * - the renew deadline is a timer on the injected clock that aborts the in-flight request; Go's
 *   context deadline does the same on the real clock;
 * - the watchdog is tied to the elector in `newLeaderElector` (upstream: only in RunOrDie);
 * - coordinated leader election (tryCoordinatedRenew, alpha in 1.32) is left out;
 * - the decisions are functions the elector is given (ElectionSteps: observe, isLeaseValid,
 *   decideAcquireOrRenew, renewLoop, release; ours by default), so that chapter 6's exercises
 *   run the learner's versions inside it; upstream has them inline in its methods;
 * - renewLoop reports only the error that lost the lease: a cancel mid-round ends it quietly,
 *   where upstream also logs "failed to renew lease …: context canceled" on the way out.
 */
import { isNotFound } from "../client/errors.ts";
import { type Clock, realClock, sleep } from "../client/util/clock.ts";
import {
  canRenewOptimistically,
  decideAcquireOrRenew,
  desiredRecord,
  emptyObservation,
  isLeader,
  isLeaseValid,
  type Observation,
  observe,
  observeOwnWrite,
} from "./acquire-or-renew.ts";
import type { HealthzAdaptor } from "./healthz-adaptor.ts";
import { type LeaderMetric, noopMetric } from "./metrics.ts";
import type { Interface, LeaderElectionRecord } from "./resourcelock/interface.ts";

/** How far the acquire loop's waits spread: retryPeriod × [1, 1 + JitterFactor). */
export const JitterFactor = 1.2;

// #region config
/** LeaderCallbacks. Upstream starts the first and third in goroutines; ours do not await them. */
export interface LeaderCallbacks {
  /** This candidate leads; `signal` aborts when it stops (lost, or `run`'s signal aborted). */
  onStartedLeading: (signal: AbortSignal) => void | Promise<void>;
  /** `run` is ending — after leading, or without ever having led. */
  onStoppedLeading: () => void | Promise<void>;
  /** The observed holder changed ("" when a leader released the lock). */
  onNewLeader?: (identity: string) => void;
}

export interface LeaderElectionConfig {
  lock: Interface;
  /** Milliseconds a follower waits, from the last change it saw, before taking over. Core components: 15 s. */
  leaseDuration: number;
  /** Milliseconds a leader keeps retrying a failed renewal before it stops leading. Core: 10 s. */
  renewDeadline: number;
  /** Milliseconds between tries. Core: 2 s. */
  retryPeriod: number;
  callbacks: LeaderCallbacks;
  /** The `/healthz` check tied to this elector, if the component serves one. */
  watchDog?: HealthzAdaptor;
  /**
   * Clear the lock when `run`'s signal aborts, so a follower takes over at its next try. Only
   * safe if the work guarded by the lease has finished by then.
   */
  releaseOnCancel?: boolean;
  /** The lease's name in logs, metrics and the health message. */
  name?: string;
  clock?: Clock;
  /** The acquire loop's jitter (seeded in tests). Default Math.random. */
  random?: () => number;
  metrics?: LeaderMetric;
  /** klog's lines; default: nowhere. */
  log?: (line: string) => void;
}
// #endregion config

/**
 * The election's decisions, as functions the elector calls: upstream's by default. Chapter 6's
 * exercises pass the learner's versions (through testing/election-harness.ts), so a learner's
 * decision table, expiry, renew loop or release runs inside this elector, against a real API
 * server — the way exercise 5.6's victim selection runs inside the scheduler.
 */
export interface ElectionSteps {
  observe: typeof observe;
  isLeaseValid: typeof isLeaseValid;
  decideAcquireOrRenew: typeof decideAcquireOrRenew;
  renewLoop: typeof renewLoop;
  release: typeof release;
}

/** What this file and acquire-or-renew.ts implement. */
export const defaultElectionSteps: ElectionSteps = {
  observe,
  isLeaseValid,
  decideAcquireOrRenew,
  renewLoop,
  release,
};

/** Why a LeaderElectionConfig cannot run (upstream's texts). */
export class LeaderElectionConfigError extends Error {
  override name = "LeaderElectionConfigError";
}

// #region validation
/** NewLeaderElector's checks, in upstream's order; the first one that fails. */
export function validateLeaderElectionConfig(
  c: Partial<LeaderElectionConfig>,
): LeaderElectionConfigError | undefined {
  const fail = (msg: string) => new LeaderElectionConfigError(msg);
  const leaseDuration = c.leaseDuration ?? 0;
  const renewDeadline = c.renewDeadline ?? 0;
  const retryPeriod = c.retryPeriod ?? 0;
  if (leaseDuration <= renewDeadline) return fail("leaseDuration must be greater than renewDeadline");
  if (renewDeadline <= JitterFactor * retryPeriod)
    return fail("renewDeadline must be greater than retryPeriod*JitterFactor");
  if (leaseDuration <= 0) return fail("leaseDuration must be greater than zero");
  if (renewDeadline <= 0) return fail("renewDeadline must be greater than zero");
  if (retryPeriod <= 0) return fail("retryPeriod must be greater than zero");
  if (!c.callbacks?.onStartedLeading) return fail("OnStartedLeading callback must not be nil");
  if (!c.callbacks?.onStoppedLeading) return fail("OnStoppedLeading callback must not be nil");
  if (!c.lock) return fail("Lock must not be nil.");
  if (c.lock.identity() === "") return fail("Lock identity is empty");
  return undefined;
}
// #endregion validation

/** wait.Jitter: `duration` plus up to `maxFactor` × duration at random (factor ≤ 0 means 1). */
export function jitter(duration: number, maxFactor: number, random: () => number): number {
  const f = maxFactor <= 0 ? 1 : maxFactor;
  return duration + random() * f * duration;
}

/**
 * NewLeaderElector: validates `config` (throws LeaderElectionConfigError with upstream's text).
 * `steps` replaces the election's decisions (chapter 6's exercises); components leave it out.
 */
export function newLeaderElector(
  config: LeaderElectionConfig,
  steps: ElectionSteps = defaultElectionSteps,
): LeaderElector {
  const bad = validateLeaderElectionConfig(config);
  if (bad) throw bad;
  const le = new LeaderElector(config, steps);
  config.watchDog?.setLeaderElection(le);
  return le;
}

/** RunOrDie: a validated elector, run until it stops leading or `signal` aborts. */
export async function runOrDie(signal: AbortSignal, config: LeaderElectionConfig): Promise<void> {
  await newLeaderElector(config).run(signal);
}

export class LeaderElector {
  readonly config: LeaderElectionConfig;
  private readonly clock: Clock;
  private readonly random: () => number;
  private readonly metrics: LeaderMetric;
  private readonly log: (line: string) => void;
  private readonly steps: ElectionSteps;
  /** observedRecord / observedRawRecord / observedTime (acquire-or-renew.ts). */
  private observed: Observation = emptyObservation;
  /** The holder last reported to onNewLeader; may lag `observed` until maybeReportTransition. */
  private reportedLeader = "";

  /** Use newLeaderElector, which validates the config. */
  constructor(config: LeaderElectionConfig, steps: ElectionSteps = defaultElectionSteps) {
    this.config = config;
    this.steps = steps;
    this.clock = config.clock ?? realClock;
    this.random = config.random ?? Math.random;
    this.metrics = config.metrics ?? noopMetric;
    this.log = config.log ?? (() => {});
    this.metrics.off(this.name);
  }

  private get name(): string {
    return this.config.name ?? "";
  }

  // #region run
  /**
   * Run: acquire, then renew until the lease is lost or `signal` aborts. Resolves when this
   * candidate is no longer leading (or aborted before it ever led).
   */
  async run(signal: AbortSignal): Promise<void> {
    try {
      if (!(await this.acquire(signal))) return; // aborted before it led
      const leading = new AbortController();
      const stop = () => leading.abort();
      signal.addEventListener("abort", stop, { once: true });
      this.callAsync("OnStartedLeading", () => this.config.callbacks.onStartedLeading(leading.signal));
      try {
        await this.renew(signal);
      } finally {
        signal.removeEventListener("abort", stop);
        leading.abort();
      }
    } finally {
      await this.config.callbacks.onStoppedLeading();
    }
  }
  // #endregion run

  /** GetLeader: the last observed holder ("" before any). For logs and monitoring only. */
  getLeader(): string {
    return this.observed.record.holderIdentity;
  }

  /** IsLeader: the last observed holder is us. */
  isLeader(): boolean {
    return isLeader(this.observed, this.config.lock.identity());
  }

  /** The observation behind the decisions (tests and the chapter's demo print it). */
  observation(): Readonly<Observation> {
    return this.observed;
  }

  // #region acquire
  /** acquire: tryAcquireOrRenew every retryPeriod (jittered) until it succeeds; false if aborted first. */
  private async acquire(signal: AbortSignal): Promise<boolean> {
    const desc = this.config.lock.describe();
    this.log(`attempting to acquire leader lease ${desc}...`);
    while (!signal.aborted) {
      const succeeded = await this.tryAcquireOrRenew(signal);
      this.maybeReportTransition();
      if (succeeded) {
        this.config.lock.recordEvent("became leader");
        this.metrics.on(this.name);
        this.log(`successfully acquired lease ${desc}`);
        return true;
      }
      // JitterUntil, sliding: the wait starts after the try, so a slow server spaces tries out.
      await sleep(this.clock, jitter(this.config.retryPeriod, JitterFactor, this.random), signal);
    }
    return false;
  }
  // #endregion acquire

  /**
   * renew: keep the lock until renewLoop gives up or `signal` aborts; then stop leading, and
   * release the lock on the way out if configured.
   */
  private async renew(signal: AbortSignal): Promise<void> {
    const desc = this.config.lock.describe();
    const { renewDeadline, retryPeriod } = this.config;
    const err = await this.steps.renewLoop(signal, (s) => this.tryAcquireOrRenew(s), {
      clock: this.clock,
      renewDeadline,
      retryPeriod,
    });
    // Upstream reports after every round; only a failed round can change the observed holder (a
    // successful one wrote us, already reported), so once, after the last, is the same.
    this.maybeReportTransition();
    if (err !== undefined) {
      this.metrics.off(this.name);
      this.log(`failed to renew lease ${desc}: ${err}`);
    }
    if (signal.aborted) this.metrics.off(this.name);
    if (this.config.releaseOnCancel) await this.release();
    // Last, as upstream's deferred RecordEvent: after a release, on the released Lease.
    this.config.lock.recordEvent("stopped leading");
  }

  /** release (below), with upstream's log line when the write fails. */
  private async release(): Promise<boolean> {
    const { lock, renewDeadline } = this.config;
    try {
      this.observed = await this.steps.release({
        observed: this.observed,
        lock,
        clock: this.clock,
        renewDeadline,
      });
      return true;
    } catch (err) {
      this.log(`Failed to release lock: ${errorText(err)}`);
      return false;
    }
  }

  // #region try-acquire-or-renew
  /**
   * tryAcquireOrRenew: one attempt to take or keep the lock; true if this candidate holds it
   * afterwards. The decision itself is decideAcquireOrRenew (acquire-or-renew.ts).
   */
  async tryAcquireOrRenew(signal?: AbortSignal): Promise<boolean> {
    const { lock } = this.config;
    const identity = lock.identity();
    const now = this.clock.now();
    const leaseDurationSeconds = Math.floor(this.config.leaseDuration / 1000);

    // 1. Fast path: a leader within its lease writes on top of what it wrote last time.
    if (canRenewOptimistically(this.observed, now, identity, this.steps.isLeaseValid(this.observed, now))) {
      const held = this.observed.record;
      const record: LeaderElectionRecord = {
        ...desiredRecord(identity, leaseDurationSeconds, now),
        acquireTime: held.acquireTime,
        leaderTransitions: held.leaderTransitions,
      };
      try {
        await lock.update(record, signal);
        this.observed = observeOwnWrite(this.observed, record, this.clock.now());
        return true;
      } catch (err) {
        this.log(`Failed to update lock optimistically: ${errorText(err)}, falling back to slow path`);
      }
    }

    // 2. Read the record; if there is none, create it (a Lease deleted by hand comes back here).
    let got: Awaited<ReturnType<Interface["get"]>>;
    try {
      got = await lock.get(signal);
    } catch (err) {
      if (!isNotFound(err)) {
        this.log(`error retrieving resource lock ${lock.describe()}: ${errorText(err)}`);
        return false;
      }
      const record = desiredRecord(identity, leaseDurationSeconds, now);
      try {
        await lock.create(record, signal);
      } catch (createErr) {
        this.log(`error initially creating leader election record: ${errorText(createErr)}`);
        return false;
      }
      this.observed = observeOwnWrite(this.observed, record, this.clock.now());
      return true;
    }

    // 3. A change in the bytes restarts the lease's clock — our clock, not the holder's.
    this.observed = this.steps.observe(this.observed, got, this.clock.now());
    const valid = this.steps.isLeaseValid(this.observed, now);
    const decision = this.steps.decideAcquireOrRenew(
      this.observed,
      now,
      identity,
      leaseDurationSeconds,
      valid,
    );
    if (decision.action === "wait") {
      this.log(`lock is held by ${decision.holder} and has not yet expired`);
      return false;
    }
    if (decision.action === "renew") this.metrics.slowpathExercised(this.name);

    // 4. Write it; the resourceVersion we read makes a racer's write fail with 409 Conflict.
    try {
      await lock.update(decision.record, signal);
    } catch (err) {
      this.log(`Failed to update lock: ${errorText(err)}`);
      return false;
    }
    this.observed = observeOwnWrite(this.observed, decision.record, this.clock.now());
    return true;
  }
  // #endregion try-acquire-or-renew

  /** maybeReportTransition: tell onNewLeader about a holder we have not reported yet. */
  private maybeReportTransition(): void {
    const holder = this.observed.record.holderIdentity;
    if (holder === this.reportedLeader) return;
    this.reportedLeader = holder;
    const onNewLeader = this.config.callbacks.onNewLeader;
    if (onNewLeader) this.callAsync("OnNewLeader", () => onNewLeader(holder));
  }

  // #region check
  /**
   * Check (the watchdog's question): an error if we lead but our last successful write is older
   * than leaseDuration + maxTolerableExpiredLease — the renew loop should have given up by then.
   */
  check(maxTolerableExpiredLeaseMs: number): Error | undefined {
    if (!this.isLeader()) return undefined; // a hot standby has nothing to renew
    if (this.clock.now() - this.observed.time > this.config.leaseDuration + maxTolerableExpiredLeaseMs) {
      return new Error(`failed election to renew leadership on lease ${this.name}`);
    }
    return undefined;
  }
  // #endregion check

  /** Like `go f()`: the elector does not wait for the callback, and its failure is logged, not thrown. */
  private callAsync(what: string, f: () => unknown): void {
    Promise.resolve()
      .then(f)
      .catch((err) => this.log(`${what} callback failed: ${errorText(err)}`));
  }
}

// #region renew
/** How the renew loop is timed: the config's durations, on the elector's clock. */
export interface RenewTiming {
  clock: Clock;
  renewDeadline: number;
  retryPeriod: number;
}

/**
 * renew's loop (wait.Until over PollUntilContextTimeout): rounds of tries, a new round
 * retryPeriod after each success. A round tries at once, then every retryPeriod, and must
 * succeed within renewDeadline of its own start — so the deadline runs from the round after the
 * last success, not from when leading began nor from the first failure. Resolves with the error
 * of the round that missed it ("context deadline exceeded": the lease is lost), or undefined
 * when `signal` aborts first. `tryRenew` gets the round's signal: the deadline aborts the try in
 * flight too, so a hung request cannot hold a leader past it.
 */
export async function renewLoop(
  signal: AbortSignal,
  tryRenew: (signal: AbortSignal) => Promise<boolean>,
  timing: RenewTiming,
): Promise<string | undefined> {
  while (!signal.aborted) {
    const err = await pollUntilDeadline(signal, tryRenew, timing);
    if (signal.aborted) return undefined;
    if (err !== undefined) return err;
    await sleep(timing.clock, timing.retryPeriod, signal);
  }
  return undefined;
}

/** One round: undefined once a try succeeds; the round's error when its deadline (or `signal`) cuts it off. */
async function pollUntilDeadline(
  signal: AbortSignal,
  tryRenew: (signal: AbortSignal) => Promise<boolean>,
  { clock, renewDeadline, retryPeriod }: RenewTiming,
): Promise<string | undefined> {
  const ctx = new AbortController();
  const cancel = () => ctx.abort("context canceled");
  signal.addEventListener("abort", cancel, { once: true });
  const deadline = clock.afterFunc(renewDeadline, () => ctx.abort("context deadline exceeded"));
  try {
    while (!ctx.signal.aborted) {
      if (await tryRenew(ctx.signal)) return undefined;
      if (ctx.signal.aborted) break;
      await sleep(clock, retryPeriod, ctx.signal);
    }
    return String(ctx.signal.reason);
  } finally {
    deadline.stop();
    signal.removeEventListener("abort", cancel);
  }
}
// #endregion renew

// #region release
/** What release needs from the elector. */
export interface ReleaseParams {
  /** What this candidate last observed of the lock. */
  observed: Observation;
  lock: Interface;
  clock: Clock;
  /** How long the write may take (upstream: a context with timeout renewDeadline). */
  renewDeadline: number;
}

/**
 * release: if the last record we observed names us, write it back with no holder and a 1 s
 * lease — leaderTransitions kept, both times now — so the next candidate to try takes it at once
 * instead of waiting out the lease. Resolves with the observation after the write (unchanged if
 * we did not hold the lock: a leader that lost it must not clear its successor's record);
 * rejects with the lock's error, or when the write takes longer than renewDeadline.
 */
export async function release({ observed, lock, clock, renewDeadline }: ReleaseParams): Promise<Observation> {
  if (!isLeader(observed, lock.identity())) return observed;
  const now = clock.now();
  const record: LeaderElectionRecord = {
    holderIdentity: "",
    leaderTransitions: observed.record.leaderTransitions,
    leaseDurationSeconds: 1,
    renewTime: now,
    acquireTime: now,
  };
  const ctx = new AbortController();
  const timeout = clock.afterFunc(renewDeadline, () => ctx.abort("context deadline exceeded"));
  try {
    await lock.update(record, ctx.signal);
  } finally {
    timeout.stop();
  }
  return observeOwnWrite(observed, record, clock.now());
}
// #endregion release

function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

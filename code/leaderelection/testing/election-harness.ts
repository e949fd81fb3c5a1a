/**
 * Election test harness — candidates on one fake clock against a real API server: a lock wrapper
 * that counts, records and breaks requests on demand, and a driver that moves the clock only when
 * every candidate is parked on it.
 *
 * @upstream none — test tooling (upstream's leaderelection_test.go fakes the lock with reactors on a fake clientset)
 * @chapter 06-leader-election
 *
 * Solves: an election is timers and HTTP interleaved. Stepping a fake clock while a request is
 * still on the wire would let time jump past a renewal that was about to land; so `advance` steps
 * from one due timer to the next and waits, between steps, until no request is in flight.
 *
 * Invariants:
 * - `inFlight` counts the requests a lock has sent and not yet heard back from; a request held by
 *   the `hang` fault is not in flight (it is parked until its signal aborts, like a partition);
 * - `advance(ms)` leaves the clock exactly `ms` later, with every timer due on the way fired in
 *   order and every candidate parked again.
 * - a `Candidate` is one real LeaderElector on a FaultyLock over a LeaseLock; its `steps` (chapter
 *   6's exercises: the learner's decisions) replace only the functions they name.
 */
import { isConflict, newStatusError, StatusError } from "../../client/errors.ts";
import type { CoordinationV1Client } from "../../client/kubernetes/clientset.ts";
import type { FakeClock } from "../../client/util/clock.ts";
import { mulberry32 } from "../../testing/random.ts";
import {
  defaultElectionSteps,
  type ElectionSteps,
  type LeaderElectionConfig,
  LeaderElector,
  newLeaderElector,
} from "../leader-elector.ts";
import type { Interface, LeaderElectionRecord, ObservedLock } from "../resourcelock/interface.ts";
import { LeaseLock } from "../resourcelock/lease-lock.ts";

export type Fault = "none" | "fail" | "hang";

export interface LockCall {
  op: "get" | "create" | "update";
  at: number;
  /** The holder the request wrote (create, update). */
  holder?: string;
  error?: unknown;
}

// #region faulty-lock
/** A lock that passes calls to `inner` unless told to fail or hang; records every call. */
export class FaultyLock implements Interface {
  fault: Fault = "none";
  inFlight = 0;
  readonly calls: LockCall[] = [];
  /** Awaited before a write is sent: a test's barrier to line two racers up. */
  beforeWrite?: () => Promise<void>;

  constructor(
    readonly inner: Interface,
    private readonly clock: FakeClock,
  ) {}

  get(signal?: AbortSignal): Promise<ObservedLock> {
    return this.call({ op: "get", at: this.clock.now() }, () => this.inner.get(signal), signal);
  }

  create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    const c: LockCall = { op: "create", at: this.clock.now(), holder: record.holderIdentity };
    return this.call(c, () => this.inner.create(record, signal), signal, true);
  }

  update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    const c: LockCall = { op: "update", at: this.clock.now(), holder: record.holderIdentity };
    return this.call(c, () => this.inner.update(record, signal), signal, true);
  }

  recordEvent(message: string): void {
    this.inner.recordEvent(message);
  }
  identity(): string {
    return this.inner.identity();
  }
  describe(): string {
    return this.inner.describe();
  }

  /** The errors the server answered that were 409 Conflict (or AlreadyExists, also a 409). */
  conflicts(): StatusError[] {
    return this.calls
      .map((c) => c.error)
      .filter((e): e is StatusError => e instanceof StatusError && (isConflict(e) || e.code === 409));
  }

  private async call<T>(
    c: LockCall,
    send: () => Promise<T>,
    signal?: AbortSignal,
    write = false,
  ): Promise<T> {
    this.calls.push(c);
    if (this.fault === "hang") {
      // A partition: nothing comes back until the caller gives up.
      await new Promise<void>((resolve) => {
        if (signal?.aborted) resolve();
        signal?.addEventListener("abort", () => resolve(), { once: true });
      });
      c.error = signal?.reason ?? "aborted";
      throw c.error;
    }
    if (this.fault === "fail") {
      c.error = newStatusError(503, "the server is currently unable to handle the request");
      throw c.error;
    }
    this.inFlight++;
    try {
      if (write && this.beforeWrite) await this.beforeWrite();
      return await send();
    } catch (err) {
      c.error = err;
      throw err;
    } finally {
      this.inFlight--;
    }
  }
}
// #endregion faulty-lock

/** Resolves the n-th call and every call after it: n racers wait until all have arrived. */
export function barrier(n: number): () => Promise<void> {
  let arrived = 0;
  let open: () => void = () => {};
  const opened = new Promise<void>((r) => {
    open = r;
  });
  return () => {
    if (++arrived >= n) open();
    return opened;
  };
}

const turn = () => new Promise<void>((r) => setImmediate(r));
const tick = () => new Promise<void>((r) => setTimeout(r, 1));

// #region driver
/** Waits (real time, bounded) until no lock has a request in flight. */
export async function settle(locks: FaultyLock[]): Promise<void> {
  for (let i = 0; i < 20_000; i++) {
    if (locks.every((l) => l.inFlight === 0)) {
      // The answer's continuation runs in microtasks: one more turn lets it reach its next
      // request (in flight again) or its next sleep (parked).
      await turn();
      if (locks.every((l) => l.inFlight === 0)) return;
    }
    await tick();
  }
  throw new Error(`requests still in flight after 20000 ticks: ${locks.map((l) => l.inFlight).join(", ")}`);
}

/** Moves `clock` forward by `ms`, one due timer at a time, settling the candidates after each. */
export async function advance(clock: FakeClock, locks: FaultyLock[], ms: number): Promise<void> {
  const target = clock.now() + ms;
  await settle(locks);
  for (;;) {
    const next = clock.nextDue();
    if (next === undefined || next > target) break;
    clock.setTime(next);
    await settle(locks);
  }
  clock.setTime(target);
  await settle(locks);
}

/** Advances in `stepMs` steps until `cond` holds, at most `maxMs`; the time it took (fake ms). */
export async function advanceUntil(
  clock: FakeClock,
  locks: FaultyLock[],
  cond: () => boolean,
  maxMs: number,
  stepMs = 100,
): Promise<number> {
  const start = clock.now();
  await settle(locks);
  while (!cond()) {
    if (clock.now() - start >= maxMs) throw new Error(`condition not met within ${maxMs} ms of fake time`);
    await advance(clock, locks, stepMs);
  }
  return clock.now() - start;
}
// #endregion driver

// #region candidates
/** What one candidate's callbacks saw, in order, with the fake time of each. */
export interface Seen {
  started: number[];
  stopped: number[];
  newLeaders: string[];
  leadingSignal?: AbortSignal;
  logs: string[];
}

export interface Candidate {
  id: string;
  lock: FaultyLock;
  le: LeaderElector;
  seen: Seen;
  abort: AbortController;
  /** `run`'s promise, once `runAll` started it (it resolves even if `run` failed: see `failure`). */
  done?: Promise<void>;
  /** The first error one of `steps` threw, or `run` rejected with. */
  failure?: unknown;
}

export interface CandidateOptions {
  clock: FakeClock;
  leases: CoordinationV1Client;
  /** The Lease, `namespace/name`. */
  lease: { namespace: string; name: string };
  id: string;
  /** Over the defaults: upstream's core components' 15 s / 10 s / 2 s, jitter seeded from `id`. */
  config?: Partial<LeaderElectionConfig>;
  /** The election's decisions to use instead of the course's (exercises pass the learner's). */
  steps?: Partial<ElectionSteps>;
  /** Skip NewLeaderElector's checks: only to show, on a real elector, what a refused config does. */
  unvalidated?: boolean;
}

/** A real LeaderElector on a Lease, recording what its callbacks and log saw. */
export function newCandidate(o: CandidateOptions): Candidate {
  const { clock, id } = o;
  const inner = new LeaseLock({ leaseMeta: o.lease, client: o.leases, lockConfig: { identity: id } });
  const lock = new FaultyLock(inner, clock);
  const seen: Seen = { started: [], stopped: [], newLeaders: [], logs: [] };
  let seed = 0;
  for (const ch of id) seed = seed * 31 + ch.charCodeAt(0);
  const build = o.unvalidated
    ? (c: LeaderElectionConfig, s: ElectionSteps) => new LeaderElector(c, s)
    : newLeaderElector;
  const le = build(
    {
      lock,
      leaseDuration: 15_000,
      renewDeadline: 10_000,
      retryPeriod: 2_000,
      name: o.lease.name,
      clock,
      random: mulberry32(seed),
      log: (l) => seen.logs.push(l),
      callbacks: {
        onStartedLeading: (signal) => {
          seen.started.push(clock.now());
          seen.leadingSignal = signal;
        },
        onStoppedLeading: () => {
          seen.stopped.push(clock.now());
        },
        onNewLeader: (identity) => {
          seen.newLeaders.push(identity);
        },
      },
      ...o.config,
    },
    { ...defaultElectionSteps, ...noted(o.steps ?? {}, (err) => (c.failure ??= err)) },
  );
  const c: Candidate = { id, lock, le, seen, abort: new AbortController() };
  return c;
}

/**
 * `steps`, each noting what it throws (or rejects with) before passing it on: the elector logs a
 * failed step and carries on, so without this a learner's unfinished step (the stubs throw
 * `TODO: …`) would surface as a timeout far from its cause. Errors of the lock (a 409, a
 * deadline) are the election's ordinary weather, not failures: only an Error that is not a
 * StatusError and not an abort counts.
 */
function noted(steps: Partial<ElectionSteps>, note: (err: unknown) => void): Partial<ElectionSteps> {
  const isFailure = (err: unknown) =>
    err instanceof Error && !(err instanceof StatusError) && err.name !== "AbortError";
  const wrap =
    <A extends unknown[], R>(f: (...args: A) => R) =>
    (...args: A): R => {
      try {
        const r = f(...args);
        if (r instanceof Promise) {
          return r.catch((err: unknown) => {
            if (isFailure(err)) note(err);
            throw err;
          }) as R;
        }
        return r;
      } catch (err) {
        if (isFailure(err)) note(err);
        throw err;
      }
    };
  const out: Partial<ElectionSteps> = {};
  for (const [k, f] of Object.entries(steps) as [keyof ElectionSteps, (...a: unknown[]) => unknown][]) {
    (out as Record<string, unknown>)[k] = wrap(f);
  }
  return out;
}

/** Throws the first failure of any of `cs` (a step's error, or `run`'s), so a test fails with its cause. */
export function throwIfFailed(cs: Candidate[]): void {
  const failed = cs.find((c) => c.failure !== undefined);
  if (failed) throw failed.failure;
}

/** Starts `run` on each candidate. */
export function runAll(cs: Candidate[]): void {
  for (const c of cs) {
    c.done = c.le.run(c.abort.signal).catch((err: unknown) => {
      c.failure ??= err;
    });
  }
}

/** Aborts every candidate and waits until each `run` has ended (releases included). */
export async function stopAll(clock: FakeClock, cs: Candidate[]): Promise<void> {
  for (const c of cs) c.abort.abort();
  await advance(
    clock,
    cs.map((c) => c.lock),
    0,
  );
  await Promise.all(cs.map((c) => c.done));
}

/** `advance` over the candidates' locks, failing with a candidate's own error as soon as there is one. */
export async function advanceCandidates(clock: FakeClock, cs: Candidate[], ms: number): Promise<void> {
  throwIfFailed(cs);
  await advance(
    clock,
    cs.map((c) => c.lock),
    ms,
  );
  throwIfFailed(cs);
}

/** `advanceUntil` over the candidates' locks, failing with a candidate's own error as soon as there is one. */
export function advanceCandidatesUntil(
  clock: FakeClock,
  cs: Candidate[],
  cond: () => boolean,
  maxMs: number,
  stepMs = 100,
): Promise<number> {
  const checked = () => {
    throwIfFailed(cs);
    return cond();
  };
  return advanceUntil(
    clock,
    cs.map((c) => c.lock),
    checked,
    maxMs,
    stepMs,
  );
}

/** The candidates leading now, by the callbacks: started and not yet stopped. */
export function leading(cs: Candidate[]): Candidate[] {
  return cs.filter((c) => c.seen.started.length > c.seen.stopped.length);
}
// #endregion candidates

/**
 * timeBudget — how long the cacher may wait for watchers whose buffer is full before it closes
 * them. Upstream: k8s.io/apiserver/pkg/storage/cacher/time_budget.go.
 *
 * Solves:
 * - a client that is keeping up can still stall for a moment (a GC pause, a full socket, a
 *   burst of events larger than its buffer): closing it at the first full buffer costs it a
 *   re-watch, and a 410 and a relist if the ring has moved on. A short wait usually lets it drain;
 * - but every wait delays the fan-out to all the other watchers (upstream's dispatcher blocks;
 *   ours pauses its rounds), so the waiting must be rationed: the budget refills at 50 ms per
 *   second of wall time and holds at most 100 ms. A watcher that is stuck for good uses the
 *   budget up and is closed; the others lose at most 5 % of the dispatcher's time to it.
 *
 * Invariants:
 * - 0 ≤ budget ≤ maxBudgetMs at all times;
 * - takeAvailable() hands out everything accumulated and leaves 0; returnUnused() gives back
 *   what a wait did not use (never more than the maximum); a negative remainder is ignored.
 *
 * The clock is injected (`now`, in ms), so the rule is tested without waiting.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/time_budget.go (timeBudget, newTimeBudget, takeAvailable, returnUnused, refreshPerSecond, maxBudget)
 * @chapter 05-scheduler
 */

/** The cacher's clock: monotonic ms and a cancellable timer (injected in tests). */
export interface DispatchClock {
  now(): number;
  afterFunc(ms: number, fn: () => void): { stop(): void };
}

export const realDispatchClock: DispatchClock = {
  now: () => performance.now(),
  afterFunc(ms, fn) {
    const t = setTimeout(fn, ms);
    return { stop: () => clearTimeout(t) };
  },
};

// #region time-budget
/** Budget earned per second of wall time (upstream's refreshPerSecond: 50 ms). */
export const refreshPerSecondMs = 50;
/** The most the budget can hold (upstream's maxBudget: 100 ms). */
export const maxBudgetMs = 100;

export class TimeBudget {
  /** Starts empty, as upstream's: the first stall right after start-up gets no grace. */
  private budget = 0;
  private last: number;

  constructor(
    private readonly now: () => number = () => performance.now(),
    private readonly refreshMs = refreshPerSecondMs,
    private readonly maxMs = maxBudgetMs,
  ) {
    this.last = now();
  }

  /** Everything earned so far (at most the maximum); the budget is empty afterwards. */
  takeAvailable(): number {
    const now = this.now();
    const earned = Math.max(0, ((now - this.last) / 1000) * this.refreshMs);
    this.budget = Math.min(this.budget + earned, this.maxMs);
    this.last = now;
    const out = this.budget;
    this.budget = 0;
    return out;
  }

  /** Gives back what a wait did not use. */
  returnUnused(unusedMs: number): void {
    if (unusedMs < 0) return; // it used more than it was given
    this.budget = Math.min(this.budget + unusedMs, this.maxMs);
  }
}
// #endregion time-budget

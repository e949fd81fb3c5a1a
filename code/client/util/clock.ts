/**
 * Clock — the client library's time and timers, passed in so that tests can move time by hand.
 * Mirrors k8s.io/utils clock (the interfaces client-go's workqueue, reflector and leader election
 * take) and clock/testing (FakeClock).
 *
 * Solves:
 * - the workqueue's delays and per-item backoff, the rate limiters, the reflector's backoff and
 *   resync period and leader election's lease timing all depend on time; a test that sleeps is slow
 *   and flaky, so each takes a `Clock` and tests pass a `FakeClock` that they `step` by hand.
 * - why not the store's clock (code/store/pkg/clock.ts): components may not import the store —
 *   the same process boundary that makes client-go use k8s.io/utils while etcd keeps its own.
 *
 * Invariants:
 * - `FakeClock.step(ms)` fires every timer due within the window, earliest first (ties in the
 *   order they were set), with `now()` equal to the timer's due time while it runs; a timer set
 *   while stepping fires in the same step if it falls due inside the window.
 * - a stopped timer never fires.
 *
 * @upstream kubernetes/utils clock/clock.go (Clock, PassiveClock, Timer)
 * @upstream kubernetes/utils clock/testing/fake_clock.go (FakeClock: Step, SetTime, HasWaiters)
 * @chapter 04-informers
 */

export interface Timer {
  /** Stops the timer; returns false if it had already fired or been stopped. */
  stop(): boolean;
}

export interface Clock {
  /** Milliseconds since the Unix epoch (or since the fake clock's start). */
  now(): number;
  /** Runs `fn` once, `delayMs` from now. */
  afterFunc(delayMs: number, fn: () => void): Timer;
}

/** Resolves after `ms` on `clock`, or at once if `signal` is already aborted or aborts first. */
export function sleep(clock: Clock, ms: number, signal?: AbortSignal): Promise<void> {
  return new Promise((resolve) => {
    if (signal?.aborted) return resolve();
    const onAbort = () => {
      timer.stop();
      resolve();
    };
    const timer = clock.afterFunc(ms, () => {
      signal?.removeEventListener("abort", onAbort);
      resolve();
    });
    signal?.addEventListener("abort", onAbort, { once: true });
  });
}

/** The wall clock. Its timers do not keep the Node process alive on their own. */
export const realClock: Clock = {
  now: () => Date.now(),
  afterFunc(delayMs, fn) {
    let live = true;
    const t = setTimeout(() => {
      live = false;
      fn();
    }, delayMs);
    t.unref?.();
    return {
      stop() {
        const was = live;
        live = false;
        clearTimeout(t);
        return was;
      },
    };
  },
};

interface Waiter {
  due: number;
  seq: number;
  fn: () => void;
}

/** A clock that moves only when a test calls `step` or `setTime`. */
export class FakeClock implements Clock {
  private time: number;
  private seq = 0;
  // Kept sorted by (due, seq), so the next timer to fire is always the first.
  private waiters: Waiter[] = [];

  constructor(start = 0) {
    this.time = start;
  }

  now(): number {
    return this.time;
  }

  afterFunc(delayMs: number, fn: () => void): Timer {
    const w: Waiter = { due: this.time + Math.max(0, delayMs), seq: this.seq++, fn };
    let at = this.waiters.findIndex((o) => o.due > w.due);
    if (at < 0) at = this.waiters.length;
    this.waiters.splice(at, 0, w);
    return {
      stop: () => {
        const i = this.waiters.indexOf(w);
        if (i < 0) return false;
        this.waiters.splice(i, 1);
        return true;
      },
    };
  }

  /** Moves time forward by `ms`, firing the timers that fall due on the way. */
  step(ms: number): void {
    this.setTime(this.time + ms);
  }

  /** Moves time to `t` (never backwards), firing the timers that fall due on the way. */
  setTime(t: number): void {
    while (this.waiters.length > 0 && this.waiters[0].due <= t) {
      const w = this.waiters.shift()!;
      this.time = Math.max(this.time, w.due);
      w.fn();
    }
    this.time = Math.max(this.time, t);
  }

  /** Whether any timer is waiting — a test's way to know a goroutine-like loop is parked. */
  hasWaiters(): boolean {
    return this.waiters.length > 0;
  }

  /** When the earliest waiting timer fires, or undefined. */
  nextDue(): number | undefined {
    return this.waiters[0]?.due;
  }
}

/**
 * Clock — time and timers, passed in rather than read from the wall.
 * No upstream counterpart: etcd reads the wall clock directly (see the note at the end of this header).
 *
 * Solves:
 * - lease expiry, the watch resync loop and progress notifications all depend on time; a test that
 *   sleeps is slow and flaky, so every component here takes a `Clock` and tests pass a
 *   `FakeClock` they move forward by hand;
 * - production code uses `realClock`, which is `Date.now` and `setTimeout`.
 *
 * Invariants:
 * - `FakeClock.advance(ms)` fires every timer due within the window in due order (ties in the
 *   order they were set), with `now()` equal to each timer's due time while it runs; timers set
 *   while advancing fire in the same call if they fall due inside the window.
 * - a cancelled timer never fires.
 *
 * @upstream none — etcd calls time.Now and time.After directly (lessor.go carries the note
 *   "TODO: use clockwork for testability")
 * @chapter 01-etcd-watch
 */

export interface Timer {
  cancel(): void;
}

export interface Clock {
  /** Milliseconds since the Unix epoch (or since the fake clock's start). */
  now(): number;
  /** Runs `fn` once, `delayMs` from now. */
  setTimer(delayMs: number, fn: () => void): Timer;
}

/** The wall clock. Its timers do not keep the Node process alive on their own. */
export const realClock: Clock = {
  now: () => Date.now(),
  setTimer(delayMs, fn) {
    const t = setTimeout(fn, delayMs);
    t.unref?.();
    return { cancel: () => clearTimeout(t) };
  },
};

interface FakeTimer {
  due: number;
  seq: number;
  fn: () => void;
  cancelled: boolean;
}

/** A clock that moves only when a test calls `advance`. */
export class FakeClock implements Clock {
  private current: number;
  private timers: FakeTimer[] = [];
  private seq = 0;

  constructor(start = 0) {
    this.current = start;
  }

  now(): number {
    return this.current;
  }

  setTimer(delayMs: number, fn: () => void): Timer {
    const t: FakeTimer = { due: this.current + Math.max(0, delayMs), seq: this.seq++, fn, cancelled: false };
    this.timers.push(t);
    return {
      cancel: () => {
        t.cancelled = true;
      },
    };
  }

  /** Moves time forward by `ms`, firing the timers that fall due on the way. */
  advance(ms: number): void {
    const end = this.current + ms;
    for (let t = this.nextDue(end); t; t = this.nextDue(end)) {
      this.timers.splice(this.timers.indexOf(t), 1);
      this.current = t.due;
      t.fn();
    }
    this.current = end;
  }

  /** How many timers are waiting (cancelled ones excluded). */
  pendingTimers(): number {
    return this.timers.filter((t) => !t.cancelled).length;
  }

  private nextDue(end: number): FakeTimer | undefined {
    this.timers = this.timers.filter((t) => !t.cancelled);
    let next: FakeTimer | undefined;
    for (const t of this.timers) {
      if (t.due > end) continue;
      if (!next || t.due < next.due || (t.due === next.due && t.seq < next.seq)) next = t;
    }
    return next;
  }
}

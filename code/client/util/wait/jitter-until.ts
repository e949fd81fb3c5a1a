/**
 * JitterUntil — run a function now and then again every period (plus a little random jitter)
 * until stopped: the loop behind the kubelet's node status heartbeat and its node Lease.
 * Mirrors kubernetes/apimachinery pkg/util/wait/backoff.go (JitterUntil, JitterUntilWithContext)
 * and pkg/util/wait/jitter.go (Jitter).
 *
 * Solves:
 * - a thousand kubelets started by the same reboot must not heartbeat in the same second forever:
 *   each wait is period × (1 + random × jitterFactor), so they drift apart;
 * - with `sliding`, the period starts after the function returns, so a slow call (an API server
 *   under load) never makes calls overlap or pile up.
 *
 * Invariants:
 * - `fn` never runs twice at once; after `signal` aborts it does not start again;
 * - the returned promise settles once the loop has stopped (the last `fn` included).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/wait/backoff.go (JitterUntil, JitterUntilWithContext, BackoffUntil)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/wait/jitter.go (Jitter)
 * @chapter 07-kubelet
 */

import { type Clock, sleep } from "../clock.ts";

/** Jitter: `duration` + up to `maxFactor` × `duration` (maxFactor ≤ 0 means 1). */
export function jitter(durationMs: number, maxFactor: number, random: () => number = Math.random): number {
  const factor = maxFactor <= 0 ? 1 : maxFactor;
  return durationMs + random() * factor * durationMs;
}

export interface JitterUntilOptions {
  clock: Clock;
  signal: AbortSignal;
  /** Injected so a test sees the same waits every run. */
  random?: () => number;
}

/**
 * Runs `fn` at once, then every `periodMs` (jittered by `jitterFactor`; sliding: counted from the
 * end of each run) until `signal` aborts. Errors of `fn` are the caller's to catch inside it.
 */
export async function jitterUntil(
  fn: () => Promise<void> | void,
  periodMs: number,
  jitterFactor: number,
  sliding: boolean,
  o: JitterUntilOptions,
): Promise<void> {
  while (!o.signal.aborted) {
    const wait = jitterFactor > 0 ? jitter(periodMs, jitterFactor, o.random) : periodMs;
    const started = o.clock.now();
    await fn();
    if (o.signal.aborted) return;
    // Not sliding: the period was running while fn ran.
    const remaining = sliding ? wait : Math.max(0, wait - (o.clock.now() - started));
    await sleep(o.clock, remaining, o.signal);
  }
}

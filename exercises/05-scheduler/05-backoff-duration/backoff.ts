/**
 * Exercise: the scheduling queue's backoff — how long a pod that failed waits before its next
 * try: `initial` for the first attempt, doubling per attempt, never more than `max`, and no
 * overflow however many attempts. README.md has the rules.
 */

/** calculateBackoffDuration: milliseconds of backoff for a pod tried `attempts` times. */
export function calculateBackoffDuration(attempts: number, initial: number, max: number): number {
  throw new Error(`TODO: calculateBackoffDuration — ${attempts} attempts, ${initial}..${max} ms`);
}

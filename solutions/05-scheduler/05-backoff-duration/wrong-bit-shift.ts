// Mistake: 2^(attempts−1) as a bit shift, `initial * (1 << (attempts - 1))`, then capped.
// Plausible: it is the textbook "double per attempt", and right for the first 31 attempts. But
// JavaScript shifts 32-bit integers: at 32 attempts 1 << 31 is negative, at 33 it wraps to 1 — a
// pod that has failed all day is suddenly retried every second (upstream's Go code guards the
// same overflow of time.Duration by comparing before doubling).
export function calculateBackoffDuration(attempts: number, initial: number, max: number): number {
  if (attempts === 0) return 0;
  return Math.min(initial * (1 << (attempts - 1)), max);
}

// Mistake: the first failure already waits 2 × initial — the loop doubles once per attempt
// instead of once per attempt after the first. Plausible off-by-one; every pod then waits twice
// as long as configured before its first retry, and reaches the cap an attempt early.
export function calculateBackoffDuration(attempts: number, initial: number, max: number): number {
  if (attempts === 0) return 0;
  let d = initial;
  for (let i = 0; i < attempts; i++) {
    if (d > max - d) return max;
    d += d;
  }
  return d;
}

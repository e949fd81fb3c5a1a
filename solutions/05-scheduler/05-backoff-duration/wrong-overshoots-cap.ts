// Mistake: the loop stops doubling once the backoff has reached max — but returns the doubled
// value, not max. Plausible: "stop when we are past the cap" reads right. With the defaults 8 s
// doubles to 16 s, so a pod that keeps failing waits 16 s instead of the 10 s ceiling.
export function calculateBackoffDuration(attempts: number, initial: number, max: number): number {
  if (attempts === 0) return 0;
  let d = initial;
  for (let i = 1; i < attempts; i++) {
    if (d >= max) return d;
    d += d;
  }
  return d;
}

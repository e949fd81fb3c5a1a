/**
 * Solution: calculateBackoffDuration (upstream: pkg/scheduler/backend/queue/scheduling_queue.go).
 */
export function calculateBackoffDuration(attempts: number, initial: number, max: number): number {
  if (attempts === 0) return 0;
  let d = initial;
  for (let i = 1; i < attempts; i++) {
    // Compare before doubling: the doubled value is never computed once it would pass max.
    if (d > max - d) return max;
    d += d;
  }
  return d;
}

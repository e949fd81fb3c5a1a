/**
 * Percentiles of measured durations, for the benchmarks that report latencies as p50/p90/p99 —
 * one definition, so that every benchmark's "p99" means the same thing: the nearest-rank
 * percentile (the smallest value with at least p % of the samples at or below it), as upstream's
 * perf tests take it.
 * No upstream counterpart in the product: upstream's perf tests compute theirs in the test code.
 *
 * @upstream kubernetes/kubernetes test/integration/scheduler_perf/util.go (Perc50 = sorted[ceil(n·50/100) − 1])
 * @chapter 07-kubelet
 */

/**
 * The nearest-rank percentile `p` (0–100) of `sorted` (ascending; a typed array too); NaN when it
 * is empty, so a benchmark that measured nothing prints NaN rather than a number it never saw.
 */
export function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.max(0, Math.ceil((p / 100) * sorted.length) - 1))];
}

/**
 * Count, p50, p90, p99 and max of `values` (left unsorted), rounded to `decimals` places: whole
 * milliseconds by default; one place for figures such as MiB.
 */
export function summary(values: number[], decimals = 0) {
  const s = [...values].sort((a, b) => a - b);
  const f = 10 ** decimals;
  const r = (x: number) => Math.round(x * f) / f;
  return {
    n: s.length,
    p50: r(percentile(s, 50)),
    p90: r(percentile(s, 90)),
    p99: r(percentile(s, 99)),
    max: r(s[s.length - 1]),
  };
}
export type Summary = ReturnType<typeof summary>;

/**
 * Solution: the probe worker's run counting.
 */
import type { Result } from "../../../code/kubelet/prober/results/results-manager.ts";
import type { RunState } from "../../../code/kubelet/prober/worker.ts";

export function countResult(
  state: RunState,
  result: Result,
  thresholds: { successThreshold: number; failureThreshold: number },
): { state: RunState; publish: boolean } {
  // The same result as last time extends the run; a different one starts a new run of 1.
  const resultRun = state.lastResult === result ? state.resultRun + 1 : 1;
  // Only Success and Failure have thresholds; Unknown is published at once. Once the run has
  // reached its threshold, every further equal result is published too (the results manager
  // drops repeats) — that is what puts a restarted container's value back.
  const below =
    (result === "Failure" && resultRun < thresholds.failureThreshold) ||
    (result === "Success" && resultRun < thresholds.successThreshold);
  return { state: { lastResult: result, resultRun }, publish: !below };
}

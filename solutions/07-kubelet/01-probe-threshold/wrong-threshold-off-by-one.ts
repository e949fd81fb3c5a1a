// Mistake: the run must pass its threshold, not reach it — `resultRun > threshold` publishes.
// Plausible: "failureThreshold 3 means three failures are tolerated". But upstream's threshold is
// the number of consecutive results that flips the verdict: failureThreshold 3 restarts on the
// third failure, and successThreshold 1 (the default) makes a container Ready on its first pass —
// with this version never on the first, always a period late.
import type { Result } from "../../../code/kubelet/prober/results/results-manager.ts";
import type { RunState } from "../../../code/kubelet/prober/worker.ts";

export function countResult(
  state: RunState,
  result: Result,
  thresholds: { successThreshold: number; failureThreshold: number },
): { state: RunState; publish: boolean } {
  const resultRun = state.lastResult === result ? state.resultRun + 1 : 1;
  const below =
    (result === "Failure" && resultRun <= thresholds.failureThreshold) ||
    (result === "Success" && resultRun <= thresholds.successThreshold);
  return { state: { lastResult: result, resultRun }, publish: !below };
}

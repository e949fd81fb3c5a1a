// Mistake: the run only ever grows — a result that differs from the last one adds to the count
// instead of starting a new run of 1. Plausible: "resultRun counts the probes since the last
// publish". But then a readiness probe that passed twice needs only one failure to reach
// failureThreshold 3, and a liveness probe whose failures are separated by passes still gets the
// container killed: the thresholds are about *consecutive* results.
import type { Result } from "../../../code/kubelet/prober/results/results-manager.ts";
import type { RunState } from "../../../code/kubelet/prober/worker.ts";

export function countResult(
  state: RunState,
  result: Result,
  thresholds: { successThreshold: number; failureThreshold: number },
): { state: RunState; publish: boolean } {
  const resultRun = state.resultRun + 1;
  const below =
    (result === "Failure" && resultRun < thresholds.failureThreshold) ||
    (result === "Success" && resultRun < thresholds.successThreshold);
  return { state: { lastResult: result, resultRun }, publish: !below };
}

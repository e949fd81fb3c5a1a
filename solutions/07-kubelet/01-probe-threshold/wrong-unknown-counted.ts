// Mistake: Unknown is counted like a failure — it waits for failureThreshold in a row. Plausible:
// "anything that is not a Success is a kind of failure". But Unknown is not a verdict to be
// confirmed: upstream publishes it at once (only Success and Failure have thresholds), so a probe
// that cannot say anything does not keep the previous verdict alive for several periods.
import type { Result } from "../../../code/kubelet/prober/results/results-manager.ts";
import type { RunState } from "../../../code/kubelet/prober/worker.ts";

export function countResult(
  state: RunState,
  result: Result,
  thresholds: { successThreshold: number; failureThreshold: number },
): { state: RunState; publish: boolean } {
  const resultRun = state.lastResult === result ? state.resultRun + 1 : 1;
  const below =
    result === "Success" ? resultRun < thresholds.successThreshold : resultRun < thresholds.failureThreshold;
  return { state: { lastResult: result, resultRun }, publish: !below };
}

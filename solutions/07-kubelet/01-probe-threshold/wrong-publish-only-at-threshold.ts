// Mistake: a result is published only on the probe that reaches the threshold, not on the ones
// after it. Plausible: "publish once, when the verdict changes; after that it is a repeat". But the
// worker's published value can be replaced behind its back: a restarted container gets the initial
// value (readiness: Failure) while the run of passes goes on, and only the next publish puts Ready
// back. With this version a container that restarted stays not Ready for good.
import type { Result } from "../../../code/kubelet/prober/results/results-manager.ts";
import type { RunState } from "../../../code/kubelet/prober/worker.ts";

export function countResult(
  state: RunState,
  result: Result,
  thresholds: { successThreshold: number; failureThreshold: number },
): { state: RunState; publish: boolean } {
  const resultRun = state.lastResult === result ? state.resultRun + 1 : 1;
  const threshold =
    result === "Failure"
      ? thresholds.failureThreshold
      : result === "Success"
        ? thresholds.successThreshold
        : 1;
  return { state: { lastResult: result, resultRun }, publish: resultRun === threshold };
}

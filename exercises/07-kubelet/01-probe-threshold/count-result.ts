/**
 * Exercise: the probe worker's run counting — one probe result in, the new run and whether the
 * result is now published. README.md has the rules.
 *
 * The test runs your function inside the course's real probe Worker
 * (code/kubelet/prober/worker.ts) on a fake clock: it decides when a readiness probe flips a
 * container's readiness and when a liveness probe gets it killed.
 */
import type { Result } from "../../../code/kubelet/prober/results/results-manager.ts";
import type { RunState } from "../../../code/kubelet/prober/worker.ts";

export function countResult(
  state: RunState,
  result: Result,
  thresholds: { successThreshold: number; failureThreshold: number },
): { state: RunState; publish: boolean } {
  throw new Error(
    `TODO: countResult(run of ${state.resultRun} × ${state.lastResult}, ${result}, success ${thresholds.successThreshold} / failure ${thresholds.failureThreshold})`,
  );
}

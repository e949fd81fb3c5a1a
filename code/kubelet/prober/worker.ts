/**
 * The probe worker — one per (pod, container, probe type), probing on its own period.
 * Mirrors kubernetes/kubernetes pkg/kubelet/prober/worker.go.
 *
 * Solves:
 * - a single failed probe must not restart a container or pull it out of a Service, nor a single
 *   pass put it back: the worker counts runs of equal results and publishes one only when the run
 *   reaches failureThreshold (Failure) or successThreshold (Success) — `countResult` below.
 * - a slow starter must not be killed by its liveness probe while it boots: until the container
 *   is `started` (the startup probe passed) only the startup probe runs; after that only the others.
 * - a container whose liveness or startup probe failed is about to be killed: probing it again
 *   (an exec into a stopping container) is pointless and was once harmful (issue 21751), so the
 *   worker holds until it sees a new container ID.
 * - what the kubelet acts on before any verdict: readiness starts at Failure (not Ready until a
 *   probe says so), liveness at Success (alive until proven dead), startup at Unknown.
 *
 * Invariants:
 * - the first probe runs as the worker starts (doProbe before the first tick), not a period later,
 *   unless the kubelet itself started less than a period ago: then a random part of the period
 *   first, so a restarted kubelet's hundreds of workers do not probe in one burst.
 * - `resultRun` counts consecutive equal probe results; a result is published (results manager
 *   `set`) only at its threshold, and every run after that while it holds.
 * - the worker stops for good when the pod is Succeeded/Failed, when its container terminated
 *   and will not restart (restartPolicy Never), or on `stop()`; it then removes its result.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/prober/worker.go (worker, newWorker, run, stop, doProbe)
 * @upstream kubernetes/kubernetes pkg/kubelet/prober/prober_manager.go (probeType, manualTriggerCh use in UpdatePodStatus)
 * @chapter 07-kubelet
 */

import type { Container, Pod, PodStatus, Probe } from "../../api/core.ts";
import { type Clock, sleep } from "../../client/util/clock.ts";
import type { Result, ResultsManager } from "./results/results-manager.ts";

/** Upstream's probeType, spelled as its String() so events read "Liveness probe failed: …". */
export type ProbeType = "Liveness" | "Readiness" | "Startup";

// #region count-result
export interface RunState {
  lastResult: Result;
  resultRun: number;
}

/**
 * Counts one probe result into the run; `publish` says whether the run reached its threshold
 * (Unknown results have none: they are published at once).
 */
export function countResult(
  state: RunState,
  result: Result,
  thresholds: { successThreshold: number; failureThreshold: number },
): { state: RunState; publish: boolean } {
  const resultRun = state.lastResult === result ? state.resultRun + 1 : 1;
  const below =
    (result === "Failure" && resultRun < thresholds.failureThreshold) ||
    (result === "Success" && resultRun < thresholds.successThreshold);
  return { state: { lastResult: result, resultRun }, publish: !below };
}
// #endregion count-result

/** One probe run as the prober does it; a rejection is a prober error and the run is discarded. */
export type ProbeFunc = (
  probeType: ProbeType,
  pod: Pod,
  status: PodStatus,
  container: Container,
  containerID: string,
) => Promise<Result>;

export interface WorkerOptions {
  probeType: ProbeType;
  pod: Pod;
  container: Container;
  resultsManager: ResultsManager;
  /** The status manager's view of the pod, or undefined if it has none yet. */
  getPodStatus: (podUID: string) => PodStatus | undefined;
  probe: ProbeFunc;
  clock: Clock;
  /** When the prober manager (the kubelet) started, on `clock`. */
  managerStart: number;
  random?: () => number;
  /** Called once when the worker exits (the manager's removeWorker). */
  onExit?: () => void;
  /** How a result is counted into the run; the real `countResult` unless a test (exercise 7.1) plugs in its own. */
  countResult?: typeof countResult;
}

const initialValue: Record<ProbeType, Result> = {
  Readiness: "Failure",
  Liveness: "Success",
  Startup: "Unknown",
};

export class Worker {
  readonly spec: Probe;
  readonly initialValue: Result;
  private containerID = "";
  private run_: RunState = { lastResult: "Unknown", resultRun: 0 };
  private onHold = false;
  private stopped = false;
  private triggered = false;
  private wake?: () => void;
  private readonly abort = new AbortController();

  constructor(private readonly o: WorkerOptions) {
    const spec = {
      Liveness: o.container.livenessProbe,
      Readiness: o.container.readinessProbe,
      Startup: o.container.startupProbe,
    }[o.probeType];
    if (!spec) throw new Error(`container ${o.container.name} has no ${o.probeType.toLowerCase()} probe`);
    this.spec = spec;
    this.initialValue = initialValue[o.probeType];
  }

  /** The result run so far (for tests and the chapter's walk-through). */
  get resultRun(): RunState {
    return { ...this.run_ };
  }

  // #region run
  /** Probes until told to stop or the container is gone for good; resolves when the worker exits. */
  async run(): Promise<void> {
    const { clock } = this.o;
    const period = (this.spec.periodSeconds ?? 10) * 1000;
    if (period > clock.now() - this.o.managerStart) {
      await sleep(clock, (this.o.random ?? Math.random)() * period, this.abort.signal);
    }
    // A time.Ticker: ticks at start + k·period whatever the probes cost; a tick that comes while
    // a probe runs waits (one is kept), later ones are dropped.
    let nextTick = clock.now() + period;
    try {
      while (!this.stopped && (await this.doProbe())) {
        if (this.stopped) break;
        if (this.triggered) {
          this.triggered = false;
          continue;
        }
        if (clock.now() >= nextTick) {
          nextTick += Math.ceil((clock.now() - nextTick + 1) / period) * period;
          continue;
        }
        await new Promise<void>((resolve) => {
          const timer = clock.afterFunc(nextTick - clock.now(), () => {
            nextTick += period;
            resolve();
          });
          this.wake = () => {
            timer.stop();
            resolve();
          };
        });
        this.wake = undefined;
        this.triggered = false;
      }
    } finally {
      if (this.containerID) this.o.resultsManager.remove(this.containerID);
      this.o.onExit?.();
    }
  }
  // #endregion run

  /** Stops the worker; safe to call more than once. */
  stop(): void {
    this.stopped = true;
    this.abort.abort();
    this.wake?.();
  }

  /** Probes now instead of at the next tick (the manager does this for a readiness probe not yet run). */
  trigger(): void {
    this.triggered = true;
    this.wake?.();
  }

  // #region do-probe
  /** Probes once and records the result; returns whether the worker should keep going. */
  async doProbe(): Promise<boolean> {
    const { pod, container, probeType, resultsManager } = this.o;
    const status = this.o.getPodStatus(pod.metadata.uid ?? "");
    if (!status) return true; // not created yet, or already deleted
    if (status.phase === "Failed" || status.phase === "Succeeded") return false;

    const c =
      find(status.containerStatuses, container.name) ?? find(status.initContainerStatuses, container.name);
    if (!c) return true; // the container has no ID yet: wait for more information

    if (c.containerID !== this.containerID) {
      if (this.containerID) resultsManager.remove(this.containerID);
      this.containerID = c.containerID!;
      resultsManager.set(this.containerID, this.initialValue, pod);
      this.onHold = false; // a new container: resume probing
    }
    if (this.onHold) return true;

    if (!c.state?.running) {
      resultsManager.set(this.containerID, "Failure", pod);
      // Keep the worker only if the container may come back.
      return !c.state?.terminated || pod.spec.restartPolicy !== "Never";
    }

    if (pod.metadata.deletionTimestamp && (probeType === "Liveness" || probeType === "Startup")) {
      // The pod is shutting down: a last Success keeps the kubelet from killing it for a probe.
      resultsManager.set(this.containerID, "Success", pod);
      return false;
    }

    const startedAt = Date.parse(c.state.running.startedAt ?? "");
    // Whole seconds, truncated, as upstream's int32(time.Since(startedAt).Seconds()).
    if (Math.trunc((this.o.clock.now() - startedAt) / 1000) < (this.spec.initialDelaySeconds ?? 0))
      return true;

    // #region startup-gate
    if (c.started) {
      if (probeType === "Startup") return true; // done; kept for the container's next start
    } else if (probeType !== "Startup") {
      return true; // liveness and readiness wait for the startup probe
    }
    // #endregion startup-gate

    let result: Result;
    try {
      result = await this.o.probe(probeType, pod, status, container, this.containerID);
    } catch {
      return true; // a prober error: the run is thrown away, not counted
    }

    const counted = (this.o.countResult ?? countResult)(this.run_, result, {
      successThreshold: this.spec.successThreshold ?? 1,
      failureThreshold: this.spec.failureThreshold ?? 3,
    });
    this.run_ = counted.state;
    if (!counted.publish) return true;

    resultsManager.set(this.containerID, result, pod);
    if ((probeType === "Liveness" || probeType === "Startup") && result === "Failure") {
      // The kubelet will kill this container: hold until a new one appears.
      this.onHold = true;
      this.run_.resultRun = 0;
    }
    return true;
  }
  // #endregion do-probe
}

function find<T extends { name: string; containerID?: string }>(
  list: T[] | undefined,
  name: string,
): T | undefined {
  const s = list?.find((x) => x.name === name);
  return s?.containerID ? s : undefined;
}

/**
 * The prober manager — starts and stops the probe workers of every pod, and folds their results
 * into the container statuses the kubelet reports.
 * Mirrors kubernetes/kubernetes pkg/kubelet/prober/prober_manager.go.
 *
 * Solves:
 * - each probe runs on its own period, independent of the sync loop: one worker per (pod UID,
 *   container, probe type), started when the pod is first synced and stopped when it goes.
 * - the kubelet needs "is this container ready / started?" at every sync without probing then:
 *   the workers leave their verdicts in three results managers, and `updatePodStatus` reads them
 *   into `containerStatuses[].ready` and `.started`.
 * - a pod just created must not wait a whole period to become Ready: a container with a readiness
 *   probe and no result yet triggers its worker at once.
 *
 * Invariants:
 * - at most one worker per key; `addPod` for a pod it already probes does nothing new.
 * - `started` is true for a running container whose startup probe succeeded or that has none;
 *   `ready` is true only for a running, started container whose readiness probe succeeded or that
 *   has none. An init container is ready once it exited 0 (a restartable one, as a regular one).
 * - liveness results reach the sync loop only as Failure (a kill); readiness and startup results
 *   on every change.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/prober/prober_manager.go (Manager, manager, NewManager, AddPod, StopLivenessAndStartup, RemovePod, CleanupPods, UpdatePodStatus, getWorker, removeWorker, workerCount)
 * @chapter 07-kubelet
 */

import type { Container, Pod, PodStatus } from "../../api/core.ts";
import { type Clock, realClock } from "../../client/util/clock.ts";
import { isRestartableInitContainer } from "../container/helpers.ts";
import { ResultsManager } from "./results/results-manager.ts";
import { type ProbeFunc, type ProbeType, Worker } from "./worker.ts";

interface ProbeKey {
  podUID: string;
  containerName: string;
  probeType: ProbeType;
}
const keyString = (k: ProbeKey) => `${k.podUID}/${k.containerName}/${k.probeType}`;

export interface ProberManagerOptions {
  /** The status manager's view of a pod (GetPodStatus). */
  getPodStatus: (podUID: string) => PodStatus | undefined;
  /** One probe run (Prober.probe). */
  probe: ProbeFunc;
  clock?: Clock;
  random?: () => number;
  /**
   * The three results managers, when made outside (upstream's NewMainKubelet makes them first and
   * hands the liveness and startup ones to the runtime manager too, which kills on Failure).
   */
  livenessManager?: ResultsManager;
  readinessManager?: ResultsManager;
  startupManager?: ResultsManager;
}

export class ProberManager {
  readonly livenessManager: ResultsManager;
  readonly readinessManager: ResultsManager;
  readonly startupManager: ResultsManager;
  private workers = new Map<string, { worker: Worker; done: Promise<void> }>();
  private readonly clock: Clock;
  private readonly start: number;

  constructor(private readonly o: ProberManagerOptions) {
    this.clock = o.clock ?? realClock;
    this.start = this.clock.now();
    this.livenessManager = o.livenessManager ?? new ResultsManager();
    this.readinessManager = o.readinessManager ?? new ResultsManager();
    this.startupManager = o.startupManager ?? new ResultsManager();
  }

  private resultsFor(t: ProbeType): ResultsManager {
    return t === "Liveness"
      ? this.livenessManager
      : t === "Readiness"
        ? this.readinessManager
        : this.startupManager;
  }

  // #region add-pod
  /** Starts a worker for every probe of the pod's containers that has none yet. */
  addPod(pod: Pod): void {
    const uid = pod.metadata.uid ?? "";
    const containers: Container[] = [
      ...(pod.spec.initContainers ?? []).filter(isRestartableInitContainer),
      ...pod.spec.containers,
    ];
    for (const c of containers) {
      const probes: [ProbeType, unknown][] = [
        ["Startup", c.startupProbe],
        ["Readiness", c.readinessProbe],
        ["Liveness", c.livenessProbe],
      ];
      for (const [probeType, spec] of probes) {
        if (!spec) continue;
        const key = { podUID: uid, containerName: c.name, probeType };
        const k = keyString(key);
        if (this.workers.has(k)) continue; // "Probe already exists for container"
        const worker = new Worker({
          probeType,
          pod,
          container: c,
          resultsManager: this.resultsFor(probeType),
          getPodStatus: this.o.getPodStatus,
          probe: this.o.probe,
          clock: this.clock,
          managerStart: this.start,
          random: this.o.random,
          onExit: () => {
            if (this.workers.get(k)?.worker === worker) this.workers.delete(k);
          },
        });
        this.workers.set(k, { worker, done: worker.run() });
      }
    }
  }
  // #endregion add-pod

  /** Stops the liveness and startup workers of a pod being terminated (its readiness keeps reporting). */
  stopLivenessAndStartup(pod: Pod): void {
    for (const c of pod.spec.containers) {
      for (const t of ["Liveness", "Startup"] as const) {
        this.workers
          .get(keyString({ podUID: pod.metadata.uid ?? "", containerName: c.name, probeType: t }))
          ?.worker.stop();
      }
    }
  }

  /** Stops every worker of the pod. */
  removePod(pod: Pod): void {
    const uid = pod.metadata.uid ?? "";
    for (const [k, w] of this.workers) if (k.startsWith(`${uid}/`)) w.worker.stop();
  }

  /** Stops the workers of every pod not in `desiredPods` (housekeeping). */
  cleanupPods(desiredPods: Set<string>): void {
    for (const [k, w] of this.workers) {
      if (!desiredPods.has(k.slice(0, k.indexOf("/")))) w.worker.stop();
    }
  }

  workerCount(): number {
    return this.workers.size;
  }

  // #region update-pod-status
  /** Sets `started` and `ready` of each container status from the probe results. */
  updatePodStatus(pod: Pod, status: PodStatus): void {
    const uid = pod.metadata.uid ?? "";
    const has = (name: string, t: ProbeType) =>
      this.workers.get(keyString({ podUID: uid, containerName: name, probeType: t }));
    for (const c of status.containerStatuses ?? []) {
      let started: boolean;
      if (!c.state?.running) started = false;
      else {
        const r = c.containerID ? this.startupManager.get(c.containerID) : undefined;
        started = r !== undefined ? r === "Success" : !has(c.name, "Startup"); // no startup probe: started
      }
      c.started = started;
      if (!started) continue;
      let ready: boolean;
      const r = c.containerID ? this.readinessManager.get(c.containerID) : undefined;
      if (r === "Success") ready = true;
      else {
        const w = has(c.name, "Readiness");
        ready = !w; // no readiness probe: ready once running
        // A probe that has not answered yet runs now instead of a period later.
        if (w && r === undefined) w.worker.trigger();
      }
      c.ready = ready;
    }
    const initSpecs = pod.spec.initContainers ?? [];
    for (const c of status.initContainerStatuses ?? []) {
      const spec = initSpecs.find((s) => s.name === c.name);
      if (spec && isRestartableInitContainer(spec) && c.state?.running) {
        const startup = c.containerID ? this.startupManager.get(c.containerID) : undefined;
        c.started = startup !== undefined ? startup === "Success" : !has(c.name, "Startup");
        const r = c.containerID ? this.readinessManager.get(c.containerID) : undefined;
        c.ready = !!c.started && (r === "Success" || (r === undefined && !has(c.name, "Readiness")));
      } else {
        c.ready = c.state?.terminated?.exitCode === 0; // an init container is ready once it succeeded
      }
    }
  }
  // #endregion update-pod-status

  /** Stops every worker and waits for them to exit. */
  async stop(): Promise<void> {
    const all = [...this.workers.values()];
    for (const w of all) w.worker.stop();
    await Promise.all(all.map((w) => w.done));
  }
}

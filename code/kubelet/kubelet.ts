/**
 * Kubelet — the node agent's loops: pod sources in, one sync loop, a worker per pod, the runtime
 * below; the PLEG, the probe workers and the status manager feeding back.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kubelet.go.
 *
 * Solves:
 * - many things can make a pod need attention — a new spec from the API server, a container
 *   that died, a probe that failed, a minute gone by, a pod nobody wants any more — and they come
 *   from different goroutines. The sync loop takes them one at a time (`syncLoopIteration`) and
 *   turns each into "sync these pods", handed to the pod workers, which do the slow work.
 * - the pod's life is split into three syncs, each retried until it succeeds: `syncPod` (make the
 *   runtime match the spec and report the status), `syncTerminatingPod` (stop every container
 *   within the grace period), `syncTerminatedPod` (final status, clean up) — kubelet-sync.ts.
 * - what the kubelet no longer knows must still be stopped: housekeeping every 2 s kills runtime
 *   pods with no config (orphans, e.g. a pod deleted while the kubelet was down), drops the
 *   workers, probes and statuses of pods gone, and removes the exited containers of pods deleted
 *   (the container GC's part: a finished pod that still exists keeps them for `kubectl logs`).
 *
 * Invariants:
 * - nothing but the pod workers calls the runtime's syncPod/killPod for a known pod, so a pod is
 *   never started and stopped at once.
 * - housekeeping does nothing until every source has delivered once (a restarted kubelet must not
 *   kill the pods it has simply not heard about yet).
 * - a mirror pod is never run; its static pod is (and its status goes to the mirror).
 *
 * What upstream does differently: admission (canAdmitPod: resources, node affinity, taints),
 * volumes, cgroups, secrets and the eviction manager are not built; `canRunPod` always admits.
 * Go's select picks among ready channels at random; this loop takes them in arrival order.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet.go (Kubelet, Run, syncLoop, syncLoopIteration, handleProbeSync, HandlePodAdditions, HandlePodUpdates, HandlePodRemoves, HandlePodReconcile, HandlePodSyncs, getPodsToSync, isSyncPodWorthy, handleMirrorPod, housekeepingPeriod)
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (HandlePodCleanups, deleteOrphanedMirrorPods)
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_gc.go (evictContainers, evictSandboxes: a pod's content removed once ShouldPodContentBeRemoved)
 * @upstream kubernetes/kubernetes pkg/kubelet/status/status_manager.go (NeedToReconcilePodReadiness)
 * @chapter 07-kubelet
 */

import type { Pod } from "../api/core.ts";
import type { Clientset } from "../client/kubernetes/clientset.ts";
import { StrategicMergePatchType } from "../client/rest/request.ts";
import { type Clock, realClock } from "../client/util/clock.ts";
import type { Backoff } from "../client/util/flowcontrol/backoff.ts";
import type { EventRecorder } from "../controllers/pod-control.ts";
import { type ComponentTracerProvider, noopProvider } from "../tracing/provider.ts";
import { podAttributes, startSpan } from "../tracing/tracing.ts";
import { newSourceApiserver } from "./config/apiserver.ts";
import { PodConfig } from "./config/config.ts";
import { newSourceFile } from "./config/file.ts";
import { Cache } from "./container/cache.ts";
import type { Runtime } from "./container/runtime.ts";
import { type GenerateAPIPodStatus, KubeletSyncer, type ReasonCacheLike } from "./kubelet-sync.ts";
import { newCrashLoopBackOff } from "./kuberuntime/crash-loop-backoff.ts";
import { GenericPLEG, type PodLifecycleEvent } from "./pleg/generic.ts";
import { MirrorClient } from "./pod/mirror-client.ts";
import { PodManager, podFullName } from "./pod/pod-manager.ts";
import { PodWorkers, type SyncPodType } from "./pod-workers.ts";
import type { ExecSync } from "./prober/probe/exec.ts";
import type { Dial } from "./prober/probe/probe.ts";
import { Prober } from "./prober/prober.ts";
import { ProberManager } from "./prober/prober-manager.ts";
import type { ResultsManager, Update } from "./prober/results/results-manager.ts";
import type { ProbeFunc } from "./prober/worker.ts";
import { GeneratePodReadyCondition } from "./status/generate.ts";
import { type PodStatusClient, StatusManager } from "./status/status-manager.ts";
import { ApiserverSource, FileSource, isMirrorPod, isStaticPod, type PodUpdate } from "./types/pod-update.ts";
import { WorkQueue } from "./util/queue/work-queue.ts";

/** kubelet.go: housekeeping every 2 s; the sync loop's ticker every 1 s. */
export const housekeepingPeriodMs = 2000;
export const syncTickPeriodMs = 1000;

/**
 * `generateAPIPodStatus(pod, podStatus, podIsTerminal, deps)` is kubelet_pods.go's (K1's, in
 * code/kubelet/kubelet-pods.ts); the kubelet passes `{ reasonCache, nodeIPs, clock }` as deps.
 */
export interface KubeletOptions extends GenerateAPIPodStatus {
  nodeName: string;
  /** Absent: a standalone kubelet (static pods only, no status written). */
  clientset?: Clientset;
  runtime: Runtime;
  clock?: Clock;
  /** Events on pods (source component "kubelet", host = nodeName). */
  recorder?: EventRecorder;
  /** --root-dir: where the kubelet keeps its state. */
  rootDir: string;
  /** --pod-manifest-path: static pods. */
  podManifestPath?: string;
  reasonCache?: ReasonCacheLike;
  nodeIPs?: string[];
  /** The runtime's ExecSync for exec probes. */
  execSync?: (containerID: string) => ExecSync;
  /** Where httpGet and tcpSocket probes really connect for a pod's address (the pod network). */
  dial?: Dial;
  /** One probe run; default: a Prober over `execSync` recording events with `recorder`. */
  probe?: ProbeFunc;
  /** The probe results managers, when the runtime manager must share them (it reads liveness and startup). */
  livenessManager?: ResultsManager;
  readinessManager?: ResultsManager;
  startupManager?: ResultsManager;
  /** --sync-frequency (default 1 min), --file-check-frequency (20 s), the PLEG's relist period (1 s). */
  syncFrequencyMs?: number;
  fileCheckFrequencyMs?: number;
  relistPeriodMs?: number;
  housekeepingPeriodMs?: number;
  random?: () => number;
  onError?: (err: unknown) => void;
  /** chapter 8: KubeletConfiguration `tracing`'s provider: the syncs and status writes as spans. */
  tracerProvider?: ComponentTracerProvider;
}

/** chapter 8: tracing — the kubelet's instrumentation scope (upstream's instrumentationScope). */
const tracingScope = "k8s.io/kubernetes/pkg/kubelet";

/** SyncPodType.String(): what upstream's syncPod span records as k8s.pod.update_type. */
const updateTypeString: Record<SyncPodType, string> = {
  SyncPodSync: "sync",
  SyncPodUpdate: "update",
  SyncPodCreate: "create",
  SyncPodKill: "kill",
};

type LoopInput =
  | { kind: "config"; update: PodUpdate }
  | { kind: "pleg"; event: PodLifecycleEvent }
  | { kind: "sync" }
  | { kind: "housekeeping" }
  | { kind: "probe"; probe: "liveness" | "readiness" | "startup"; update: Update };

const noReasonCache: ReasonCacheLike = { update: () => {}, remove: () => {} };

export class Kubelet {
  readonly nodeName: string;
  readonly podManager = new PodManager();
  readonly podCache = new Cache();
  readonly podConfig: PodConfig;
  readonly podWorkers: PodWorkers;
  readonly pleg: GenericPLEG;
  readonly statusManager: StatusManager;
  readonly probeManager: ProberManager;
  readonly workQueue: WorkQueue;
  readonly crashLoopBackOff: Backoff;
  readonly syncer: KubeletSyncer;
  private readonly clock: Clock;
  private readonly reasonCache: ReasonCacheLike;
  private readonly mirrorClient?: MirrorClient;
  private readonly sources: string[] = [];
  private readonly onError: (err: unknown) => void;

  private inputs: LoopInput[] = [];
  private wakeLoop?: () => void;
  private stopped = true;
  private abort = new AbortController();
  private background: Promise<unknown>[] = [];
  private timers: { stop(): boolean }[] = [];
  private loop?: Promise<void>;
  private unsubscribe: (() => void)[] = [];

  constructor(private readonly o: KubeletOptions) {
    this.nodeName = o.nodeName;
    this.clock = o.clock ?? realClock;
    this.onError = o.onError ?? (() => {});
    this.reasonCache = o.reasonCache ?? noReasonCache;
    this.crashLoopBackOff = newCrashLoopBackOff(this.clock);
    this.podConfig = new PodConfig(this.clock);
    const tp = o.tracerProvider ?? noopProvider; // chapter 8
    this.workQueue = new WorkQueue(this.clock);
    if (o.clientset) this.sources.push(ApiserverSource);
    if (o.podManifestPath) this.sources.push(FileSource);
    this.podWorkers = new PodWorkers({
      // chapter 8: tracing — each sync in its span, named and attributed as upstream's SyncPod,
      // SyncTerminatingPod and SyncTerminatedPod start theirs (kubelet.go).
      podSyncer: {
        syncPod: (signal, updateType, pod, ...rest) =>
          startSpan(
            tp,
            tracingScope,
            "syncPod",
            () => ({
              ...podAttributes(pod),
              "k8s.pod": `${pod.metadata.namespace}/${pod.metadata.name}`,
              "k8s.pod.update_type": updateTypeString[updateType],
            }),
            () => this.syncer.syncPod(signal, updateType, pod, ...rest),
          ),
        syncTerminatingPod: (signal, pod, ...rest) =>
          startSpan(
            tp,
            tracingScope,
            "syncTerminatingPod",
            () => podAttributes(pod),
            () => this.syncer.syncTerminatingPod(signal, pod, ...rest),
          ),
        syncTerminatingRuntimePod: (...a) => this.syncer.syncTerminatingRuntimePod(...a),
        syncTerminatedPod: (signal, pod, ...rest) =>
          startSpan(
            tp,
            tracingScope,
            "syncTerminatedPod",
            () => podAttributes(pod),
            () => this.syncer.syncTerminatedPod(signal, pod, ...rest),
          ),
      },
      podCache: this.podCache,
      workQueue: this.workQueue,
      clock: this.clock,
      resyncIntervalMs: o.syncFrequencyMs,
      random: o.random,
      onError: (_uid, err) => this.onError(err),
    });
    this.pleg = new GenericPLEG({
      runtime: o.runtime,
      cache: this.podCache,
      clock: this.clock,
      relistPeriodMs: o.relistPeriodMs,
      onError: this.onError,
    });
    const cs = o.clientset;
    const client: PodStatusClient | undefined = cs && {
      get: (ns, name) => cs.coreV1.pods(ns).get(name),
      patchStatus: (ns, name, patch) =>
        cs.coreV1.pods(ns).patch(name, StrategicMergePatchType, patch, {}, "status"),
      deleteFinal: async (ns, name, uid) => {
        await cs.coreV1.pods(ns).delete(name, { gracePeriodSeconds: 0, preconditions: { uid } });
      },
    };
    this.statusManager = new StatusManager({
      client,
      tracerProvider: o.tracerProvider, // chapter 8
      podManager: {
        getPodByUID: (uid) => this.podManager.getPodByUID(uid),
        getMirrorPodByPod: (pod) => this.podManager.getMirrorPodByPod(pod),
        mirrorUIDOf: (uid) => this.podManager.mirrorUIDOf(uid, isStaticPod),
        translatePodUID: (uid) => this.podManager.translatePodUID(uid),
      },
      shouldDelayTransitioningPodToTerminal: (pod) =>
        this.podWorkers.couldHaveRunningContainers(this.podManager.translatePodUID(pod.metadata.uid ?? "")),
      clock: this.clock,
      onError: this.onError,
    });
    const prober = new Prober({
      execSync:
        o.execSync ??
        (() => async () => {
          throw new Error("exec probes need the runtime's ExecSync");
        }),
      recordEvent: (pod, _c, type, reason, message) => o.recorder?.(pod, type, reason, message),
      dial: o.dial,
    });
    this.probeManager = new ProberManager({
      getPodStatus: (uid) => this.statusManager.getPodStatus(uid),
      probe: o.probe ?? ((t, pod, status, c, id) => prober.probe(t, pod, status, c, id)),
      clock: this.clock,
      random: o.random,
      livenessManager: o.livenessManager,
      readinessManager: o.readinessManager,
      startupManager: o.startupManager,
    });
    if (cs) {
      this.mirrorClient = new MirrorClient(cs, o.nodeName, async () => {
        try {
          return (await cs.coreV1.nodes().get(o.nodeName)).metadata.uid;
        } catch {
          return undefined;
        }
      });
    }
    this.syncer = new KubeletSyncer({
      runtime: o.runtime,
      statusManager: this.statusManager,
      probeManager: this.probeManager,
      mirrorClient: this.mirrorClient,
      reasonCache: this.reasonCache,
      crashLoopBackOff: this.crashLoopBackOff,
      nodeIPs: o.nodeIPs,
      clock: this.clock,
      onError: this.onError,
      generateAPIPodStatus: (pod, podStatus, podIsTerminal, deps) =>
        o.generateAPIPodStatus(pod, podStatus, podIsTerminal, deps),
    });
  }

  /** The pods this kubelet runs (the kubelet server's /pods). */
  getPods(): Pod[] {
    return this.podManager.getPods();
  }

  // #region run
  /** Starts the sources, the PLEG, the status manager, the probe results feed and the sync loop. */
  run(): void {
    if (!this.stopped) return;
    this.stopped = false;
    this.abort = new AbortController();
    const signal = this.abort.signal;
    this.unsubscribe.push(
      this.podConfig.onUpdate((update) => this.push({ kind: "config", update })),
      this.pleg.watch((event) => this.push({ kind: "pleg", event })),
      this.probeManager.livenessManager.onUpdate((update) =>
        this.push({ kind: "probe", probe: "liveness", update }),
      ),
      this.probeManager.readinessManager.onUpdate((update) =>
        this.push({ kind: "probe", probe: "readiness", update }),
      ),
      this.probeManager.startupManager.onUpdate((update) =>
        this.push({ kind: "probe", probe: "startup", update }),
      ),
    );
    if (this.o.clientset) {
      const push = this.podConfig.channel(ApiserverSource);
      this.background.push(
        newSourceApiserver(this.o.clientset, this.nodeName, push, signal, { clock: this.clock }),
      );
    }
    if (this.o.podManifestPath) {
      const push = this.podConfig.channel(FileSource);
      this.background.push(
        newSourceFile(this.o.podManifestPath, this.nodeName, push, signal, {
          clock: this.clock,
          periodMs: this.o.fileCheckFrequencyMs,
          onError: this.onError,
        }),
      );
    }
    this.pleg.start();
    this.statusManager.start();
    this.ticker(syncTickPeriodMs, { kind: "sync" });
    this.ticker(this.o.housekeepingPeriodMs ?? housekeepingPeriodMs, { kind: "housekeeping" });
    this.loop = this.syncLoop();
  }

  /** Stops everything run() started and waits for it; no timer is left behind. */
  async stop(): Promise<void> {
    if (this.stopped) return;
    this.stopped = true;
    this.abort.abort();
    for (const t of this.timers) t.stop();
    this.timers = [];
    for (const u of this.unsubscribe) u();
    this.unsubscribe = [];
    this.wakeLoop?.();
    await this.loop;
    await this.pleg.stop();
    await this.probeManager.stop();
    await this.podWorkers.stop();
    await this.statusManager.stop();
    await Promise.allSettled(this.background);
    this.background = [];
  }
  // #endregion run

  /** A Go ticker: fires every period; a tick not yet taken is not doubled (channel of one). */
  private ticker(periodMs: number, input: LoopInput): void {
    const ticker = { timer: undefined as { stop(): boolean } | undefined };
    const tick = () => {
      if (this.stopped) return;
      if (!this.inputs.some((i) => i.kind === input.kind)) this.push(input);
      ticker.timer = this.clock.afterFunc(periodMs, tick);
    };
    ticker.timer = this.clock.afterFunc(periodMs, tick);
    this.timers.push({ stop: () => ticker.timer?.stop() ?? false });
  }

  private push(input: LoopInput): void {
    if (this.stopped) return;
    this.inputs.push(input);
    this.wakeLoop?.();
  }

  private async syncLoop(): Promise<void> {
    while (!this.stopped) {
      const input = this.inputs.shift();
      if (!input) {
        await new Promise<void>((resolve) => {
          this.wakeLoop = resolve;
        });
        this.wakeLoop = undefined;
        continue;
      }
      try {
        await this.syncLoopIteration(input);
      } catch (err) {
        this.onError(err);
      }
    }
  }

  // #region sync-loop-iteration
  /** One turn of the loop: what came in decides which pods to hand to their workers. */
  async syncLoopIteration(input: LoopInput): Promise<void> {
    switch (input.kind) {
      case "config": {
        const { pods, op } = input.update;
        if (op === "ADD") this.handlePodAdditions(pods);
        else if (op === "UPDATE" || op === "DELETE")
          this.handlePodUpdates(pods); // DELETE: graceful, as an update
        else if (op === "REMOVE") this.handlePodRemoves(pods);
        else if (op === "RECONCILE") this.handlePodReconcile(pods);
        return;
      }
      case "pleg": {
        // A container started or died: sync its pod (a removal alone is not worth it).
        if (input.event.type !== "ContainerRemoved") {
          const pod = this.podManager.getPodByUID(input.event.id);
          if (pod) this.handlePodSyncs([pod]);
        }
        return;
      }
      case "sync": {
        // Pods due in the work queue: their resync interval or backoff has passed.
        const due = new Set(this.workQueue.getWork());
        const pods = this.podManager.getPods().filter((p) => due.has(p.metadata.uid ?? ""));
        if (pods.length) this.handlePodSyncs(pods);
        return;
      }
      case "probe": {
        const { update, probe } = input;
        if (probe === "liveness") {
          // The runtime manager kills a container whose liveness failed (on the next SyncPod).
          if (update.result === "Failure") this.handleProbeSync(update);
        } else if (probe === "readiness") {
          this.statusManager.setContainerReadiness(
            update.podUID,
            update.containerID,
            update.result === "Success",
          );
          this.handleProbeSync(update);
        } else {
          this.statusManager.setContainerStartup(
            update.podUID,
            update.containerID,
            update.result === "Success",
          );
          this.handleProbeSync(update);
        }
        return;
      }
      case "housekeeping": {
        if (!this.podConfig.seenAllSources(this.sources)) return; // sources not ready yet
        await this.handlePodCleanups();
        return;
      }
    }
  }
  // #endregion sync-loop-iteration

  private handleProbeSync(update: Update): void {
    const pod = this.podManager.getPodByUID(update.podUID);
    if (pod) this.handlePodSyncs([pod]);
  }

  /** A mirror pod changed: sync its static pod (with the new mirror). */
  private handleMirrorPod(mirror: Pod): void {
    const pod = this.podManager.getPodByMirrorPod(mirror);
    if (pod)
      this.podWorkers.updatePod({
        updateType: "SyncPodUpdate",
        pod,
        mirrorPod: mirror,
        startTime: this.clock.now(),
      });
  }

  handlePodAdditions(pods: Pod[]): void {
    const sorted = [...pods].sort((a, b) =>
      (a.metadata.creationTimestamp ?? "").localeCompare(b.metadata.creationTimestamp ?? ""),
    );
    for (const pod of sorted) {
      this.podManager.updatePod(pod);
      if (isMirrorPod(pod)) {
        this.handleMirrorPod(pod);
        continue;
      }
      // (Admission would reject here a pod the node cannot run.)
      const mirrorPod = this.podManager.getMirrorPodByPod(pod);
      this.podWorkers.updatePod({ updateType: "SyncPodCreate", pod, mirrorPod, startTime: this.clock.now() });
    }
  }

  handlePodUpdates(pods: Pod[]): void {
    for (const pod of pods) {
      this.podManager.updatePod(pod);
      if (isMirrorPod(pod)) {
        this.handleMirrorPod(pod);
        continue;
      }
      const mirrorPod = this.podManager.getMirrorPodByPod(pod);
      this.podWorkers.updatePod({ updateType: "SyncPodUpdate", pod, mirrorPod, startTime: this.clock.now() });
    }
  }

  handlePodRemoves(pods: Pod[]): void {
    for (const pod of pods) {
      this.podManager.removePod(pod);
      if (isMirrorPod(pod)) {
        this.handleMirrorPod(pod);
        continue;
      }
      // deletePod: the pod left its source; stop it (with its own grace period).
      this.podWorkers.updatePod({ updateType: "SyncPodKill", pod, startTime: this.clock.now() });
    }
  }

  handlePodReconcile(pods: Pod[]): void {
    for (const pod of pods) {
      this.podManager.updatePod(pod);
      // Only the status differs. A readiness gate another controller flipped changes Ready: sync.
      if (needToReconcilePodReadiness(pod)) this.handlePodSyncs([pod]);
    }
  }

  handlePodSyncs(pods: Pod[]): void {
    for (const p of pods) {
      const pod = isMirrorPod(p) ? this.podManager.getPodByMirrorPod(p) : p;
      if (!pod) continue;
      const mirrorPod = this.podManager.getMirrorPodByPod(pod);
      this.podWorkers.updatePod({ updateType: "SyncPodSync", pod, mirrorPod, startTime: this.clock.now() });
    }
  }

  // #region housekeeping
  /** HandlePodCleanups: forget what is gone, stop what should not run. */
  async handlePodCleanups(): Promise<void> {
    const { pods: allPods, mirrorPods } = this.podManager.getPodsAndMirrorPods();
    const workingPods = this.podWorkers.syncKnownPods(allPods);

    const runningPods = await this.o.runtime.getPods(false);
    const possiblyRunning = new Set<string>([...workingPods.keys()]);
    for (const p of runningPods) possiblyRunning.add(p.id);
    this.probeManager.cleanupPods(possiblyRunning);

    const known = new Set(allPods.map((p) => p.metadata.uid ?? ""));
    for (const m of mirrorPods) known.add(m.metadata.uid ?? "");
    this.statusManager.removeOrphanedStatuses(known);

    // Mirror pods whose static pod is gone.
    if (this.mirrorClient) {
      for (const mirror of mirrorPods) {
        const fullName = podFullName(mirror);
        if (this.podManager.getPodByFullName(fullName)) continue;
        const terminating = [...this.podWorkers.podSyncStatuses.values()].some(
          (s) => s.fullname === fullName && !s.finished,
        );
        if (terminating) continue;
        await this.mirrorClient.deleteMirrorPod(fullName, mirror.metadata.uid).catch(this.onError);
      }
    }

    // The container GC's part (upstream's runs every minute): a pod's exited containers and its
    // sandboxes stay while the pod exists — `kubectl logs` of a finished pod reads them — and go
    // once it is deleted and terminated, or no worker knows it.
    for (const rp of await this.o.runtime.getPods(true)) {
      if (rp.containers.some((c) => c.state === "running")) continue;
      if (!this.podWorkers.shouldPodContentBeRemoved(rp.id)) continue;
      await this.o.runtime.removeTerminatedPod(rp.id).catch(this.onError);
    }

    // Containers running for pods no worker knows: a pod deleted while the kubelet was down, or
    // a leftover of one already forgotten. Kill them.
    for (const rp of runningPods) {
      if (workingPods.has(rp.id)) continue;
      this.podWorkers.updatePod({ updateType: "SyncPodKill", runningPod: rp });
    }
  }
  // #endregion housekeeping
}

/** status.NeedToReconcilePodReadiness: the Ready condition on the server disagrees with the readiness gates. */
export function needToReconcilePodReadiness(pod: Pod): boolean {
  if (!pod.spec.readinessGates?.length) return false;
  const conditions = pod.status?.conditions ?? [];
  const want = GeneratePodReadyCondition(
    pod.spec,
    conditions,
    pod.status?.containerStatuses,
    pod.status?.phase ?? "Pending",
  );
  const cur = conditions.find((c) => c.type === "Ready");
  return !!cur && (cur.status !== want.status || cur.message !== want.message);
}

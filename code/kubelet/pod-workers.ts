/**
 * Pod workers — one asynchronous worker per pod UID, driving each pod through
 * syncing → terminating → terminated, exactly once.
 * Mirrors kubernetes/kubernetes pkg/kubelet/pod_workers.go.
 *
 * Solves:
 * - updates to one pod must be applied one at a time (two concurrent syncs would start its
 *   containers twice), while different pods must not wait for each other (one slow image pull
 *   must not hold every pod on the node): a worker per UID, each with its own loop.
 * - updates arrive faster than syncs finish: only the newest pending update matters, so a worker
 *   keeps one `pendingUpdate` that later updates overwrite (Go's buffered channel of one).
 * - a pod must stop exactly once and for good: once termination is requested the pod never goes
 *   back to syncing, later updates only shorten the grace period, and a kill that shortens it
 *   cancels the sync in progress so the shorter one takes over.
 * - a worker must not act on a stale runtime view: before each sync it waits for a status newer
 *   than its previous sync (the PLEG's cache, GetNewerThan).
 *
 * Invariants:
 * - the stages only move forward: terminatingAt is set once, then terminatedAt once, then
 *   `finished`; a finished pod's worker has exited and ignores every update until
 *   `syncKnownPods` forgets it (the pod left the config).
 * - `gracePeriod` (once set) never grows (calculateEffectiveGracePeriod) and is at least 1 s.
 * - after each sync the pod is enqueued in the work queue: at once after a phase change, after
 *   the resync interval (jittered ×1.5) after success, after the backoff period after an error.
 *
 * What upstream does differently: Go cancels a sync through its context all the way down to the
 * CRI call; our Runtime methods take no signal, so a cancelled SyncTerminatingPod returns at once
 * and the next one calls killPod again with the shorter grace period while the first still runs.
 * Admission (canRunPod, static pod full-name uniqueness in allowPodStart) is not built.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/pod_workers.go (podWorkers, UpdatePodOptions, KillPodOptions, podSyncStatus, UpdatePod, podWorkerLoop, startPodSync, completeSync, completeTerminating, completeTerminated, completeWork, calculateEffectiveGracePeriod, SyncKnownPods, CouldHaveRunningContainers, ShouldPodContentBeRemoved, requeueLastPodUpdate)
 * @upstream kubernetes/kubernetes pkg/kubelet/types/pod_update.go (SyncPodType)
 * @chapter 07-kubelet
 */

import type { PodStatus as APIPodStatus, Pod } from "../api/core.ts";
import { type Clock, realClock } from "../client/util/clock.ts";
import type { Cache } from "./container/cache.ts";
import type { PodStatus, RuntimePod } from "./container/runtime.ts";
import { jitter, type WorkQueue } from "./util/queue/work-queue.ts";

/** kubetypes.SyncPodType. */
export type SyncPodType = "SyncPodSync" | "SyncPodUpdate" | "SyncPodCreate" | "SyncPodKill";

/** Which of the three syncs a worker runs next (PodWorkerState / PodWorkType). */
export type PodWorkType = "SyncPod" | "TerminatingPod" | "TerminatedPod";

/** The status a killed pod should end with, when the one who kills knows (eviction, preemption). */
export type PodStatusFunc = (status: APIPodStatus) => void;

export interface KillPodOptions {
  podStatusFunc?: PodStatusFunc;
  /** Seconds; can only make the pod's grace period shorter. */
  podTerminationGracePeriodSecondsOverride?: number;
}

export interface UpdatePodOptions {
  updateType: SyncPodType;
  /** When the change was seen (for latency metrics). */
  startTime?: number;
  pod?: Pod;
  mirrorPod?: Pod;
  /** A pod the runtime has but the kubelet no longer knows: only ever killed. */
  runningPod?: RuntimePod;
  killPodOptions?: KillPodOptions;
}

/** What a worker calls: the kubelet's SyncPod, SyncTerminatingPod, SyncTerminatedPod. */
export interface PodSyncer {
  /** Returns true when the pod has reached a terminal phase and should now terminate. */
  syncPod(
    signal: AbortSignal,
    updateType: SyncPodType,
    pod: Pod,
    mirrorPod: Pod | undefined,
    podStatus: PodStatus,
  ): Promise<boolean>;
  syncTerminatingPod(
    signal: AbortSignal,
    pod: Pod,
    podStatus: PodStatus,
    gracePeriod: number | undefined,
    podStatusFn: PodStatusFunc | undefined,
  ): Promise<void>;
  syncTerminatingRuntimePod(signal: AbortSignal, runningPod: RuntimePod): Promise<void>;
  syncTerminatedPod(signal: AbortSignal, pod: Pod, podStatus: PodStatus): Promise<void>;
}

/** kubelet.go's defaults for the work queue delays. */
export const defaultResyncIntervalMs = 60_000; // --sync-frequency
export const backOffPeriodMs = 10_000;
export const workerResyncIntervalJitterFactor = 0.5;
export const workerBackOffPeriodJitterFactor = 0.5;
/** The grace period of a pod that names none (the API server defaults it to 30 s). */
export const defaultTerminationGracePeriodSeconds = 30;

/** A sync stopped because a newer update cancelled it (Go's context.Canceled). */
export class SyncCancelled extends Error {
  constructor() {
    super("context canceled");
  }
}

// #region pod-sync-status
/** One pod's progress (podSyncStatus). */
export interface PodSyncStatus {
  fullname: string;
  /** A worker is busy with the pod, or an update is waiting for it. */
  working: boolean;
  pendingUpdate?: UpdatePodOptions;
  activeUpdate?: UpdatePodOptions;
  syncedAt?: number;
  startedAt?: number;
  terminatingAt?: number;
  /** SyncTerminatingPod began (the pod's containers are being stopped). */
  startedTerminating: boolean;
  terminatedAt?: number;
  /** Seconds; 0 until the pod is asked to terminate. */
  gracePeriod: number;
  deleted: boolean;
  /** SyncTerminatedPod completed: the worker is gone. */
  finished: boolean;
  /** A runtime-only pod (an orphan) is being killed. */
  isRuntimePod: boolean;
  statusPostTerminating?: PodStatusFunc;
  abort?: AbortController;
}
// #endregion pod-sync-status

const workType = (s: PodSyncStatus): PodWorkType =>
  s.terminatedAt !== undefined
    ? "TerminatedPod"
    : s.terminatingAt !== undefined
      ? "TerminatingPod"
      : "SyncPod";

export const isPodPhaseTerminal = (pod: Pod | undefined) =>
  pod?.status?.phase === "Succeeded" || pod?.status?.phase === "Failed";

// #region effective-grace-period
/**
 * The grace period a terminating pod gets now: the shortest of what it already has, the API
 * server's deletionGracePeriodSeconds and the caller's override; the spec's value when none of
 * them is set; never below 1 s. `shortened` says whether it just went down.
 */
export function calculateEffectiveGracePeriod(
  current: number,
  pod: Pod | undefined,
  options: KillPodOptions | undefined,
): { gracePeriod: number; shortened: boolean } {
  let gracePeriod = current;
  const fromAPI = pod?.metadata.deletionGracePeriodSeconds;
  if (fromAPI !== undefined && (gracePeriod === 0 || fromAPI < gracePeriod)) gracePeriod = fromAPI;
  const override = options?.podTerminationGracePeriodSecondsOverride;
  if (override !== undefined && (gracePeriod === 0 || override < gracePeriod)) gracePeriod = override;
  if (gracePeriod === 0 && pod) {
    gracePeriod = pod.spec.terminationGracePeriodSeconds ?? defaultTerminationGracePeriodSeconds;
  }
  if (gracePeriod < 1) gracePeriod = 1;
  return { gracePeriod, shortened: current !== 0 && current !== gracePeriod };
}
// #endregion effective-grace-period

export interface PodWorkersOptions {
  podSyncer: PodSyncer;
  podCache: Cache;
  workQueue: WorkQueue;
  clock?: Clock;
  resyncIntervalMs?: number;
  backOffPeriodMs?: number;
  random?: () => number;
  onError?: (uid: string, err: unknown) => void;
}

export class PodWorkers {
  /** Every pod a worker has seen and not yet forgotten, by UID. */
  readonly podSyncStatuses = new Map<string, PodSyncStatus>();
  /** A running worker's wake-up, by UID (Go's podUpdates channel). */
  private podUpdates = new Map<string, () => void>();
  private workers = new Map<string, Promise<void>>();
  private readonly clock: Clock;
  /** Set once the kubelet has seen every source once (SyncKnownPods called). */
  private podsSynced = false;

  constructor(private readonly o: PodWorkersOptions) {
    this.clock = o.clock ?? realClock;
  }

  // #region update-pod
  /** Hands an update to the pod's worker, starting one if there is none. */
  updatePod(options: UpdatePodOptions): void {
    const pod = options.pod;
    const runningPod = options.runningPod;
    const uid = pod?.metadata.uid ?? runningPod?.id;
    if (!uid) return; // neither a pod nor a running pod: nothing to do
    const name = pod?.metadata.name ?? runningPod?.name ?? "";
    const namespace = pod?.metadata.namespace ?? runningPod?.namespace ?? "";
    const isRuntimePod = !pod && !!runningPod;
    const now = this.clock.now();

    let status = this.podSyncStatuses.get(uid);
    if (!status) {
      status = {
        fullname: `${name}_${namespace}`,
        working: false,
        syncedAt: now,
        startedTerminating: false,
        gracePeriod: 0,
        deleted: false,
        finished: false,
        isRuntimePod: false,
      };
      // A pod the API calls finished, whose containers the runtime no longer runs, already went
      // through termination before a kubelet restart: only its cleanup is left.
      if (
        isPodPhaseTerminal(pod) &&
        !this.o.podCache.get(uid).status.containerStatuses.some((c) => c.state === "running")
      ) {
        status.terminatingAt = now;
        status.terminatedAt = now;
        status.startedTerminating = true;
      }
      this.podSyncStatuses.set(uid, status);
    }

    if (isRuntimePod && !status.isRuntimePod) {
      // The runtime has a pod the kubelet never saw or already forgot: kill it, nothing else.
      if (status.terminatingAt === undefined) {
        status.isRuntimePod = true;
      } else if (status.terminatedAt !== undefined && status.finished) {
        return; // a leftover of a pod that finished: housekeeping will remove it
      }
    }
    if (status.finished) return; // the pod is done; only syncKnownPods forgets it

    // Has the pod just been asked to stop?
    let becameTerminating = false;
    if (status.terminatingAt === undefined) {
      if (options.updateType === "SyncPodKill" || isRuntimePod) {
        status.terminatingAt = now;
        becameTerminating = true;
      } else if (pod?.metadata.deletionTimestamp) {
        status.deleted = true;
        status.terminatingAt = now;
        becameTerminating = true;
      } else if (isPodPhaseTerminal(pod)) {
        status.terminatingAt = now;
        becameTerminating = true;
      }
    }

    let shortened = false;
    if (status.terminatedAt !== undefined) {
      if (isRuntimePod) return; // a stale runtime view of a pod already stopped
      options = { ...options, updateType: "SyncPodKill" };
    } else if (status.terminatingAt !== undefined) {
      // Once terminating, every update is a kill, and its grace period can only shrink.
      status.deleted ||= !!pod?.metadata.deletionTimestamp;
      const g = calculateEffectiveGracePeriod(
        status.gracePeriod,
        pod ?? status.activeUpdate?.pod,
        options.killPodOptions,
      );
      status.gracePeriod = g.gracePeriod;
      shortened = g.shortened;
      if (options.killPodOptions?.podStatusFunc)
        status.statusPostTerminating = options.killPodOptions.podStatusFunc;
      options = {
        ...options,
        updateType: "SyncPodKill",
        killPodOptions: {
          ...options.killPodOptions,
          podTerminationGracePeriodSecondsOverride: g.gracePeriod,
        },
      };
    }

    // A kill without a pod keeps the last pod the worker knew.
    if (!options.pod && !isRuntimePod && status.activeUpdate?.pod)
      options = { ...options, pod: status.activeUpdate.pod };

    status.pendingUpdate = options;
    status.working = true;
    const inProgress = status.abort;
    if (!this.workers.has(uid)) {
      const worker = this.podWorkerLoop(uid).finally(() => this.workers.delete(uid));
      this.workers.set(uid, worker);
    } else {
      this.podUpdates.get(uid)?.();
    }
    if ((becameTerminating || shortened) && inProgress) {
      inProgress.abort(); // the running sync gives way to the termination
    }
  }
  // #endregion update-pod

  // #region pod-worker
  /** The worker: runs the newest pending update, one at a time, until the pod is terminated. */
  private async podWorkerLoop(uid: string): Promise<void> {
    let lastSyncTime = 0;
    for (;;) {
      const status = this.podSyncStatuses.get(uid);
      if (!status) return;
      if (!status.pendingUpdate) {
        // Wait for the next update (nothing to do until UpdatePod or a requeue signals).
        await new Promise<void>((resolve) => this.podUpdates.set(uid, resolve));
        this.podUpdates.delete(uid);
        continue;
      }
      const update = status.pendingUpdate;
      status.activeUpdate = update;
      status.pendingUpdate = undefined;
      const work = workType(status);
      if (work === "SyncPod" && status.startedAt === undefined) status.startedAt = this.clock.now();
      const abort = new AbortController();
      status.abort = abort;

      let isTerminal = false;
      let err: unknown;
      try {
        let podStatus: PodStatus | undefined;
        if (!update.runningPod) {
          // Never act on a runtime view older than our own last action.
          const cached = await this.raceAbort(this.o.podCache.getNewerThan(uid, lastSyncTime), abort.signal);
          if (cached.error) throw cached.error;
          podStatus = cached.status;
        }
        const pod = update.pod!;
        if (work === "TerminatedPod") {
          await this.o.podSyncer.syncTerminatedPod(abort.signal, pod, podStatus!);
        } else if (work === "TerminatingPod") {
          status.startedTerminating = true;
          const grace = update.killPodOptions?.podTerminationGracePeriodSecondsOverride;
          if (update.runningPod)
            await this.o.podSyncer.syncTerminatingRuntimePod(abort.signal, update.runningPod);
          else
            await this.o.podSyncer.syncTerminatingPod(
              abort.signal,
              pod,
              podStatus!,
              grace,
              status.statusPostTerminating,
            );
        } else {
          isTerminal = await this.o.podSyncer.syncPod(
            abort.signal,
            update.updateType,
            pod,
            update.mirrorPod,
            podStatus!,
          );
        }
        lastSyncTime = this.clock.now();
        if (abort.signal.aborted) throw new SyncCancelled();
      } catch (e) {
        err = abort.signal.aborted ? new SyncCancelled() : e;
        lastSyncTime = this.clock.now();
      }
      status.abort = undefined;

      let phaseTransition = false;
      if (err instanceof SyncCancelled) {
        // A newer update is pending: run it now.
      } else if (err) {
        this.o.onError?.(uid, err);
      } else if (work === "TerminatedPod") {
        this.completeTerminated(uid, status);
        return; // the worker's job is done
      } else if (work === "TerminatingPod") {
        if (update.runningPod) {
          // An orphan is gone: nothing else to do and nothing to remember.
          this.podSyncStatuses.delete(uid);
          return;
        }
        status.terminatedAt = this.clock.now();
        this.requeueLastPodUpdate(status);
        phaseTransition = true;
      } else if (isTerminal) {
        // completeSync: the pod ended on its own (restartPolicy Never/OnFailure); stop it now.
        status.terminatingAt ??= this.clock.now();
        status.startedTerminating = true;
        this.requeueLastPodUpdate(status);
        phaseTransition = true;
      }
      this.completeWork(uid, status, phaseTransition, err);
    }
  }
  // #endregion pod-worker

  /** completeWork: when the pod is next due in the work queue; clears `working` when idle. */
  private completeWork(uid: string, status: PodSyncStatus, phaseTransition: boolean, err: unknown): void {
    const random = this.o.random ?? Math.random;
    if (phaseTransition) this.o.workQueue.enqueue(uid, 0);
    else if (!err || err instanceof SyncCancelled)
      this.o.workQueue.enqueue(
        uid,
        jitter(this.o.resyncIntervalMs ?? defaultResyncIntervalMs, workerResyncIntervalJitterFactor, random),
      );
    else
      this.o.workQueue.enqueue(
        uid,
        jitter(this.o.backOffPeriodMs ?? backOffPeriodMs, workerBackOffPeriodJitterFactor, random),
      );
    if (!status.pendingUpdate) status.working = false;
  }

  /** Runs the last update again as the next stage (a kill) when nothing newer is waiting. */
  private requeueLastPodUpdate(status: PodSyncStatus): void {
    if (status.pendingUpdate || !status.activeUpdate) return;
    const last = status.activeUpdate;
    const g = calculateEffectiveGracePeriod(status.gracePeriod, last.pod, last.killPodOptions);
    status.gracePeriod = g.gracePeriod;
    status.pendingUpdate = {
      ...last,
      updateType: "SyncPodKill",
      killPodOptions: { ...last.killPodOptions, podTerminationGracePeriodSecondsOverride: g.gracePeriod },
    };
    status.working = true;
  }

  private completeTerminated(uid: string, status: PodSyncStatus): void {
    status.finished = true;
    status.working = false;
    status.pendingUpdate = undefined;
    this.podUpdates.delete(uid);
  }

  private raceAbort<T>(p: Promise<T>, signal: AbortSignal): Promise<T> {
    if (signal.aborted) return Promise.reject(new SyncCancelled());
    return new Promise<T>((resolve, reject) => {
      const onAbort = () => reject(new SyncCancelled());
      signal.addEventListener("abort", onAbort, { once: true });
      p.then(
        (v) => {
          signal.removeEventListener("abort", onAbort);
          resolve(v);
        },
        (e) => {
          signal.removeEventListener("abort", onAbort);
          reject(e);
        },
      );
    });
  }

  // #region sync-known-pods
  /**
   * Housekeeping: forgets finished pods that left the config (their worker already exited) and
   * asks every other pod that left it to terminate. Returns each remaining pod's stage.
   */
  syncKnownPods(desiredPods: Pod[]): Map<string, PodWorkType> {
    this.podsSynced = true;
    const desired = new Set(desiredPods.map((p) => p.metadata.uid ?? ""));
    const out = new Map<string, PodWorkType>();
    for (const [uid, status] of this.podSyncStatuses) {
      if (!desired.has(uid)) {
        if (status.finished) {
          this.podSyncStatuses.delete(uid);
          continue;
        }
        if (status.terminatingAt === undefined && !status.isRuntimePod) {
          this.updatePod({
            updateType: "SyncPodKill",
            pod: status.activeUpdate?.pod ?? status.pendingUpdate?.pod,
          });
        }
      }
      out.set(uid, workType(status));
    }
    return out;
  }
  // #endregion sync-known-pods

  isPodKnownTerminated(uid: string): boolean {
    return this.podSyncStatuses.get(uid)?.terminatedAt !== undefined;
  }

  isPodTerminationRequested(uid: string): boolean {
    return this.podSyncStatuses.get(uid)?.terminatingAt !== undefined;
  }

  /**
   * ShouldPodContentBeRemoved: the pod's exited containers and sandboxes may go — once it is
   * deleted and terminated; a pod no worker knows, once every source was seen. Until then they
   * stay: `kubectl logs` of a finished pod reads its last container.
   */
  shouldPodContentBeRemoved(uid: string): boolean {
    const s = this.podSyncStatuses.get(uid);
    if (s) return s.deleted && s.terminatedAt !== undefined;
    return this.podsSynced;
  }

  /** False only once the pod's containers are known stopped (the status manager's final delete waits for it). */
  couldHaveRunningContainers(uid: string): boolean {
    const s = this.podSyncStatuses.get(uid);
    if (s) return s.terminatedAt === undefined;
    // Once every source was seen, a pod without a worker is known not to run.
    return !this.podsSynced;
  }

  /** The pod's containers should be stopping or stopped. */
  shouldPodContainersBeTerminating(uid: string): boolean {
    const s = this.podSyncStatuses.get(uid);
    return !s || s.terminatingAt !== undefined;
  }

  /** The pod is finished and its runtime leftovers may go. */
  shouldPodRuntimeBeRemoved(uid: string): boolean {
    const s = this.podSyncStatuses.get(uid);
    return s ? s.terminatedAt !== undefined : this.podsSynced;
  }

  /** Resolves when every worker has exited (tests; the kubelet's stop). */
  async waitIdle(): Promise<void> {
    await Promise.all(this.workers.values());
  }

  /** Stops every worker: cancels running syncs and wakes idle workers so they exit. */
  async stop(): Promise<void> {
    for (const s of this.podSyncStatuses.values()) {
      s.abort?.abort();
      s.pendingUpdate = undefined;
    }
    const pending = [...this.workers.values()];
    for (const [uid, wake] of this.podUpdates) {
      this.podSyncStatuses.get(uid) && this.podSyncStatuses.delete(uid);
      wake();
    }
    this.podSyncStatuses.clear();
    await Promise.allSettled(pending);
  }
}

/**
 * The kubelet's three syncs — SyncPod, SyncTerminatingPod, SyncTerminatedPod — the work a pod
 * worker does at each stage of a pod's life.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kubelet.go (the podSyncer half of the Kubelet).
 *
 * Solves:
 * - a running pod's sync must be idempotent and cheap to repeat (it runs on every change and
 *   every minute): report the status the runtime shows, make sure the mirror pod and the probe
 *   workers exist, and let the runtime manager converge the containers (SyncPod).
 * - stopping must happen once, within the grace period, and be verified: the liveness and startup
 *   probes stop first (a dying container must not be "restarted" for failing them), then every
 *   container is killed, then the runtime is asked again that nothing still runs
 *   (SyncTerminatingPod).
 * - the pod's last word: the terminal status, the status manager told the pod is finished (which
 *   releases the final API delete) (SyncTerminatedPod). The exited containers are kept for
 *   `kubectl logs` until the pod is deleted: housekeeping removes them then.
 *
 * Invariants:
 * - SyncPod returns true (terminal) exactly when the generated phase is Succeeded or Failed;
 *   it never calls the runtime for such a pod.
 * - failures that are only a backoff (CrashLoopBackOff, ImagePullBackOff) are not sync errors:
 *   the pod is retried at its resync, not at the error backoff.
 * - `ready` and `started` come from the prober manager before the readiness conditions are built.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet.go (SyncPod, SyncTerminatingPod, SyncTerminatingRuntimePod, SyncTerminatedPod)
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (generateAPIPodStatus: the probeManager.UpdatePodStatus call before the conditions)
 * @upstream kubernetes/kubernetes pkg/kubelet/container/runtime.go (ConvertPodStatusToRunningPod)
 * @chapter 07-kubelet
 */

import type { PodStatus as APIPodStatus, Pod } from "../api/core.ts";
import type { Clock } from "../client/util/clock.ts";
import type { Backoff } from "../client/util/flowcontrol/backoff.ts";
import { detached } from "../tracing/tracing.ts";
import {
  containerIDString,
  convertPodStatusToRunningPod,
  type PodStatus,
  type PodSyncResult,
  podSyncError,
  type Runtime,
  type RuntimePod,
} from "./container/runtime.ts";
import { isMirrorPodOf, type MirrorClient } from "./pod/mirror-client.ts";
import { podFullName } from "./pod/pod-manager.ts";
import type { PodStatusFunc, PodSyncer, SyncPodType } from "./pod-workers.ts";
import type { ProberManager } from "./prober/prober-manager.ts";
import { GenerateContainersReadyCondition, GeneratePodReadyCondition } from "./status/generate.ts";
import type { StatusManager } from "./status/status-manager.ts";
import { isStaticPod } from "./types/pod-update.ts";

/** What SyncPod records the runtime's results into (K1's ReasonCache satisfies it). */
export interface ReasonCacheLike {
  update(uid: string, result: PodSyncResult): void;
  remove(uid: string): void;
}

/** generateAPIPodStatus's signature (kubelet-pods.ts); a method, so a concrete ReasonCache type fits. */
export interface GenerateAPIPodStatus {
  generateAPIPodStatus(
    pod: Pod,
    podStatus: PodStatus,
    podIsTerminal: boolean,
    deps: { reasonCache: ReasonCacheLike; nodeIPs?: string[]; clock: Clock },
  ): APIPodStatus;
}

export interface KubeletSyncerOptions extends GenerateAPIPodStatus {
  runtime: Runtime;
  statusManager: StatusManager;
  probeManager: ProberManager;
  /** Absent for a kubelet without an API server (no mirror pods). */
  mirrorClient?: MirrorClient;
  reasonCache: ReasonCacheLike;
  crashLoopBackOff: Backoff;
  nodeIPs?: string[];
  clock: Clock;
  onError: (err: unknown) => void;
}

export class KubeletSyncer implements PodSyncer {
  constructor(private readonly o: KubeletSyncerOptions) {}

  /** The API status, with ready/started from the probes and the two readiness conditions to match. */
  private generateAPIPodStatus(pod: Pod, podStatus: PodStatus, podIsTerminal: boolean): APIPodStatus {
    const s = this.o.generateAPIPodStatus(pod, podStatus, podIsTerminal, {
      reasonCache: this.o.reasonCache,
      nodeIPs: this.o.nodeIPs,
      clock: this.o.clock,
    });
    // Upstream calls probeManager.UpdatePodStatus inside generateAPIPodStatus, before the
    // conditions: done here so that the injected function need not know the prober.
    this.o.probeManager.updatePodStatus(pod, s);
    const phase = s.phase ?? "Pending";
    const others = (s.conditions ?? []).filter((c) => c.type !== "ContainersReady" && c.type !== "Ready");
    s.conditions = [
      ...others,
      GenerateContainersReadyCondition(pod.spec, s.containerStatuses, phase),
      GeneratePodReadyCondition(pod.spec, others, s.containerStatuses, phase),
    ];
    return s;
  }

  // #region sync-pod
  /** SyncPod: report the status, make sure the mirror and the probes exist, let the runtime converge. */
  async syncPod(
    signal: AbortSignal,
    _updateType: SyncPodType,
    pod: Pod,
    mirrorPod: Pod | undefined,
    podStatus: PodStatus,
  ): Promise<boolean> {
    const apiPodStatus = this.generateAPIPodStatus(pod, podStatus, false);
    // A pod whose containers all finished (restartPolicy Never/OnFailure) terminates now.
    if (apiPodStatus.phase === "Succeeded" || apiPodStatus.phase === "Failed") {
      this.o.statusManager.setPodStatus(pod, apiPodStatus);
      return true;
    }
    this.o.statusManager.setPodStatus(pod, apiPodStatus);

    if (isStaticPod(pod) && this.o.mirrorClient) await this.ensureMirrorPod(pod, mirrorPod);
    if (signal.aborted) return false;

    // chapter 8: the probe workers outlive this sync: they start outside its span.
    detached(() => this.o.probeManager.addPod(pod));
    const result = await this.o.runtime.syncPod(pod, podStatus, this.o.crashLoopBackOff);
    this.o.reasonCache.update(pod.metadata.uid ?? "", result);
    const err = podSyncError(result);
    if (err) {
      // Meant as "waiting in a backoff is not a failure of the sync". But upstream 1.32 tests every
      // result — the successful ones too, whose nil error is not a backoff — so any sync with a
      // success beside its backoff (ConfigPodSandbox always is) is an error, retried in 10–15 s
      // (kubernetes#123602). We keep 1.32's behaviour, which is why ImagePullBackOff shows soon.
      const onlyBackOff =
        !result.syncError &&
        result.syncResults.every((r) => r.error === "CrashLoopBackOff" || r.error === "ImagePullBackOff");
      if (!onlyBackOff) throw err;
    }
    return false;
  }
  // #endregion sync-pod

  /** Creates the static pod's mirror, replacing one that is stale or being deleted. */
  private async ensureMirrorPod(pod: Pod, mirrorPod: Pod | undefined): Promise<void> {
    const client = this.o.mirrorClient!;
    let deleted = false;
    try {
      if (mirrorPod && !isMirrorPodOf(mirrorPod, pod)) {
        deleted = await client.deleteMirrorPod(podFullName(pod), mirrorPod.metadata.uid);
      }
      if (!mirrorPod || deleted) await client.createMirrorPod(pod);
    } catch (err) {
      this.o.onError(err); // "Failed creating a mirror pod": the next sync tries again
    }
  }

  // #region sync-terminating-pod
  /** SyncTerminatingPod: status, stop liveness/startup probes, kill every container, check, final status. */
  async syncTerminatingPod(
    signal: AbortSignal,
    pod: Pod,
    podStatus: PodStatus,
    gracePeriod: number | undefined,
    podStatusFn: PodStatusFunc | undefined,
  ): Promise<void> {
    const apiPodStatus = this.generateAPIPodStatus(pod, podStatus, false);
    podStatusFn?.(apiPodStatus);
    this.o.statusManager.setPodStatus(pod, apiPodStatus);
    this.o.probeManager.stopLivenessAndStartup(pod);

    const running = convertPodStatusToRunningPod(this.o.runtime.type(), podStatus);
    // A shorter grace period cancels this sync: return and let the next one kill faster.
    await raceSignal(this.o.runtime.killPod(pod, running, gracePeriod), signal);
    if (signal.aborted) return;
    this.o.probeManager.removePod(pod);

    const stopped = await this.o.runtime.getPodStatus(
      pod.metadata.uid ?? "",
      pod.metadata.name ?? "",
      pod.metadata.namespace ?? "",
    );
    const still = stopped.containerStatuses
      .filter((c) => c.state === "running")
      .map((c) => containerIDString(c.id));
    if (still.length)
      throw new Error(
        `detected running containers after a successful KillPod, CRI violation: ${still.join(", ")}`,
      );
    // The exit codes are known now (after SyncTerminatedPod the containers may be gone).
    this.o.statusManager.setPodStatus(pod, this.generateAPIPodStatus(pod, stopped, true));
  }
  // #endregion sync-terminating-pod

  /** An orphan: killed with a 1 s grace period, nothing reported. */
  async syncTerminatingRuntimePod(_signal: AbortSignal, runningPod: RuntimePod): Promise<void> {
    await this.o.runtime.killPod(undefined, runningPod, 1);
  }

  // #region sync-terminated-pod
  /**
   * SyncTerminatedPod: the final status, the status manager told the pod is finished. The exited
   * containers stay (upstream removes nothing here): housekeeping removes them once the pod is
   * deleted (Kubelet.handlePodCleanups, PodWorkers.shouldPodContentBeRemoved).
   */
  async syncTerminatedPod(_signal: AbortSignal, pod: Pod, podStatus: PodStatus): Promise<void> {
    this.o.statusManager.setPodStatus(pod, this.generateAPIPodStatus(pod, podStatus, true));
    this.o.statusManager.terminatePod(pod);
    this.o.reasonCache.remove(pod.metadata.uid ?? "");
  }
  // #endregion sync-terminated-pod
}

function raceSignal<T>(p: Promise<T>, signal: AbortSignal): Promise<T | undefined> {
  if (signal.aborted) return Promise.resolve(undefined);
  return new Promise((resolve, reject) => {
    const onAbort = () => resolve(undefined);
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

/**
 * KubeGenericRuntimeManager — the kubelet's runtime: turns "make this pod run as its spec says"
 * into CRI calls, and the runtime's sandboxes and containers back into a pod status.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go.
 *
 * Solves: the sync loop speaks in pods (kubecontainer.Runtime); the CRI speaks in sandboxes and
 * containers. The manager plans each sync with computePodActions, then carries the plan out in
 * upstream's order, recording one SyncResult per action so that a failure of one container
 * (a pull error, a crash loop) is reported without stopping the others.
 *
 * Invariants:
 * - SyncPod's order: kill the pod (sandbox changed, or nothing left to run) or the unwanted
 *   containers; create the sandbox; start init containers in order (an ordinary one failing to
 *   start stops the sync, a sidecar does not); start app containers;
 * - a container that exited is restarted only outside its CrashLoopBackOff (doBackOff, measured
 *   from its finishedAt); inside it, the result is CrashLoopBackOff and a BackOff event;
 * - killPod stops every running container in parallel (preStop, SIGTERM, grace, SIGKILL), then
 *   every sandbox of the pod; a NotFound from the runtime means "already gone", not failure;
 * - getPodStatus lists by the io.kubernetes.pod.uid label, newest first; the pod's IPs are the
 *   newest sandbox's, and only if that sandbox is ready.
 *
 * Reduced: no ephemeral containers, no in-place resize, no image volumes, no DRA; a deleted
 * pod's containers and sandbox are removed by removeTerminatedPod, which the kubelet's
 * housekeeping calls, rather than by a separate garbage collector every minute.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go (kubeGenericRuntimeManager, SyncPod, doBackOff, KillPod, killPodWithSyncResult, GetPodStatus, GetPods, Type)
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_container.go (killContainersWithSyncResult)
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_gc.go (removeSandbox, evictPodLogsDirectories: what removeTerminatedPod does for one pod)
 * @upstream kubernetes/kubernetes pkg/kubelet/events/event.go (SandboxChanged, FailedCreatePodSandBox, FailedStatusPodSandBox)
 * @chapter 07-kubelet
 */

import type { Pod } from "../../api/core.ts";
import type { Clock } from "../../client/util/clock.ts";
import type { Backoff } from "../../client/util/flowcontrol/backoff.ts";
import type { EventRecorder } from "../../controllers/pod-control.ts";
import {
  convertPodStatusToRunningPod,
  type PodStatus,
  type PodSyncResult,
  podSyncError,
  type Runtime,
  type RuntimeContainer,
  type RuntimePod,
  type SyncResult,
} from "../container/runtime.ts";
import { ImageManager, newImageBackOff } from "../images/image-manager.ts";
import { HandlerRunner, type PodNetworkResolve } from "../lifecycle/handlers.ts";
import type { ResultsManager } from "../prober/results/results-manager.ts";
import type { ImageManagerService, PodSandboxStatus, RuntimeService } from "../runtime/cri.ts";
import { KubernetesPodUIDLabel } from "../runtime/cri.ts";
import { isNotFound } from "../runtime/cri-errors.ts";
import type { EnvSources } from "./container-env.ts";
import { doBackOff } from "./crash-loop-backoff.ts";
import { formatPod, toKubeContainerState } from "./helpers.ts";
import {
  type ContainerContext,
  getPodContainerStatuses,
  killContainer,
  type OSInterface,
  realOS,
  startContainer,
} from "./kuberuntime-container.ts";
import { defaultGCPolicy, evictContainers, type GCPolicy } from "./kuberuntime-gc.ts";
import { createPodSandbox, generatePodSandboxConfig, getSandboxIDByPodUID } from "./kuberuntime-sandbox.ts";
import { getContainerInfoFromAnnotations, getContainerInfoFromLabels } from "./labels.ts";
import { computePodActions } from "./pod-actions.ts";
import { TerminationOrdering } from "./termination-order.ts";

export const SandboxChanged = "SandboxChanged";
export const FailedCreatePodSandBox = "FailedCreatePodSandBox";
export const FailedStatusPodSandBox = "FailedStatusPodSandBox";

export interface KubeGenericRuntimeManagerOptions {
  runtimeService: RuntimeService;
  imageService: ImageManagerService;
  clock: Clock;
  /** Pod events (Pulling, Created, Started, Killing, BackOff, …). */
  recorder: EventRecorder;
  /** Upstream's /var/log/pods: each pod's container logs go below `<ns>_<name>_<uid>/`. */
  podLogsRootDirectory: string;
  livenessManager: Pick<ResultsManager, "get">;
  startupManager: Pick<ResultsManager, "get">;
  /** Where a pod's (ip, port) really listens, for httpGet hooks; identity by default. */
  podNetworkResolve?: PodNetworkResolve;
  /** The prefix of container ids in pod statuses (`containerd://…`). */
  runtimeName: string;
  /** ConfigMaps, Secrets and node IPs for container environments. */
  envSources?: EnvSources;
  /** The file system for log directories; the real one by default. */
  osInterface?: OSInterface;
  /** The image pull backoff; a fresh 10 s … 300 s one by default. */
  imageBackOff?: Backoff;
  /** The CrashLoopBackOff decision; the real doBackOff by default (chapter 7's exercise swaps it). */
  doBackOff?: typeof doBackOff;
}

export class KubeGenericRuntimeManager implements Runtime {
  private readonly ctx: ContainerContext;
  readonly imageManager: ImageManager;

  constructor(private readonly o: KubeGenericRuntimeManagerOptions) {
    this.imageManager = new ImageManager(
      o.imageService,
      o.recorder,
      o.imageBackOff ?? newImageBackOff(o.clock),
      o.clock,
    );
    const runner = new HandlerRunner({
      runtimeService: o.runtimeService,
      clock: o.clock,
      podNetworkResolve: o.podNetworkResolve,
      getPodIPs: async (pod) => (await this.getPodStatus(pod.metadata.uid ?? "", "", "")).ips,
    });
    this.ctx = {
      runtimeService: o.runtimeService,
      imageManager: this.imageManager,
      runner,
      recorder: o.recorder,
      clock: o.clock,
      runtimeName: o.runtimeName,
      podLogsRootDirectory: o.podLogsRootDirectory,
      envSources: o.envSources ?? {},
      osInterface: o.osInterface ?? realOS,
    };
  }

  type(): string {
    return this.o.runtimeName;
  }

  async syncPod(pod: Pod, podStatus: PodStatus, backOff: Backoff): Promise<PodSyncResult> {
    const result: PodSyncResult = { syncResults: [] };
    const add = (action: SyncResult["action"], target: string): SyncResult => {
      const r: SyncResult = { action, target, error: "", message: "" };
      result.syncResults.push(r);
      return r;
    };

    // Step 1: the plan.
    const changes = computePodActions(pod, podStatus, this.o);
    if (changes.createSandbox && changes.sandboxID !== "") {
      this.o.recorder(
        pod,
        "Normal",
        SandboxChanged,
        "Pod sandbox changed, it will be killed and re-created.",
      );
    }

    // Step 2: kill the pod if its sandbox changed or nothing in it should run; else step 3:
    // kill the containers that must go.
    if (changes.killPod) {
      const killResult = await this.killPodWithSyncResult(
        pod,
        convertPodStatusToRunningPod(this.o.runtimeName, podStatus),
      );
      result.syncResults.push(...killResult.syncResults);
      if (podSyncError(killResult)) return result;
    } else {
      for (const [id, info] of changes.containersToKill) {
        const r = add("KillContainer", info.name);
        const containerID = { type: this.o.runtimeName, id: id.slice(id.indexOf("://") + 3) };
        try {
          await killContainer(this.ctx, pod, containerID, info.name, info.message, info.reason);
        } catch (err) {
          r.error = "KillContainerError";
          r.message = (err as Error).message;
          return result;
        }
      }
    }

    // Step 4: a sandbox, if needed; its IP replaces the old one for the containers' environment.
    let podIPs = podStatus.ips;
    let podSandboxID = changes.sandboxID;
    if (changes.createSandbox) {
      const r = add("CreatePodSandbox", formatPod(pod));
      const created = await createPodSandbox(
        this.o.runtimeService,
        pod,
        changes.attempt,
        this.o.podLogsRootDirectory,
        this.ctx.osInterface,
      );
      if ("err" in created) {
        r.error = "CreatePodSandboxError";
        r.message = created.message;
        this.o.recorder(
          pod,
          "Warning",
          FailedCreatePodSandBox,
          `Failed to create pod sandbox: ${created.err.message}`,
        );
        return result;
      }
      podSandboxID = created.id;
      try {
        const status = await this.o.runtimeService.PodSandboxStatus(podSandboxID);
        if (!pod.spec.hostNetwork) podIPs = status.network?.ip ? [status.network.ip] : [];
      } catch (err) {
        this.o.recorder(
          pod,
          "Warning",
          FailedStatusPodSandBox,
          `Unable to get pod sandbox status: ${(err as Error).message}`,
        );
        result.syncError = err as Error;
        return result;
      }
    }
    const podIP = podIPs[0] ?? "";
    add("ConfigPodSandbox", podSandboxID);
    const podSandboxConfig = generatePodSandboxConfig(pod, changes.attempt, this.o.podLogsRootDirectory);

    // Every start goes through the crash-loop backoff first.
    const start = async (container: Pod["spec"]["containers"][number]): Promise<boolean> => {
      const r = add("StartContainer", container.name);
      const exited = podStatus.containerStatuses.find(
        (s) => s.name === container.name && s.state === "exited",
      );
      const back = (this.o.doBackOff ?? doBackOff)(pod, container, exited?.finishedAt, backOff);
      if (back.inBackOff) {
        this.o.recorder(pod, "Warning", back.event.reason, back.event.message);
        r.error = back.reason;
        r.message = back.message;
        return false;
      }
      const failed = await startContainer(
        this.ctx,
        podSandboxID,
        podSandboxConfig,
        container,
        pod,
        podStatus,
        podIP,
        podIPs,
      );
      if (failed) {
        r.error = failed.reason;
        r.message = failed.message;
        return false;
      }
      return true;
    };

    // Step 6: init containers, in order; an ordinary one that fails to start ends this sync.
    for (const idx of changes.initContainersToStart) {
      const container = (pod.spec.initContainers ?? [])[idx];
      if (!(await start(container)) && container.restartPolicy !== "Always") return result;
    }
    // Step 8: app containers.
    for (const idx of changes.containersToStart) await start(pod.spec.containers[idx]);
    return result;
  }

  async killPod(pod: Pod | undefined, runningPod: RuntimePod, gracePeriodOverride?: number): Promise<void> {
    const err = podSyncError(await this.killPodWithSyncResult(pod, runningPod, gracePeriodOverride));
    if (err) throw err;
  }

  private async killPodWithSyncResult(
    pod: Pod | undefined,
    runningPod: RuntimePod,
    gracePeriodOverride?: number,
  ): Promise<PodSyncResult> {
    // All containers at once: each gets its own grace period, not a share of one. Sidecars
    // wait for the app containers to exit before their own SIGTERM.
    const ordering =
      pod && (pod.spec.initContainers ?? []).some((c) => c.restartPolicy === "Always")
        ? new TerminationOrdering(
            pod,
            runningPod.containers.map((c) => c.name),
            this.o.clock,
          )
        : undefined;
    const syncResults: SyncResult[] = await Promise.all(
      runningPod.containers.map(async (c) => {
        const r: SyncResult = { action: "KillContainer", target: c.name, error: "", message: "" };
        try {
          await killContainer(this.ctx, pod, c.id, c.name, "", "", gracePeriodOverride, ordering);
        } catch (err) {
          r.error = "KillContainerError";
          r.message = (err as Error).message;
        }
        return r;
      }),
    );
    // Then the sandboxes (removed later, by removeTerminatedPod).
    const sandboxResult: SyncResult = {
      action: "KillPodSandbox",
      target: runningPod.id,
      error: "",
      message: "",
    };
    syncResults.push(sandboxResult);
    for (const s of runningPod.sandboxes) {
      try {
        await this.o.runtimeService.StopPodSandbox(s.id.id);
      } catch (err) {
        if (isNotFound(err)) continue;
        sandboxResult.error = "KillPodSandboxError";
        sandboxResult.message = (err as Error).message;
      }
    }
    return { syncResults };
  }

  async getPodStatus(uid: string, name: string, namespace: string): Promise<PodStatus> {
    const timeStamp = this.o.clock.now();
    const sandboxStatuses: PodSandboxStatus[] = [];
    let ips: string[] = [];
    const ids = await getSandboxIDByPodUID(this.o.runtimeService, uid);
    for (const [idx, id] of ids.entries()) {
      let s: PodSandboxStatus;
      try {
        s = await this.o.runtimeService.PodSandboxStatus(id);
      } catch (err) {
        if (isNotFound(err)) continue; // removed since the list: as if never listed
        throw err;
      }
      sandboxStatuses.push(s);
      // Only the newest sandbox, and only while ready, gives the pod its IP.
      if (idx === 0 && s.state === "SANDBOX_READY" && s.network?.ip) ips = [s.network.ip];
    }
    const containerStatuses = await getPodContainerStatuses(this.ctx, uid);
    return { id: uid, name, namespace, ips, containerStatuses, sandboxStatuses, timeStamp };
  }

  async getPods(all: boolean): Promise<RuntimePod[]> {
    const pods = new Map<string, RuntimePod & { createdAt: number }>();
    const sandboxes = await this.o.runtimeService.ListPodSandbox(all ? {} : { state: "SANDBOX_READY" });
    for (const s of sandboxes) {
      const uid = s.metadata.uid;
      let p = pods.get(uid);
      if (!p) {
        p = {
          id: uid,
          name: s.metadata.name,
          namespace: s.metadata.namespace,
          containers: [],
          sandboxes: [],
          createdAt: 0,
        };
        pods.set(uid, p);
      }
      p.sandboxes.push({
        id: { type: this.o.runtimeName, id: s.id },
        name: s.metadata.name,
        image: "",
        imageID: "",
        hash: "",
        state: s.state === "SANDBOX_READY" ? "running" : "exited",
      });
      p.createdAt = Math.max(p.createdAt, s.createdAt);
    }
    const containers = await this.o.runtimeService.ListContainers(all ? {} : { state: "CONTAINER_RUNNING" });
    for (const c of containers) {
      const l = getContainerInfoFromLabels(c.labels);
      let p = pods.get(l.podUID);
      if (!p) {
        p = {
          id: l.podUID,
          name: l.podName,
          namespace: l.podNamespace,
          containers: [],
          sandboxes: [],
          createdAt: 0,
        };
        pods.set(l.podUID, p);
      }
      const converted: RuntimeContainer = {
        id: { type: this.o.runtimeName, id: c.id },
        name: l.containerName,
        image: c.image.image,
        imageID: c.imageRef,
        hash: getContainerInfoFromAnnotations(c.annotations).hash,
        state: toKubeContainerState(c.state),
      };
      p.containers.push(converted);
    }
    return [...pods.values()].sort((a, b) => b.createdAt - a.createdAt).map(({ createdAt: _c, ...p }) => p);
  }

  /** Removes dead containers beyond the policy's (upstream's GarbageCollect, containers only). */
  garbageCollect(
    policy: GCPolicy = defaultGCPolicy,
    shouldPodContentBeRemoved?: (uid: string) => boolean,
  ): Promise<string[]> {
    return evictContainers(this.o.runtimeService, this.o.clock.now(), policy, shouldPodContentBeRemoved);
  }

  /** Removes what is left of a pod that has finished: its exited containers, then its sandboxes. */
  async removeTerminatedPod(uid: string): Promise<void> {
    const selector = { [KubernetesPodUIDLabel]: uid };
    for (const c of await this.o.runtimeService.ListContainers({ labelSelector: selector })) {
      if (c.state === "CONTAINER_RUNNING") continue; // not terminated: leave it to killPod
      await this.o.runtimeService.RemoveContainer(c.id);
    }
    const running = await this.o.runtimeService.ListContainers({
      labelSelector: selector,
      state: "CONTAINER_RUNNING",
    });
    if (running.length > 0) return;
    for (const s of await this.o.runtimeService.ListPodSandbox({ labelSelector: selector })) {
      await this.o.runtimeService.StopPodSandbox(s.id).catch((err) => {
        if (!isNotFound(err)) throw err;
      });
      await this.o.runtimeService.RemovePodSandbox(s.id);
    }
  }
}

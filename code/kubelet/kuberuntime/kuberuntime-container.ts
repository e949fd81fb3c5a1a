/**
 * Containers — start one (pull, create, start, postStart) and kill one (Killing event, preStop
 * hook, then StopContainer with what is left of the grace period), and read a pod's containers
 * back from the runtime.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_container.go.
 *
 * Solves:
 * - a container start can fail at each step, and each failure has its own reason the user sees
 *   as the waiting reason (ErrImagePull, CreateContainerConfigError, CreateContainerError,
 *   RunContainerError, PostStartHookError); startContainer returns (message, reason) for it;
 * - graceful shutdown: the preStop hook runs first and its time counts against the grace period,
 *   so SIGTERM comes with only the rest; never less than 2 s, so a slow hook does not turn a
 *   graceful stop into an immediate SIGKILL;
 * - a restart count that survives the kubelet: the next attempt's count is the newest container's
 *   annotation + 1 (or, with no container left, one past the newest `<n>.log` in its log dir).
 *
 * Invariants:
 * - the grace period is the pod's deletionGracePeriodSeconds if it is being deleted, else the
 *   probe's terminationGracePeriodSeconds when that probe killed it, else the pod's
 *   terminationGracePeriodSeconds, else 2; an override (kill with force) replaces the result;
 * - the preStop hook runs only with a grace period above 0 and is cut off when the grace ends;
 * - a container the runtime no longer has is already stopped: StopContainer's NotFound is success;
 * - event messages never contain a container id (events would not deduplicate): it is replaced
 *   by the container's name.
 *
 * What upstream does differently: events refer to the pod with `fieldPath: spec.containers{x}`;
 * our recorder takes only the object, so container events carry the pod alone.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_container.go (startContainer, generateContainerConfig, killContainer, setTerminationGracePeriod, executePreStopHook, killContainersWithSyncResult, getPodContainerStatuses, restoreSpecsFromContainerLabels, calcRestartCountByLogDir, recordContainerEvent)
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_manager.go (minimumGracePeriodInSeconds)
 * @upstream kubernetes/kubernetes pkg/kubelet/events/event.go (CreatedContainer, StartedContainer, FailedToCreateContainer, FailedToStartContainer, KillingContainer, FailedPreStopHook, FailedPostStartHook)
 * @chapter 07-kubelet
 */

import { mkdir, readdir } from "node:fs/promises";
import type { Container, Pod } from "../../api/core.ts";
import { parseQuantity } from "../../api/quantity.ts";
import { type Clock, sleep } from "../../client/util/clock.ts";
import type { EventRecorder } from "../../controllers/pod-control.ts";
import {
  ErrCreateContainer,
  ErrCreateContainerConfig,
  ErrPostStartHook,
  ErrRunContainer,
} from "../container/reasons.ts";
import type { ContainerID, PodStatus, Status } from "../container/runtime.ts";
import type { ImageManager } from "../images/image-manager.ts";
import type { HandlerRunner } from "../lifecycle/handlers.ts";
import type { ContainerConfig, ContainerStatus, PodSandboxConfig, RuntimeService } from "../runtime/cri.ts";
import { CRIError, isNotFound } from "../runtime/cri-errors.ts";
import { type EnvSources, makeEnvironmentVariables } from "./container-env.ts";
import {
  buildContainerLogsDirectory,
  buildContainerLogsPath,
  findContainerStatusByName,
  formatPod,
  toKubeContainerState,
} from "./helpers.ts";
import {
  getContainerInfoFromAnnotations,
  getContainerInfoFromLabels,
  newContainerAnnotations,
  newContainerLabels,
} from "./labels.ts";
import type { ContainerKillReason } from "./pod-actions.ts";
import type { TerminationOrdering } from "./termination-order.ts";

/** Never SIGKILL sooner than this after SIGTERM, whatever the hook took. */
export const minimumGracePeriodInSeconds = 2;

// Event reasons (pkg/kubelet/events/event.go).
export const CreatedContainer = "Created";
export const StartedContainer = "Started";
export const FailedToCreateContainer = "Failed";
export const FailedToStartContainer = "Failed";
export const KillingContainer = "Killing";
export const FailedPreStopHook = "FailedPreStopHook";
export const FailedPostStartHook = "FailedPostStartHook";

/** What the container functions need of the runtime manager. */
export interface ContainerContext {
  runtimeService: RuntimeService;
  imageManager: ImageManager;
  runner: HandlerRunner;
  recorder: EventRecorder;
  clock: Clock;
  runtimeName: string;
  podLogsRootDirectory: string;
  envSources: EnvSources;
  osInterface: OSInterface;
}

/** The file system calls the manager makes (upstream's kubecontainer.OSInterface), swappable in tests. */
export interface OSInterface {
  mkdirAll(path: string): Promise<void>;
  /** The names in `path`; throws if it does not exist. */
  readDir(path: string): Promise<string[]>;
}

export const realOS: OSInterface = {
  mkdirAll: async (path) => {
    await mkdir(path, { recursive: true });
  },
  readDir: (path) => readdir(path),
};

/** Events must not carry the container id: replace it by the name so repeats deduplicate. */
function recordContainerEvent(
  ctx: ContainerContext,
  pod: Pod,
  container: Container,
  containerID: string,
  type: "Normal" | "Warning",
  reason: string,
  message: string,
): void {
  const text = containerID ? message.split(containerID).join(container.name) : message;
  ctx.recorder(pod, type, reason, text);
}

/** The text of a runtime error as gRPC's status.Message gives it (the desc, without the code). */
function grpcMessage(err: unknown): string {
  if (err instanceof CRIError) return err.desc;
  return err instanceof Error ? err.message : String(err);
}

/** Pull, create, start, postStart. Undefined on success, else the reason and message for the status. */
export async function startContainer(
  ctx: ContainerContext,
  podSandboxID: string,
  podSandboxConfig: PodSandboxConfig,
  container: Container,
  pod: Pod,
  podStatus: PodStatus,
  podIP: string,
  podIPs: string[],
): Promise<{ reason: string; message: string } | undefined> {
  // Step 1: the image.
  const pulled = await ctx.imageManager.ensureImageExists(pod, container, podSandboxConfig);
  if (pulled.imageRef === "" && "reason" in pulled) {
    recordContainerEvent(
      ctx,
      pod,
      container,
      "",
      "Warning",
      FailedToCreateContainer,
      `Error: ${pulled.reason}`,
    );
    return { reason: pulled.reason, message: pulled.message };
  }

  // Step 2: create it, as attempt restartCount.
  const previous = findContainerStatusByName(podStatus, container.name);
  const { name = "", namespace = "", uid = "" } = pod.metadata;
  const logDir = buildContainerLogsDirectory(ctx.podLogsRootDirectory, namespace, name, uid, container.name);
  const restartCount = previous
    ? previous.restartCount + 1
    : await calcRestartCountByLogDir(ctx.osInterface, logDir);
  let config: ContainerConfig;
  try {
    await ctx.osInterface.mkdirAll(logDir);
    config = await generateContainerConfig(ctx, container, pod, restartCount, podIP, podIPs);
  } catch (err) {
    const message = grpcMessage(err);
    recordContainerEvent(ctx, pod, container, "", "Warning", FailedToCreateContainer, `Error: ${message}`);
    return { reason: ErrCreateContainerConfig, message };
  }
  let containerID: string;
  try {
    containerID = await ctx.runtimeService.CreateContainer(podSandboxID, config, podSandboxConfig);
  } catch (err) {
    const message = grpcMessage(err);
    recordContainerEvent(ctx, pod, container, "", "Warning", FailedToCreateContainer, `Error: ${message}`);
    return { reason: ErrCreateContainer, message };
  }
  recordContainerEvent(
    ctx,
    pod,
    container,
    containerID,
    "Normal",
    CreatedContainer,
    `Created container ${container.name}`,
  );

  // Step 3: start it.
  try {
    await ctx.runtimeService.StartContainer(containerID);
  } catch (err) {
    const message = grpcMessage(err);
    recordContainerEvent(
      ctx,
      pod,
      container,
      containerID,
      "Warning",
      FailedToStartContainer,
      `Error: ${message}`,
    );
    return { reason: ErrRunContainer, message };
  }
  recordContainerEvent(
    ctx,
    pod,
    container,
    containerID,
    "Normal",
    StartedContainer,
    `Started container ${container.name}`,
  );

  // Step 4: the postStart hook; if it fails the container is killed.
  const postStart = container.lifecycle?.postStart;
  if (postStart) {
    const failed = await ctx.runner.run(containerID, pod, container, postStart);
    if (failed) {
      // The hook's message may hold secrets: the event says only that it failed.
      recordContainerEvent(
        ctx,
        pod,
        container,
        containerID,
        "Warning",
        FailedPostStartHook,
        "PostStartHook failed",
      );
      const id = { type: ctx.runtimeName, id: containerID };
      await killContainer(ctx, pod, id, container.name, "FailedPostStartHook", "FailedPostStartHook").catch(
        () => {},
      );
      return { reason: ErrPostStartHook, message: failed.message };
    }
  }
  return undefined;
}

export async function generateContainerConfig(
  ctx: ContainerContext,
  container: Container,
  pod: Pod,
  restartCount: number,
  podIP: string,
  podIPs: string[],
): Promise<ContainerConfig> {
  const envs = await makeEnvironmentVariables(pod, container, podIP, podIPs, ctx.envSources);
  const config: ContainerConfig = {
    metadata: { name: container.name, attempt: restartCount },
    image: { image: container.image ?? "" },
    command: container.command,
    args: container.args,
    envs,
    workingDir: container.workingDir,
    labels: newContainerLabels(container, pod),
    annotations: newContainerAnnotations(container, pod, restartCount),
    logPath: buildContainerLogsPath(container.name, restartCount),
    stdin: container.stdin,
    tty: container.tty,
  };
  const memory = parseQuantity(container.resources?.limits?.memory);
  if (memory && memory.nanos > 0n) {
    // Quantity.Value(): the whole number of bytes, rounded up.
    const bytes = (memory.nanos + 999_999_999n) / 1_000_000_000n;
    config.linux = { resources: { memoryLimitInBytes: Number(bytes) } };
  }
  return config;
}

/** With no container left to read it from, the restart count is one past the newest `<n>.log`. */
async function calcRestartCountByLogDir(os: OSInterface, dir: string): Promise<number> {
  let names: string[];
  try {
    names = await os.readDir(dir);
  } catch {
    return 0;
  }
  let restartCount = 0;
  for (const n of names) {
    const m = /^(\d+)\.log(\..*)?/.exec(n);
    if (m) restartCount = Math.max(restartCount, Number(m[1]) + 1);
  }
  return restartCount;
}

// #region kill-container
/** The grace period before any hook runs: deletion, then the killing probe's, then the pod's. */
export function setTerminationGracePeriod(
  pod: Pod,
  container: Container,
  reason: ContainerKillReason,
): number {
  if (pod.metadata.deletionGracePeriodSeconds != null) return pod.metadata.deletionGracePeriodSeconds;
  if (pod.spec.terminationGracePeriodSeconds != null) {
    const probe =
      reason === "StartupProbe"
        ? container.startupProbe
        : reason === "LivenessProbe"
          ? container.livenessProbe
          : undefined;
    if (probe?.terminationGracePeriodSeconds != null) return probe.terminationGracePeriodSeconds;
    return pod.spec.terminationGracePeriodSeconds;
  }
  return minimumGracePeriodInSeconds;
}

/** Killing event, preStop hook, then StopContainer (SIGTERM, the rest of the grace, SIGKILL). */
export async function killContainer(
  ctx: ContainerContext,
  pod: Pod | undefined,
  containerID: ContainerID,
  containerName: string,
  message: string,
  reason: ContainerKillReason,
  gracePeriodOverride?: number,
  ordering?: TerminationOrdering,
): Promise<void> {
  let containerSpec: Container | undefined;
  if (pod) {
    containerSpec = [...(pod.spec.initContainers ?? []), ...pod.spec.containers].find(
      (c) => c.name === containerName,
    );
    if (!containerSpec) {
      throw new Error(
        `failed to get containerSpec "${containerName}" (id="${containerID.type}://${containerID.id}") in pod "${formatPod(pod)}" when killing container for reason "${message}"`,
      );
    }
  } else {
    // A pod the kubelet no longer knows: what killing needs was written on the container.
    [pod, containerSpec] = await restoreSpecsFromContainerLabels(ctx, containerID);
  }

  let gracePeriod = setTerminationGracePeriod(pod, containerSpec, reason);
  const text = message || `Stopping container ${containerSpec.name}`;
  recordContainerEvent(ctx, pod, containerSpec, containerID.id, "Normal", KillingContainer, text);

  const preStop = containerSpec.lifecycle?.preStop;
  if (preStop && gracePeriod > 0) {
    gracePeriod -= await executePreStopHook(ctx, pod, containerID, containerSpec, gracePeriod);
  }
  // A sidecar waits for the app containers (and later sidecars) to exit first.
  if (ordering && gracePeriod > 0)
    gracePeriod -= Math.floor(await ordering.waitForTurn(containerName, gracePeriod));
  if (gracePeriod < minimumGracePeriodInSeconds) gracePeriod = minimumGracePeriodInSeconds;
  if (gracePeriodOverride !== undefined) gracePeriod = gracePeriodOverride;

  try {
    await ctx.runtimeService.StopContainer(containerID.id, gracePeriod);
  } catch (err) {
    if (!isNotFound(err)) throw err;
  }
  ordering?.containerTerminated(containerName);
}

/** Runs the hook, but waits no longer than the grace period; returns the whole seconds it took. */
async function executePreStopHook(
  ctx: ContainerContext,
  pod: Pod,
  containerID: ContainerID,
  container: Container,
  gracePeriod: number,
): Promise<number> {
  const start = ctx.clock.now();
  const abort = new AbortController();
  const hook = ctx.runner
    .run(containerID.id, pod, container, container.lifecycle!.preStop!, abort.signal)
    .then((failed) => {
      if (failed)
        recordContainerEvent(
          ctx,
          pod,
          container,
          containerID.id,
          "Warning",
          FailedPreStopHook,
          "PreStopHook failed",
        );
    });
  const graceOver = sleep(ctx.clock, gracePeriod * 1000, abort.signal);
  await Promise.race([hook, graceOver]);
  abort.abort();
  return Math.floor((ctx.clock.now() - start) / 1000);
}
// #endregion kill-container

/** What killing needs, read back from a container's labels and annotations. */
async function restoreSpecsFromContainerLabels(
  ctx: ContainerContext,
  containerID: ContainerID,
): Promise<[Pod, Container]> {
  const s = await ctx.runtimeService.ContainerStatus(containerID.id);
  const l = getContainerInfoFromLabels(s.labels);
  const a = getContainerInfoFromAnnotations(s.annotations);
  const container: Container = {
    name: l.containerName,
    ports: a.containerPorts,
    terminationMessagePath: a.terminationMessagePath,
  };
  if (a.preStopHandler) container.lifecycle = { preStop: a.preStopHandler };
  const pod: Pod = {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      uid: l.podUID,
      name: l.podName,
      namespace: l.podNamespace,
      deletionGracePeriodSeconds: a.podDeletionGracePeriod,
    },
    spec: { terminationGracePeriodSeconds: a.podTerminationGracePeriod, containers: [container] },
  };
  return [pod, container];
}

/** Every container of the pod, newest first, in the kubelet's terms (CRI ns → ms). */
export async function getPodContainerStatuses(ctx: ContainerContext, uid: string): Promise<Status[]> {
  const containers = await ctx.runtimeService.ListContainers({
    labelSelector: { "io.kubernetes.pod.uid": uid },
  });
  const statuses: Status[] = [];
  for (const c of containers) {
    let s: ContainerStatus;
    try {
      s = await ctx.runtimeService.ContainerStatus(c.id);
    } catch (err) {
      if (isNotFound(err)) continue; // removed between the list and the status: not an error
      throw err;
    }
    statuses.push(toKubeContainerStatus(s, ctx.runtimeName));
  }
  return statuses.sort((a, b) => b.createdAt - a.createdAt || (a.id.id < b.id.id ? 1 : -1));
}

export function toKubeContainerStatus(s: ContainerStatus, runtimeName: string): Status {
  const annotated = getContainerInfoFromAnnotations(s.annotations);
  const labeled = getContainerInfoFromLabels(s.labels);
  const ms = (ns: number) => Math.floor(ns / 1e6);
  const state = toKubeContainerState(s.state);
  return {
    id: { type: runtimeName, id: s.id },
    name: labeled.containerName,
    state,
    createdAt: ms(s.createdAt),
    // Not created any more means the kubelet has tried to start it.
    startedAt: state !== "created" ? ms(s.startedAt) : 0,
    finishedAt: state === "exited" ? ms(s.finishedAt) : 0,
    exitCode: state === "exited" ? s.exitCode : 0,
    image: s.image.image,
    imageID: s.imageRef,
    imageRef: s.imageRef,
    hash: annotated.hash,
    restartCount: annotated.restartCount,
    reason: state === "exited" ? s.reason : "",
    message: state === "exited" ? s.message : "",
  };
}

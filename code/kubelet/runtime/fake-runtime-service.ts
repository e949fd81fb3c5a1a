/**
 * FakeRuntimeService — the CRI's runtime half with no processes: sandboxes and containers are
 * records, and containers change state only on the clock's timers.
 * Mirrors kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/apis/testing/fake_runtime_service.go.
 *
 * Solves:
 * - simulations and benchmarks need hundreds of kubelets in one process (kwok's role); a container
 *   that is a record plus at most two timers costs next to nothing, where a real one costs a process.
 * - tests of the kubelet need a runtime whose time they move by hand: every timestamp and every
 *   exit comes from the injected Clock, so a FakeClock makes "exits after 3 s" take no real time.
 *
 * Invariants:
 * - a container's state only moves CREATED → RUNNING → EXITED; it exits exactly once, and at that
 *   moment its timers are stopped, finishedAt/exitCode/reason are set and every StopContainer
 *   waiting on it resolves.
 * - reason is "Completed" for exit code 0 and "Error" otherwise, as containerd reports it.
 * - a container belongs to exactly one sandbox that exists; removing the sandbox removes it.
 * - an unknown id gives NotFound, except from the Remove calls, which are idempotent.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/apis/testing/fake_runtime_service.go (FakeRuntimeService)
 * @upstream containerd/containerd internal/cri/server/container_stop.go (stopContainer: SIGTERM, timeout, SIGKILL)
 * @upstream containerd/containerd internal/cri/server/container_status.go (reason Completed / Error)
 * @upstream containerd/containerd internal/cri/server/container_start.go ("container is in %s state")
 * @chapter 07-kubelet
 */
import type { Clock, Timer } from "../../client/util/clock.ts";
import {
  type Container,
  type ContainerConfig,
  type ContainerFilter,
  type ContainerStatus,
  type ExecSyncResult,
  matchesLabels,
  type PodSandbox,
  type PodSandboxConfig,
  type PodSandboxFilter,
  type PodSandboxStatus,
  type RuntimeService,
} from "./cri.ts";
import { CodeExitError, CRIError, containerNotFound, sandboxNotFound } from "./cri-errors.ts";
import type { FakeImageBehaviour, FakeImageService } from "./fake-image-service.ts";

/** 128 + the signal number: what a shell and the kubelet show for a process a signal ended. */
export const exitCodeSIGTERM = 143;
export const exitCodeSIGKILL = 137;

interface FakeContainer {
  status: ContainerStatus;
  behaviour: FakeImageBehaviour;
  /** The exit-on-its-own timer and any stop timers; all stopped when the container exits. */
  timers: Timer[];
  /** StopContainer calls waiting for the exit. */
  exited: (() => void)[];
}

export class FakeRuntimeService implements RuntimeService {
  private readonly sandboxes = new Map<string, PodSandboxStatus>();
  private readonly containers = new Map<string, FakeContainer>();
  private seq = 0;
  /** Sandboxes ever run, so that no two get the same IP (a real CNI plugin would reuse freed ones). */
  private ipSeq = 0;

  constructor(
    private readonly clock: Clock,
    private readonly images: FakeImageService,
  ) {}

  // #region sandboxes
  async RunPodSandbox(config: PodSandboxConfig, runtimeHandler = ""): Promise<string> {
    const id = this.newId();
    const n = this.ipSeq++;
    this.sandboxes.set(id, {
      id,
      metadata: { ...config.metadata },
      state: "SANDBOX_READY",
      createdAt: this.nowNs(),
      labels: { ...config.labels },
      annotations: { ...config.annotations },
      runtimeHandler,
      // containerd's default CNI bridge hands out 10.88.0.0/16.
      network: { ip: `10.88.${Math.floor(n / 254) % 256}.${(n % 254) + 1}` },
    });
    return id;
  }

  async StopPodSandbox(podSandboxId: string): Promise<void> {
    const sandbox = this.sandboxes.get(podSandboxId);
    if (!sandbox) throw sandboxNotFound(podSandboxId);
    // containerd stops the sandbox's containers with no grace: the kubelet already gave each one
    // its terminationGracePeriodSeconds through StopContainer before it stops the sandbox.
    for (const c of this.containersOf(podSandboxId)) this.exit(c, exitCodeSIGKILL);
    sandbox.state = "SANDBOX_NOTREADY";
  }

  async RemovePodSandbox(podSandboxId: string): Promise<void> {
    if (!this.sandboxes.has(podSandboxId)) return;
    for (const c of this.containersOf(podSandboxId)) {
      this.exit(c, exitCodeSIGKILL);
      this.containers.delete(c.status.id);
    }
    this.sandboxes.delete(podSandboxId);
  }

  async PodSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus> {
    const sandbox = this.sandboxes.get(podSandboxId);
    if (!sandbox) throw sandboxNotFound(podSandboxId);
    return { ...copySandbox(sandbox), network: { ...sandbox.network } };
  }

  async ListPodSandbox(filter: PodSandboxFilter = {}): Promise<PodSandbox[]> {
    const out: PodSandbox[] = [];
    for (const s of this.sandboxes.values()) {
      if (filter.id && filter.id !== s.id) continue;
      if (filter.state && filter.state !== s.state) continue;
      if (!matchesLabels(filter.labelSelector, s.labels)) continue;
      out.push(copySandbox(s));
    }
    return out;
  }
  // #endregion sandboxes

  // #region containers
  async CreateContainer(podSandboxId: string, config: ContainerConfig, _sandboxConfig: PodSandboxConfig) {
    if (!this.sandboxes.has(podSandboxId)) throw sandboxNotFound(podSandboxId);
    const behaviour = this.images.behaviourOf(config.image.image);
    const imageRef = this.images.refOf(config.image.image);
    if (!behaviour || !imageRef) {
      // The kubelet pulls before it creates; a missing image here means it was removed in between.
      throw new CRIError("NotFound", `failed to resolve image "${config.image.image}": not found`);
    }
    const id = this.newId();
    this.containers.set(id, {
      status: {
        id,
        podSandboxId,
        metadata: { ...config.metadata },
        image: { ...config.image },
        imageRef,
        state: "CONTAINER_CREATED",
        createdAt: this.nowNs(),
        startedAt: 0,
        finishedAt: 0,
        exitCode: 0,
        reason: "",
        message: "",
        labels: { ...config.labels },
        annotations: { ...config.annotations },
        logPath: config.logPath ?? "",
      },
      behaviour,
      timers: [],
      exited: [],
    });
    return id;
  }

  async StartContainer(containerId: string): Promise<void> {
    const c = this.get(containerId);
    if (c.status.state !== "CONTAINER_CREATED") {
      // A container runs once: the kubelet restarts one by creating attempt N+1, never by restarting.
      throw new CRIError(
        "Unknown",
        `failed to set starting state for container "${containerId}": container is in ${c.status.state} state`,
      );
    }
    c.status.state = "CONTAINER_RUNNING";
    c.status.startedAt = this.nowNs();
    const { exitAfterMs, exitCode = 0 } = c.behaviour;
    if (exitAfterMs !== undefined)
      c.timers.push(this.clock.afterFunc(exitAfterMs, () => this.exit(c, exitCode)));
  }

  async StopContainer(containerId: string, timeout: number): Promise<void> {
    const c = this.get(containerId);
    // Stopping a container that is not running is a no-op, so the kubelet can retry freely.
    if (c.status.state !== "CONTAINER_RUNNING") return;
    const done = new Promise<void>((resolve) => c.exited.push(resolve));
    const { sigtermExitAfterMs } = c.behaviour;
    if (timeout > 0 && sigtermExitAfterMs !== undefined && sigtermExitAfterMs < timeout * 1000) {
      c.timers.push(this.clock.afterFunc(sigtermExitAfterMs, () => this.exit(c, exitCodeSIGTERM)));
    } else if (timeout > 0) {
      // SIGTERM was ignored (or too slow): SIGKILL when the grace period is up.
      c.timers.push(this.clock.afterFunc(timeout * 1000, () => this.exit(c, exitCodeSIGKILL)));
    } else {
      this.exit(c, exitCodeSIGKILL);
    }
    return done;
  }

  async RemoveContainer(containerId: string): Promise<void> {
    const c = this.containers.get(containerId);
    if (!c) return;
    this.exit(c, exitCodeSIGKILL);
    this.containers.delete(containerId);
  }

  async ListContainers(filter: ContainerFilter = {}): Promise<Container[]> {
    const out: Container[] = [];
    for (const { status: s } of this.containers.values()) {
      if (filter.id && filter.id !== s.id) continue;
      if (filter.podSandboxId && filter.podSandboxId !== s.podSandboxId) continue;
      if (filter.state && filter.state !== s.state) continue;
      if (!matchesLabels(filter.labelSelector, s.labels)) continue;
      out.push(copyContainer(s));
    }
    return out;
  }

  async ContainerStatus(containerId: string): Promise<ContainerStatus> {
    const s = this.get(containerId).status;
    return { ...s, ...copyContainer(s) };
  }

  async ExecSync(containerId: string, cmd: string[], _timeoutMs: number): Promise<ExecSyncResult> {
    const c = this.get(containerId);
    if (c.status.state !== "CONTAINER_RUNNING") {
      throw new CRIError("Unknown", `container "${containerId}" is in ${c.status.state} state`);
    }
    // A command the image's table does not know behaves as a shell's "not found" (exit 127).
    const answer = c.behaviour.exec?.[cmd.join(" ")] ?? { stderr: `${cmd[0]}: not found`, exitCode: 127 };
    const stdout = answer.stdout ?? "";
    const stderr = answer.stderr ?? "";
    if (answer.exitCode !== 0) throw new CodeExitError(cmd, answer.exitCode, stdout, stderr);
    return { stdout, stderr };
  }
  // #endregion containers

  // #region exit
  /** The one place a container exits: by itself, by SIGTERM, or by SIGKILL. */
  private exit(c: FakeContainer, exitCode: number): void {
    if (c.status.state !== "CONTAINER_RUNNING") return;
    for (const t of c.timers) t.stop();
    c.timers = [];
    c.status.state = "CONTAINER_EXITED";
    c.status.finishedAt = this.nowNs();
    c.status.exitCode = exitCode;
    c.status.reason = exitCode === 0 ? "Completed" : "Error";
    for (const resolve of c.exited.splice(0)) resolve();
  }
  // #endregion exit

  private get(containerId: string): FakeContainer {
    const c = this.containers.get(containerId);
    if (!c) throw containerNotFound(containerId);
    return c;
  }

  private containersOf(podSandboxId: string): FakeContainer[] {
    return [...this.containers.values()].filter((c) => c.status.podSandboxId === podSandboxId);
  }

  /** A 64-hex-digit id like a real runtime's; a counter keeps tests deterministic. */
  private newId(): string {
    return (++this.seq).toString(16).padStart(64, "0");
  }

  /** The CRI counts nanoseconds; our clocks count milliseconds, so the last six digits are 0. */
  private nowNs(): number {
    return this.clock.now() * 1e6;
  }
}

function copySandbox(s: PodSandbox): PodSandbox {
  const { id, metadata, state, createdAt, labels, annotations, runtimeHandler } = s;
  return {
    id,
    metadata: { ...metadata },
    state,
    createdAt,
    labels: { ...labels },
    annotations: { ...annotations },
    runtimeHandler,
  };
}

function copyContainer(s: Container): Container {
  const { id, podSandboxId, metadata, image, imageRef, state, createdAt, labels, annotations } = s;
  return {
    id,
    podSandboxId,
    metadata: { ...metadata },
    image: { ...image },
    imageRef,
    state,
    createdAt,
    labels: { ...labels },
    annotations: { ...annotations },
  };
}

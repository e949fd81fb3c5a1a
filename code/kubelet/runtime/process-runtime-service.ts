/**
 * ProcessRuntimeService — the CRI's runtime half with real processes: every container is a Node
 * child process running a catalog image's program, in a private root dir, started detached so it
 * outlives the kubelet.
 * Mirrors upstream's containerd/containerd internal/cri/server/container_start.go.
 *
 * Solves:
 * - the kubelet's pods must really run on this machine: StartContainer spawns
 *   `node --import <shim> <image program> args…` with the container's env and working dir in its own
 *   process group (detached), so a `kill -9` of the kubelet leaves it running, and StopContainer
 *   signals the whole group.
 * - a restarted kubelet must find its containers: every sandbox and container is a record on disk
 *   (process-state.ts); a new instance over the same root dir re-adopts a running container if its
 *   pid is alive *and* has the recorded start time, and otherwise reports it EXITED with the status
 *   the shim recorded (exit.json), or the signal the runtime had sent (stop), or — if nothing was
 *   recorded — exit code 255 with reason "Unknown", as containerd does for a container whose task
 *   vanished while it was down (unknownExitCode/unknownExitReason).
 * - what must happen while no kubelet runs (logs, the exit code, the memory limit, the port map)
 *   is done by the shim inside the container process (process-shim.ts).
 * - Node's own start dominates a container's start (≈ 60–80 ms of CPU): with `warmPool: N` the
 *   runtime keeps N Node processes booted and turns one into the container (process-warm-pool.ts);
 *   without it (the default) each container is a fresh `node` process.
 *
 * Invariants:
 * - a container moves CREATED → RUNNING → EXITED only; it exits once: `finalize` is the one place
 *   that sets EXITED, and it resolves every StopContainer waiting for the exit.
 * - reason: "Completed" for exit 0, "Error" otherwise, "OOMKilled" when the shim killed it for its
 *   memory limit, "StartError" (exit 128) when the process could not start, "Unknown" (255) when
 *   the exit was never observed — containerd's reasons and codes.
 * - every id is 64 random hex digits and every file lives under the root dir, so two runtimes
 *   with different root dirs on one machine never collide.
 * - a sandbox has no process of its own (no pause container): it is a record, an IP and a log dir.
 * - one live instance per root dir: a second instance over the same dir is how a restarted kubelet
 *   takes over, after the first is gone.
 *
 * What upstream does differently: no namespaces and no cgroups — a container shares the host's pid
 * space and users; its root is a host directory its programs reach through `containerPath`, not a
 * mount namespace over the image's filesystem; its network is a mapped loopback port
 * (network/pod-network.ts); its memory limit is its own RSS check (process-shim.ts); CPU limits,
 * hostPort mappings and a container's own stdin/tty are not implemented (exec has them).
 *
 * @upstream containerd/containerd internal/cri/server/container_start.go (StartContainer; errorStartExitCode/Reason on failure)
 * @upstream containerd/containerd internal/cri/server/container_stop.go (stopContainer: SIGTERM, timeout, SIGKILL)
 * @upstream containerd/containerd internal/cri/server/helpers.go (errorStartReason, completeExitReason, oomExitReason, unknownExitCode)
 * @upstream containerd/containerd internal/cri/server/restart.go (recover: containers found at start)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/apis/services.go (RuntimeService)
 * @chapter 07-kubelet
 */
import { type ChildProcess, spawn } from "node:child_process";
import { randomBytes } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { dirname, isAbsolute, join, posix } from "node:path";
import { pathToFileURL } from "node:url";
import {
  type Container,
  type ContainerConfig,
  type ContainerFilter,
  type ContainerStatus,
  type ExecProcess,
  type ExecRequest,
  type ExecSyncResult,
  matchesLabels,
  type PodSandbox,
  type PodSandboxConfig,
  type PodSandboxFilter,
  type PodSandboxStatus,
  type RuntimeService,
  type StreamingRuntime,
} from "./cri.ts";
import { CRIError, containerNotFound, sandboxNotFound } from "./cri-errors.ts";
import { resolveExecutable } from "./images/catalog.ts";
import { PodNetwork } from "./network/pod-network.ts";
import { type ExecTarget, execInContainer, execSyncInContainer, notFoundInPath } from "./process-exec.ts";
import { type ExitRecord, errorStartExitCode, errorStartReason, exitStatus } from "./process-exit.ts";
import {
  bundleProgram,
  type PresentImage,
  type ProcessImageService,
  tsxImportArgs,
} from "./process-image-service.ts";
import { type ShimConfig, type StartMessage, shimConfigEnv } from "./process-shim.ts";
import {
  type ContainerRecord,
  isSameProcess,
  processStartToken,
  readRecords,
  type SandboxRecord,
  writeRecord,
} from "./process-state.ts";
import { WarmPool } from "./process-warm-pool.ts";

export interface ProcessRuntimeOptions {
  /** Everything of this runtime lives here (records, container roots, the pod network). */
  rootDir: string;
  images: ProcessImageService;
  /** The node's pod CIDR (kubelet --pod-cidr); pod IPs come from it. */
  podCIDR?: string;
  /** The IP a hostNetwork sandbox reports (the node's InternalIP). */
  nodeIP?: string;
  /** How often adopted containers (not our children) are checked for an exit. */
  pollIntervalMs?: number;
  /** How many Node processes to keep booted for the next starts (process-warm-pool.ts); 0: none. */
  warmPool?: number;
}

interface LiveContainer {
  rec: ContainerRecord;
  /** Set while this instance is the process's parent: then its exit event says how it ended. */
  child?: ChildProcess;
  /** Resolved when the container exits. */
  waiters: (() => void)[];
}

export class ProcessRuntimeService implements RuntimeService, StreamingRuntime {
  readonly network: PodNetwork;
  private readonly sandboxes = new Map<string, SandboxRecord>();
  private readonly containers = new Map<string, LiveContainer>();
  private readonly sandboxDir: string;
  private readonly containerDir: string;
  private readonly nodeIP: string;
  private readonly images: ProcessImageService;
  private shim?: Promise<string[]>;
  private poller?: NodeJS.Timeout;
  private readonly pool?: WarmPool;
  /** Containers started from the warm pool so far (a figure for tests and benchmarks). */
  warmStarts = 0;

  constructor(private readonly opts: ProcessRuntimeOptions) {
    this.images = opts.images;
    this.nodeIP = opts.nodeIP ?? "127.0.0.1";
    this.sandboxDir = join(opts.rootDir, "sandboxes");
    this.containerDir = join(opts.rootDir, "containers");
    this.network = new PodNetwork(join(opts.rootDir, "network"), opts.podCIDR);
    this.recover();
    if (opts.warmPool) this.pool = new WarmPool(opts.warmPool, () => this.shimArgs(), opts.rootDir);
  }

  /** Stops watching (the poller); containers keep running, as when the kubelet goes away. */
  close(): void {
    this.pool?.close();
    if (this.poller) clearInterval(this.poller);
    this.poller = undefined;
    for (const c of this.containers.values()) c.child?.removeAllListeners("exit");
  }

  async RunPodSandbox(config: PodSandboxConfig, runtimeHandler = ""): Promise<string> {
    const id = newId();
    const ip = config.hostNetwork ? this.nodeIP : this.network.allocate(id);
    if (config.logDirectory) mkdirSync(config.logDirectory, { recursive: true });
    const rec: SandboxRecord = {
      config,
      status: {
        id,
        metadata: { ...config.metadata },
        state: "SANDBOX_READY",
        createdAt: nowNs(),
        labels: { ...config.labels },
        annotations: { ...config.annotations },
        runtimeHandler,
        network: { ip },
      },
    };
    this.sandboxes.set(id, rec);
    writeRecord(this.sandboxDir, id, rec);
    return id;
  }

  async StopPodSandbox(podSandboxId: string): Promise<void> {
    const sb = this.sandboxes.get(podSandboxId);
    if (!sb) throw sandboxNotFound(podSandboxId);
    // No grace here: the kubelet gave each container its grace period through StopContainer first.
    await Promise.all(this.containersOf(podSandboxId).map((c) => this.kill(c)));
    sb.status.state = "SANDBOX_NOTREADY";
    writeRecord(this.sandboxDir, podSandboxId, sb);
  }

  async RemovePodSandbox(podSandboxId: string): Promise<void> {
    const sb = this.sandboxes.get(podSandboxId);
    if (!sb) return;
    for (const c of this.containersOf(podSandboxId)) await this.RemoveContainer(c.rec.status.id);
    if (!sb.config.hostNetwork) this.network.release(podSandboxId, sb.status.network.ip);
    this.sandboxes.delete(podSandboxId);
    rmSync(join(this.sandboxDir, `${podSandboxId}.json`), { force: true });
  }

  async PodSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus> {
    const sb = this.sandboxes.get(podSandboxId);
    if (!sb) throw sandboxNotFound(podSandboxId);
    return structuredClone(sb.status);
  }

  async ListPodSandbox(filter: PodSandboxFilter = {}): Promise<PodSandbox[]> {
    const out: PodSandbox[] = [];
    for (const { status: s } of this.sandboxes.values()) {
      if (filter.id && filter.id !== s.id) continue;
      if (filter.state && filter.state !== s.state) continue;
      if (!matchesLabels(filter.labelSelector, s.labels)) continue;
      const { network: _network, ...sandbox } = structuredClone(s);
      out.push(sandbox);
    }
    return out;
  }

  async CreateContainer(podSandboxId: string, config: ContainerConfig, sandboxConfig: PodSandboxConfig) {
    const sb = this.sandboxes.get(podSandboxId);
    if (!sb) throw sandboxNotFound(podSandboxId);
    const image = this.images.present(config.image.image);
    if (!image) {
      // The kubelet pulls before it creates; a missing image here means it was removed in between.
      throw new CRIError("NotFound", `failed to resolve image "${config.image.image}": not found`);
    }
    const id = newId();
    mkdirSync(join(this.containerDir, id, "rootfs", "tmp"), { recursive: true });
    const env: Record<string, string> = {
      ...image.image.env,
      HOSTNAME: sandboxConfig.hostname || sandboxConfig.metadata.name,
    };
    for (const { key, value } of config.envs ?? []) env[key] = value;
    const logDirectory = sandboxConfig.logDirectory ?? sb.config.logDirectory;
    const rec: ContainerRecord = {
      config,
      env,
      status: {
        id,
        podSandboxId,
        metadata: { ...config.metadata },
        image: { ...config.image },
        imageRef: image.ref,
        state: "CONTAINER_CREATED",
        createdAt: nowNs(),
        startedAt: 0,
        finishedAt: 0,
        exitCode: 0,
        reason: "",
        message: "",
        labels: { ...config.labels },
        annotations: { ...config.annotations },
        // containerd reports the full path: <logDirectory>/<logPath>.
        logPath: config.logPath && logDirectory ? join(logDirectory, config.logPath) : (config.logPath ?? ""),
      },
    };
    this.containers.set(id, { rec, waiters: [] });
    writeRecord(this.containerDir, id, rec);
    return id;
  }

  // #region start-container
  async StartContainer(containerId: string): Promise<void> {
    const c = this.get(containerId);
    const { status, config } = c.rec;
    if (status.state !== "CONTAINER_CREATED") {
      // A container runs once: the kubelet restarts one by creating attempt N+1.
      throw new CRIError(
        "Unknown",
        `failed to set starting state for container "${containerId}": container is in ${status.state} state`,
      );
    }
    const target = this.execTarget(c);
    // The image config's rules: command replaces the entrypoint (and its cmd), args the cmd.
    const argv = config.command?.length
      ? [...config.command, ...(config.args ?? [])]
      : [...target.image.image.entrypoint, ...(config.args ?? target.image.image.cmd)];
    const exe = argv.length ? resolveExecutable(target.image.image, argv[0]) : undefined;
    if (!exe) {
      // runc fails to exec the process; containerd marks the container exited with 128/StartError.
      const why = argv.length ? notFoundInPath(argv[0]) : "no command specified";
      const message = `failed to create containerd task: failed to create shim task: OCI runtime create failed: runc create failed: unable to start container process: ${why}: unknown`;
      Object.assign(status, { state: "CONTAINER_EXITED", startedAt: 0, finishedAt: nowNs() });
      Object.assign(status, { exitCode: errorStartExitCode, reason: errorStartReason, message });
      writeRecord(this.containerDir, containerId, c.rec);
      throw new CRIError("Unknown", message);
    }
    const sb = this.sandboxes.get(status.podSandboxId);
    if (status.logPath) mkdirSync(dirname(status.logPath), { recursive: true });
    const shimConfig: ShimConfig = {
      ...this.shimBase(target),
      logFile: status.logPath || undefined,
      memoryLimitInBytes: config.linux?.resources?.memoryLimitInBytes || undefined,
      podIP: sb?.config.hostNetwork ? undefined : sb?.status.network.ip,
      networkDir: this.network.dir,
    };
    writeFileSync(join(this.containerDir, containerId, "shim.json"), JSON.stringify(shimConfig));
    const launch = {
      program: target.image.files[exe.program],
      args: [...(exe.argv0 ? [exe.argv0] : []), ...argv.slice(1)],
      env: c.rec.env,
      cwd: target.hostCwd,
      shimConfigFile: join(this.containerDir, containerId, "shim.json"),
    };
    const warm = this.pool?.take();
    const child = warm ?? (await this.spawnCold(launch));
    if (warm) {
      await this.pool?.start(warm, launch);
      this.warmStarts++;
    }
    child.unref();
    c.child = child;
    c.rec.pid = child.pid;
    c.rec.startToken = processStartToken(child.pid as number);
    Object.assign(status, { state: "CONTAINER_RUNNING", startedAt: nowNs() });
    writeRecord(this.containerDir, containerId, c.rec);
    // A warm process may already have run a short program to its end while we waited.
    if (child.exitCode !== null || child.signalCode !== null)
      this.finalize(c, { code: child.exitCode, signal: child.signalCode });
    else child.once("exit", (code, signal) => this.finalize(c, { code, signal }));
  }
  // #endregion start-container

  // #region stop-container
  async StopContainer(containerId: string, timeout: number): Promise<void> {
    const c = this.get(containerId);
    // Stopping a container that is not running is a no-op, so the kubelet can retry freely.
    if (c.rec.status.state !== "CONTAINER_RUNNING") return;
    if (timeout > 0) {
      this.signal(c, "SIGTERM");
      if (await this.waitExit(c, timeout * 1000)) return;
    }
    // SIGTERM was ignored or too slow: the grace period is over.
    await this.kill(c);
  }

  /** SIGKILL to the container's process group, then wait until its exit has been seen. */
  private async kill(c: LiveContainer): Promise<void> {
    if (c.rec.status.state !== "CONTAINER_RUNNING") return;
    this.signal(c, "SIGKILL");
    if (!(await this.waitExit(c, 10_000))) this.finalize(c); // cannot happen short of a stuck kernel
  }

  /** Records the signal first (an exit nobody sees is then known to be 128 + its number), then sends it. */
  private signal(c: LiveContainer, sig: "SIGTERM" | "SIGKILL"): void {
    c.rec.stopSignal = sig;
    writeRecord(this.containerDir, c.rec.status.id, c.rec);
    try {
      process.kill(-(c.rec.pid as number), sig);
    } catch {
      // ESRCH: it has just exited; finalize will see it.
    }
  }
  // #endregion stop-container

  async RemoveContainer(containerId: string): Promise<void> {
    const c = this.containers.get(containerId);
    if (!c) return;
    await this.kill(c);
    this.containers.delete(containerId);
    // The log file stays: the kubelet's container GC removes logs, not the runtime.
    rmSync(join(this.containerDir, containerId), { recursive: true, force: true });
    rmSync(join(this.containerDir, `${containerId}.json`), { force: true });
  }

  async ListContainers(filter: ContainerFilter = {}): Promise<Container[]> {
    const out: Container[] = [];
    for (const { rec } of this.containers.values()) {
      const s = rec.status;
      if (filter.id && filter.id !== s.id) continue;
      if (filter.podSandboxId && filter.podSandboxId !== s.podSandboxId) continue;
      if (filter.state && filter.state !== s.state) continue;
      if (!matchesLabels(filter.labelSelector, s.labels)) continue;
      const { id, podSandboxId, metadata, image, imageRef, state, createdAt, labels, annotations } =
        structuredClone(s);
      out.push({ id, podSandboxId, metadata, image, imageRef, state, createdAt, labels, annotations });
    }
    return out;
  }

  async ContainerStatus(containerId: string): Promise<ContainerStatus> {
    return structuredClone(this.get(containerId).rec.status);
  }

  async ExecSync(containerId: string, cmd: string[], timeoutMs: number): Promise<ExecSyncResult> {
    return execSyncInContainer(this.runningTarget(containerId), cmd, timeoutMs);
  }

  async Exec(req: ExecRequest): Promise<ExecProcess> {
    return execInContainer(this.runningTarget(req.containerId), req);
  }

  /** The process id of a running container (tests use it to check the process really exists). */
  pidOf(containerId: string): number | undefined {
    const c = this.get(containerId);
    return c.rec.status.state === "CONTAINER_RUNNING" ? c.rec.pid : undefined;
  }

  /** How many warm processes are ready for the next starts (0 without a pool). */
  warmProcesses(): number {
    return this.pool?.readyCount ?? 0;
  }

  /** The pids of the running containers (benchmarks kill their process groups on exit). */
  runningPids(): number[] {
    return [...this.containers.values()]
      .filter((c) => c.rec.status.state === "CONTAINER_RUNNING" && c.rec.pid !== undefined)
      .map((c) => c.rec.pid as number);
  }

  /** The one place a container becomes EXITED: by itself, by a signal, or found dead at recovery. */
  private finalize(
    c: LiveContainer,
    observed?: { code: number | null; signal: NodeJS.Signals | null },
  ): void {
    const s = c.rec.status;
    if (s.state !== "CONTAINER_RUNNING") return;
    let recorded: ExitRecord | undefined;
    try {
      recorded = JSON.parse(readFileSync(join(this.containerDir, s.id, "exit.json"), "utf8")) as ExitRecord;
    } catch {
      // Killed by a signal (or never started the shim): the shim could not write it.
    }
    const { exitCode, reason, message } = exitStatus(recorded, observed, c.rec.stopSignal);
    s.state = "CONTAINER_EXITED";
    s.finishedAt = recorded?.finishedAt ?? nowNs();
    Object.assign(s, { exitCode, reason, message });
    c.child = undefined;
    writeRecord(this.containerDir, s.id, c.rec);
    this.network.removeContainerPorts(s.id);
    for (const resolve of c.waiters.splice(0)) resolve();
  }

  /** Resolves true once the container has exited, false after `ms`. */
  private async waitExit(c: LiveContainer, ms: number): Promise<boolean> {
    const deadline = Date.now() + ms;
    while (c.rec.status.state === "CONTAINER_RUNNING") {
      const left = deadline - Date.now();
      if (left <= 0) return false;
      await new Promise<void>((resolve) => {
        const done = () => {
          clearTimeout(timer);
          c.waiters = c.waiters.filter((w) => w !== done);
          resolve();
        };
        const timer = setTimeout(done, Math.min(50, left));
        c.waiters.push(done);
      });
      // Not our child (adopted): no exit event comes, so look.
      if (!c.child && !isSameProcess(c.rec.pid, c.rec.startToken)) this.finalize(c);
    }
    return true;
  }

  /** Loads the records of an earlier instance over the same root dir: re-adopt or finalize. */
  private recover(): void {
    for (const rec of readRecords<SandboxRecord>(this.sandboxDir)) this.sandboxes.set(rec.status.id, rec);
    for (const rec of readRecords<ContainerRecord>(this.containerDir)) {
      const c: LiveContainer = { rec, waiters: [] };
      this.containers.set(rec.status.id, c);
      if (rec.status.state === "CONTAINER_RUNNING" && !isSameProcess(rec.pid, rec.startToken))
        this.finalize(c);
    }
    this.watchAdopted();
  }

  /** Adopted containers are not our children: a timer looks for their exit. */
  private watchAdopted(): void {
    const interval = this.opts.pollIntervalMs ?? 200;
    this.poller = setInterval(() => {
      for (const c of this.containers.values())
        if (
          c.rec.status.state === "CONTAINER_RUNNING" &&
          !c.child &&
          !isSameProcess(c.rec.pid, c.rec.startToken)
        )
          this.finalize(c);
    }, interval);
    this.poller.unref();
  }

  /** A new Node process for the container: booted now, running its program from the start. */
  private async spawnCold(launch: Omit<StartMessage, "type">): Promise<ChildProcess> {
    const child = spawn(process.execPath, [...(await this.shimArgs()), launch.program, ...launch.args], {
      cwd: launch.cwd,
      env: { ...launch.env, [shimConfigEnv]: launch.shimConfigFile },
      // Its own process group, no pipes to us: it outlives the kubelet, and a stop signals the group.
      detached: true,
      stdio: "ignore",
    });
    await new Promise<void>((resolve, reject) => {
      child.once("spawn", resolve);
      child.once("error", reject);
    });
    return child;
  }

  /** The Node flags that load the shim (bundled once per runtime into its root dir). */
  private shimArgs(): Promise<string[]> {
    if (!this.shim) {
      const source = new URL("./process-shim.ts", import.meta.url);
      this.shim =
        this.images.mode === "tsx"
          ? Promise.resolve([...tsxImportArgs(), "--import", source.href])
          : bundleProgram(source.pathname).then((code) => {
              const file = join(this.opts.rootDir, "shim.mjs");
              writeFileSync(file, code);
              return ["--import", pathToFileURL(file).href];
            });
    }
    return this.shim;
  }

  private shimBase(t: ExecTarget): Pick<ShimConfig, "containerId" | "rootfs" | "cwd" | "exitFile"> {
    return {
      containerId: t.containerId,
      rootfs: t.rootfs,
      cwd: t.cwd,
      exitFile: join(this.containerDir, t.containerId, "exit.json"),
    };
  }

  private execTarget(c: LiveContainer): ExecTarget {
    const { status, config, env } = c.rec;
    const image = this.images.present(status.image.image) as PresentImage;
    if (!image) throw new CRIError("NotFound", `failed to resolve image "${status.image.image}": not found`);
    const rootfs = join(this.containerDir, status.id, "rootfs");
    const cwd = config.workingDir && isAbsolute(config.workingDir) ? posix.normalize(config.workingDir) : "/";
    const hostCwd = join(rootfs, cwd);
    mkdirSync(hostCwd, { recursive: true });
    return {
      containerId: status.id,
      image,
      rootfs,
      cwd,
      hostCwd,
      env,
      shimConfigFile: join(this.containerDir, status.id, "shim.json"),
      shimArgs: () => this.shimArgs(),
    };
  }

  private runningTarget(containerId: string): ExecTarget {
    const c = this.get(containerId);
    if (c.rec.status.state !== "CONTAINER_RUNNING")
      throw new CRIError("Unknown", `container "${containerId}" is in ${c.rec.status.state} state`);
    return this.execTarget(c);
  }

  private get(containerId: string): LiveContainer {
    const c = this.containers.get(containerId);
    if (!c) throw containerNotFound(containerId);
    return c;
  }

  private containersOf(podSandboxId: string): LiveContainer[] {
    return [...this.containers.values()].filter((c) => c.rec.status.podSandboxId === podSandboxId);
  }
}

/** 64 random hex digits, like containerd's ids: unique across runtimes and restarts. */
function newId(): string {
  return randomBytes(32).toString("hex");
}

function nowNs(): number {
  return Date.now() * 1e6;
}

/**
 * The container shim — a preload (`node --import`) the process runtime puts in front of every
 * container process, doing from inside the container what must outlive the kubelet.
 * Mirrors upstream's containerd/containerd cmd/containerd-shim-runc-v2 (the role: a per-container process that is not the kubelet).
 *
 * Solves:
 * - a container must keep running, logging and having its exit recorded while the kubelet is
 *   down (`kill -9`, upgrade). containerd puts a shim process between itself and each container
 *   for this; a second process per container would double our cost, so the shim runs *inside*
 *   the container's Node process, loaded before the program:
 *   - logs: process.stdout/stderr writes become CRI log lines appended to the container's log file
 *     (cri-log-writer.ts), so no pipe to the kubelet exists that could break;
 *   - exit: the exit code is written to `exit.json` as the process exits, where any runtime
 *     instance later finds it;
 *   - memory limit: the shim watches its own RSS and, past linux.resources.memoryLimitInBytes,
 *     records reason OOMKilled and SIGKILLs itself (exit 137), as the kernel's OOM killer would;
 *   - pod network: `listen(8080)` becomes a listen on a free loopback port, recorded in the pod
 *     network's port map as <podIP>:8080 (network/pod-network.ts).
 * - programs see their own root: the shim publishes the container root for `containerPath`.
 *
 * Invariants:
 * - the shim's config comes from the file named by $COURSE_SHIM_CONFIG, and both of its variables
 *   are removed from process.env before the program runs: `env` in the container shows the pod's
 *   environment only.
 * - in exec mode ($COURSE_SHIM_MODE=exec, for ExecSync/Exec) only the root is set up: an exec'd
 *   command writes to its caller's streams, and its exit is not the container's.
 *
 * What upstream does differently (honest departures):
 * - memory: a cgroup limit is enforced by the kernel at allocation time and covers every process
 *   of the container; here one process checks its RSS every 50 ms, so a fast allocator can
 *   overshoot the limit by what it allocates in 50 ms, and exec'd commands are not counted.
 * - logs: only what the program writes through process.stdout/stderr (console.*, write) is
 *   captured — including uncaught errors, which the shim prints; a native write to fd 1/2 is lost.
 * - a process killed by a signal cannot record its own exit: the runtime records the signal it
 *   sent (stop.json), or, if it watched the process as its child, the signal it saw.
 *
 * @upstream containerd/containerd cmd/containerd-shim-runc-v2/main.go (the shim's role)
 * @upstream containerd/containerd internal/cri/io/logger.go (NewCRILogger: where container output goes)
 * @upstream containerd/containerd internal/cri/server/events.go (handleContainerExit: exit status recorded by the shim, OOM reason)
 * @chapter 07-kubelet
 */
import { openSync, readFileSync, writeFileSync, writeSync } from "node:fs";
import { Server } from "node:net";
import { pathToFileURL } from "node:url";
import { inspect } from "node:util";
import { CRILogWriter, type LogStream } from "./cri-log-writer.ts";
import { containerRootKey } from "./images/container-root.ts";
import { type PortMapEntry, portMapFile, writeFileAtomic } from "./network/pod-network.ts";
import { type ExitRecord, oomExitReason } from "./process-exit.ts";

/** What the runtime tells the shim (written to <container dir>/shim.json before the spawn). */
export interface ShimConfig {
  containerId: string;
  /** The container's root on the host, and its working dir as the container sees it. */
  rootfs: string;
  cwd: string;
  /** The CRI log file on the host (<logDirectory>/<logPath>); none: output is dropped. */
  logFile?: string;
  /** Where the exit status goes. */
  exitFile: string;
  memoryLimitInBytes?: number;
  /** The pod's IP; absent for host-network pods, whose listens are left alone. */
  podIP?: string;
  /** The pod network's dir, holding the port map. */
  networkDir?: string;
}

export const shimConfigEnv = "COURSE_SHIM_CONFIG";
export const shimModeEnv = "COURSE_SHIM_MODE";

function nowNs(): number {
  return Math.round((performance.timeOrigin + performance.now()) * 1e6);
}

function setUp(): void {
  const configFile = process.env[shimConfigEnv];
  const mode = process.env[shimModeEnv];
  delete process.env[shimConfigEnv];
  delete process.env[shimModeEnv];
  if (mode === "warm") waitForStart();
  else if (configFile) applyConfig(configFile, mode === "exec");
}

function applyConfig(configFile: string, exec: boolean): void {
  const config = JSON.parse(readFileSync(configFile, "utf8")) as ShimConfig;
  (globalThis as Record<symbol, unknown>)[containerRootKey] = { rootfs: config.rootfs, cwd: config.cwd };
  if (exec) return;
  if (config.logFile) captureOutput(config.logFile);
  recordExit(config.exitFile);
  if (config.memoryLimitInBytes) watchMemory(config.memoryLimitInBytes, config.exitFile);
  if (config.podIP && config.networkDir) mapListens(config.containerId, config.podIP, config.networkDir);
}

/** What the runtime sends a warm process to make it a container (process-warm-pool.ts). */
export interface StartMessage {
  type: "start";
  program: string;
  args: string[];
  env: Record<string, string>;
  cwd: string;
  shimConfigFile: string;
}

/**
 * A warm process: Node has booted, the program is not chosen yet. It says "ready" once it can
 * receive; on "start" it becomes the container — env, working dir, argv, then the same setup as
 * a cold start — cuts its IPC channel to the runtime (so it outlives the kubelet like any
 * container) and imports the program. If the runtime goes away first, it exits.
 */
function waitForStart(): void {
  let started = false;
  process.on("disconnect", () => {
    if (!started) process.exit(0);
  });
  process.on("message", (m: StartMessage) => {
    if (m?.type !== "start" || started) return;
    started = true;
    for (const k of Object.keys(process.env)) delete process.env[k];
    Object.assign(process.env, m.env);
    process.chdir(m.cwd);
    process.argv = [process.execPath, m.program, ...m.args];
    applyConfig(m.shimConfigFile, false);
    process.send?.({ type: "started" }, () => {
      process.disconnect();
      void import(pathToFileURL(m.program).href);
    });
  });
  // The runtime may be gone already (it died while this process booted): then just exit.
  if (process.connected) process.send?.({ type: "ready" });
  else process.exit(0);
}

/** stdout/stderr → CRI log lines in the log file (appended synchronously: nothing lost at exit). */
function captureOutput(logFile: string): void {
  const fd = openSync(logFile, "a");
  const writers: CRILogWriter[] = [];
  for (const name of ["stdout", "stderr"] as LogStream[]) {
    const writer = new CRILogWriter(name, (line) => writeSync(fd, line));
    writers.push(writer);
    const stream = process[name];
    stream.write = ((chunk: string | Uint8Array, encoding?: unknown, cb?: unknown) => {
      writer.write(typeof chunk === "string" ? chunk : Buffer.from(chunk).toString("utf8"));
      const done = typeof encoding === "function" ? encoding : cb;
      if (typeof done === "function") process.nextTick(done as () => void);
      return true;
    }) as typeof stream.write;
  }
  // Node prints an uncaught error itself, straight to fd 2; print it where the logs go instead.
  process.on("uncaughtExceptionMonitor", (err) => process.stderr.write(`${inspect(err)}\n`));
  process.on("exit", () => {
    for (const w of writers) w.end();
  });
}

function recordExit(exitFile: string): void {
  process.on("exit", (code) => {
    const record: ExitRecord = { exitCode: code, finishedAt: nowNs() };
    writeFileSync(exitFile, JSON.stringify(record));
  });
}

function watchMemory(limit: number, exitFile: string): void {
  setInterval(() => {
    if (process.memoryUsage.rss() <= limit) return;
    const record: ExitRecord = { exitCode: 137, reason: oomExitReason, finishedAt: nowNs() };
    writeFileSync(exitFile, JSON.stringify(record));
    process.kill(process.pid, "SIGKILL");
  }, 50).unref();
}

/** The port a listen() call asks for, if it is a TCP port (not a path, handle or port 0). */
function requestedPort(args: unknown[]): number | undefined {
  const first = args[0];
  let port: unknown = first;
  if (typeof first === "object" && first !== null) {
    const o = first as { port?: unknown; path?: unknown };
    if (o.path !== undefined) return undefined;
    port = o.port;
  }
  const n = typeof port === "string" && /^\d+$/.test(port) ? Number(port) : port;
  return typeof n === "number" && n > 0 ? n : undefined;
}

/** listen(containerPort) → listen on a free loopback port, recorded as podIP:containerPort. */
function mapListens(containerId: string, podIP: string, networkDir: string): void {
  const listen = Server.prototype.listen;
  Server.prototype.listen = function (this: Server, ...args: unknown[]) {
    const containerPort = requestedPort(args);
    if (containerPort === undefined) return listen.apply(this, args as Parameters<typeof listen>);
    const cb =
      typeof args[args.length - 1] === "function" ? (args[args.length - 1] as () => void) : undefined;
    this.once("listening", () => {
      const address = this.address();
      if (!address || typeof address === "string") return;
      const entry: PortMapEntry = {
        podIP,
        containerPort,
        host: "127.0.0.1",
        port: address.port,
        containerId,
      };
      writeFileAtomic(portMapFile(networkDir, podIP, containerPort), JSON.stringify(entry));
    });
    return listen.call(this, { port: 0, host: "127.0.0.1" }, cb);
  } as typeof Server.prototype.listen;
}

setUp();

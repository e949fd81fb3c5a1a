/**
 * WarmPool — Node processes booted ahead of time, each waiting to become a container, so that
 * StartContainer does not pay for Node's start.
 * No upstream counterpart: a container runtime's process start (fork/exec of a native binary) is
 * cheap; starting Node is not (≈ 60–80 ms of CPU, hundreds of ms on a loaded machine).
 *
 * Solves:
 * - pod start latency: with a pool, StartContainer hands a ready process the container's
 *   program, env, working dir and shim config over IPC and waits for its "started" — the boot
 *   already happened while the node was idle. The CPU cost is the same, paid earlier; a burst
 *   larger than the pool falls back to cold starts.
 *
 * Invariants:
 * - a pooled process is idle Node with the shim loaded in "warm" mode and an IPC channel to this
 *   runtime; it is in `ready` only after it said "ready" (a message sent earlier could be lost).
 * - once started it cuts the channel: from then on it is a container like a cold-started one
 *   (detached, its own process group, nothing tying it to the kubelet).
 * - a pooled process never outlives the runtime that made it: `close` kills it, and if the runtime
 *   dies, the channel closes and the process exits by itself.
 * - the pool refills itself after every take, booting one process at a time.
 *
 * Departure: `ps` shows a pooled container as `node --import …/shim.mjs -e` rather than its program.
 *
 * @upstream none — start-cost optimisation of the course's process runtime (the zygote idea: Android's app process pre-forking)
 * @chapter 07-kubelet
 */
import { type ChildProcess, spawn } from "node:child_process";
import { type StartMessage, shimModeEnv } from "./process-shim.ts";

export class WarmPool {
  private readonly ready: ChildProcess[] = [];
  private booting = 0;
  private closed = false;

  constructor(
    private readonly size: number,
    private readonly shimArgs: () => Promise<string[]>,
    private readonly cwd: string,
  ) {
    this.fill();
  }

  /** How many processes are ready to be taken. */
  get readyCount(): number {
    return this.ready.length;
  }

  /** A ready process, or undefined if none is (then the caller starts one cold). */
  take(): ChildProcess | undefined {
    const child = this.ready.shift();
    this.fill();
    return child;
  }

  /** Makes `child` the container described by `start`; resolves once it runs the program. */
  start(child: ChildProcess, start: Omit<StartMessage, "type">): Promise<void> {
    return new Promise<void>((resolve, reject) => {
      // Messages come before the channel's end, so a channel that ends with no "started" means
      // the process died while it set up (its exit may be seen before the message — not a failure).
      const onGone = () => reject(new Error("warm process exited before it started"));
      child.once("disconnect", onGone);
      child.on("message", (m: { type?: string }) => {
        if (m?.type !== "started") return;
        child.off("disconnect", onGone);
        resolve();
      });
      // The caller awaits the answer: the channel must keep this process alive until it comes.
      child.channel?.ref();
      child.send({ type: "start", ...start } satisfies StartMessage);
    });
  }

  /** Kills the idle processes (containers already started are not the pool's any more). */
  close(): void {
    this.closed = true;
    for (const child of this.ready.splice(0)) child.kill("SIGKILL");
  }

  /**
   * Boots the next process if the pool is short — one at a time: a burst of starts should not
   * compete for the CPU with as many Node boots to refill the pool.
   */
  private fill(): void {
    if (!this.closed && this.booting === 0 && this.ready.length < this.size) void this.boot();
  }

  private async boot(): Promise<void> {
    this.booting++;
    const args = await this.shimArgs();
    const child = spawn(process.execPath, [...args, "-e", ""], {
      cwd: this.cwd,
      env: { [shimModeEnv]: "warm" },
      detached: true,
      stdio: ["ignore", "ignore", "ignore", "ipc"],
    });
    // Neither the process nor its channel may keep the kubelet alive.
    child.unref();
    child.channel?.unref();
    child.once("error", () => {
      this.booting--;
      this.fill();
    });
    child.once("exit", () => {
      const i = this.ready.indexOf(child);
      if (i >= 0) this.ready.splice(i, 1);
    });
    child.once("message", (m: { type?: string }) => {
      this.booting--;
      if (m?.type !== "ready") return;
      if (this.closed) child.kill("SIGKILL");
      else this.ready.push(child);
      this.fill();
    });
  }
}

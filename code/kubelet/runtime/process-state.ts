/**
 * The process runtime's records on disk, and how it tells whether a recorded process still runs.
 * Mirrors upstream's containerd/containerd internal/cri/store/container/status.go.
 *
 * Solves:
 * - a kubelet that is `kill -9`ed and restarted must find its containers again: every sandbox and
 *   container is one JSON file under the runtime's root dir, rewritten atomically on every change,
 *   so a new runtime instance over the same dir knows what ran and what is still running.
 * - a pid alone does not name a process: after the container exits, the kernel may give its pid
 *   to an unrelated process. A record also keeps the process's *start time*, and a process only
 *   counts as the container if both match (containerd keeps the pid and asks its shim instead).
 *
 * Invariants:
 * - a record file is replaced whole (write to a temp file, rename) — a crash leaves the old or the
 *   new record, never a mix.
 * - `isSameProcess(pid, token)` is false for a dead pid, a zombie, and a live pid with another
 *   start time.
 *
 * @upstream containerd/containerd internal/cri/store/container/status.go (StoreStatus: the status checkpoint file)
 * @upstream containerd/containerd internal/cri/server/restart.go (recover: reload containers and sandboxes at start)
 * @chapter 07-kubelet
 */
import { execFileSync } from "node:child_process";
import { mkdirSync, readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import type { ContainerConfig, ContainerStatus, PodSandboxConfig, PodSandboxStatus } from "./cri.ts";
import { writeFileAtomic } from "./network/pod-network.ts";

export interface SandboxRecord {
  status: PodSandboxStatus;
  config: PodSandboxConfig;
}

export interface ContainerRecord {
  status: ContainerStatus;
  config: ContainerConfig;
  /** The container's environment as its process gets it. */
  env: Record<string, string>;
  pid?: number;
  /** The process's start time, read back when the pid is checked (see isSameProcess). */
  startToken?: string;
  /** The last signal the runtime sent by StopContainer/RemoveContainer, if any. */
  stopSignal?: "SIGTERM" | "SIGKILL";
}

export function readRecords<T>(dir: string): T[] {
  mkdirSync(dir, { recursive: true });
  const out: T[] = [];
  for (const name of readdirSync(dir)) {
    if (!name.endsWith(".json")) continue;
    try {
      out.push(JSON.parse(readFileSync(join(dir, name), "utf8")) as T);
    } catch {
      // A temp file's leftover or a half-removed record: not a record.
    }
  }
  return out;
}

export function writeRecord(dir: string, id: string, record: unknown): void {
  writeFileAtomic(join(dir, `${id}.json`), JSON.stringify(record));
}

/**
 * When the process `pid` started, as an opaque token: the start time in clock ticks since boot
 * from /proc/<pid>/stat on Linux, `ps -o lstart=` elsewhere. Undefined if no such process runs
 * (or it is a zombie: exited, waiting to be reaped).
 */
export function processStartToken(pid: number): string | undefined {
  try {
    // The command name (field 2) may hold spaces: split after its ")". Then the state is the
    // first field and the start time the 20th (field 22 of proc(5)).
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return fields[0] === "Z" || fields[0] === "X" ? undefined : fields[19];
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === "ENOENT" && process.platform === "linux") return undefined;
  }
  try {
    const out = execFileSync("ps", ["-o", "stat=,lstart=", "-p", String(pid)], { encoding: "utf8" }).trim();
    return out === "" || out.startsWith("Z") ? undefined : out.slice(out.indexOf(" ") + 1).trim();
  } catch {
    return undefined; // ps exits 1 for no such process
  }
}

/** True iff `pid` runs and is the process that was recorded with `token`. */
export function isSameProcess(pid: number | undefined, token: string | undefined): boolean {
  if (pid === undefined || token === undefined) return false;
  return processStartToken(pid) === token;
}

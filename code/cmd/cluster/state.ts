/**
 * The cluster's state file, `<dir>/cluster.json`: which supervisor runs the cluster, and every
 * process it started (pid, port, log, the exact command line). It is the cluster's lock, and what
 * `status`, `stop` and chaos read from another process.
 * No upstream counterpart: hack/local-up-cluster.sh keeps its pids in shell variables (and
 * cleans up in a trap), kind keeps its state in Docker containers' labels.
 *
 * Solves:
 * - a second `npm run cluster` on the same directory must refuse, not start a second set of
 *   components on the same data: the file is created exclusively (`wx`) before anything starts,
 *   and a supervisor that still runs owns it;
 * - a supervisor that was `kill -9`ed leaves its components running: the next command finds the
 *   file, sees its supervisor gone, and kills what it recorded — the components, then every
 *   container process the kubelets recorded under their root dirs;
 * - a pid alone names no process (the kernel reuses pids): every pid is recorded with its start
 *   token (process-state.ts) and only a process whose token still matches is ever signalled.
 *
 * Invariants:
 * - the file is replaced whole (a temp file, then rename): a reader sees the old or the new state;
 * - `killRecorded` signals only processes that are the recorded ones (pid and start token).
 *
 * Beyond CH8-PLAN's ClusterState: `supervisorStartToken` and each component's `startToken`, so
 * that another process can tell the recorded process from a later one with the same pid.
 *
 * @upstream none — course tooling (kubernetes/kubernetes hack/local-up-cluster.sh keeps the same facts in its shell: APISERVER_PID, CTLRMGR_PID, …, and its cleanup trap)
 * @chapter 08-cluster
 */
import { closeSync, existsSync, openSync, readFileSync, renameSync, rmSync, writeSync } from "node:fs";
import { join } from "node:path";
import {
  type ContainerRecord,
  isSameProcess,
  processStartToken,
  readRecords,
} from "../../kubelet/runtime/process-state.ts";

export type ComponentKind =
  | "etcd"
  | "kube-apiserver"
  | "kube-controller-manager"
  | "kube-scheduler"
  | "kubelet"
  | "kubemark";

export interface ComponentState {
  /** "etcd", "kube-apiserver", "kube-scheduler-1", "kubelet-node-1", "kubemark". */
  name: string;
  kind: ComponentKind;
  pid: number;
  /** processStartToken(pid) when it was started: tells it from a later process with its pid. */
  startToken?: string;
  port?: number;
  /** Absolute path of its log file (stdout and stderr). */
  log: string;
  /** The whole command line, program first, exactly as it was started (a restart reuses it). */
  args: string[];
}

// #region cluster-state
export interface ClusterState {
  version: 1;
  /** The `npm run cluster` process. */
  supervisorPid: number;
  supervisorStartToken?: string;
  /** RFC 3339. */
  startedAt: string;
  /** Absolute. */
  dir: string;
  /** https://127.0.0.1:<port> (or the --advertise-address): the API server. */
  server: string;
  /** The admin kubeconfig, absolute. */
  kubeconfig: string;
  components: ComponentState[];
  /** Where the process runtime keeps its container records. */
  kubeletRootDirs: string[];
  /** The live view's URL. */
  view?: string;
  /** The span file the cluster's collector writes (absent: the cluster does not trace). */
  traces?: string;
}
// #endregion cluster-state

export const stateFile = (dir: string) => join(dir, "cluster.json");

/** The state file's content; undefined when there is none (or it is not a state file). */
export function readState(dir: string): ClusterState | undefined {
  try {
    const s = JSON.parse(readFileSync(stateFile(dir), "utf8")) as ClusterState;
    return s && s.version === 1 && typeof s.supervisorPid === "number" ? s : undefined;
  } catch {
    return undefined;
  }
}

/** Replaces the state file whole. */
export function writeState(state: ClusterState): void {
  const file = stateFile(state.dir);
  const tmp = `${file}.${process.pid}.tmp`;
  const fd = openSync(tmp, "w", 0o600);
  try {
    writeSync(fd, `${JSON.stringify(state, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
  renameSync(tmp, file);
}

/**
 * Creates the state file only if there is none: the lock. False when another process created it
 * first (then the caller reads it and says who runs the cluster).
 */
export function claimState(state: ClusterState): boolean {
  let fd: number;
  try {
    fd = openSync(stateFile(state.dir), "wx", 0o600);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "EEXIST") return false;
    throw e;
  }
  try {
    writeSync(fd, `${JSON.stringify(state, null, 2)}\n`);
  } finally {
    closeSync(fd);
  }
  return true;
}

export function removeState(dir: string): void {
  rmSync(stateFile(dir), { force: true });
}

/** A fresh state for this process as the supervisor. */
export function newState(dir: string, server: string, kubeconfig: string): ClusterState {
  return {
    version: 1,
    supervisorPid: process.pid,
    supervisorStartToken: processStartToken(process.pid),
    startedAt: new Date().toISOString(),
    dir,
    server,
    kubeconfig,
    components: [],
    kubeletRootDirs: [],
  };
}

/** Whether the recorded supervisor still runs (the same process, not a reuse of its pid). */
export function supervisorAlive(state: ClusterState): boolean {
  if (state.supervisorStartToken === undefined) return processStartToken(state.supervisorPid) !== undefined;
  return isSameProcess(state.supervisorPid, state.supervisorStartToken);
}

/** Whether the recorded component is still the process it was started as. */
export function componentAlive(c: ComponentState): boolean {
  return c.startToken === undefined ? false : isSameProcess(c.pid, c.startToken);
}

/** Every container process the kubelets recorded that still runs (same pid, same start time). */
export function containerProcesses(rootDirs: string[]): { id: string; pid: number }[] {
  const out: { id: string; pid: number }[] = [];
  for (const root of rootDirs) {
    const dir = join(root, "runtime", "containers");
    if (!existsSync(dir)) continue;
    for (const rec of readRecords<ContainerRecord>(dir)) {
      if (rec.pid !== undefined && isSameProcess(rec.pid, rec.startToken))
        out.push({ id: rec.status.id, pid: rec.pid });
    }
  }
  return out;
}

// #region kill-recorded
/**
 * SIGKILL to every recorded component that is still the recorded process (SIGCONT after it, for
 * a SIGSTOPped one), then to every container's process group; returns the pids signalled.
 * Containers last: a kubelet still running could start a container again.
 */
export function killRecorded(state: ClusterState): number[] {
  const killed: number[] = [];
  for (const c of state.components) {
    if (!componentAlive(c)) continue;
    signal(c.pid, "SIGKILL");
    signal(c.pid, "SIGCONT");
    killed.push(c.pid);
  }
  for (const c of containerProcesses(state.kubeletRootDirs)) {
    // Each container leads its own process group: the group goes with it.
    signal(-c.pid, "SIGKILL");
    killed.push(c.pid);
  }
  return killed;
}
// #endregion kill-recorded

/** process.kill that ignores a process already gone. */
export function signal(pid: number, sig: NodeJS.Signals): boolean {
  try {
    process.kill(pid, sig);
    return true;
  } catch {
    return false;
  }
}

/** Every recorded pid (components and containers) that still runs as the recorded process. */
export function liveRecordedPids(state: ClusterState): number[] {
  return [
    ...state.components.filter(componentAlive).map((c) => c.pid),
    ...containerProcesses(state.kubeletRootDirs).map((c) => c.pid),
  ];
}

/** What taking the state file found: it is ours now (after cleaning a stale one), or a live supervisor has it. */
export type Acquired =
  | { ok: true; stale?: { supervisorPid: number; killed: number[] } }
  | { ok: false; running: ClusterState };

// #region acquire
/**
 * Takes the cluster directory for this process: creates the state file exclusively, or finds
 * who holds it. A holder that is gone (its supervisor no longer runs) is stale: what it recorded
 * is killed (only processes that are still the recorded ones) and the file taken over.
 */
export function acquireState(initial: ClusterState): Acquired {
  let stale: { supervisorPid: number; killed: number[] } | undefined;
  for (let attempt = 0; attempt < 5; attempt++) {
    if (claimState(initial)) return { ok: true, stale };
    let held = readState(initial.dir);
    if (!held) {
      // Another process may be between creating the file and writing it: look once more.
      sleepSync(200);
      held = readState(initial.dir);
    }
    if (held && supervisorAlive(held)) return { ok: false, running: held };
    const killed = held ? killRecorded(held) : [];
    stale = { supervisorPid: held?.supervisorPid ?? 0, killed: [...(stale?.killed ?? []), ...killed] };
    removeState(initial.dir);
  }
  throw new Error(`could not take ${stateFile(initial.dir)}: another process keeps writing it`);
}
// #endregion acquire

function sleepSync(ms: number): void {
  Atomics.wait(new Int32Array(new SharedArrayBuffer(4)), 0, 0, ms);
}

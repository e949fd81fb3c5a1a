/**
 * One component process of the cluster, as the ClusterLauncher starts it: spawned detached (its
 * own process group), its stdout and stderr appended to `logs/<name>.log`, its exit watched, and
 * its readiness read from that log. The launcher decides which components start in which order
 * and with which flags (launcher.ts); this file is how any one of them runs.
 * The closest upstream is hack/local-up-cluster.sh's way with each binary: `… >"${LOG}" 2>&1 &`,
 * the pid kept, and kube::util::wait_for_url (ours waits for a line of the log instead: not every
 * component serves a health URL here).
 *
 * Solves:
 * - a Ctrl-C on the terminal reaches the supervisor only (the child leads its own group), so the
 *   supervisor stops the components in order, and chaos's SIGSTOP of one never touches another;
 * - a restarted component appends to the same log, and "ready" means a ready line written by
 *   THIS incarnation (`logFrom`), never the line its predecessor wrote;
 * - a component that dies while the launcher waits for it fails the wait at once, with its exit
 *   and the last lines of its log, instead of a timeout minutes later.
 *
 * Invariants:
 * - `exited` resolves exactly once per incarnation, whatever killed it; an exit nobody asked for
 *   (`expected` unset) is the only one reported.
 *
 * @upstream kubernetes/kubernetes hack/local-up-cluster.sh (start_apiserver: the log redirection and the pid; kube::util::wait_for_url)
 * @chapter 08-cluster
 */
import { type ChildProcess, spawn } from "node:child_process";
import { closeSync, openSync, readFileSync, statSync } from "node:fs";
import { processStartToken } from "../../kubelet/runtime/process-state.ts";
import { LaunchError, tail } from "./preflight.ts";
import type { ComponentKind, ComponentState } from "./state.ts";

/** A component process and what its launcher knows about it. */
export interface Running {
  state: ComponentState;
  child: ChildProcess;
  exited: Promise<void>;
  /** Set before a stop or restart kills it: its exit is expected. */
  expected: boolean;
  /** The log's size when this incarnation started (logs are appended across restarts). */
  logFrom: number;
}

/** Whether the process still runs (it has neither exited nor been killed by a signal). */
export const isRunning = (r: Running): boolean => r.child.exitCode === null && r.child.signalCode === null;

// #region spawn
/**
 * Starts `argv` (program first) detached in `cwd`, stdout and stderr appended to `log`;
 * `onUnexpectedExit` is called when it exits and `expected` was not set.
 */
export function spawnComponent(
  c: {
    name: string;
    kind: ComponentKind;
    port: number | undefined;
    argv: string[];
    log: string;
    cwd: string;
  },
  onUnexpectedExit: (state: ComponentState, code: number | null, sig: NodeJS.Signals | null) => void,
): Running {
  const logFrom = fileSize(c.log);
  const fd = openSync(c.log, "a");
  const [program, ...args] = c.argv;
  let child: ChildProcess;
  try {
    child = spawn(program, args, { cwd: c.cwd, detached: true, stdio: ["ignore", fd, fd] });
  } finally {
    closeSync(fd);
  }
  if (child.pid === undefined) throw new LaunchError(`${c.name}: could not start ${program}`);
  const state: ComponentState = {
    name: c.name,
    kind: c.kind,
    pid: child.pid,
    startToken: processStartToken(child.pid),
    port: c.port,
    log: c.log,
    args: c.argv,
  };
  const r: Running = { state, child, expected: false, exited: Promise.resolve(), logFrom };
  r.exited = new Promise((resolve) =>
    child.once("exit", (code, sig) => {
      resolve();
      if (!r.expected) onUnexpectedExit(state, code, sig);
    }),
  );
  child.once("error", () => {}); // spawn errors surface as the exit above
  return r;
}

/**
 * Waits until this incarnation's log has `text`; fails at once if the process exits, when
 * `stopping()` turns true, or after `timeoutMs`.
 */
export async function waitForLog(
  r: Running,
  text: string,
  o: { timeoutMs: number; stopping: () => boolean },
): Promise<void> {
  const { name, log } = r.state;
  const deadline = Date.now() + o.timeoutMs;
  for (;;) {
    const content = readFileSync(log).subarray(r.logFrom).toString("utf8");
    if (content.includes(text)) return;
    if (!isRunning(r))
      throw new LaunchError(
        `${name} exited (${r.child.exitCode ?? r.child.signalCode}) before it was ready; see ${log}:\n${tail(log, 10)}`,
      );
    if (o.stopping()) throw new LaunchError("stopped while starting");
    if (Date.now() > deadline) throw new LaunchError(`${name} not ready in time (no "${text}" in ${log})`);
    await sleep(100);
  }
}
// #endregion spawn

function fileSize(file: string): number {
  try {
    return statSync(file).size;
  } catch {
    return 0;
  }
}

export const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * The exec probe — healthy if a command run inside the container exits 0.
 * Mirrors kubernetes/kubernetes pkg/probe/exec/exec.go.
 *
 * Solves:
 * - the container's own judgement of its health ("cat /tmp/healthy", "pg_isready"), run where the
 *   process lives. The kubelet does not run it itself: the container runtime's ExecSync does
 *   (CRI), so this file takes that call as a function — the runtime of chapter 7 provides it.
 * - the event for a failed command carries what the command printed, so the user sees why.
 *
 * Invariants:
 * - exit 0 → `success`; any other exit → `failure`; both carry stdout then stderr, cut at 10 KiB
 *   (the probe is a health check, not a log collector).
 * - a command that outlives `timeoutMs` is a `failure` (the ExecProbeTimeout gate, GA since 1.27,
 *   on in 1.32) whose output is the runtime's `command "…" timed out`; any other error from the
 *   runtime leaves the result `unknown` with the error set, and the prober discards that run.
 *
 * @upstream kubernetes/kubernetes pkg/probe/exec/exec.go (Probe, maxReadLength)
 * @upstream kubernetes/kubernetes pkg/probe/exec/errors.go (TimeoutError)
 * @upstream kubernetes/kubernetes pkg/kubelet/cri/remote/remote_runtime.go (ExecSync: the timeout's text)
 * @chapter 07-kubelet
 */

import type { ProbeOutcome } from "./probe.ts";

/** 10 KiB: upstream's maxReadLength for an exec probe's output. */
export const maxReadLength = 10 * 1024;

export interface ExecSyncResult {
  exitCode: number;
  stdout: string;
  stderr: string;
}

/** The runtime's ExecSync: runs `cmd` in the container; rejects with ExecTimeoutError after `timeoutMs`. */
export type ExecSync = (cmd: string[], timeoutMs: number) => Promise<ExecSyncResult>;

/** What an ExecSync rejects with when the command outlives its timeout (upstream's TimeoutError). */
export class ExecTimeoutError extends Error {
  constructor(
    readonly cmd: string[],
    readonly timeoutMs: number,
  ) {
    super(`command ${JSON.stringify(cmd.join(" "))} timed out`);
    this.name = "ExecTimeoutError";
  }
}

/** Runs the exec probe `cmd` through `execSync`. */
export async function doExecProbe(
  execSync: ExecSync,
  cmd: string[],
  timeoutMs: number,
): Promise<ProbeOutcome> {
  let res: ExecSyncResult;
  try {
    res = await execSync(cmd, timeoutMs);
  } catch (err) {
    if (err instanceof ExecTimeoutError) return { result: "failure", output: err.message };
    return { result: "unknown", output: "", error: err as Error };
  }
  // Upstream points stdout and stderr at one limited writer: the first 10 KiB written win.
  const output = (res.stdout + res.stderr).slice(0, maxReadLength);
  return { result: res.exitCode === 0 ? "success" : "failure", output };
}

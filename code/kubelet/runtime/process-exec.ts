/**
 * Exec in a process-runtime container — ExecSync for exec probes, Exec for `kubectl exec`: a new
 * process of the container's image, with the container's env, root and working dir.
 * Mirrors upstream's containerd/containerd internal/cri/server/container_execsync.go.
 *
 * Solves:
 * - an exec probe (`cat /tmp/healthy`) must look at *this* container's files and get its exit code;
 *   a non-zero exit is an answer, not a runtime failure (CodeExitError), a timeout is a probe
 *   failure (ExecTimeoutError, "command … timed out"), and a command the image does not have
 *   fails as runc says it: `exec: "foo": executable file not found in $PATH`, exit 127.
 * - `kubectl exec -it … -- sh` needs a terminal. Without native modules there is no pty, so with
 *   `tty` the runtime plays the terminal's line discipline itself: it echoes what is typed, edits
 *   the line (backspace), hands complete lines to the command ("\r" → "\n"), turns Ctrl-C into
 *   SIGINT and Ctrl-D on an empty line into end of input, translates output "\n" to "\r\n" (as a
 *   terminal's onlcr does) and merges stderr into stdout. Programs cannot tell they have a tty
 *   (isatty is false) and `resize` does nothing; $TERM is set, as runc sets it for a terminal.
 *
 * Invariants:
 * - an exec'd process is not the container: it writes to the caller's streams, not to the log, and
 *   its exit does not end the container.
 * - ExecSync kills the command at its timeout (timeoutMs 0 = no timeout).
 *
 * @upstream containerd/containerd internal/cri/server/container_execsync.go (execInternal: timeout kills the exec process)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cri-client/pkg/remote_runtime.go (ExecSync: non-zero exit → CodeExitError)
 * @upstream opencontainers/runc libcontainer/standard_init_linux.go (exec: "…": executable file not found in $PATH)
 * @chapter 07-kubelet
 */
import { type ChildProcess, spawn } from "node:child_process";
import { constants } from "node:os";
import { PassThrough, Transform } from "node:stream";
import { ExecTimeoutError } from "../prober/probe/exec.ts";
import type { ExecProcess, ExecRequest, ExecSyncResult } from "./cri.ts";
import { CodeExitError } from "./cri-errors.ts";
import { resolveExecutable } from "./images/catalog.ts";
import type { PresentImage } from "./process-image-service.ts";
import { shimConfigEnv, shimModeEnv } from "./process-shim.ts";

/** What an exec needs to know of its container. */
export interface ExecTarget {
  containerId: string;
  image: PresentImage;
  rootfs: string;
  /** The working dir as the container sees it, and on the host. */
  cwd: string;
  hostCwd: string;
  env: Record<string, string>;
  shimConfigFile: string;
  shimArgs: () => Promise<string[]>;
}

/** runc's words for a command the image does not have. */
export function notFoundInPath(cmd: string): string {
  return cmd.includes("/")
    ? `exec: "${cmd}": stat ${cmd}: no such file or directory`
    : `exec: "${cmd}": executable file not found in $PATH`;
}

/** Spawns `cmd` in the container, or undefined if the image has no such executable. */
async function spawnIn(
  t: ExecTarget,
  cmd: string[],
  stdio: ("pipe" | "ignore")[],
  extraEnv: Record<string, string> = {},
): Promise<ChildProcess | undefined> {
  const exe = cmd.length ? resolveExecutable(t.image.image, cmd[0]) : undefined;
  if (!exe) return undefined;
  const args = [
    ...(await t.shimArgs()),
    t.image.files[exe.program],
    ...(exe.argv0 ? [exe.argv0] : []),
    ...cmd.slice(1),
  ];
  return spawn(process.execPath, args, {
    cwd: t.hostCwd,
    env: { ...t.env, ...extraEnv, [shimConfigEnv]: t.shimConfigFile, [shimModeEnv]: "exec" },
    stdio: stdio as ("pipe" | "ignore")[],
  });
}

function exitCodeOf(code: number | null, signal: NodeJS.Signals | null): number {
  return signal ? 128 + constants.signals[signal] : (code ?? 0);
}

export async function execSyncInContainer(
  t: ExecTarget,
  cmd: string[],
  timeoutMs: number,
): Promise<ExecSyncResult> {
  const child = await spawnIn(t, cmd, ["ignore", "pipe", "pipe"]);
  if (!child) {
    const stderr = `OCI runtime exec failed: exec failed: unable to start container process: ${notFoundInPath(cmd[0] ?? "")}: unknown`;
    throw new CodeExitError(cmd, 127, "", stderr);
  }
  let stdout = "";
  let stderr = "";
  child.stdout?.setEncoding("utf8").on("data", (s: string) => {
    stdout += s;
  });
  child.stderr?.setEncoding("utf8").on("data", (s: string) => {
    stderr += s;
  });
  let timedOut = false;
  const timer =
    timeoutMs > 0
      ? setTimeout(() => {
          timedOut = true;
          child.kill("SIGKILL");
        }, timeoutMs)
      : undefined;
  const exitCode = await new Promise<number>((resolve) =>
    child.once("close", (code, signal) => resolve(exitCodeOf(code, signal))),
  );
  clearTimeout(timer);
  if (timedOut) throw new ExecTimeoutError(cmd, timeoutMs);
  if (exitCode !== 0) throw new CodeExitError(cmd, exitCode, stdout, stderr);
  return { stdout, stderr };
}

export async function execInContainer(t: ExecTarget, req: ExecRequest): Promise<ExecProcess> {
  const child = await spawnIn(
    t,
    req.cmd,
    [req.stdin ? "pipe" : "ignore", "pipe", "pipe"],
    req.tty ? { TERM: "xterm" } : {},
  );
  if (!child) {
    // Upstream's exec session prints runc's error and ends with exit code 127 (command not found).
    const out = new PassThrough();
    out.end(
      `OCI runtime exec failed: exec failed: unable to start container process: ${notFoundInPath(req.cmd[0] ?? "")}: unknown\r\n`,
    );
    return { stdin: null, stdout: out, stderr: null, resize() {}, exited: Promise.resolve(127), kill() {} };
  }
  const exited = new Promise<number>((resolve) =>
    child.once("close", (code, signal) => resolve(exitCodeOf(code, signal))),
  );
  if (!req.tty) {
    return {
      stdin: child.stdin,
      stdout: child.stdout as NodeJS.ReadableStream,
      stderr: child.stderr,
      resize() {},
      exited,
      kill: () => child.kill("SIGKILL"),
    };
  }
  // A terminal: stderr joins stdout, "\n" becomes "\r\n", and typed input goes through a line discipline.
  const out = new PassThrough();
  let open = 2;
  for (const s of [child.stdout, child.stderr]) {
    s?.pipe(onlcr(), { end: false }).pipe(out, { end: false });
    s?.once("end", () => {
      if (--open === 0) setImmediate(() => out.end());
    });
  }
  const stdin = child.stdin ? lineDiscipline(child, out) : null;
  return { stdin, stdout: out, stderr: null, resize() {}, exited, kill: () => child.kill("SIGKILL") };
}

/** Output post-processing of a terminal: "\n" → "\r\n". */
function onlcr(): Transform {
  return new Transform({
    transform(chunk: Buffer, _enc, cb) {
      cb(null, chunk.toString("utf8").replace(/\r?\n/g, "\r\n"));
    },
  });
}

/** The canonical-mode input of a terminal, for a process that has none: echo, erase, lines, ^C, ^D. */
function lineDiscipline(child: ChildProcess, echo: PassThrough): PassThrough {
  const input = new PassThrough();
  let line = "";
  input.setEncoding("utf8").on("data", (text: string) => {
    for (const ch of text) {
      if (ch === "\r" || ch === "\n") {
        echo.write("\r\n");
        child.stdin?.write(`${line}\n`);
        line = "";
      } else if (ch === "\x7f" || ch === "\b") {
        if (line.length) echo.write("\b \b");
        line = line.slice(0, -1);
      } else if (ch === "\x03") {
        echo.write("^C\r\n");
        line = "";
        child.kill("SIGINT");
      } else if (ch === "\x04") {
        if (line === "") child.stdin?.end();
      } else {
        line += ch;
        echo.write(ch);
      }
    }
  });
  input.once("end", () => child.stdin?.end());
  return input;
}

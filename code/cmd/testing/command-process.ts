/**
 * CommandProcess — a command of code/cmd/ (or a chapter's demo) started as its own process, as a
 * learner or a script starts it (`node --import tsx code/cmd/etcd.ts …`), for their tests.
 *
 * Solves: a command's test must see what a script sees — the exit code, the output, real
 * signals — and these tests all need the same three things: start the file, collect its output,
 * wait (bounded) for a line.
 *
 * Invariants:
 * - `exit` settles once the process has exited and its streams are closed, with the exit code
 *   (null if a signal killed it);
 * - `waitFor…` never waits longer than its timeout: a test that misses a line or an exit fails
 *   instead of hanging past vitest's timeout (which would skip its `finally`);
 * - the caller kills the process in a `finally` (`kill()` is harmless after the exit), so a
 *   failing test leaves nothing running.
 *
 * @upstream none — test harness (upstream's commands are tested in process, by app/testing's StartTestServer)
 * @chapter 01-etcd-watch
 */
import { type ChildProcess, spawn } from "node:child_process";

export interface CommandProcess {
  child: ChildProcess;
  stdout(): string;
  stderr(): string;
  exit: Promise<number | null>;
  /**
   * `exit`, but never longer than `timeoutMs` (default 20 s, under vitest's test timeout): a
   * process that does not exit fails its test, and the test's `finally` still gets to kill it.
   */
  waitForExit(timeoutMs?: number): Promise<number | null>;
  /** Waits until stderr contains `text`; throws after `timeoutMs`. */
  waitForStderr(text: string, timeoutMs?: number): Promise<void>;
  /** Waits until stdout contains `text`; throws after `timeoutMs`. */
  waitForStdout(text: string, timeoutMs?: number): Promise<void>;
  /** SIGKILL, for `finally`: nothing may outlive its test. */
  kill(): void;
}

/**
 * Starts `file` (a command's .ts, or a chapter's demo) with `args`, through tsx, stdout and
 * stderr collected; `env` is added to this process's environment.
 */
export function startCommand(file: string, args: string[], env: NodeJS.ProcessEnv = {}): CommandProcess {
  const child = spawn(process.execPath, ["--import", "tsx", file, ...args], {
    stdio: ["ignore", "pipe", "pipe"],
    env: { ...process.env, ...env },
  });
  let stdout = "";
  let stderr = "";
  child.stdout?.on("data", (d) => {
    stdout += d;
  });
  child.stderr?.on("data", (d) => {
    stderr += d;
  });
  const exit = new Promise<number | null>((resolve) => child.on("close", resolve));
  return {
    child,
    stdout: () => stdout,
    stderr: () => stderr,
    exit,
    waitForExit: async (timeoutMs = 20_000) => {
      let exited: number | null | undefined;
      void exit.then((code) => {
        exited = code;
      });
      await waitFor(() => exited !== undefined, "the process to exit", timeoutMs);
      return exited as number | null;
    },
    waitForStderr: (text, timeoutMs) => waitFor(() => stderr.includes(text), JSON.stringify(text), timeoutMs),
    waitForStdout: (text, timeoutMs) => waitFor(() => stdout.includes(text), JSON.stringify(text), timeoutMs),
    kill: () => {
      child.kill("SIGKILL");
    },
  };
}

/** Polls `check` until it holds; throws `timed out waiting for <what>` after `timeoutMs`. */
export async function waitFor(check: () => boolean, what: string, timeoutMs = 30_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

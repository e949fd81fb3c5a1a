/**
 * Child processes of a benchmark — API servers, etcd, writers, a controller-manager — tracked so
 * that none outlives the benchmark, whichever way it ends, and stopped the polite way first.
 * No upstream counterpart: upstream's benchmarks are Go tests in one process (test/integration).
 *
 * Solves:
 * - a benchmark that throws, is interrupted (Ctrl-C) or simply returns must not leave a server
 *   child holding a port or a temp dir of a thousand pods behind: `runBenchmark` installs one
 *   exit hook and the signal handlers, and every child started through `track` is SIGKILLed by it;
 * - a child asked to stop gets SIGTERM and 5 s to close its listeners and flush, then SIGKILL;
 * - the API server child prints its URL once it listens: `startInsecureAPIServerChild` waits for
 *   that line (`Serving insecurely on …`), or fails with the child's last output if it exits.
 *
 * Invariants:
 * - `cleanupSync` is synchronous (it runs inside process.on("exit")): kill and rm only, no await;
 * - progress goes to stderr, so a benchmark's `--json` leaves stdout with its JSON alone.
 *
 * @upstream none — benchmark tooling (kubernetes/kubernetes test/integration/framework starts its servers in-process instead)
 * @chapter 00-life-of-a-pod
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, rmSync } from "node:fs";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

/** The repository root (this file is code/testing/child-process.ts). */
export const repoRoot = fileURLToPath(new URL("../..", import.meta.url));

const children: ChildProcess[] = [];
const tempDirs: string[] = [];

/** Kills `child` on every exit of this process; returns it. */
export function track<C extends ChildProcess>(child: C): C {
  children.push(child);
  return child;
}

/** Removes `dir` (recursively) on every exit of this process; returns it. */
export function trackTempDir(dir: string): string {
  tempDirs.push(dir);
  return dir;
}

/** SIGKILL to every tracked child still running, and the temp dirs removed (safe in an exit hook). */
export function cleanupSync(): void {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

/** SIGTERM, up to `graceMs` for it to exit, then SIGKILL. */
export async function stopChild(child: ChildProcess, graceMs = 5000): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, graceMs))]);
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

/**
 * CPU seconds (user + system) a process has used so far, from /proc/<pid>/stat (Linux; undefined
 * elsewhere, and the figure is then left out). On a shared machine wall-clock rates vary with the
 * neighbours' load; CPU per unit of work varies far less.
 */
export function cpuSeconds(pid: number | undefined): number | undefined {
  if (pid === undefined) return undefined;
  try {
    // The command name (field 2) may hold spaces, so split after its ")": utime and stime are
    // then the 12th and 13th fields, in clock ticks of 1/100 s.
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return undefined;
  }
}

/** One progress line on stderr, `… what is happening`. */
export function progress(line: string): void {
  console.error(`… ${line}`);
}

/**
 * Runs a benchmark's `main` with the cleanup hooked to every exit: success (exit 0, with the
 * time taken on stderr), failure (`<name> benchmark failed: …`, exit 1), SIGINT/SIGTERM (exit 130).
 */
export function runBenchmark(name: string, main: () => Promise<void>): void {
  process.on("exit", cleanupSync);
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => {
      cleanupSync();
      process.exit(130);
    });
  const t0 = performance.now();
  main()
    .then(() => {
      progress(`done in ${((performance.now() - t0) / 1000).toFixed(1)} s`);
      cleanupSync();
      process.exit(0);
    })
    .catch((err: unknown) => {
      console.error(`${name} benchmark failed: ${err instanceof Error ? err.message : String(err)}`);
      cleanupSync();
      process.exit(1);
    });
}

/**
 * Runs `node --import tsx <script> args…` from the repository root, tracked; its stdout and stderr
 * are piped (the last 4,000 characters of both are kept for error messages, in `output()`).
 */
export function spawnScript(script: string, args: string[]): { child: ChildProcess; output: () => string } {
  const child = track(
    spawn(process.execPath, ["--import", "tsx", script, ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  let out = "";
  const keep = (chunk: string) => {
    out = (out + chunk).slice(-4000);
  };
  child.stdout?.setEncoding("utf8").on("data", keep);
  child.stderr?.setEncoding("utf8").on("data", keep);
  return { child, output: () => out };
}

/** Resolves with the first match of `pattern` in the child's output; rejects if it exits first. */
export function waitForOutput(
  started: { child: ChildProcess; output: () => string },
  pattern: RegExp,
  what: string,
): Promise<RegExpExecArray> {
  return new Promise((resolve, reject) => {
    const look = () => {
      const m = pattern.exec(started.output());
      if (!m) return;
      started.child.stdout?.off("data", look);
      started.child.stderr?.off("data", look);
      resolve(m);
    };
    started.child.stdout?.on("data", look);
    started.child.stderr?.on("data", look);
    started.child.once("exit", (code, signal) =>
      reject(new Error(`${what} exited with ${signal ?? code}: ${started.output()}`)),
    );
    look();
  });
}

/**
 * A benchmark's own test: runs `script` (through tsx, from the repository root) to its end and
 * resolves with its exit code and everything it printed. Untracked: the benchmark cleans up its
 * own children, and the test waits for it to exit.
 */
export function runScriptToEnd(
  script: string,
  args: string[],
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  return new Promise((resolve) => {
    const tsx = join(repoRoot, "node_modules", "tsx", "dist", "cli.mjs");
    const child = spawn(process.execPath, [tsx, script, ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      stdout += c;
    });
    child.stderr.setEncoding("utf8").on("data", (c: string) => {
      stderr += c;
    });
    child.on("exit", (code) => resolve({ code, stdout, stderr }));
  });
}

/**
 * code/cmd/kube-apiserver.ts in a child process on plain HTTP (`--insecure-port 0`: a free port,
 * AlwaysAllow, no admission) with `--v 0` and `extraArgs`; resolves once it listens.
 */
export async function startInsecureAPIServerChild(
  extraArgs: string[] = [],
): Promise<{ url: string; child: ChildProcess }> {
  const bin = join(repoRoot, "code", "cmd", "kube-apiserver.ts");
  const started = spawnScript(bin, ["--insecure-port", "0", "--v", "0", ...extraArgs]);
  const m = await waitForOutput(started, /Serving insecurely on ([\d.]+:\d+)/, "kube-apiserver");
  return { url: `http://${m[1]}`, child: started.child };
}

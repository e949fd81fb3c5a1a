// `npm run bench`'s runner (scripts/bench.ts): an unknown name is a one-line usage with the list,
// and a signal sent to the runner alone — not to its process group, as a terminal's Ctrl-C is —
// reaches the benchmark it is running, which stops everything it started; the runner then exits
// 130 and starts nothing more. (Before, the runner died and the benchmark ran on, orphaned.)
import { readdirSync, readFileSync } from "node:fs";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  cleanupSync,
  repoRoot,
  runScriptToEnd,
  spawnScript,
  waitForOutput,
} from "../code/testing/child-process.ts";
import { waitFor } from "../code/testing/wait-for.ts";

const runner = join(repoRoot, "scripts", "bench.ts");

/** Every process whose parent chain leads to `root` (read from /proc: Linux). */
function descendants(root: number): number[] {
  const parent = new Map<number, number>();
  for (const entry of readdirSync("/proc")) {
    if (!/^\d+$/.test(entry)) continue;
    try {
      const stat = readFileSync(`/proc/${entry}/stat`, "utf8");
      parent.set(Number(entry), Number(stat.slice(stat.lastIndexOf(")") + 2).split(" ")[1]));
    } catch {
      // it exited while we read
    }
  }
  const found: number[] = [];
  const frontier = [root];
  while (frontier.length > 0) {
    const p = frontier.pop() as number;
    for (const [pid, ppid] of parent)
      if (ppid === p) {
        found.push(pid);
        frontier.push(pid);
      }
  }
  return found;
}

/** Whether `pid` still runs (a zombie waiting to be reaped has ended). */
function alive(pid: number): boolean {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2)[0] !== "Z";
  } catch {
    return false;
  }
}

afterEach(() => cleanupSync());

describe("npm run bench", () => {
  it("an unknown benchmark: one usage line and the list, exit 2", async () => {
    const { code, stderr } = await runScriptToEnd(runner, ["nope"]);
    expect(code).toBe(2);
    expect(stderr).toMatch(/^no benchmark "nope"\. usage: npm run bench -- <name>/);
    expect(stderr).toMatch(/^benchmarks: all, .*process-start/m);
  });

  it("a SIGTERM to the runner alone stops the running benchmark and what it started", async () => {
    const started = spawnScript(runner, ["process-start", "--quick"]);
    // A container is running by now: the benchmark has processes of its own to clean up.
    await waitForOutput(started, /tsx: start 1\/\d+/, "the benchmark's first container start");
    const pid = started.child.pid as number;
    const below = descendants(pid);
    expect(below.length, "the benchmark and its containers").toBeGreaterThan(1);
    const exited = new Promise<number | null>((resolve) => started.child.on("exit", resolve));
    process.kill(pid, "SIGTERM");
    expect(await exited, started.output()).toBe(130);
    expect(started.output()).toMatch(/^process-start: stopped by SIGTERM$/m);
    await waitFor("every process the benchmark started to end", async () =>
      below.every((p) => !alive(p)) ? true : undefined,
    ).catch(() => {
      throw new Error(`still running: ${below.filter(alive).join(", ")}\n${started.output()}`);
    });
  }, 120_000);
});

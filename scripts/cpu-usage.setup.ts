/**
 * CPU seconds per test file: a vitest setup file that `COURSE_CPU_LOG=<file> npx vitest run` loads.
 *
 * Solves: on a shared or small machine wall times say little about what a test costs; CPU time
 * does. Each test file runs in a worker process of its own (vitest's default forks pool), so the
 * worker's CPU from this file's first line to the file's last hook is the file's cost: importing
 * its modules, its tests, and every child process it started and waited for (servers, kubectl,
 * chromium, a nested vitest). The vitest main process's share (transforming modules) is not in it.
 *
 * Invariants:
 * - one JSON line per test file, appended synchronously: `{ file, cpu, self, children, tests }`;
 * - Linux only for the children's share (/proc/self/stat); elsewhere `children` is 0.
 *
 * `npx tsx scripts/cpu-usage.ts <file>` lists the heaviest files.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { appendFileSync, existsSync, readFileSync } from "node:fs";
import type { Suite } from "@vitest/runner";
import { afterAll } from "vitest";

/** Seconds of CPU this process's waited-for children have used (utime+stime of reaped descendants). */
function childrenCpu(): number {
  if (!existsSync("/proc/self/stat")) return 0;
  const stat = readFileSync("/proc/self/stat", "utf8");
  const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
  // Fields 16 and 17 of proc(5) (cutime, cstime), counted from 1 with pid and comm as 1 and 2.
  return (Number(fields[13]) + Number(fields[14])) / 100;
}

const out = process.env.COURSE_CPU_LOG;
const selfAtStart = process.cpuUsage();
const childrenAtStart = childrenCpu();

// biome-ignore lint/correctness/noEmptyPattern: vitest reads a hook's first parameter as the fixtures it wants.
afterAll(({}, suite) => {
  if (!out) return;
  const used = process.cpuUsage(selfAtStart);
  const self = (used.user + used.system) / 1e6;
  const children = childrenCpu() - childrenAtStart;
  const file = "filepath" in suite ? suite.filepath : suite.file.filepath;
  const countTests = (s: Readonly<Suite>): number =>
    s.tasks.reduce((n, t) => n + (t.type === "suite" ? countTests(t) : 1), 0);
  appendFileSync(
    out,
    `${JSON.stringify({ file, cpu: +(self + children).toFixed(2), self: +self.toFixed(2), children: +children.toFixed(2), tests: countTests(suite) })}\n`,
  );
});

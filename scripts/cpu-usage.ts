/**
 * `npx tsx scripts/cpu-usage.ts <log> [n]`: the test files that cost the most CPU, from the log a
 * run with `COURSE_CPU_LOG=<log>` wrote (see cpu-usage.setup.ts), and the total.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { readFileSync } from "node:fs";
import { relative } from "node:path";
import { root } from "./course.ts";

interface Line {
  file: string;
  cpu: number;
  self: number;
  children: number;
  tests: number;
}

const [log, n = "20"] = process.argv.slice(2);
if (!log) {
  console.error("usage: tsx scripts/cpu-usage.ts <log written by COURSE_CPU_LOG=…> [how many]");
  process.exit(2);
}
const lines = readFileSync(log, "utf8")
  .split("\n")
  .filter(Boolean)
  .map((l) => JSON.parse(l) as Line)
  .sort((a, b) => b.cpu - a.cpu);
const total = lines.reduce((s, l) => s + l.cpu, 0);
console.log(
  `${lines.length} files, ${lines.reduce((s, l) => s + l.tests, 0)} tests, ${total.toFixed(0)} CPU s`,
);
console.log("   cpu s   self  child  tests  file");
for (const l of lines.slice(0, Number(n))) {
  const cols = [l.cpu, l.self, l.children].map((x) => x.toFixed(1).padStart(7)).join("");
  console.log(`${cols}${String(l.tests).padStart(7)}  ${relative(root, l.file)}`);
}

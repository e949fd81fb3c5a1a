/**
 * `npm run chapter -- <n>` — runs a chapter's demo, `chapters/NN-slug/run.ts`.
 *
 * Accepts the number (`1`, `01`), the folder (`01-etcd-watch`) or the slug (`etcd-watch`). An unknown
 * chapter prints the list and exits non-zero. Arguments after the chapter go to the demo.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { findChapter, listChapters, root } from "./course.ts";

const [query, ...rest] = process.argv.slice(2);
const chapters = listChapters();
const list = chapters
  .map((c) => `  ${String(c.number).padStart(2)}  ${c.dir.padEnd(28)} ${c.title}`)
  .join("\n");
const chapter = query === undefined ? undefined : findChapter(chapters, query);

if (!chapter) {
  console.error(`${query === undefined ? "which chapter?" : `no chapter "${query}".`} Chapters:\n${list}`);
  console.error("usage: npm run chapter -- <number | folder | slug>");
  process.exit(2);
}
const demo = join(chapter.path, "run.ts");
if (!existsSync(demo)) {
  console.error(`chapter ${chapter.number} has no run.ts yet (${demo})`);
  process.exit(2);
}
const tsx = join(root, "node_modules", "tsx", "dist", "cli.mjs");
const child = spawn(process.execPath, [tsx, demo, ...rest], { stdio: "inherit", cwd: root });
child.on("exit", (code, signal) => process.exit(signal ? 1 : (code ?? 1)));
// Ctrl-C in a terminal signals every process of the foreground group, the demo included: passing
// that SIGINT on as well would make one Ctrl-C arrive twice, and a second signal means "exit now,
// skip the clean stop" (code/cmd/cli/signal.ts). Outside a terminal, nobody else tells the demo.
for (const sig of ["SIGINT", "SIGTERM"] as const) {
  process.on(sig, () => {
    if (sig === "SIGINT" && process.stdin.isTTY) return;
    child.kill(sig);
  });
}

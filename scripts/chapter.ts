/**
 * `npm run chapter -- <n>` — runs a chapter's demo, `chapters/NN-slug/run.ts`.
 *
 *   npm run chapter              lists the chapters
 *   npm run chapter -- 1         runs chapter 1's demo (also: 01, 01-etcd-watch, etcd-watch)
 *   npm run chapter -- 1 --once  arguments after the chapter go to the demo
 *
 * An unknown chapter gets one line saying what to do, and exit status 2.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { join } from "node:path";
import { closest, findChapter, listChapters, root } from "./course.ts";

const [query, ...rest] = process.argv.slice(2).filter((a, i) => i > 0 || a !== "--");
const chapters = listChapters();

if (query === undefined) {
  console.log("Chapters (run one with npm run chapter -- <number>):\n");
  for (const c of chapters) {
    const demo = existsSync(join(c.path, "run.ts")) ? "" : "  (no demo yet)";
    console.log(`  ${String(c.number).padStart(2)}  ${c.dir.padEnd(28)} ${c.title}${demo}`);
  }
  process.exit(0);
}

const chapter = findChapter(chapters, query);
if (!chapter) {
  const near = closest(
    query,
    chapters.map((c) => c.slug),
  );
  const range = `the chapters are ${chapters[0]?.number ?? 0} to ${chapters.at(-1)?.number ?? 0}`;
  console.error(
    near
      ? `no chapter "${query}" — did you mean ${near}? (${range}; \`npm run chapter\` lists them)`
      : `no chapter "${query}" — ${range}; \`npm run chapter\` lists them`,
  );
  process.exit(2);
}
const demo = join(chapter.path, "run.ts");
if (!existsSync(demo)) {
  console.error(
    `chapter ${chapter.number} has no demo yet (no ${demo}) — \`npm run chapter\` lists the chapters`,
  );
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

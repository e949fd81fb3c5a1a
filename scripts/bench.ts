/**
 * `npm run bench -- <name> [--json]` — runs the benchmarks of one component: every `*.bench.ts` under `code/<name>/`,
 * or one benchmark by its file's base name (`informer` → code/client/testing/informer.bench.ts).
 * A benchmark may have a second half in another file, run right after it under its name
 * (`halves` below: `informer` then prints the ReplicaSet controller's figures too); with `--json`
 * each half prints its own JSON object, one a line.
 *
 * Performance is measured here, never in timed tests: each benchmark prints its figures and the
 * ratio against a reference run on the same machine in the same run (for the store: a real etcd).
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { spawnSync } from "node:child_process";
import { existsSync, readdirSync, statSync } from "node:fs";
import { join } from "node:path";
import { root } from "./course.ts";

/** Every `*.bench.ts` under `dir`, at any depth (benchmarks live in a component's testing/ folder). */
function benchFiles(dir: string): string[] {
  return readdirSync(dir, { recursive: true, encoding: "utf8" })
    .filter((f) => f.endsWith(".bench.ts"))
    .map((f) => join(dir, f))
    .sort();
}

function benchmarks(): Map<string, string[]> {
  const found = new Map<string, string[]>();
  const code = join(root, "code");
  for (const dir of existsSync(code) ? readdirSync(code) : []) {
    const abs = join(code, dir);
    if (!statSync(abs).isDirectory()) continue;
    const files = benchFiles(abs);
    if (files.length > 0) found.set(dir, files);
  }
  // Each file by its own base name too (`informer`), unless a folder already has that name.
  for (const file of [...found.values()].flat()) {
    const base = file.slice(file.lastIndexOf("/") + 1, -".bench.ts".length);
    if (!found.has(base)) found.set(base, [file]);
  }
  return found;
}

/**
 * Benchmarks whose figures are printed together: issue 13's informer benchmark has a ReplicaSet
 * half, which lives beside the controller it measures (code/controllers/testing/).
 */
const halves: Record<string, string[]> = { informer: ["replica-set"] };

const [name, ...rest] = process.argv.slice(2);
const all = benchmarks();
for (const [first, more] of Object.entries(halves))
  if (all.has(first)) all.set(first, [...all.get(first)!, ...more.flatMap((m) => all.get(m) ?? [])]);
const list = all.size > 0 ? [...all.keys()].join(", ") : "none yet (chapter 1 adds `store`)";
if (!name || name.startsWith("-") || !all.has(name)) {
  console.error(
    `${name && !name.startsWith("-") ? `no benchmark "${name}". ` : ""}usage: npm run bench -- <name> [--json]`,
  );
  console.error(`benchmarks: ${list}`);
  process.exit(2);
}
const tsx = join(root, "node_modules", "tsx", "dist", "cli.mjs");
for (const file of all.get(name)!) {
  const r = spawnSync(process.execPath, [tsx, file, ...rest], { stdio: "inherit", cwd: root });
  if (r.status !== 0) process.exit(r.status ?? 1);
}

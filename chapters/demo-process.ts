/**
 * Demo process — a chapter's demo run as a learner runs it, for the chapters' tests: to the end
 * (`--once`), or serving until the test sends it Ctrl-C.
 *
 * Solves: each chapter's run.test.ts checks the demo's output line by line, in order; they all
 * need to run the demo without colours, collect what it printed, and find a line after another.
 *
 * @upstream none — test harness
 * @chapter 00-life-of-a-pod
 */
import { fileURLToPath } from "node:url";
import { type CommandProcess, startCommand } from "../code/cmd/testing/command-process.ts";

/** A chapter's demo file, by folder: `chapters/01-etcd-watch/run.ts`. */
export const demoFile = (chapter: string) => fileURLToPath(new URL(`./${chapter}/run.ts`, import.meta.url));

/** Starts a chapter's demo with NO_COLOR set; `env` is added (e.g. a PATH without kubectl). */
export function startDemo(chapter: string, args: string[], env: NodeJS.ProcessEnv = {}): CommandProcess {
  return startCommand(demoFile(chapter), args, { NO_COLOR: "1", ...env });
}

/** Runs a chapter's demo to its end (`timeoutMs` at most): its exit code and what it printed. */
export async function runDemoToEnd(
  chapter: string,
  args: string[],
  env: NodeJS.ProcessEnv = {},
  timeoutMs = 25_000,
): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const demo = startDemo(chapter, args, env);
  try {
    const code = await demo.waitForExit(timeoutMs);
    return { code, stdout: demo.stdout(), stderr: demo.stderr() };
  } finally {
    demo.kill();
  }
}

/** The position of the first line matching `re` at or after `from`, or -1. */
export function lineOf(lines: string[], re: RegExp, from = 0): number {
  for (let i = from; i < lines.length; i++) if (re.test(lines[i])) return i;
  return -1;
}

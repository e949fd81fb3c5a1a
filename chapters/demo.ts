/**
 * Demo — what every chapter's demo (`chapters/NN-slug/run.ts`) shares: its colours, numbered
 * steps, "→ request / ← answer" lines, bounded waits, its few flags, and how it ends.
 *
 * Solves:
 * - the demos print alike — a bold numbered step, lines indented under it, dim notes — without
 *   each defining its own colours and printers;
 * - colour only where a person reads it: none when stdout is not a terminal (a pipe, a file, a
 *   test) or when `NO_COLOR` is set to anything but the empty string (no-color.org);
 * - a demo never hangs on an event that does not come (`within`), and never blocks on a tool it
 *   runs (`runTool`);
 * - Ctrl-C stops a demo cleanly (`stopOnInterrupt`): the servers it started are closed before it
 *   exits, and a second Ctrl-C exits at once — the command layer's signal handling
 *   (code/cmd/cli/signal.ts), so demos and commands behave alike;
 * - the API server demos (chapters 2 and 3) start and end alike (`servingDemo`, `requestLog`,
 *   `serveUntilInterrupt`, `suggest`, `tryKubectl`) and send JSON alike (`callJSON`).
 *
 * It is not a chapter: the course's chapters are the numbered folders (scripts/course.ts), and
 * this file is not under code/, so it has no annotated-source page.
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import { spawn } from "node:child_process";
import { type ClientRequest, type IncomingMessage, STATUS_CODES } from "node:http";
import type { RequestOptions } from "node:https";
import { resolve } from "node:path";
import {
  boolFlag,
  FlagError,
  type Flags,
  type FlagValues,
  flagUsages,
  intFlag,
  parseFlags,
} from "../code/cmd/cli/flag.ts";
import { setupSignalHandler } from "../code/cmd/cli/signal.ts";

// #region colour
/** Whether to colour what goes to `stream`: a terminal, and no NO_COLOR. */
export function colorEnabled(stream: { isTTY?: boolean }, env: NodeJS.ProcessEnv = process.env): boolean {
  return stream.isTTY === true && !env.NO_COLOR;
}

export interface DemoOutput {
  bold(s: string): string;
  dim(s: string): string;
  green(s: string): string;
  yellow(s: string): string;
  red(s: string): string;
  cyan(s: string): string;
  /** The demo's title, bold. */
  heading(title: string): void;
  /** The next numbered step: a blank line, then `N. title` in bold. */
  step(title: string): void;
  /** A line under the current step. */
  say(s: string): void;
  /** A dim line under the current step: the why, not the what. */
  note(s: string): void;
}

/** The printers for one stream; each SGR code is closed by its own reset, so colours nest. */
export function demoOutput(
  stream: { write(text: string): unknown; isTTY?: boolean },
  env: NodeJS.ProcessEnv = process.env,
): DemoOutput {
  const color = colorEnabled(stream, env);
  const paint = (open: number, close: number) => (s: string) =>
    color ? `\x1b[${open}m${s}\x1b[${close}m` : s;
  const bold = paint(1, 22);
  const dim = paint(2, 22);
  const print = (s: string) => stream.write(`${s}\n`);
  let stepNo = 0;
  return {
    bold,
    dim,
    green: paint(32, 39),
    yellow: paint(33, 39),
    red: paint(31, 39),
    cyan: paint(36, 39),
    heading: (title) => print(bold(title)),
    step(title) {
      stepNo++;
      print(`\n${bold(`${stepNo}. ${title}`)}`);
    },
    say: (s) => print(`   ${s}`),
    note: (s) => print(dim(`   ${s}`)),
  };
}
// #endregion colour

export const { bold, dim, green, yellow, red, cyan, heading, step, say, note } = demoOutput(process.stdout);

/** `→ GET /api/v1/pods`: what the demo (or the client it plays) sends. */
export const request = (s: string) => `${cyan("→")} ${s}`;

/** `← 200 OK`: what comes back. */
export const answer = (s: string) => `${cyan("←")} ${s}`;

/**
 * How a Status is shown: `409 Conflict: …` when the reason is the HTTP status's own name, else both
 * — `410 Gone, reason Expired: …`. A reason is not an HTTP status: 410's reason is `Expired` (or
 * `Gone`), and a learner who reads "410 Expired" looks for an HTTP status that does not exist.
 */
export function statusLine(s: { code?: number; reason?: string; message?: string }): string {
  const name = STATUS_CODES[s.code ?? 0] ?? "";
  const head =
    name.replace(/ /g, "") === s.reason ? `${s.code} ${name}` : `${s.code} ${name}, reason ${s.reason}`;
  return `${head}: ${s.message}`;
}

/** A long line cut to fit a terminal, the cut marked. */
export function cut(s: string, n = 150): string {
  return s.length <= n ? s : `${s.slice(0, n - 1)}…`;
}

// #region replies
/** An object as the demos read it: the fields they print are typed, the rest are anything. */
export interface Obj {
  apiVersion?: string;
  kind?: string;
  metadata: {
    name?: string;
    namespace?: string;
    uid?: string;
    resourceVersion?: string;
    continue?: string;
    remainingItemCount?: number;
    deletionTimestamp?: string;
    deletionGracePeriodSeconds?: number;
    labels?: Record<string, string>;
    [field: string]: unknown;
  };
  // biome-ignore lint/suspicious/noExplicitAny: the demo reads whatever fields it prints
  [field: string]: any;
}

export interface Reply {
  code: number;
  body: Obj;
  headers: IncomingMessage["headers"];
}

/**
 * One JSON request, sent with `send` (node:http's request, or node:https's with its TLS options),
 * and its answer read whole. A body that is not JSON (/healthz's `ok`) comes back as
 * `{ metadata: {}, text }` with `text` also on the reply, for a demo that expects only JSON to refuse.
 */
export function callJSON(
  send: (url: string, options: RequestOptions, answered: (res: IncomingMessage) => void) => ClientRequest,
  url: string,
  options: RequestOptions,
  body?: unknown,
): Promise<Reply & { text?: string }> {
  return new Promise((resolve, reject) => {
    const data = body === undefined ? undefined : JSON.stringify(body);
    const headers = {
      Accept: "application/json",
      ...(data
        ? { "Content-Type": "application/json", "Content-Length": String(Buffer.byteLength(data)) }
        : {}),
      ...options.headers,
    };
    const req = send(url, { ...options, headers }, (res) => {
      let text = "";
      res.setEncoding("utf8");
      res.on("data", (d) => {
        text += d;
      });
      res.on("end", () => {
        const code = res.statusCode ?? 0;
        try {
          resolve({ code, body: JSON.parse(text), headers: res.headers });
        } catch {
          resolve({ code, body: { metadata: {}, text }, headers: res.headers, text });
        }
      });
    });
    req.on("error", reject);
    req.end(data);
  });
}
// #endregion replies

// #region waits
export const sleep = (ms: number) => new Promise<void>((resolve) => setTimeout(resolve, ms));

/** Waits for a promise, but never longer than `ms`: a demo must not hang on a missed event. */
export async function within<T>(ms: number, p: Promise<T>, what: string): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  // A referenced timer also keeps Node alive while only a store's (unreferenced) timers run.
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error(`timed out after ${ms} ms waiting for ${what}`)), ms);
  });
  try {
    return await Promise.race([p, timeout]);
  } finally {
    clearTimeout(timer);
  }
}

/**
 * Runs a tool (kubectl, etcdctl) to completion without blocking this process, which may be the
 * server it talks to; its stdout, or an error (`code: "ENOENT"` when it is not installed).
 */
export function runTool(
  command: string,
  argv: string[],
  options: { env?: NodeJS.ProcessEnv; timeoutMs?: number } = {},
): Promise<string> {
  return new Promise((resolve, reject) => {
    const child = spawn(command, argv, { env: options.env ?? process.env });
    let out = "";
    let err = "";
    const timer = setTimeout(() => child.kill(), options.timeoutMs ?? 30_000);
    child.stdout.on("data", (d) => {
      out += d;
    });
    child.stderr.on("data", (d) => {
      err += d;
    });
    child.on("error", (e) => {
      clearTimeout(timer);
      reject(e);
    });
    child.on("close", (code) => {
      clearTimeout(timer);
      if (code === 0) resolve(out);
      else reject(new Error(`${command} exited ${code}: ${cut(err.trim(), 200)}`));
    });
  });
}
// #endregion waits

// #region lifetime
/**
 * The demo's flags, read as a Kubernetes command reads its own (code/cmd/cli/flag.ts). A bad
 * command line prints one line and exits 2; `--help` prints the flags and exits 0.
 */
export function demoFlags<F extends Flags>(
  name: string,
  flags: F,
  argv: string[] = process.argv.slice(2),
): FlagValues<F> {
  const set = { name, syntax: "pflag" as const, flags };
  const parsed = parseFlags(set, argv);
  const problem =
    parsed instanceof FlagError
      ? parsed
      : parsed.args.length > 0
        ? new FlagError(name, `takes no arguments, got ${JSON.stringify(parsed.args)} (see ${name} --help)`)
        : undefined;
  if (problem) {
    console.error(problem.message);
    process.exit(2);
  }
  const ok = parsed as Exclude<typeof parsed, FlagError>;
  if (ok.help) {
    console.log([`Usage: ${name} [flags]`, "", ...flagUsages(set, { help: "show this help" })].join("\n"));
    process.exit(0);
  }
  return ok.values;
}

/**
 * The flags of a demo that serves after its tour (chapters 1 and 2): `--once` (or
 * CHAPTER_ONCE=1) to exit after the tour, `--port N` for what it serves.
 */
export function servingDemoFlags(name: string, serves: string): { once: boolean; port: number } {
  const flags = demoFlags(name, {
    once: boolFlag("exit after the tour instead of serving (also: CHAPTER_ONCE=1); tests use it"),
    port: intFlag(`serve ${serves} on 127.0.0.1:N; 0 picks a free port`, 0, {
      min: 0,
      max: 65535,
      hint: "use a port number from 0 to 65535",
    }),
  });
  return { once: flags.once || process.env.CHAPTER_ONCE === "1", port: flags.port };
}

/**
 * An API server demo's start: its flags, and the folder it writes what kubectl needs into — a
 * stable, git-ignored `.tmp/chapter-NN` in the course's folder, the same paths every run (so one
 * `export KUBECONFIG=…` serves every run). CHAPTER_TMP moves it: the tests use their own, and
 * leave a learner's files alone.
 */
export function servingDemo(
  chapter: number,
  serves: string,
): { once: boolean; port: number; workDir: string } {
  const { once, port } = servingDemoFlags(`npm run chapter -- ${chapter}`, serves);
  const folder = `chapter-${String(chapter).padStart(2, "0")}`;
  const workDir = resolve(process.env.CHAPTER_TMP || resolve(import.meta.dirname, "../.tmp", folder));
  return { once, port, workDir };
}

/** The API server's request log: silent during the tour, printed (dim) once the demo serves. */
export function requestLog(): { log: (line: string) => void; start: () => void } {
  let printing = false;
  return {
    log: (line) => {
      if (printing) console.log(dim(line));
    },
    start: () => {
      printing = true;
    },
  };
}

/**
 * The tour is over: exit (`--once`: the tests), or keep serving kubectl until Ctrl-C — which
 * runs the `shutdown` given to stopOnInterrupt — with every request logged.
 */
export async function serveUntilInterrupt(
  once: boolean,
  shutdown: () => Promise<void>,
  requests: { start: () => void },
): Promise<void> {
  if (once) {
    console.log("");
    await shutdown();
    return;
  }
  say(bold("Serving until Ctrl-C; every request is logged below, as kube-apiserver -v=3 logs it."));
  requests.start();
  await new Promise(() => {});
}

/** What to try in another terminal: one command a line, its comment aligned after it. */
export function suggest(commands: [string, string?][]): void {
  for (const [c, comment] of commands) say(cyan(comment ? `${c.padEnd(68)} # ${comment}` : c));
}

/**
 * Runs one kubectl command against the demo's server and shows its output, as a learner would
 * see it; kubectl is optional, so its absence is a note, and its failure a warning, not an end.
 */
export async function tryKubectl(kubeconfig: string, args: string[]): Promise<void> {
  const shown = `kubectl ${args.join(" ")}`;
  let out: string;
  try {
    out = await runTool("kubectl", ["--kubeconfig", kubeconfig, ...args]);
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code === "ENOENT") {
      note("kubectl is not installed (optional: https://kubernetes.io/docs/tasks/tools/)");
    } else {
      say(yellow(`${shown} failed: ${(e as Error).message}`));
    }
    return;
  }
  say(`${dim("$")} ${shown}`);
  for (const line of out.split("\n").filter((l) => l !== "")) say(`  ${line}`);
}

let stopping = false;

/**
 * From now on, the first Ctrl-C (or SIGTERM) runs `stop` — close what the demo started, say
 * what stays — and exits 0; a second one exits at once with 1.
 */
export function stopOnInterrupt(stop: () => Promise<void>): void {
  const signals = setupSignalHandler();
  signals.received.then(async () => {
    stopping = true;
    console.log("");
    try {
      await stop();
      process.exit(0);
    } catch (err) {
      console.error(red(`could not stop cleanly: ${err instanceof Error ? err.message : String(err)}`));
      process.exit(1);
    }
  });
}

/**
 * Runs the demo's `main` and exits with the number it returns (0 for anything else); a failure prints
 * why in one line and exits 1 — unless a Ctrl-C is stopping the demo, which ends it instead.
 */
export function runDemo(main: () => Promise<unknown>): void {
  main().then(
    (code) => {
      if (!stopping) process.exit(typeof code === "number" ? code : 0);
    },
    (err: unknown) => {
      if (stopping) return;
      console.error(red(`\nthe demo failed: ${err instanceof Error ? err.message : String(err)}`));
      process.exit(1);
    },
  );
}
// #endregion lifetime

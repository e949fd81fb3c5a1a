/**
 * Run — what every command under code/cmd/ does around its component: read the flags, answer
 * `--help` and `--version`, refuse a bad command line, start the component, say when it serves,
 * and stop it cleanly on the first signal.
 *
 * Solves:
 * - etcd, kube-apiserver and the commands still to come (kube-scheduler,
 *   kube-controller-manager, kubelet, cluster) behave alike where their upstream binaries do,
 *   without each carrying its own parser, usage printer, signal handling and entry-point check:
 *   a command file is its flag table and the wiring from flags to its component's start function;
 * - scripts and tests wait for one ready line on stderr (kube-apiserver's `Serving insecurely
 *   on …`; etcd's JSON `ready to serve client requests`, which its embed layer logs itself, as
 *   upstream's does);
 * - tests call `run` in their own process, with their own streams and signal source.
 *
 * The exit codes, as a script sees them:
 * - 0: `--help` or `--version` printed, or the component stopped cleanly after SIGINT/SIGTERM;
 * - 1: the component could not start or stopped on its own (it has said why), or a second
 *   signal came during the clean stop;
 * - 2: a bad command line (one line on stderr, as Go's flag.ExitOnError).
 *
 * Invariants:
 * - output goes to `io`: usage and version to stdout, everything else (logs, errors, the ready
 *   line) to stderr, as upstream's components log;
 * - signals are listened for from before the component starts until `run` returns: a signal
 *   during the start stops the component as soon as it has started; nothing is left listening
 *   after `run` returns;
 * - the process stays alive while the component runs, whatever handles it holds (one timer).
 *
 * What upstream does differently: cobra (Kubernetes) and Go's flag (etcd) print the whole usage
 * with an error, and kube-apiserver exits 1 for a bad flag (component-base's cli.Run); etcd exits 1
 * for a flag combination it refuses after parsing. We print one line and exit 2 for all of them.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/cli/run.go (Run)
 * @upstream kubernetes/kubernetes cmd/kube-apiserver/app/server.go (NewAPIServerCommand: Args, RunE)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-base/version/verflag/verflag.go (PrintAndExitIfRequested)
 * @upstream etcd-io/etcd server/etcdmain/config.go (config.parse)
 * @chapter 01-etcd-watch
 */
import { realpathSync } from "node:fs";
import { resolve } from "node:path";
import { pathToFileURL } from "node:url";
import {
  boolFlag,
  FlagError,
  type FlagSet,
  type FlagSyntax,
  type Flags,
  type FlagValues,
  flagUsages,
  parseFlags,
} from "./flag.ts";
import { type SignalSource, setupSignalHandler } from "./signal.ts";

/** Where a command writes: the process's streams, or a test's buffers. */
export interface CommandIO {
  stdout: (text: string) => void;
  stderr: (text: string) => void;
}

export const processIO: CommandIO = {
  stdout: (text) => process.stdout.write(text),
  stderr: (text) => process.stderr.write(text),
};

/** A started component, as its command sees it. */
export interface Running {
  /** The line scripts wait for, printed to stderr once the component serves; absent when the component logs its own. */
  ready?: string;
  /** The clean stop, after the first SIGINT or SIGTERM; `signal` is the one that came, for the log. */
  stop(signal: NodeJS.Signals): Promise<void>;
  /** Settles if the component stopped on its own, once it is stopped and has said why. */
  failed?: Promise<void>;
  /** chapter 3 (pki): a one-shot command's work; when it settles, `run` returns 0 without waiting for a signal. */
  done?: Promise<void>;
}

// #region command
/** One binary: its name and flags as upstream's, and how its flags start its component. */
export interface Command<F extends Flags, O> {
  /** As upstream's binary: `etcd`, `kube-apiserver`. */
  name: string;
  /** Shown in --help's first line. */
  about: string;
  /** The flag library the upstream binary uses (etcd: Go's flag; Kubernetes: pflag). */
  syntax: FlagSyntax;
  /** What --version prints; without it the command has no --version. */
  version?: string;
  flags: F;
  /** The component's options from the flags; a FlagError for a combination the binary refuses. */
  options(values: FlagValues<F>, given: ReadonlySet<keyof F & string>): O | FlagError;
  /** Starts the component; `undefined` when it could not start (it has said why on `io.stderr`). */
  start(options: O, io: CommandIO): Promise<Running | undefined>;
}

/** Writes a command with its types inferred from the flag table. */
export function command<F extends Flags, O>(spec: Command<F, O>): Command<F, O> {
  return spec;
}
// #endregion command

/** What a command line asks for: a component to run, a text to print, or nothing (an error). */
export type Invocation<O> = { run: O } | { print: string } | FlagError;

function flagSet<F extends Flags>(cmd: Command<F, unknown>): FlagSet<Flags> {
  const flags: Flags = { ...cmd.flags };
  if (cmd.version !== undefined) flags.version = boolFlag("print the version and exit");
  return { name: cmd.name, syntax: cmd.syntax, flags };
}

/** --help's text, generated from the flag table. */
export function usage<F extends Flags>(cmd: Command<F, unknown>): string {
  return [
    `Usage: ${cmd.name} [flags]   (${cmd.about})`,
    "",
    ...flagUsages(flagSet(cmd), { help: "show this help" }),
  ].join("\n");
}

// #region parse-command
/** Reads a command line: what to run or print, or the one-line error. */
export function parseCommand<F extends Flags, O>(cmd: Command<F, O>, argv: string[]): Invocation<O> {
  const parsed = parseFlags(flagSet(cmd), argv);
  if (parsed instanceof FlagError) return parsed;
  if (parsed.help) return { print: usage(cmd) };
  // Neither binary takes arguments, and each says so in its own words.
  if (cmd.syntax === "go" && parsed.args.length > 0) {
    return new FlagError(cmd.name, `'${parsed.args[0]}' is not a valid flag (see ${cmd.name} --help)`);
  }
  const args = parsed.args.filter((a) => a !== "");
  if (cmd.syntax === "pflag" && args.length > 0) {
    return new FlagError(cmd.name, `"${cmd.name}" does not take any arguments, got ${JSON.stringify(args)}`);
  }
  if (cmd.version !== undefined && parsed.values.version === true) return { print: cmd.version };
  const { version: _, ...values } = parsed.values;
  const options = cmd.options(values as FlagValues<F>, parsed.given as ReadonlySet<keyof F & string>);
  return options instanceof FlagError ? options : { run: options };
}
// #endregion parse-command

// #region run
/**
 * Runs a command to its end and returns its exit code: parse, start, serve until the first
 * SIGINT or SIGTERM (or until the component fails), stop cleanly.
 */
export async function run<F extends Flags, O>(
  cmd: Command<F, O>,
  argv: string[],
  io: CommandIO = processIO,
  signals: { source?: SignalSource; exit?: (code: number) => void } = {},
): Promise<number> {
  const invocation = parseCommand(cmd, argv);
  if (invocation instanceof FlagError) {
    io.stderr(`${invocation.message}\n`);
    return 2;
  }
  if ("print" in invocation) {
    io.stdout(`${invocation.print}\n`);
    return 0;
  }
  const exit = signals.exit ?? ((code: number) => process.exit(code));
  const shutdown = setupSignalHandler({
    source: signals.source,
    exit: (code) => {
      io.stderr(`${cmd.name}: a second signal during the shutdown; exiting at once\n`);
      exit(code);
    },
  });
  // Like Go's main blocked on its context: the process lives until the signal, even when nothing
  // else holds the event loop — a component serving no port whose API server went away has only
  // unref'd retry timers left (realClock), and Node would exit with 13, the await unsettled.
  const keepAlive = setInterval(() => {}, 1 << 30);
  try {
    const running = await cmd.start(invocation.run, io);
    if (!running) return 1;
    if (running.ready) io.stderr(`${running.ready}\n`);
    // A component that never fails on its own has no `failed`: a promise that never settles.
    const failed = running.failed?.then(() => "failed" as const) ?? new Promise<never>(() => {});
    const done = running.done?.then(() => "done" as const) ?? new Promise<never>(() => {});
    const first = await Promise.race([shutdown.received, failed, done]);
    if (first === "failed") return 1;
    if (first === "done") return 0;
    await running.stop(first);
    return 0;
  } finally {
    clearInterval(keepAlive);
    shutdown.stop();
  }
}
// #endregion run

/**
 * Whether node was started on the module at `moduleURL` (pass `import.meta.url`), rather than a
 * test or another module importing it. The script's path goes through realpath, as node's module
 * URLs do, so a symlink to the file matches.
 */
export function isEntryPoint(moduleURL: string): boolean {
  const script = process.argv[1];
  if (!script) return false;
  try {
    return moduleURL === pathToFileURL(realpathSync(resolve(script))).href;
  } catch {
    return false;
  }
}

/**
 * `npm run cluster` (`start`) — the supervisor: takes the cluster directory, starts every
 * component through the ClusterLauncher, says what runs where, waits for every node to be Ready,
 * then watches until Ctrl-C (or `npm run cluster -- stop`), and stops everything it started.
 * The closest upstream is hack/local-up-cluster.sh, which prints the same kind of banner
 * (`To start using your cluster, …`, the logs' paths) and cleans up in a trap on Ctrl-C.
 *
 * Solves:
 * - a learner copies one line (`export KUBECONFIG=…`) and drives the cluster with the real
 *   kubectl; each component's pid, port and log file are printed as it starts, and the span
 *   collector's line (it runs in this process: tracing-wiring.ts says why) before them;
 * - a second supervisor on the same directory refuses in one line (state.ts holds the lock); a
 *   stale state file from a supervisor that was killed is reported and its processes killed;
 * - a component that dies while the cluster runs is reported at once (which, its exit code, the
 *   last lines of its log) and left dead: chaos restarts components, the supervisor does not;
 * - the first SIGINT or SIGTERM (or SIGHUP: the terminal closed) stops every process and
 *   container and removes cluster.json, keeping the directory (logs, data, PKI); a second signal
 *   kills everything recorded at once.
 *
 * @upstream kubernetes/kubernetes hack/local-up-cluster.sh (print_success, cleanup, the trap on EXIT)
 * @chapter 08-cluster
 */
import { mkdirSync } from "node:fs";
import { relative } from "node:path";
import { FlagError } from "../cli/flag.ts";
import { parseStartFlags } from "./flags.ts";
import { ClusterLauncher } from "./launcher.ts";
import { preflight, tail, which } from "./preflight.ts";
import {
  acquireState,
  type ClusterState,
  type ComponentState,
  killRecorded,
  newState,
  removeState,
  writeState,
} from "./state.ts";
import { startClusterView } from "./view/server.ts";

/** Where a subcommand writes: the process's streams, or a test's buffers. */
export interface Output {
  out: (line: string) => void;
  err: (line: string) => void;
  /** stdout is a terminal: progress is rewritten in place. */
  tty: boolean;
  write: (text: string) => void;
}

export const processOutput: Output = {
  out: (line) => process.stdout.write(`${line}\n`),
  err: (line) => process.stderr.write(`${line}\n`),
  tty: process.stdout.isTTY === true,
  write: (text) => process.stdout.write(text),
};

const stopSignals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;

/** A path as a learner reads it: relative to the working directory when inside it. */
export function shown(path: string): string {
  const r = relative(process.cwd(), path);
  return r === "" ? "." : r.startsWith("..") ? path : r;
}

/** One line per component: name, pid, port, log (relative to the cluster directory). */
export function componentLine(dir: string, c: ComponentState): string {
  return `${c.name.padEnd(26)} pid ${String(c.pid).padEnd(8)} port ${String(c.port ?? "-").padEnd(6)} ${relative(dir, c.log)}`;
}

// #region start
export async function run(args: string[], io: Output = processOutput): Promise<number> {
  const parsed = parseStartFlags(args);
  if (parsed instanceof FlagError) {
    io.err(parsed.message);
    return 2;
  }
  if ("usage" in parsed) {
    io.out(parsed.usage);
    return 0;
  }
  const o = parsed.options;
  // A closed pipe (`npm run cluster | head`) must not kill the supervisor and orphan the cluster.
  for (const stream of [process.stdout, process.stderr]) stream.on("error", () => {});
  const t0 = performance.now();
  const elapsed = () => `${Math.round((performance.now() - t0) / 1000)} s`;
  const problem = preflight(o);
  if (problem) {
    io.err(`cluster: ${problem.message}`);
    return 1;
  }
  mkdirSync(o.dir, { recursive: true });

  // The lock: before anything starts, the state file is ours or we say who has it.
  const state: ClusterState = newState(o.dir, "", "");
  const acquired = acquireState(state);
  if (!acquired.ok) {
    io.err(
      `a cluster is already running in ${o.dir} (supervisor pid ${acquired.running.supervisorPid}, since ${acquired.running.startedAt}): stop it with \`npm run cluster -- stop\``,
    );
    return 1;
  }
  if (acquired.stale)
    io.err(
      `found a stale ${shown(o.dir)}/cluster.json (supervisor pid ${acquired.stale.supervisorPid} is gone): killed ${acquired.stale.killed.length} leftover processes and removed it`,
    );

  // Signals from now on: the first asks for a clean stop, a second kills what is recorded.
  let stopRequested: (s: NodeJS.Signals) => void = () => {};
  const stopSignal = new Promise<NodeJS.Signals>((r) => {
    stopRequested = r;
  });
  let signals = 0;
  const onSignal = (s: NodeJS.Signals) => {
    signals++;
    if (signals === 1) return stopRequested(s);
    io.err(`${s} again: killing every process of the cluster now`);
    killRecorded(state);
    removeState(o.dir);
    process.exit(1);
  };
  for (const s of stopSignals) process.on(s, onSignal);

  const save = () => {
    state.components = launcher.components();
    state.kubeletRootDirs = [...launcher.kubeletRootDirs];
    writeState(state);
  };
  const launcher: ClusterLauncher = new ClusterLauncher({
    ...o,
    onPKI(kubeconfig, server) {
      state.kubeconfig = kubeconfig;
      state.server = server;
      writeState(state);
      io.out(`export KUBECONFIG=${kubeconfig}`);
    },
    onTracing(file, endpoint) {
      state.traces = file;
      writeState(state);
      const port = new URL(endpoint).port;
      io.out(
        `${"span collector".padEnd(26)} pid ${String(process.pid).padEnd(8)} port ${port.padEnd(6)} ${relative(o.dir, file)}`,
      );
    },
    onComponent(c) {
      save();
      io.out(componentLine(o.dir, c));
    },
    onExit(c, code, sig) {
      if (io.tty) io.write("\n");
      // One write: the report and its log lines arrive together, not interleaved with other output.
      const lines = tail(c.log, 8)
        .split("\n")
        .map((line) => `  ${line}`);
      io.err(
        [
          `${c.name} (pid ${c.pid}) exited with ${sig ? `signal ${sig}` : `code ${code}`}; it stays down (the last lines of ${relative(o.dir, c.log)}):`,
          ...lines,
        ].join("\n"),
      );
    },
  });

  let view: Awaited<ReturnType<typeof startClusterView>> | undefined;
  const stop = async (why: string): Promise<void> => {
    if (io.tty) io.write("\n");
    io.out(`${why}: stopping every component and container…`);
    await view?.close();
    await launcher.stop();
    removeState(o.dir);
    io.out(`stopped; logs kept in ${shown(o.dir)}/logs`);
  };

  try {
    io.out(`starting a cluster in ${o.dir}`);
    const launched = launcher.launch().then(
      () => undefined,
      (e: Error) => e,
    );
    const first = await Promise.race([launched, stopSignal]);
    if (typeof first === "string") {
      // stop() first: the launch sees it and stops starting components.
      await Promise.all([stop(`${first} while starting`), launched]);
      return 0;
    }
    if (first instanceof Error) {
      io.err(`cluster: ${first.message}`);
      await stop("could not start");
      return 1;
    }
    if (!which("kubectl"))
      io.out(
        "kubectl is not on PATH: get it from https://kubernetes.io/docs/tasks/tools/ (the cluster runs without it)",
      );

    // #region wait-for-nodes
    let last = "";
    const ready = launcher.waitForNodesReady((n, total) => {
      const line = `waiting for nodes: ${n}/${total} Ready`;
      if (io.tty) io.write(`\r\x1b[K${line} (${elapsed()})`);
      else if (line !== last) io.out(`${line} (${elapsed()})`);
      last = line;
    });
    const waited = await Promise.race([ready, stopSignal]);
    if (typeof waited === "string") {
      await stop(waited);
      return 0;
    }
    if (io.tty) io.write("\n");
    // #endregion wait-for-nodes
    view = await openView(launcher, o.viewPort, io);
    if (view) {
      state.view = view.url;
      writeState(state);
    }
    const nodes = launcher.nodeNames.length;
    if (waited) io.out(`cluster ready in ${elapsed()}: ${nodes} node${nodes === 1 ? "" : "s"} Ready. Try:`);
    else io.out(`not every node is Ready after ${elapsed()}; the cluster keeps running. Try:`);
    io.out("  kubectl get nodes");
    io.out("  kubectl create deployment web --image=course/web:1.0 --replicas=3 && kubectl get pods -o wide");
    io.out("  npm run cluster -- status   (from another terminal)");
    if (state.traces) io.out("  npm run cluster -- trace <pod>   (a pod's life across the components)");
    if (view) io.out(`  open ${view.url}   (the live cluster view)`);
    io.out("Stop it with Ctrl-C here, or `npm run cluster -- stop` from another terminal.");

    const s = await stopSignal;
    await stop(s);
    return 0;
  } finally {
    for (const s of stopSignals) process.off(s, onSignal);
  }
}
// #endregion start

/**
 * The live cluster view on `port`, or on any free port when that one is taken (a second cluster,
 * `kubectl proxy`…): the view is a window on the cluster, never a reason for it not to start.
 */
async function openView(launcher: ClusterLauncher, port: number, io: Output) {
  try {
    return await startClusterView({ client: launcher.admin, port });
  } catch (e) {
    if ((e as NodeJS.ErrnoException).code !== "EADDRINUSE") {
      io.err(`cluster view: ${(e as Error).message}; the cluster runs without it`);
      return undefined;
    }
    io.err(`cluster view: port ${port} is taken; using another`);
    return startClusterView({ client: launcher.admin, port: 0 });
  }
}

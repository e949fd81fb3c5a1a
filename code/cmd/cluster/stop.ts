/**
 * `npm run cluster -- stop` — from another terminal: SIGTERM to the supervisor, which stops
 * every component and container and removes cluster.json; wait for it (bounded). If the
 * supervisor is gone (or does not finish in time), kill what the state file recorded ourselves —
 * only the processes that are still the recorded ones (pid and start token).
 * No upstream counterpart: local-up-cluster.sh is stopped by Ctrl-C in its own terminal;
 * `kind delete cluster` removes the cluster's containers.
 *
 * @upstream none — course tooling
 * @chapter 08-cluster
 */
import { FlagError } from "../cli/flag.ts";
import { parseDirFlags } from "./flags.ts";
import { type Output, processOutput } from "./start.ts";
import { killRecorded, liveRecordedPids, readState, removeState, signal, supervisorAlive } from "./state.ts";

/** How long the supervisor gets for its clean stop (its components get 15 s, then SIGKILL). */
const supervisorGraceMs = 60_000;

export async function run(args: string[], io: Output = processOutput): Promise<number> {
  const parsed = parseDirFlags("stop", args);
  if (parsed instanceof FlagError) {
    io.err(parsed.message);
    return 2;
  }
  if ("usage" in parsed) {
    io.out(parsed.usage);
    return 0;
  }
  return stopCluster(parsed.options.dir, io);
}

// #region stop
export async function stopCluster(dir: string, io: Output): Promise<number> {
  const state = readState(dir);
  if (!state) {
    io.out(`no cluster is running in ${dir}`);
    return 0;
  }
  if (supervisorAlive(state)) {
    io.out(`stopping the cluster in ${dir} (supervisor pid ${state.supervisorPid})…`);
    signal(state.supervisorPid, "SIGTERM");
    const deadline = Date.now() + supervisorGraceMs;
    while (supervisorAlive(state) && Date.now() < deadline) await sleep(200);
    if (supervisorAlive(state)) {
      io.err(`the supervisor did not stop in ${supervisorGraceMs / 1000} s: killing it and what it started`);
      signal(state.supervisorPid, "SIGKILL");
    }
  } else {
    io.out(`the supervisor (pid ${state.supervisorPid}) is gone: killing what it recorded`);
  }
  // Whatever is left (a supervisor killed, or one that gave up): the latest record, killed.
  const latest = readState(dir) ?? state;
  const killed = killRecorded(latest);
  if (killed.length > 0) io.out(`killed ${killed.length} leftover processes`);
  const deadline = Date.now() + 10_000;
  while (liveRecordedPids(latest).length > 0 && Date.now() < deadline) await sleep(100);
  removeState(dir);
  const left = liveRecordedPids(latest);
  if (left.length > 0) {
    io.err(`still running after SIGKILL: pids ${left.join(", ")}`);
    return 1;
  }
  io.out("stopped");
  return 0;
}
// #endregion stop

const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/**
 * `npm run cluster -- chaos --seed N [--duration 5m]` — breaks a cluster on purpose: the seeded
 * fault schedule over its components while a workload scales and rolls, then the invariants,
 * printed PASS/FAIL; exit 0 if all hold, 1 if one fails (with the replay command).
 * No upstream counterpart: upstream has no seeded chaos tool in-tree (its disruption framework is
 * test/e2e/chaosmonkey/chaosmonkey.go, run from Go e2e tests); Jepsen-like tools live outside.
 *
 * The design decision: chaos starts ITS OWN cluster, through the same ClusterLauncher as
 * `npm run cluster --ha` — etcd as its own process, two schedulers and two controller-managers
 * with leader election, `--nodes 2` kubelets by default — started for breaking: each component's
 * connection to the API server (the API server's to etcd) through a FaultProxy of its own, so
 * one path can be partitioned; the API server with the chaos audit policy and an audit log; each
 * scheduler and controller-manager process with its own token, so the audit log tells the
 * writers apart. Then it runs the faults and the workload (chaos/runner.ts), prints the
 * invariants, stops everything and exits. Why its own:
 * - a replay must be exact: the schedule depends on the components (their names and number) and
 *   on nothing left over, so a run starts from an empty cluster of a known shape;
 * - restarting a process and partitioning it need the process that started it (it owns the
 *   child and the proxies): a cluster another `npm run cluster` supervises cannot be rewired;
 * - a learner's running cluster is never touched: chaos works in `.cluster/chaos-<seed>/` (or
 *   `--dir`), and refuses a directory another supervisor holds or a cluster it did not make.
 *
 * @upstream none — course tooling (kubernetes/kubernetes test/e2e/chaosmonkey/chaosmonkey.go)
 * @chapter 08-cluster
 */
import { existsSync, mkdirSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { join, resolve } from "node:path";
import {
  boolFlag,
  durationFlag,
  FlagError,
  flagUsages,
  intFlag,
  parseFlags,
  stringFlag,
} from "../cli/flag.ts";
import { launcherTarget } from "./chaos/launcher-target.ts";
import { chaosAuditPolicy } from "./chaos/local-target.ts";
import { runChaos } from "./chaos/runner.ts";
import { describeFault, generateSchedule } from "./chaos/schedule.ts";
import type { ChaosTarget } from "./chaos/target.ts";
import { defaultDir } from "./flags.ts";
import { ClusterLauncher } from "./launcher.ts";
import { preflight } from "./preflight.ts";
import { componentLine, processOutput, shown } from "./start.ts";
import { acquireState, type ClusterState, killRecorded, newState, removeState, writeState } from "./state.ts";

const flagSet = {
  name: "cluster chaos",
  syntax: "pflag" as const,
  flags: {
    seed: intFlag("the seed of the fault schedule and the workload (default: a random one, printed)", -1, {
      min: -1,
      max: 2 ** 32 - 1,
      hint: "use an integer in [0, 4294967295]",
    }),
    duration: durationFlag("how long faults are injected", 5 * 60_000, {
      min: 1000,
      hint: "use a duration such as 5m or 45s",
    }),
    "converge-timeout": durationFlag("how long the cluster gets to converge after the faults", 3 * 60_000, {
      min: 1000,
      hint: "use a duration such as 3m",
    }),
    "concurrent-control-plane": boolFlag("allow more than one control-plane fault at a time"),
    nodes: intFlag("kubelets of the chaos cluster (process runtime)", 2, {
      min: 1,
      max: 10,
      hint: "use a number of nodes from 1 to 10",
    }),
    ha: intFlag("kube-scheduler and kube-controller-manager replicas, with leader election", 2, {
      min: 2,
      max: 3,
      hint: "use 2 or 3",
    }),
    dir: stringFlag("the chaos cluster's directory (default .cluster/chaos-<seed>)", ""),
  },
};

/** Marks a directory as a chaos cluster's: its data may be wiped by the next run. */
const marker = "chaos-cluster";

export interface ChaosClusterOptions {
  dir: string;
  nodes: number;
  ha: number;
  /** Where the cluster's lines go (its components, as they start and restart). */
  out: (line: string) => void;
  /** Called before the first process starts with how to stop them all (a Ctrl-C while starting). */
  onStop?: (stop: () => Promise<void>) => void;
}

export interface ChaosCluster {
  target: ChaosTarget;
  stop(): Promise<void>;
}

/** How chaos gets its cluster; tests give another. */
export type Connect = (o: ChaosClusterOptions) => Promise<ChaosCluster>;

// #region run
export async function run(args: string[], connect: Connect = startChaosCluster): Promise<number> {
  const parsed = parseFlags(flagSet, args);
  if (parsed instanceof FlagError) {
    console.error(parsed.message);
    return 2;
  }
  if (parsed.help) {
    console.log(
      [
        "Usage: npm run cluster -- chaos [flags]",
        "",
        ...flagUsages(flagSet, { help: "show this help" }),
      ].join("\n"),
    );
    return 0;
  }
  const f = parsed.values;
  const seed = f.seed >= 0 ? f.seed : Math.floor(Math.random() * 2 ** 32);
  const dir = resolve(f.dir || join(defaultDir, `chaos-${seed}`));
  // What changes the schedule (the components) is part of the replay command.
  const replayFlags = [
    ...(f.nodes !== 2 ? [`--nodes ${f.nodes}`] : []),
    ...(f.ha !== 2 ? [`--ha ${f.ha}`] : []),
    ...(f["concurrent-control-plane"] ? ["--concurrent-control-plane"] : []),
  ];
  const say = (line: string) => processOutput.out(line);
  let cluster: ChaosCluster | undefined;
  let stopEarly: (() => Promise<void>) | undefined;
  const onSignal = (s: NodeJS.Signals) => {
    say(`${s}: stopping the chaos cluster`);
    void (stopEarly?.() ?? Promise.resolve()).finally(() => process.exit(130));
  };
  const signals = ["SIGINT", "SIGTERM", "SIGHUP"] as const;
  for (const s of signals) process.on(s, onSignal);
  try {
    say(
      `chaos: starting its own cluster in ${shown(dir)} (${f.nodes} node${f.nodes === 1 ? "" : "s"}, --ha=${f.ha}, fault proxies)`,
    );
    try {
      cluster = await connect({
        dir,
        nodes: f.nodes,
        ha: f.ha,
        out: say,
        onStop: (stop) => {
          stopEarly = stop;
        },
      });
    } catch (e) {
      console.error(`chaos: ${(e as Error).message}`);
      return 1;
    }
    const target = cluster.target;
    const schedule = generateSchedule({
      seed,
      durationMs: f.duration,
      components: target.components(),
      concurrentControlPlane: f["concurrent-control-plane"],
    });
    say(`schedule (seed ${seed}):`);
    for (const fault of schedule) say(`  plan ${describeFault(fault)}`);
    const report = await runChaos(target, {
      seed,
      durationMs: f.duration,
      convergeTimeoutMs: f["converge-timeout"],
      concurrentControlPlane: f["concurrent-control-plane"],
      replayFlags,
      log: say,
    });
    return report.ok ? 0 : 1;
  } finally {
    if (cluster) {
      say("chaos: stopping every component and container…");
      await cluster.stop();
      say(`chaos: stopped; logs kept in ${shown(dir)}/logs`);
    }
    for (const s of signals) process.off(s, onSignal);
  }
}
// #endregion run

// #region start-chaos-cluster
/**
 * Takes `dir` (refusing one a live supervisor holds, or a cluster chaos did not make), wipes the
 * last chaos run's data, and starts the cluster wired for chaos; waits for every node Ready.
 */
export async function startChaosCluster(o: ChaosClusterOptions): Promise<ChaosCluster> {
  mkdirSync(o.dir, { recursive: true });
  const made = existsSync(join(o.dir, marker));
  if (!made && readdirSync(o.dir).length > 0)
    throw new Error(
      `${o.dir} holds a cluster chaos did not make: chaos never touches it (drop --dir: it uses .cluster/chaos-<seed>)`,
    );
  const state: ClusterState = newState(o.dir, "", "");
  const acquired = acquireState(state);
  if (!acquired.ok)
    throw new Error(
      `a cluster is already running in ${o.dir} (supervisor pid ${acquired.running.supervisorPid}): stop it with \`npm run cluster -- stop --dir ${o.dir}\``,
    );
  // A replay starts from nothing: the last run's data and logs go (the PKI is kept).
  for (const d of ["etcd", "kubelets", "logs", "kubeconfigs", "audit.log"])
    rmSync(join(o.dir, d), { recursive: true, force: true });
  writeFileSync(join(o.dir, marker), "made by npm run cluster -- chaos; wiped by its next run\n");
  const options = {
    dir: o.dir,
    nodes: o.nodes,
    fakeNodes: 0,
    etcd: "ours" as const,
    etcdMembers: 1,
    ha: o.ha,
  };
  const problem = preflight(options);
  if (problem) throw problem;
  const launcher: ClusterLauncher = new ClusterLauncher({
    ...options,
    faultProxies: true,
    auditPolicy: chaosAuditPolicy,
    processTokens: true,
    onPKI(kubeconfig, server) {
      Object.assign(state, { kubeconfig, server });
      writeState(state);
    },
    onComponent(c) {
      // Every incarnation recorded (status, stop and a stale-state cleanup find it) and printed.
      state.components = launcher.components();
      state.kubeletRootDirs = [...launcher.kubeletRootDirs];
      writeState(state);
      o.out(componentLine(o.dir, c));
    },
  });
  const stop = async () => {
    await launcher.stop();
    killRecorded(state); // anything the launcher lost track of (none expected)
    removeState(o.dir);
  };
  o.onStop?.(stop);
  try {
    await launcher.launch();
    if (!(await launcher.waitForNodesReady(() => {})))
      throw new Error(`not every node became Ready; see ${shown(o.dir)}/logs`);
  } catch (e) {
    await stop();
    throw e;
  }
  o.out(
    `chaos: ${launcher.nodeNames.length} node${launcher.nodeNames.length === 1 ? "" : "s"} Ready; KUBECONFIG=${launcher.kubeconfig}`,
  );
  return { target: launcherTarget(launcher), stop };
}
// #endregion start-chaos-cluster

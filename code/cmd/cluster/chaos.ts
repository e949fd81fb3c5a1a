/**
 * `npm run cluster -- chaos --seed N [--duration 5m]` — breaks the running cluster on purpose:
 * the seeded fault schedule over its components while a workload scales and rolls, then the
 * invariants, printed PASS/FAIL; exit 0 if all hold, 1 if one fails (with the replay command).
 * No upstream counterpart: upstream has no seeded chaos tool in-tree (its disruption framework is
 * test/e2e/chaosmonkey/chaosmonkey.go, run from Go e2e tests); Jepsen-like tools live outside.
 *
 * Thin on purpose: it reads its flags, connects to the cluster the `cluster.json` of `--dir`
 * describes, and hands over to runChaos (chaos/runner.ts).
 *
 * @upstream none — course tooling (kubernetes/kubernetes test/e2e/chaosmonkey/chaosmonkey.go)
 * @chapter 08-cluster
 */
import { readFile } from "node:fs/promises";
import { join, resolve } from "node:path";
import { newForConfig } from "../../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../../client/tools/clientcmd/client-config.ts";
import {
  boolFlag,
  durationFlag,
  FlagError,
  flagUsages,
  intFlag,
  parseFlags,
  stringFlag,
} from "../cli/flag.ts";
import { runChaos } from "./chaos/runner.ts";
import { type ChaosTarget, isAlive } from "./chaos/target.ts";

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
    dir: stringFlag("the cluster directory", ".cluster"),
  },
};

/** The interface a running cluster offers chaos; the cluster launcher provides the real one. */
export type Connect = (dir: string) => Promise<ChaosTarget>;

// #region run
export async function run(args: string[], connect: Connect = connectToClusterDir): Promise<number> {
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
  let target: ChaosTarget;
  try {
    target = await connect(resolve(f.dir));
  } catch (e) {
    console.error((e as Error).message);
    return 1;
  }
  const report = await runChaos(target, {
    seed,
    durationMs: f.duration,
    convergeTimeoutMs: f["converge-timeout"],
    concurrentControlPlane: f["concurrent-control-plane"],
    replayFlags: f["concurrent-control-plane"] ? ["--concurrent-control-plane"] : [],
  });
  target.admin.closeIdleConnections();
  return report.ok ? 0 : 1;
}
// #endregion run

/**
 * A target from `cluster.json` alone: signals by pid. Restarting a component and partitioning it
 * need the process that started it (the cluster launcher's supervisor, which owns the proxies):
 * until that is wired, they fail with a message saying so.
 */
async function connectToClusterDir(dir: string): Promise<ChaosTarget> {
  const file = join(dir, "cluster.json");
  const text = await readFile(file, "utf8").catch(() => {
    throw new Error(`no cluster is running: ${file} not found (start one with npm run cluster)`);
  });
  const state = JSON.parse(text) as {
    kubeconfig: string;
    components: { name: string; kind: string; pid: number }[];
    kubeletRootDirs?: string[];
  };
  const admin = newForConfig(buildConfigFromFlags("", state.kubeconfig, {}));
  const pid = (name: string) => {
    const c = state.components.find((x) => x.name === name);
    if (!c) throw new Error(`no component ${name} in ${file}`);
    return c.pid;
  };
  const signal = async (name: string, sig: NodeJS.Signals) => {
    if (isAlive(pid(name))) process.kill(pid(name), sig);
  };
  const viaLauncher = async (what: string) => {
    throw new Error(`${what} needs the cluster launcher (not wired to cluster.json yet)`);
  };
  return {
    components: () => state.components.map(({ name, kind, pid }) => ({ name, kind, pid })),
    kill: (name) => signal(name, "SIGKILL"),
    pause: (name) => signal(name, "SIGSTOP"),
    resume: (name) => signal(name, "SIGCONT"),
    restart: (name) => viaLauncher(`restart ${name}`),
    partition: (name) => viaLauncher(`partition ${name}`),
    admin,
    kubeletRootDirs: () =>
      (state.kubeletRootDirs ?? []).map((rootDir) => ({ node: rootDir.replace(/^.*kubelet-/, ""), rootDir })),
    newClient: () => newForConfig(buildConfigFromFlags("", state.kubeconfig, {})),
  };
}

/**
 * `npm run cluster -- status` — from another terminal: the cluster in the directory, where its
 * spans go (cluster.json's `traces`) and its live view, each component running or not (its
 * recorded pid still the same process), its port and log, and the nodes with their Ready
 * condition as the API server reports them (admin kubeconfig).
 * No upstream counterpart: `kind get clusters` / `kubectl get nodes` and `kubectl get
 * --raw /readyz` together answer the same questions for a real cluster.
 *
 * Exit code: 0 when the supervisor runs, 1 when there is no cluster or its state is stale.
 *
 * @upstream none — course tooling
 * @chapter 08-cluster
 */
import { relative } from "node:path";
import { newForConfig } from "../../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../../client/tools/clientcmd/client-config.ts";
import { FlagError } from "../cli/flag.ts";
import { parseDirFlags } from "./flags.ts";
import { type Output, processOutput } from "./start.ts";
import { componentAlive, readState, supervisorAlive } from "./state.ts";

export async function run(args: string[], io: Output = processOutput): Promise<number> {
  const parsed = parseDirFlags("status", args);
  if (parsed instanceof FlagError) {
    io.err(parsed.message);
    return 2;
  }
  if ("usage" in parsed) {
    io.out(parsed.usage);
    return 0;
  }
  const { dir } = parsed.options;
  const state = readState(dir);
  if (!state) {
    io.err(`no cluster is running in ${dir}: start one with \`npm run cluster\``);
    return 1;
  }
  const alive = supervisorAlive(state);
  io.out(
    alive
      ? `cluster in ${dir}: supervisor pid ${state.supervisorPid}, started ${state.startedAt}`
      : `cluster in ${dir}: its supervisor (pid ${state.supervisorPid}) is gone; clean up with \`npm run cluster -- stop\``,
  );
  io.out(`server ${state.server}   export KUBECONFIG=${state.kubeconfig}`);
  io.out(
    state.traces
      ? `traces ${state.traces}   (a pod's life: npm run cluster -- trace <pod>)`
      : "traces: none (started with --tracing=false)",
  );
  if (state.view) io.out(`view ${state.view}`);
  io.out("");
  io.out(`${"COMPONENT".padEnd(26)} ${"STATUS".padEnd(8)} ${"PID".padEnd(8)} ${"PORT".padEnd(6)} LOG`);
  for (const c of state.components)
    io.out(
      `${c.name.padEnd(26)} ${(componentAlive(c) ? "running" : "exited").padEnd(8)} ${String(c.pid).padEnd(8)} ${String(c.port ?? "-").padEnd(6)} ${relative(dir, c.log)}`,
    );
  io.out("");
  if (state.kubeconfig) await printNodes(state.kubeconfig, io);
  return alive ? 0 : 1;
}

/** The nodes and their Ready condition, or one line saying the API server does not answer. */
async function printNodes(kubeconfig: string, io: Output): Promise<void> {
  const admin = newForConfig(buildConfigFromFlags("", kubeconfig, {}));
  let timer: NodeJS.Timeout | undefined;
  try {
    const list = await Promise.race([
      admin.coreV1.nodes().list(),
      new Promise<never>((_, reject) => {
        timer = setTimeout(() => reject(new Error("no answer in 5 s")), 5000);
      }),
    ]);
    io.out(`${"NODE".padEnd(26)} READY`);
    for (const n of list.items) {
      const ready = n.status?.conditions?.find((c) => c.type === "Ready");
      io.out(`${(n.metadata.name ?? "").padEnd(26)} ${ready?.status ?? "Unknown"}`);
    }
    if (list.items.length === 0) io.out("(no nodes registered)");
  } catch (e) {
    io.out(`nodes: the API server does not answer (${(e as Error).message})`);
  } finally {
    clearTimeout(timer);
    admin.closeIdleConnections();
  }
}

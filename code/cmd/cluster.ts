/**
 * `npm run cluster [subcommand] [flags]` — the whole miniature as separate processes, driven by
 * the real kubectl: `start` (the default) runs it in this terminal; `status`, `stop` and `down`
 * work on it from another; `chaos` starts a cluster of its own and breaks it. Each subcommand is a module `cluster/<name>.ts` exporting
 * `run(args) → exit code`; adding one is one line in the table below.
 * No upstream counterpart: hack/local-up-cluster.sh in the kubernetes repository (one machine,
 * every binary its own process) is the closest; kind and kubeadm are the real-world equivalents.
 *
 * @upstream none — course tooling (kubernetes/kubernetes hack/local-up-cluster.sh is the closest)
 * @chapter 08-cluster
 */
import { isEntryPoint } from "./cli/run.ts";

type Subcommand = { run(args: string[]): Promise<number> };

// #region subcommands
/** name → its module; a new subcommand is one entry. */
export const subcommands: Record<string, () => Promise<Subcommand>> = {
  start: () => import("./cluster/start.ts"),
  status: () => import("./cluster/status.ts"),
  stop: () => import("./cluster/stop.ts"),
  down: () => import("./cluster/down.ts"),
  chaos: () => import("./cluster/chaos.ts"),
  trace: () => import("./cluster/trace.ts"),
};
// #endregion subcommands

/** Runs the subcommand `argv[0]` (none, or a flag first: `start`); returns the exit code. */
export async function main(argv: string[]): Promise<number> {
  const [first, ...rest] = argv;
  const implicit = first === undefined || first.startsWith("-");
  const name = implicit ? "start" : first;
  const load = Object.hasOwn(subcommands, name) ? subcommands[name] : undefined;
  if (!load) {
    process.stderr.write(
      `cluster: unknown subcommand "${name}": use one of ${Object.keys(subcommands).join(", ")} (no subcommand: start)\n`,
    );
    return 2;
  }
  return (await load()).run(implicit ? argv : rest);
}

// The supervisor exits when it is done, whatever handles are left (keep-alive sockets, timers).
if (isEntryPoint(import.meta.url)) process.exit(await main(process.argv.slice(2)));

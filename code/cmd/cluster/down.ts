/**
 * `npm run cluster -- down` — stop the cluster if it runs, then remove its directory (PKI, logs,
 * etcd's data, the kubelets' root dirs): the next `npm run cluster` starts from nothing.
 * No upstream counterpart: `kind delete cluster`, `kubeadm reset` are the real-world ones.
 *
 * Invariant: only a directory that looks like a cluster's (cluster.json, pki/ or logs/ in it) is
 * removed, so a mistyped `--dir` cannot remove something else.
 *
 * @upstream none — course tooling
 * @chapter 08-cluster
 */
import { existsSync, rmSync } from "node:fs";
import { join } from "node:path";
import { FlagError } from "../cli/flag.ts";
import { parseDirFlags } from "./flags.ts";
import { type Output, processOutput } from "./start.ts";
import { stopCluster } from "./stop.ts";

export async function run(args: string[], io: Output = processOutput): Promise<number> {
  const parsed = parseDirFlags("down", args);
  if (parsed instanceof FlagError) {
    io.err(parsed.message);
    return 2;
  }
  if ("usage" in parsed) {
    io.out(parsed.usage);
    return 0;
  }
  const { dir } = parsed.options;
  if (!existsSync(dir)) {
    io.out(`no cluster directory ${dir}: nothing to remove`);
    return 0;
  }
  if (!["cluster.json", "pki", "logs"].some((f) => existsSync(join(dir, f)))) {
    io.err(`${dir} does not look like a cluster directory (no cluster.json, pki/ or logs/): not removing it`);
    return 1;
  }
  const stopped = await stopCluster(dir, io);
  if (stopped !== 0) return stopped;
  rmSync(dir, { recursive: true, force: true });
  io.out(`removed ${dir}`);
  return 0;
}

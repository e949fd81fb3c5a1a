/**
 * The flags of `npm run cluster` and its subcommands, read by the shared command layer
 * (cli/flag.ts, pflag syntax as every Kubernetes tool) into the launcher's options, with a
 * one-line error naming the fix for a command line that cannot work.
 * No upstream counterpart: hack/local-up-cluster.sh reads environment variables (NUM_NODES is
 * not one of them: it starts one kubelet), kind reads a Cluster config file (`nodes:` with
 * roles), kubeadm a ClusterConfiguration.
 *
 * Solves:
 * - `--nodes 3`, `--fake-nodes 1000`, `--ha` (2 of each) or `--ha=3`, `--etcd=real`,
 *   `--etcd-members=3`, `--tracing=false` and `--dir` read the same way for every subcommand;
 * - `--advertise-address=<ip>` (with `--bind-address`) runs the cluster over the machine's
 *   network address instead of 127.0.0.1, as local-up-cluster.sh's API_HOST_IP, API_BIND_ADDR
 *   and KUBELET_HOST do; an address the API server would not listen on is refused;
 * - a combination the cluster cannot run is refused before anything starts: our etcd has no
 *   peer protocol, so three members need the real etcd (`--etcd=real --etcd-members=3`).
 *
 * @upstream none — course tooling (kubernetes/kubernetes hack/local-up-cluster.sh's environment variables play this part)
 * @chapter 08-cluster
 */
import { resolve } from "node:path";
import { fileURLToPath } from "node:url";
import { parseIPSloppy } from "../../api/string-validation.ts";
import {
  boolFlag,
  type Flag,
  FlagError,
  type FlagSet,
  type Flags,
  FlagValueError,
  flagUsages,
  intFlag,
  parseFlags,
  stringFlag,
} from "../cli/flag.ts";

/** The repository root (this file is code/cmd/cluster/flags.ts). */
export const repoRoot = fileURLToPath(new URL("../../..", import.meta.url));
export const defaultDir = resolve(repoRoot, ".cluster");

/**
 * `--ha` alone means 2 of each, `--ha=3` three, `--ha=false` one (no election): a bool flag in
 * pflag's sense (NoOptDefVal "true") whose value may also be a count.
 */
function haFlag(help: string): Flag<number> {
  return {
    help,
    default: 1,
    isBool: true,
    set(text) {
      if (text === "true") return 2;
      if (text === "false") return 1;
      return /^\d+$/.test(text) ? Number(text) : new FlagValueError("use --ha (2 of each) or --ha=3");
    },
  };
}

const dirFlag = stringFlag("the cluster directory: PKI, logs, data, cluster.json", defaultDir);

// #region flags
export const startFlags = {
  dir: dirFlag,
  nodes: intFlag("kubelets to start, each its own process (process runtime)", 1, {
    min: 0,
    max: 50,
    hint: "use a number of nodes from 0 to 50",
  }),
  "fake-nodes": intFlag("hollow nodes (fake runtime) to start in one kubemark process", 0, {
    min: 0,
    max: 10000,
    hint: "use a number of hollow nodes from 0 to 10000",
  }),
  etcd: stringFlag('which etcd: "ours" (code/cmd/etcd.ts) or "real" (the etcd binary on PATH)', "ours"),
  "etcd-members": intFlag("etcd members (1, or 3 with --etcd=real)", 1, {
    min: 1,
    max: 7,
    hint: "use 1 or 3",
  }),
  ha: haFlag(
    "run kube-scheduler and kube-controller-manager with leader election: --ha is 2 of each, --ha=3 three",
  ),
  tracing: boolFlag(
    "record every component's spans (every trace) in <dir>/traces.jsonl, for `npm run cluster -- trace <pod>`; --tracing=false: none",
    true,
  ),
  // hack/local-up-cluster.sh's API_HOST_IP / KUBELET_HOST (and kube-apiserver's name for it): the
  // one address the cluster is reached at; kubeadm puts it in the serving certificate too.
  "advertise-address": stringFlag(
    "the IP address of this machine the cluster is reached at: the API server listens there, its serving certificate holds it, every kubeconfig points at https://<it>:<port> and each kubelet reports it as its node's InternalIP (--node-ip); unset: 127.0.0.1, this machine only",
    "",
  ),
  "bind-address": stringFlag(
    "the IP address the API server listens on: 0.0.0.0 for every interface (upstream's default); unset: --advertise-address, or 127.0.0.1",
    "",
  ),
  "view-port": intFlag(
    "the live cluster view's port on 127.0.0.1 (0: any free port; busy: another is taken)",
    8090,
    {
      min: 0,
      max: 65535,
      hint: "use a port from 1 to 65535, or 0 for any free port",
    },
  ),
};
// #endregion flags

export const dirOnlyFlags = { dir: dirFlag };

export interface StartOptions {
  dir: string;
  nodes: number;
  fakeNodes: number;
  etcd: "ours" | "real";
  etcdMembers: number;
  /** Replicas of kube-scheduler and kube-controller-manager (1: no leader election). */
  ha: number;
  /** The live cluster view's port (code/cmd/cluster/view/); 0: any free port. */
  viewPort: number;
  /** A span collector and every component tracing to it (tracing-wiring.ts). */
  tracing: boolean;
  /** `--advertise-address`: the IP clients and the API server dial (kubeconfigs, SAN, --node-ip); unset: 127.0.0.1. */
  advertiseAddress?: string;
  /** `--bind-address`: where the API server listens; unset: the advertise address. */
  bindAddress?: string;
}

/** The address the kubeconfigs point at and the kubelets report: `--advertise-address` or loopback. */
export function clusterAddress(o: { advertiseAddress?: string }): string {
  return o.advertiseAddress || "127.0.0.1";
}

/** `host:port` for a URL: an IPv6 address in brackets. */
export function hostPort(host: string, port: number): string {
  return host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;
}

const unspecified = (ip: string) => ip === "0.0.0.0" || ip === "::";

/** What a subcommand's command line asks for: its options, `--help`'s text, or the one-line error. */
export type Parsed<O> = { options: O } | { usage: string } | FlagError;

function parse<F extends Flags>(sub: string, flags: F, argv: string[]) {
  const set: FlagSet<F> = { name: `cluster ${sub}`, syntax: "pflag", flags };
  const parsed = parseFlags(set, argv);
  if (parsed instanceof FlagError) return parsed;
  if (parsed.help)
    return {
      usage: [
        `Usage: npm run cluster -- ${sub} [flags]`,
        "",
        ...flagUsages(set as FlagSet<Flags>, { help: "show this help" }),
      ].join("\n"),
    };
  if (parsed.args.length > 0)
    return new FlagError(set.name, `unexpected argument ${JSON.stringify(parsed.args[0])} (flags only)`);
  return parsed;
}

export function parseStartFlags(argv: string[]): Parsed<StartOptions> {
  const p = parse("start", startFlags, argv);
  if (p instanceof FlagError || "usage" in p) return p;
  const f = p.values;
  const fail = (problem: string) => new FlagError("cluster start", problem);
  if (f.etcd !== "ours" && f.etcd !== "real")
    return fail(`--etcd=${f.etcd}: use --etcd=ours (the course's) or --etcd=real (the etcd binary)`);
  if (f.ha < 1 || f.ha > 3) return fail(`--ha=${f.ha}: use --ha (2 of each) or --ha=3`);
  if (f["etcd-members"] % 2 === 0)
    return fail(`--etcd-members=${f["etcd-members"]}: use an odd number (1 or 3), as a quorum needs`);
  if (f["etcd-members"] > 1 && f.etcd === "ours")
    return fail(
      `--etcd-members=${f["etcd-members"]}: our etcd runs one member (no peer protocol); add --etcd=real`,
    );
  if (f.nodes + f["fake-nodes"] === 0) return fail("no nodes: use --nodes 1 or more (or --fake-nodes)");
  const advertise = f["advertise-address"];
  const bind = f["bind-address"];
  if (advertise && !parseIPSloppy(advertise))
    return fail(`--advertise-address=${advertise}: use an IP address of this machine (e.g. its eth0's)`);
  if (advertise && unspecified(advertise))
    return fail(
      `--advertise-address=${advertise}: clients dial it, so use one address of this machine; --bind-address=${advertise} listens on every interface`,
    );
  if (bind && !parseIPSloppy(bind))
    return fail(`--bind-address=${bind}: use an IP address (0.0.0.0: every interface)`);
  const address = clusterAddress({ advertiseAddress: advertise });
  if (bind && !unspecified(bind) && bind !== address)
    return fail(
      `--bind-address=${bind}: the kubeconfigs point at ${address}, where the API server would not listen; use --advertise-address=${bind}, or --bind-address=0.0.0.0`,
    );
  return {
    options: {
      dir: resolve(f.dir),
      nodes: f.nodes,
      fakeNodes: f["fake-nodes"],
      etcd: f.etcd,
      etcdMembers: f["etcd-members"],
      ha: f.ha,
      viewPort: f["view-port"],
      tracing: f.tracing,
      ...(advertise ? { advertiseAddress: advertise } : {}),
      ...(bind ? { bindAddress: bind } : {}),
    },
  };
}

/** `status`, `stop`, `down`: only `--dir`. */
export function parseDirFlags(sub: string, argv: string[]): Parsed<{ dir: string }> {
  const p = parse(sub, dirOnlyFlags, argv);
  if (p instanceof FlagError || "usage" in p) return p;
  return { options: { dir: resolve(p.values.dir) } };
}

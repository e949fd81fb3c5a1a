/**
 * Kubemark flags — the hollow node's command line (upstream's names, help texts and defaults
 * where upstream has the flag), and the course's flags for hosting many hollow nodes in one
 * process; what they add up to: the list of hollow nodes to start, each with its identity.
 * Mirrors kubernetes/kubernetes cmd/kubemark/app/hollow_node.go (hollowNodeConfig.addFlags, run).
 *
 * Solves:
 * - code/cmd/kubemark.ts calls one function and gets every hollow node's name, kubeconfig and
 *   root dir, the capacity they simulate and their client limits — or one line saying what is
 *   wrong and how to fix it, before anything starts;
 * - a thousand hollow nodes are one command line: `--count=1000 --name-prefix=hollow-node-`
 *   names them `hollow-node-0` … `hollow-node-999`, and `--kubeconfig-dir` finds each one's own
 *   identity, `node-<name>.kubeconfig` (ensurePKI's layout), so the Node authorizer and
 *   NodeRestriction treat each as the real kubelet of that node;
 * - a missing identity is found while parsing (the first one missing, and how to make it), not
 *   as a thousand TLS errors once the nodes start.
 *
 * Invariants:
 * - `--name` (one hollow node, upstream's) and `--count` (many, ours) are exclusive;
 * - every name is a DNS-1123 subdomain (a Node's name), checked before any identity is read.
 *
 * What upstream does differently: hollow_node.go runs ONE hollow node per process (`--name`,
 * `--kubeconfig`), and its kubemark cluster runs thousands of such pods; `--count`,
 * `--name-prefix`, `--kubeconfig-dir`, `--root-dir`, `--fake-capacity`, `--batch-size` and
 * (chapter 8) `--tracing-config-file` are the course's (each says so in --help). Upstream's `--max-pods` and `--extended-resources` become
 * `--fake-capacity`; `--morph=proxy` (the hollow kube-proxy) is not built here; the kubelet and
 * read-only ports are not served (a hollow node has no kubelet server: no logs or exec).
 *
 * @upstream kubernetes/kubernetes cmd/kubemark/app/hollow_node.go (hollowNodeConfig.addFlags, knownMorphs, run: "Unknown morph", createClientConfigFromFile: QPS, Burst)
 * @upstream kubernetes/kubernetes pkg/kubemark/hollow_kubelet.go (GetHollowKubeletConfig: MaxPods 110)
 * @chapter 08-cluster
 */
import { existsSync } from "node:fs";
import { join, resolve } from "node:path";
import type { ResourceList } from "../../api/core.ts";
import { parseQuantity } from "../../api/quantity.ts";
import { isDNS1123Subdomain } from "../../api/string-validation.ts";
import type { TracingConfiguration } from "../../tracing/config.ts";
import { type Flag, FlagError, FlagValueError, type FlagValues, intFlag, stringFlag } from "./flag.ts";
import { validateNodeLabels } from "./kubelet-flags.ts";
import { configurationMapFlag, int32Flag, mapFlag } from "./pflag-values.ts";
import { readTracingConfigFlag, tracingConfigFileFlag } from "./tracing-flags.ts";

const command = "kubemark";

/** hollow_node.go's knownMorphs. */
export const knownMorphs = ["kubelet", "proxy"];

/** pflag's Float32Var: strconv.ParseFloat's words for text that is not a number. */
function float32Flag(help: string, defaultValue: number): Flag<number> {
  return {
    help,
    default: defaultValue,
    set(text) {
      const n = /^[+-]?(\d+\.?\d*|\.\d+)([eE][+-]?\d+)?$/.test(text) ? Number(text) : Number.NaN;
      return Number.isFinite(n)
        ? n
        : new FlagValueError(`strconv.ParseFloat: parsing ${JSON.stringify(text)}: invalid syntax`);
    },
    shownDefault: String(defaultValue),
  };
}

/** What a hollow node simulates unless --fake-capacity says otherwise (pods: upstream's maxPods 110). */
export const defaultCapacity: Readonly<Record<string, string>> = {
  cpu: "8",
  memory: "32Gi",
  pods: "110",
  "ephemeral-storage": "100Gi",
};

// #region kubemark-flags
export const kubemarkFlags = {
  // hollow_node.go's own flags.
  morph: stringFlag(
    `Specifies into which Hollow component this binary should morph. Allowed values: [${knownMorphs.join(" ")}]`,
    "",
  ),
  name: stringFlag("Name of this Hollow Node.", "fake-node"),
  kubeconfig: stringFlag(
    "Path to kubeconfig file. (This course: for a single hollow node, --name; with --count use --kubeconfig-dir.)",
  ),
  "kube-api-qps": float32Flag("QPS indicates the maximum QPS to the apiserver.", 10),
  "kube-api-burst": int32Flag("Burst indicates maximum burst for throttle to the apiserver.", 20),
  "node-labels": configurationMapFlag("Additional node labels"),
  // The course's: many hollow nodes in this one process.
  count: intFlag(
    "COURSE FLAG (upstream runs one hollow node per process). How many hollow nodes this process hosts, named <name-prefix><i>, i from 0.",
    1,
    { min: 1, hint: "use a positive integer, e.g. --count=100" },
  ),
  "name-prefix": stringFlag(
    "COURSE FLAG. With --count: the hollow nodes' names are this prefix and their index.",
    "hollow-node-",
  ),
  "kubeconfig-dir": stringFlag(
    "COURSE FLAG. The directory holding each hollow node's own identity, node-<name>.kubeconfig (ensurePKI's layout: `npm run pki -- --dir DIR --nodes …`).",
  ),
  "root-dir": stringFlag(
    "COURSE FLAG (upstream makes a temporary directory). Each hollow node keeps its files under <root-dir>/<name>.",
  ),
  "fake-capacity": mapFlag(
    "COURSE FLAG (upstream: --max-pods and --extended-resources over a fake cAdvisor). The capacity every hollow node simulates, as ResourceName=Quantity pairs; a resource left out keeps its default (a node without ephemeral-storage never goes Ready).",
    "=",
    { ...defaultCapacity },
  ),
  "batch-size": intFlag(
    "COURSE FLAG. How many hollow nodes start at once: each batch is started together, the next when it has.",
    50,
    { min: 1, hint: "use a positive integer, e.g. --batch-size=50" },
  ),
  // chapter 8: the hollow kubelets' spans, the file the control plane reads (a kubelet's own
  // tracing is its KubeletConfiguration's `tracing` field; kubemark takes no kubelet config).
  "tracing-config-file": tracingConfigFileFlag(true),
};
// #endregion kubemark-flags

export type KubemarkFlagValues = FlagValues<typeof kubemarkFlags>;

export interface HollowNode {
  name: string;
  /** This node's own identity (CN system:node:<name>, O system:nodes). */
  kubeconfig: string;
  rootDir: string;
}

export interface KubemarkOptions {
  morph: "kubelet";
  nodes: HollowNode[];
  capacity: ResourceList;
  nodeLabels: Record<string, string>;
  qps: number;
  burst: number;
  batchSize: number;
  /** chapter 8: every hollow kubelet's spans (`--tracing-config-file`); absent: none. */
  tracing?: TracingConfiguration;
}

// #region kubemark-options
/** The hollow nodes the flags ask for, each with its identity — or the one line to print. */
export function kubemarkOptionsFromFlags(
  f: KubemarkFlagValues,
  given: ReadonlySet<keyof typeof kubemarkFlags & string>,
): KubemarkOptions | FlagError {
  const fail = (problem: string) => new FlagError(command, problem);
  if (f.morph === "")
    return fail("--morph is required: say which hollow component to run (this course has --morph=kubelet)");
  if (f.morph === "proxy")
    return fail("--morph=proxy: the hollow kube-proxy is not part of this course; use --morph=kubelet");
  if (f.morph !== "kubelet")
    return fail(
      `Unknown morph: ${f.morph}. allowed values: [${knownMorphs.join(" ")}] (use --morph=kubelet)`,
    );
  if (given.has("name") && given.has("count"))
    return fail(
      "--name and --count do not go together: --name=<node> for one hollow node, or --count=N --name-prefix=<prefix> for N",
    );
  const names = given.has("count")
    ? Array.from({ length: f.count }, (_, i) => `${f["name-prefix"]}${i}`)
    : [f.name];
  for (const name of names) {
    const errs = isDNS1123Subdomain(name);
    if (errs.length > 0)
      return fail(
        `${given.has("count") ? "--name-prefix" : "--name"}: ${JSON.stringify(name)} is not a valid node name: ${errs[0]}`,
      );
  }
  if (f.kubeconfig !== undefined && names.length > 1)
    return fail(
      "--kubeconfig names one identity, and --count wants one per hollow node: use --kubeconfig-dir=DIR (node-<name>.kubeconfig)",
    );
  if (f.kubeconfig === undefined && f["kubeconfig-dir"] === undefined)
    return fail(
      "--kubeconfig-dir is required: the directory of the hollow nodes' identities, node-<name>.kubeconfig (e.g. --kubeconfig-dir=.cluster/pki)",
    );
  if (f["root-dir"] === undefined)
    return fail(
      "--root-dir is required: each hollow node keeps its files under <root-dir>/<name> (e.g. --root-dir=.cluster/kubemark)",
    );
  const nodes: HollowNode[] = [];
  for (const name of names) {
    const kubeconfig = resolve(
      f.kubeconfig ?? join(f["kubeconfig-dir"] as string, `node-${name}.kubeconfig`),
    );
    if (!existsSync(kubeconfig))
      return fail(
        `no identity for hollow node ${JSON.stringify(name)}: ${kubeconfig} does not exist (make the nodes' identities first: npm run pki -- --dir DIR --nodes ${names.length > 1 ? `${names[0]},…,${names[names.length - 1]}` : name})`,
      );
    nodes.push({ name, kubeconfig, rootDir: resolve(f["root-dir"], name) });
  }
  const capacity: ResourceList = {};
  for (const [resource, text] of Object.entries({ ...defaultCapacity, ...f["fake-capacity"] })) {
    const q = parseQuantity(text);
    if (!q || q.nanos < 0n)
      return fail(
        `--fake-capacity: ${JSON.stringify(text)} is not a quantity for ${JSON.stringify(resource)} (e.g. cpu=8,memory=32Gi,pods=110)`,
      );
    capacity[resource] = text;
  }
  const badLabels = validateNodeLabels(f["node-labels"]);
  if (badLabels) return fail(badLabels);
  if (f["kube-api-qps"] === 0 || f["kube-api-burst"] < 0)
    return fail(
      "--kube-api-qps must not be 0 (a negative value means no limit) and --kube-api-burst not negative",
    );
  const tracing = readTracingConfigFlag(command, f["tracing-config-file"]);
  if (tracing instanceof FlagError) return tracing;
  return {
    morph: "kubelet",
    tracing,
    nodes,
    capacity,
    nodeLabels: f["node-labels"],
    qps: f["kube-api-qps"],
    burst: f["kube-api-burst"],
    batchSize: f["batch-size"],
  };
}
// #endregion kubemark-options

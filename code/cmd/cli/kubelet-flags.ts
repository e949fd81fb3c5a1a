/**
 * Kubelet flags — the kubelet's command line (upstream's names, help texts and defaults), and
 * what it adds up to with a `--config` file: one KubeletConfiguration plus the per-node settings
 * (node name, root dir, node IP, node labels) that upstream keeps out of the shared file.
 * Mirrors kubernetes/kubernetes cmd/kubelet/app/options/options.go.
 *
 * Solves:
 * - `code/cmd/kubelet.ts` calls one function and gets everything the kubelet was asked to do,
 *   already in the types the node status, lease and server code take (Taint[], ResourceList,
 *   the eviction thresholds, NodeStatusOptions) — or one line saying what is wrong and how to
 *   fix it;
 * - upstream's precedence: a flag given on the command line overrides the `--config` file, the
 *   file overrides the defaults (kubeletConfigFlagPrecedence re-parses the command line over the
 *   loaded file); a flag left out does not override anything;
 * - two kubelets on one machine: every path and port is a flag (`--root-dir`, `--cert-dir`,
 *   `--port`, `--healthz-port`, `--read-only-port`), so each can be given its own.
 *
 * Invariants:
 * - a malformed value (`--register-with-taints=a:Bad`, `--kube-reserved=cpu`) is refused while
 *   parsing, in pflag's words (`invalid argument … for "--register-with-taints" flag: …`); a
 *   value that parses but cannot be used (`--kube-reserved=gpu=1`, a port of 0, a label in
 *   kubernetes.io) is refused after the file and the flags are merged, in upstream's words;
 * - without `--config` the base is the legacy defaults (authorization AlwaysAllow, anonymous
 *   requests allowed, read-only port 10255), with it the file's defaults (Webhook, no anonymous,
 *   read-only port 0) — upstream's NewKubeletConfiguration vs the v1beta1 defaults;
 * - the node name is `--hostname-override`, else the machine's hostname, trimmed and lowercased
 *   (nodeutil.GetHostname).
 *
 * What upstream does differently:
 * - `--runtime=process|fake`, `--fake-capacity` and `--warm-pool` are this course's: upstream's kubelet talks to
 *   a CRI runtime over `--container-runtime-endpoint` and reads the machine from cAdvisor;
 * - upstream logs every deprecated flag when parsing; here the lines are returned in `warnings`
 *   for the command to log;
 * - `--pod-cidr` is used only in standalone mode upstream (the Node's spec.podCIDR wins); here it
 *   is how each kubelet on one machine gets its own pod addresses;
 * - upstream exits 1 for a configuration it refuses; our commands exit 2 (cli/run.ts).
 *
 * @upstream kubernetes/kubernetes cmd/kubelet/app/options/options.go (KubeletFlags, NewKubeletFlags, ValidateKubeletFlags, KubeletFlags.AddFlags, AddKubeletConfigFlags, applyLegacyDefaults)
 * @upstream kubernetes/kubernetes cmd/kubelet/app/server.go (NewKubeletCommand: kubeletConfigFlagPrecedence, loadConfigFile; parseResourceList; RunKubelet: GetHostname, nodeName)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-helpers/node/util/hostname.go (GetHostname)
 * @upstream kubernetes/kubernetes pkg/util/flag/flags.go (RegisterWithTaintsVar.Set)
 * @chapter 07-kubelet
 */
import { hostname as osHostname } from "node:os";
import { resolve } from "node:path";
import type { ResourceList, Taint } from "../../api/core.ts";
import { parseQuantity } from "../../api/quantity.ts";
import { isQualifiedName, isValidLabelValue, parseIPSloppy } from "../../api/string-validation.ts";
import { legacyDefaultConfiguration } from "../../kubelet/apis/config/defaults.ts";
import { parseThresholdConfig, toNodeStatusThresholds } from "../../kubelet/apis/config/eviction.ts";
import { KubeletConfigLoadError, loadKubeletConfigFile } from "../../kubelet/apis/config/load.ts";
import { parseTaints } from "../../kubelet/apis/config/taints.ts";
import type { KubeletConfiguration } from "../../kubelet/apis/config/types.ts";
import { aggregate, validateKubeletConfiguration } from "../../kubelet/apis/config/validation.ts";
import {
  isKubeletLabel,
  kubeletLabelNamespaces,
  kubeletLabels,
  labelNamespace,
} from "../../kubelet/apis/well-known-labels.ts";
import type { NodeStatusOptions } from "../../kubelet/kubelet-node-status.ts";
import type { EvictionThreshold } from "../../kubelet/nodestatus/setters.ts";
import { boolFlag, type Flag, FlagError, FlagValueError, type FlagValues, stringFlag } from "./flag.ts";
import { configurationMapFlag, goDurationFlag, int32Flag, ipFlag, mapFlag } from "./pflag-values.ts";

const command = "kubelet";

/** RegisterWithTaintsVar: `key=value:Effect,…`, parsed whole at each appearance (the last wins). */
function taintsFlag(help: string): Flag<Taint[]> {
  return {
    help,
    default: [],
    set(text) {
      if (text === "") return [];
      const taints = parseTaints(text.split(","));
      return typeof taints === "string"
        ? new FlagValueError(
            `${taints} (write key=value:Effect or key:Effect, Effect one of NoSchedule, PreferNoSchedule, NoExecute)`,
          )
        : taints;
    },
  };
}

function runtimeFlag(help: string): Flag<"process" | "fake"> {
  return {
    help,
    default: "process",
    set: (text) =>
      text === "process" || text === "fake"
        ? text
        : new FlagValueError("use --runtime=process (real processes) or --runtime=fake (state on timers)"),
    shownDefault: '"process"',
  };
}

/** The deprecation every KubeletConfiguration flag carries upstream (AddKubeletConfigFlags). */
export const configFlagDeprecation =
  "This parameter should be set via the config file specified by the Kubelet's --config flag. See https://kubernetes.io/docs/tasks/administer-cluster/kubelet-config-file/ for more information.";

const labelsHelp = `Labels to add when registering the node in the cluster.  Labels must be key=value pairs separated by ','. Labels in the 'kubernetes.io' namespace must begin with an allowed prefix (${kubeletLabelNamespaces.join(", ")}) or be in the specifically allowed set (${kubeletLabels.join(", ")})`;

// #region kubelet-flags
const legacy = legacyDefaultConfiguration();

/** KubeletFlags: per node, never in the shared file. */
const nodeFlags = {
  config: stringFlag(
    "The Kubelet will load its initial configuration from this file. The path may be absolute or relative; relative paths start at the Kubelet's current working directory. Omit this flag to use the built-in default configuration values. Command-line flags override configuration from this file.",
  ),
  kubeconfig: stringFlag(
    "Path to a kubeconfig file, specifying how to connect to the API server. Providing --kubeconfig enables API server mode, omitting --kubeconfig enables standalone mode.",
  ),
  "hostname-override": stringFlag(
    "If non-empty, will use this string as identification instead of the actual hostname. If --cloud-provider is set, the cloud provider determines the name of the node (consult cloud provider documentation to determine if and how the hostname is used).",
  ),
  "node-ip": stringFlag(
    "IP address (or comma-separated dual-stack IP addresses) of the node. If unset, kubelet will use the node's default IPv4 address, if any, or its default IPv6 address if it has no IPv4 addresses. You can pass '::' to make it prefer the default IPv6 address rather than the default IPv4 address.",
  ),
  "cert-dir": stringFlag(
    "The directory where the TLS certs are located. If --tls-cert-file and --tls-private-key-file are provided, this flag will be ignored.",
    "/var/lib/kubelet/pki",
  ),
  "root-dir": stringFlag(
    "Directory path for managing kubelet files (volume mounts,etc).",
    "/var/lib/kubelet",
  ),
  "node-labels": configurationMapFlag(labelsHelp),
  "register-schedulable": boolFlag(
    "Register the node as schedulable. Won't have any effect if register-node is false. (DEPRECATED: will be removed in a future version)",
    true,
  ),
};

const deprecated = (help: string) => `${help} (DEPRECATED: ${configFlagDeprecation})`;

/** AddKubeletConfigFlags: each sets one KubeletConfiguration field (and is deprecated for --config). */
const configFlags = {
  "pod-manifest-path": stringFlag(
    deprecated(
      "Path to the directory containing static pod files to run, or the path to a single static pod file. Files starting with dots will be ignored.",
    ),
    legacy.staticPodPath,
  ),
  "sync-frequency": goDurationFlag(
    deprecated("Max period between synchronizing running containers and config"),
    legacy.syncFrequencyMs,
  ),
  "file-check-frequency": goDurationFlag(
    deprecated("Duration between checking config files for new data"),
    legacy.fileCheckFrequencyMs,
  ),
  address: ipFlag(
    deprecated(
      "The IP address for the Kubelet to serve on (set to '0.0.0.0' or '::' for listening on all interfaces and IP address families)",
    ),
    legacy.address,
  ),
  port: int32Flag(deprecated("The port for the Kubelet to serve on."), legacy.port),
  "read-only-port": int32Flag(
    deprecated(
      "The read-only port for the Kubelet to serve on with no authentication/authorization (set to 0 to disable)",
    ),
    legacy.readOnlyPort,
  ),
  "container-runtime-endpoint": stringFlag(
    deprecated(
      "The endpoint of container runtime service. Unix Domain Sockets are supported on Linux, while npipe and tcp endpoints are supported on Windows. Examples:'unix:///path/to/runtime.sock', 'npipe:////./pipe/runtime'",
    ),
    legacy.containerRuntimeEndpoint,
  ),
  "anonymous-auth": boolFlag(
    deprecated(
      "Enables anonymous requests to the Kubelet server. Requests that are not rejected by another authentication method are treated as anonymous requests. Anonymous requests have a username of system:anonymous, and a group name of system:unauthenticated.",
    ),
    legacy.authentication.anonymous.enabled,
  ),
  "authentication-token-webhook": boolFlag(
    deprecated("Use the TokenReview API to determine authentication for bearer tokens."),
    legacy.authentication.webhook.enabled,
  ),
  "client-ca-file": stringFlag(
    deprecated(
      "If set, any request presenting a client certificate signed by one of the authorities in the client-ca-file is authenticated with an identity corresponding to the CommonName of the client certificate.",
    ),
  ),
  "authorization-mode": stringFlag(
    deprecated(
      "Authorization mode for Kubelet server. Valid options are AlwaysAllow or Webhook. Webhook mode uses the SubjectAccessReview API to determine authorization.",
    ),
    legacy.authorization.mode,
  ),
  "tls-cert-file": stringFlag(
    deprecated(
      "File containing x509 Certificate used for serving HTTPS (with intermediate certs, if any, concatenated after server cert). If --tls-cert-file and --tls-private-key-file are not provided, a self-signed certificate and key are generated for the public address and saved to the directory passed to --cert-dir.",
    ),
  ),
  "tls-private-key-file": stringFlag(
    deprecated("File containing x509 private key matching --tls-cert-file."),
  ),
  "healthz-port": int32Flag(
    deprecated("The port of the localhost healthz endpoint (set to 0 to disable)"),
    legacy.healthzPort,
  ),
  "healthz-bind-address": ipFlag(
    deprecated(
      "The IP address for the healthz server to serve on (set to '0.0.0.0' or '::' for listening on all interfaces and IP address families)",
    ),
    legacy.healthzBindAddress,
  ),
  "node-status-update-frequency": goDurationFlag(
    deprecated(
      "Specifies how often kubelet posts node status to master. Note: be cautious when changing the constant, it must work with nodeMonitorGracePeriod in nodecontroller.",
    ),
    legacy.nodeStatusUpdateFrequencyMs,
  ),
  "max-pods": int32Flag(deprecated("Number of Pods that can run on this Kubelet."), legacy.maxPods),
  "pod-cidr": stringFlag(
    deprecated(
      "The CIDR to use for pod IP addresses, only used in standalone mode.  In cluster mode, this is obtained from the master. For IPv6, the maximum number of IP's allocated is 65536",
    ),
  ),
  "eviction-hard": mapFlag(
    deprecated(
      "A set of eviction thresholds (e.g. memory.available<1Gi) that if met would trigger a pod eviction.",
    ),
    "<",
    legacy.evictionHard,
  ),
  "system-reserved": mapFlag(
    deprecated(
      "A set of ResourceName=ResourceQuantity (e.g. cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000) pairs that describe resources reserved for non-kubernetes components. Currently only cpu, memory, pid and local ephemeral storage for root file system are supported. See https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/ for more detail. [default=none]",
    ),
    "=",
  ),
  "kube-reserved": mapFlag(
    deprecated(
      "A set of ResourceName=ResourceQuantity (e.g. cpu=200m,memory=500Mi,ephemeral-storage=1Gi,pid=1000) pairs that describe resources reserved for kubernetes system components. Currently only cpu, memory, pid and local ephemeral storage for root file system are supported. See https://kubernetes.io/docs/concepts/configuration/manage-resources-containers/ for more detail. [default=none]",
    ),
    "=",
  ),
  "register-node": boolFlag(
    deprecated(
      "Register the node with the apiserver. If --kubeconfig is not provided, this flag is irrelevant, as the Kubelet won't have an apiserver to register with.",
    ),
    legacy.registerNode,
  ),
  "register-with-taints": taintsFlag(
    deprecated(
      'Register the node with the given list of taints (comma separated "<key>=<value>:<effect>"). No-op if register-node is false.',
    ),
  ),
};

/** This course's flags: upstream has none of them. */
const courseFlags = {
  runtime: runtimeFlag(
    "COURSE FLAG (upstream has none: its kubelet dials a CRI runtime at --container-runtime-endpoint). The runtime this kubelet runs in its own process: 'process' starts each container as a real child process from the course's image catalog; 'fake' only changes container states on timers (upstream's fake CRI / kwok role), so one process can host many kubelets.",
  ),
  "fake-capacity": mapFlag(
    "COURSE FLAG (upstream has none: its kubelet reads the machine from cAdvisor). With --runtime=fake only: the capacity of the machine this kubelet simulates, as ResourceName=Quantity pairs (e.g. cpu=4,memory=8Gi,pods=110,ephemeral-storage=100Gi). Unset resources are this machine's.",
    "=",
  ),
  "warm-pool": int32Flag(
    "COURSE FLAG (upstream has none: containerd starts a container's process itself). With --runtime=process only: how many Node processes to keep booted for the next container starts (process-warm-pool.ts); 0, the default, starts each container as a fresh process.",
    0,
  ),
};

/** The kubelet's whole flag table: spread into the command's `flags`. */
export const kubeletFlags = { ...nodeFlags, ...configFlags, ...courseFlags };

export type KubeletFlagValues = FlagValues<typeof kubeletFlags>;
// #endregion kubelet-flags

// #region flag-precedence
type ConfigFlag = keyof typeof configFlags;

/** Where each KubeletConfiguration flag writes (the field AddKubeletConfigFlags binds it to). */
const configFlagFields: { [F in ConfigFlag]: (c: KubeletConfiguration, v: KubeletFlagValues[F]) => void } = {
  "pod-manifest-path": (c, v) => {
    c.staticPodPath = v;
  },
  "sync-frequency": (c, v) => {
    c.syncFrequencyMs = v;
  },
  "file-check-frequency": (c, v) => {
    c.fileCheckFrequencyMs = v;
  },
  address: (c, v) => {
    c.address = v;
  },
  port: (c, v) => {
    c.port = v;
  },
  "read-only-port": (c, v) => {
    c.readOnlyPort = v;
  },
  "container-runtime-endpoint": (c, v) => {
    c.containerRuntimeEndpoint = v;
  },
  "anonymous-auth": (c, v) => {
    c.authentication.anonymous.enabled = v;
  },
  "authentication-token-webhook": (c, v) => {
    c.authentication.webhook.enabled = v;
  },
  "client-ca-file": (c, v) => {
    c.authentication.x509.clientCAFile = v ?? "";
  },
  "authorization-mode": (c, v) => {
    c.authorization.mode = v;
  },
  "tls-cert-file": (c, v) => {
    c.tlsCertFile = v ?? "";
  },
  "tls-private-key-file": (c, v) => {
    c.tlsPrivateKeyFile = v ?? "";
  },
  "healthz-port": (c, v) => {
    c.healthzPort = v;
  },
  "healthz-bind-address": (c, v) => {
    c.healthzBindAddress = v;
  },
  // Only the update frequency: the report frequency was defaulted with the file and stays.
  "node-status-update-frequency": (c, v) => {
    c.nodeStatusUpdateFrequencyMs = v;
  },
  "max-pods": (c, v) => {
    c.maxPods = v;
  },
  "pod-cidr": (c, v) => {
    c.podCIDR = v ?? "";
  },
  "eviction-hard": (c, v) => {
    c.evictionHard = { ...v };
  },
  "system-reserved": (c, v) => {
    c.systemReserved = { ...v };
  },
  "kube-reserved": (c, v) => {
    c.kubeReserved = { ...v };
  },
  "register-node": (c, v) => {
    c.registerNode = v;
  },
  "register-with-taints": (c, v) => {
    c.registerWithTaints = v.map((t) => ({ ...t }));
  },
};

/**
 * kubeletConfigFlagPrecedence: `base` (the loaded file, or the legacy defaults) with every
 * configuration flag the command line gave written over it. Returns a new configuration.
 */
export function applyKubeletConfigFlags(
  values: KubeletFlagValues,
  given: ReadonlySet<string>,
  base: KubeletConfiguration,
): KubeletConfiguration {
  const out = structuredClone(base);
  for (const flag of Object.keys(configFlagFields) as ConfigFlag[]) {
    if (given.has(flag))
      (configFlagFields[flag] as (c: KubeletConfiguration, v: unknown) => void)(out, values[flag]);
  }
  return out;
}
// #endregion flag-precedence

/** Everything a kubelet was asked to do: what `code/cmd/kubelet.ts` builds the kubelet from. */
export interface KubeletOptions {
  /** The merged, defaulted, validated configuration (flags given > --config file > defaults). */
  config: KubeletConfiguration;
  /** --config, when given. */
  configFile?: string;
  /** --kubeconfig; absent: standalone mode (static pods only, no Node registered). */
  kubeconfig?: string;
  /** --hostname-override as given. */
  hostnameOverride?: string;
  /** GetHostname: --hostname-override or the machine's hostname, trimmed and lowercased. */
  hostname: string;
  /** The Node's name (= hostname: this kubelet has no cloud provider to ask). */
  nodeName: string;
  /** --node-ip: the first address; absent when not given (or not an address: upstream ignores it). */
  nodeIP?: string;
  /** --node-ip: every address (dual stack). */
  nodeIPs: string[];
  /** --node-labels, checked against the kubelet's allowed set. */
  nodeLabels: Record<string, string>;
  /** --root-dir. */
  rootDir: string;
  /** --cert-dir. */
  certDir: string;
  /** --register-schedulable (deprecated upstream). */
  registerSchedulable: boolean;
  /** --runtime (course flag). */
  runtime: "process" | "fake";
  /** --fake-capacity (course flag, fake runtime only); absent: the machine's own. */
  fakeCapacity?: ResourceList;
  /** --warm-pool (course flag, process runtime only): Node processes kept booted; 0: none. */
  warmPool: number;
  /** config.kubeReserved / systemReserved, parsed (parseResourceList). */
  kubeReserved: ResourceList;
  systemReserved: ResourceList;
  /** config.evictionHard, parsed, in the form nodestatus/setters.ts takes. */
  evictionHard: EvictionThreshold[];
  /** The node status and lease settings, complete (kubelet-node-status.ts NodeStatusOptions). */
  nodeStatus: NodeStatusOptions;
  /** Lines to log: deprecated flags used, file fields ignored or unknown. */
  warnings: string[];
}

export interface KubeletFlagDeps {
  /** os.Hostname (tests give their own). */
  hostname?: () => string;
}

/** parseResourceList: `--kube-reserved`'s map to quantities; only cpu, memory, ephemeral-storage, pid. */
export function parseResourceList(m: Readonly<Record<string, string>>): ResourceList | string {
  const out: ResourceList = {};
  for (const [name, value] of Object.entries(m)) {
    if (!["cpu", "memory", "ephemeral-storage", "pid"].includes(name))
      return `cannot reserve ${JSON.stringify(name)} resource`;
    const q = parseQuantity(value);
    if (!q)
      return `failed to parse quantity ${JSON.stringify(value)} for ${JSON.stringify(name)} resource: quantities must match the regular expression '^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$'`;
    if (q.nanos < 0n) return `resource quantity for ${JSON.stringify(name)} cannot be negative: ${value}`;
    out[name] = value;
  }
  return out;
}

/** ValidateKubeletFlags' node-label checks: the kubelet's own allowed set, then label syntax. */
export function validateNodeLabels(labels: Readonly<Record<string, string>>): string | undefined {
  const isKubernetesLabel = (key: string) => {
    const ns = labelNamespace(key);
    return (
      ns === "kubernetes.io" || ns.endsWith(".kubernetes.io") || ns === "k8s.io" || ns.endsWith(".k8s.io")
    );
  };
  const unknown = Object.keys(labels)
    .filter((k) => isKubernetesLabel(k) && !isKubeletLabel(k))
    .sort();
  if (unknown.length > 0) {
    // Upstream's message has two lines; a command line error is one.
    return `unknown 'kubernetes.io' or 'k8s.io' labels specified with --node-labels: [${unknown.join(" ")}]; --node-labels in the 'kubernetes.io' namespace must begin with an allowed prefix (${kubeletLabelNamespaces.join(", ")}) or be in the specifically allowed set (${kubeletLabels.join(", ")})`;
  }
  const invalid: string[] = [];
  for (const [k, v] of Object.entries(labels)) {
    const keyErrs = isQualifiedName(k);
    if (keyErrs.length > 0) invalid.push(`'${k}' - ${keyErrs.join(", ")}`);
    const valueErrs = isValidLabelValue(v);
    if (valueErrs.length > 0) invalid.push(`'${v}' - ${valueErrs.join(", ")}`);
  }
  return invalid.length > 0 ? `invalid node labels: ${invalid.join("; ")}` : undefined;
}

/** A CIDR as Go's net.ParseCIDR reads it (`10.244.1.0/24`, `fd00::/64`). */
function isCIDR(text: string): boolean {
  const slash = text.indexOf("/");
  if (slash < 0) return false;
  const ip = parseIPSloppy(text.slice(0, slash));
  const bits = text.slice(slash + 1);
  if (!ip || !/^\d{1,3}$/.test(bits)) return false;
  return Number(bits) <= (ip.family === 4 ? 32 : 128);
}

// #region kubelet-configuration-from-flags
/**
 * The kubelet's command line read to the end: load `--config` (if given), write the flags given
 * over it, validate, and parse what the rest of the kubelet takes typed. One FlagError with the
 * first problem (several configuration problems in one aggregate), or the options.
 */
export function kubeletConfigurationFromFlags(
  values: KubeletFlagValues,
  given: ReadonlySet<string>,
  deps: KubeletFlagDeps = {},
): KubeletOptions | FlagError {
  const fail = (problem: string, fix: string) => new FlagError(command, `${problem} (fix: ${fix})`);
  const warnings: string[] = [];

  // Flags first, then the file: ValidateKubeletFlags runs before the file is loaded upstream.
  const labelProblem = validateNodeLabels(values["node-labels"]);
  if (labelProblem)
    return fail(
      `failed to validate kubelet flags: ${labelProblem}`,
      "use your own prefix (example.com/role=web) or node-role labels set later with kubectl label",
    );

  let base = legacyDefaultConfiguration();
  if (values.config !== undefined) {
    try {
      // Upstream's loader reads the absolute path (filepath.Abs), and says so in its messages.
      const loaded = loadKubeletConfigFile(resolve(values.config));
      base = loaded.config;
      warnings.push(...loaded.warnings);
    } catch (e) {
      if (!(e instanceof KubeletConfigLoadError)) throw e;
      // NewKubeletCommand wraps loadConfigFile's error, which wraps the loader's.
      const p = values.config;
      return fail(
        `failed to load kubelet config file, path: ${p}, error: failed to load Kubelet config file ${p}, error ${e.message}`,
        e.fix,
      );
    }
  }
  const config = applyKubeletConfigFlags(values, given, base);
  for (const flag of Object.keys(configFlags)) {
    if (given.has(flag)) warnings.push(`Flag --${flag} has been deprecated, ${configFlagDeprecation}`);
  }
  if (given.has("register-schedulable"))
    warnings.push("Flag --register-schedulable has been deprecated, will be removed in a future version");

  const invalid = validateKubeletConfiguration(config);
  if (invalid.length > 0)
    return fail(
      `failed to validate kubelet configuration, error: ${aggregate(invalid)}`,
      "correct the value named (in the --config file or by its flag)",
    );
  if (config.authorization.mode !== "AlwaysAllow" && config.authorization.mode !== "Webhook")
    return fail(
      `unknown authorization mode ${config.authorization.mode}`,
      "use --authorization-mode=AlwaysAllow or Webhook",
    );

  const kubeReserved = parseResourceList(config.kubeReserved);
  if (typeof kubeReserved === "string")
    return fail(
      `--kube-reserved value failed to parse: ${kubeReserved}`,
      "give cpu, memory, ephemeral-storage or pid quantities, e.g. cpu=200m,memory=500Mi",
    );
  const systemReserved = parseResourceList(config.systemReserved);
  if (typeof systemReserved === "string")
    return fail(
      `--system-reserved value failed to parse: ${systemReserved}`,
      "give cpu, memory, ephemeral-storage or pid quantities, e.g. cpu=200m,memory=500Mi",
    );
  const thresholds = parseThresholdConfig(config.evictionHard);
  if (typeof thresholds === "string")
    return fail(
      `--eviction-hard: ${thresholds}`,
      "write signal<quantity or signal<percent, e.g. memory.available<100Mi,nodefs.available<10%",
    );

  if (config.podCIDR !== "" && !isCIDR(config.podCIDR))
    return fail(
      `--pod-cidr: invalid CIDR address: ${config.podCIDR}`,
      "give an address and prefix length, e.g. 10.244.1.0/24",
    );

  // ParseNodeIPArgument (1.32): an address that does not parse is logged and ignored; more than
  // a dual-stack pair is an error.
  const nodeIPs: string[] = [];
  for (const text of (values["node-ip"] ?? "").split(",").map((ip) => ip.trim())) {
    if (values["node-ip"] === undefined || values["node-ip"] === "") break;
    if (parseIPSloppy(text)) nodeIPs.push(text);
    else warnings.push(`"Could not parse node IP. Ignoring" IP=${JSON.stringify(text)}`);
  }
  const family = (ip: string) => parseIPSloppy(ip)?.family;
  const badNodeIP = (why: string) =>
    fail(
      `bad --node-ip ${JSON.stringify(values["node-ip"])}: ${why}`,
      "give one address, or an IPv4 and an IPv6 one: --node-ip=127.0.0.1",
    );
  if (nodeIPs.length > 2 || (nodeIPs.length === 2 && family(nodeIPs[0]) === family(nodeIPs[1])))
    return badNodeIP("must contain either a single IP or a dual-stack pair of IPs");
  if (nodeIPs.length === 2 && nodeIPs.some((ip) => ip === "0.0.0.0" || ip === "::"))
    return badNodeIP("dual-stack node IP cannot include '0.0.0.0' or '::'");

  let fakeCapacity: ResourceList | undefined;
  if (given.has("fake-capacity")) {
    if (values.runtime !== "fake")
      return fail(
        "--fake-capacity: only a fake-runtime kubelet simulates a machine",
        "add --runtime=fake, or drop --fake-capacity",
      );
    fakeCapacity = {};
    for (const [name, text] of Object.entries(values["fake-capacity"])) {
      const q = parseQuantity(text);
      if (!q || q.nanos < 0n)
        return fail(
          `--fake-capacity: ${JSON.stringify(text)} is not a quantity for ${JSON.stringify(name)}`,
          "write resource=quantity pairs, e.g. cpu=4,memory=8Gi,pods=110",
        );
      fakeCapacity[name] = text;
    }
  }

  const warmPool = values["warm-pool"];
  if (warmPool < 0)
    return fail(`--warm-pool: ${warmPool} is negative`, "give 0 (no pool) or a positive count");
  if (warmPool > 0 && values.runtime !== "process")
    return fail(
      "--warm-pool: only the process runtime starts processes",
      "drop --warm-pool, or use --runtime=process",
    );

  // GetHostname: the override or the machine's name, trimmed and lowercased.
  const hostname = (values["hostname-override"] || (deps.hostname ?? osHostname)()).trim().toLowerCase();
  if (hostname === "") return fail("empty hostname is invalid", "give --hostname-override=NAME");

  return {
    config,
    configFile: values.config,
    kubeconfig: values.kubeconfig,
    hostnameOverride: values["hostname-override"],
    hostname,
    nodeName: hostname,
    nodeIP: nodeIPs[0],
    nodeIPs,
    nodeLabels: { ...values["node-labels"] },
    rootDir: values["root-dir"],
    certDir: values["cert-dir"],
    registerSchedulable: values["register-schedulable"],
    runtime: values.runtime,
    fakeCapacity,
    warmPool,
    kubeReserved,
    systemReserved,
    evictionHard: toNodeStatusThresholds(thresholds),
    nodeStatus: {
      nodeStatusUpdateFrequencyMs: config.nodeStatusUpdateFrequencyMs,
      nodeStatusReportFrequencyMs: config.nodeStatusReportFrequencyMs,
      nodeLeaseDurationSeconds: config.nodeLeaseDurationSeconds,
      maxPods: config.maxPods,
      nodeStatusMaxImages: config.nodeStatusMaxImages,
    },
    warnings,
  };
}
// #endregion kubelet-configuration-from-flags

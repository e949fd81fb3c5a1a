/**
 * The kubelet's Node — registering it with the API server, then keeping its status current:
 * every nodeStatusUpdateFrequency (10 s) the setters recompute the status, and the kubelet writes
 * it only if something changed or nodeStatusReportFrequency (5 min) passed since the last write.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kubelet_node_status.go.
 *
 * Solves:
 * - a kubelet that starts before the API server (or while it is down) must register as soon as it
 *   can without hammering it: retries wait 100 ms, 200 ms, … up to 7 s;
 * - a kubelet that restarts finds its Node already there: it keeps that object (the node lifecycle
 *   controller's taints, a cordon, users' labels) and only reconciles its own default labels;
 * - liveness is the Lease's job (nodelease/controller.ts, every 10 s); writing the whole status
 *   every 10 s on 5,000 nodes would be most of the API server's and etcd's load, so an unchanged
 *   status is written only once per report period — but a real change (a condition flipping, a new
 *   image) is written at once.
 *
 * Invariants:
 * - at most one registration or status update runs at a time (one loop);
 * - "changed" ignores the conditions' lastHeartbeatTime (nodeStatusHasChanged), or every
 *   recomputation would count as a change;
 * - a status update tries at most nodeStatusUpdateRetry (5) times; the first read is from a cache
 *   (the kubelet's node lister if it has one, else the API server's watch cache), retries from etcd;
 * - lastStatusReportTime moves only when a PATCH succeeded.
 *
 * What upstream does differently: upstream's kubelet learns its pod CIDR from the Node, which the
 * node IPAM controller writes; here the kubelet registers its --pod-cidr itself. Upstream also
 * runs a fast status loop at start-up (fastStatusUpdateOnce, every 100 ms until the node is Ready)
 * — ours is Ready in the Node it registers. The NetworkUnavailable condition (cloud routes) and
 * the volume attach-detach annotation are left out.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet_node_status.go (registerWithAPIServer, tryRegisterWithAPIServer, updateDefaultLabels, updateDefaultResources, initialNode, syncNodeStatus, updateNodeStatus, tryUpdateNodeStatus, updateNode, patchNodeStatus, defaultNodeStatusFuncs, setNodeStatus, nodeStatusHasChanged, nodeConditionsHaveChanged)
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet.go (nodeStatusUpdateRetry, Kubelet.Run: JitterUntil(syncNodeStatus, nodeStatusUpdateFrequency, 0.04))
 * @upstream kubernetes/kubernetes pkg/kubelet/apis/config/v1beta1/defaults.go (nodeStatusUpdateFrequency, nodeStatusReportFrequency, nodeLeaseDurationSeconds, maxPods, nodeStatusMaxImages)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/core/v1/well_known_labels.go (LabelHostname, LabelOSStable, LabelArchStable)
 * @upstream kubernetes/kubernetes pkg/kubelet/apis/well_known_labels.go (LabelOS, LabelArch: the beta labels)
 * @chapter 07-kubelet
 */

import type { Node, ResourceList, Taint } from "../api/core.ts";
import { canonicalQuantity } from "../api/quantity.ts";
import { isAlreadyExists } from "../client/errors.ts";
import type { Clientset } from "../client/kubernetes/clientset.ts";
import { type Clock, sleep } from "../client/util/clock.ts";
import { jitterUntil } from "../client/util/wait/jitter-until.ts";
import { deepEqual, patchNodeStatus } from "./nodestatus/patch.ts";
import {
  daemonEndpoints,
  defaultEvictionHard,
  diskPressureCondition,
  type EvictionThreshold,
  goarch,
  goos,
  goRuntime,
  images,
  type MachineInfo,
  machineInfo,
  memoryPressureCondition,
  nodeAddress,
  nodeAllocatableReservation,
  pidPressureCondition,
  type RecordEvent,
  readyCondition,
  type Setter,
  versionInfo,
} from "./nodestatus/setters.ts";
import type { Image } from "./runtime/cri.ts";

/** The kubelet's node heartbeat settings (KubeletConfiguration fields; flags in code/cmd/kubelet.ts). */
export interface NodeStatusOptions {
  /** --node-status-update-frequency: how often the status is recomputed (and written if changed). */
  nodeStatusUpdateFrequencyMs: number;
  /** --node-status-report-frequency: the longest an unchanged status goes unwritten. */
  nodeStatusReportFrequencyMs: number;
  /** --node-lease-duration-seconds: the node Lease's duration; it is renewed every quarter of it. */
  nodeLeaseDurationSeconds: number;
  /** --max-pods. */
  maxPods: number;
  /** nodeStatusMaxImages: how many images the status lists (-1: all). */
  nodeStatusMaxImages: number;
}

/** KubeletConfiguration v1beta1 defaults. */
export const defaultNodeStatusOptions: NodeStatusOptions = {
  nodeStatusUpdateFrequencyMs: 10_000,
  nodeStatusReportFrequencyMs: 5 * 60_000,
  nodeLeaseDurationSeconds: 40,
  maxPods: 110,
  nodeStatusMaxImages: 50,
};

/** How many times updateNodeStatus tries before giving up until the next period (kubelet.go). */
export const nodeStatusUpdateRetry = 5;

/**
 * The version this kubelet reports: the API it follows, with build metadata saying it is not
 * upstream's binary (as distributions do: `v1.32.0+k3s1`).
 */
export const kubeletVersion = "v1.32.0+under-the-hood";

/** Everything the node status code needs from its kubelet. */
export interface KubeletNodeConfig {
  client: Clientset;
  clock: Clock;
  /** The Node's name (--hostname-override). */
  nodeName: string;
  /** The `kubernetes.io/hostname` label and Hostname address; usually the node name. */
  hostname: string;
  /** --node-ip; default 127.0.0.1 (every kubelet of this course runs on this machine). */
  nodeIP?: string;
  /** --port: the kubelet server's port, published in daemonEndpoints. */
  kubeletPort: number;
  /** --node-labels. */
  nodeLabels?: Record<string, string>;
  /** --register-with-taints. */
  registerWithTaints?: Taint[];
  /** --register-schedulable (deprecated upstream; default true). */
  registerSchedulable?: boolean;
  /** --pod-cidr: written to spec.podCIDR(s) at registration (see initialNode). */
  podCIDR?: string;
  /** The machine (machineInfoFromHost) or the one a fake kubelet simulates. */
  machine: MachineInfo;
  /** --kube-reserved, --system-reserved. */
  kubeReserved?: ResourceList;
  systemReserved?: ResourceList;
  /** --eviction-hard; default memory.available<100Mi, nodefs.available<10%, … */
  evictionHard?: EvictionThreshold[];
  /** The CRI runtime's name and version: containerRuntimeVersion `<type>://<version>`. */
  runtimeType: string;
  runtimeVersion?: () => string | undefined;
  /** The runtime's images (the CRI's ListImages); default none. */
  listImages?: () => Promise<Image[]>;
  /** runtimeState's errors; any makes Ready False. */
  runtimeErrors?: () => string | undefined;
  networkErrors?: () => string | undefined;
  /** The eviction manager's verdicts; default no pressure. */
  underMemoryPressure?: () => boolean;
  underDiskPressure?: () => boolean;
  underPIDPressure?: () => boolean;
  /** The node's events (reason, message); the caller records them with the node's reference. */
  recordEvent?: RecordEvent;
  /**
   * The kubelet's node informer (GetNode / nodeLister): the first try of each status update reads
   * the Node from it instead of the API server. Absent: a GET with resourceVersion=0, which the
   * API server answers from its watch cache (what the kubelet did before it had the lister).
   */
  nodeLister?: () => Node | undefined;
  /**
   * Kubelet.setNodeStatusFuncs: the setters, in order; default defaultNodeStatusFuncs(config).
   * Upstream's tests replace them, and so can an exercise (a learner's ReadyCondition).
   */
  setNodeStatusFuncs?: Setter[];
  /** Called when a status update fails again after its first try (kubelet: closes its connections). */
  onRepeatedHeartbeatFailure?: () => void;
  /** Log lines, klog-style (`"Successfully registered node" node="a"`). */
  log?: (line: string) => void;
  options?: Partial<NodeStatusOptions>;
}

/**
 * SetDefaults_KubeletConfiguration for these fields. One twist kept from upstream: a
 * nodeStatusUpdateFrequency given without a nodeStatusReportFrequency makes the report frequency
 * that same value (so a kubelet configured before leases existed keeps writing every period).
 */
export function nodeStatusOptionsWithDefaults(given: Partial<NodeStatusOptions> = {}): NodeStatusOptions {
  const reportFrequency =
    given.nodeStatusReportFrequencyMs ??
    given.nodeStatusUpdateFrequencyMs ??
    defaultNodeStatusOptions.nodeStatusReportFrequencyMs;
  return { ...defaultNodeStatusOptions, ...given, nodeStatusReportFrequencyMs: reportFrequency };
}

const optionsOf = (k: KubeletNodeConfig): NodeStatusOptions => nodeStatusOptionsWithDefaults(k.options);
const logOf = (k: KubeletNodeConfig) => k.log ?? (() => {});
const errText = (err: unknown) => JSON.stringify(err instanceof Error ? err.message : String(err));

/** defaultNodeStatusFuncs: the setters in upstream's order — Ready last. */
export function defaultNodeStatusFuncs(k: KubeletNodeConfig): Setter[] {
  const o = optionsOf(k);
  const now = () => k.clock.now();
  const nodeEvent = (eventType: "Normal", event: string) =>
    k.recordEvent?.(eventType, event, `Node ${k.nodeName} status is now: ${event}`);
  return [
    nodeAddress(k.nodeIP ?? "127.0.0.1", k.hostname),
    machineInfo({
      nodeName: k.nodeName,
      maxPods: o.maxPods,
      machineInfo: () => k.machine,
      allocatableReservation: (capacity) =>
        nodeAllocatableReservation(
          capacity,
          k.kubeReserved,
          k.systemReserved,
          k.evictionHard ?? defaultEvictionHard,
        ),
      recordEvent: k.recordEvent,
    }),
    versionInfo(() => k.machine, k.runtimeType, k.runtimeVersion ?? (() => undefined), kubeletVersion),
    daemonEndpoints(k.kubeletPort),
    images(o.nodeStatusMaxImages, k.listImages ?? (async () => [])),
    goRuntime(),
    memoryPressureCondition(now, k.underMemoryPressure ?? (() => false), nodeEvent),
    diskPressureCondition(now, k.underDiskPressure ?? (() => false), nodeEvent),
    pidPressureCondition(now, k.underPIDPressure ?? (() => false), nodeEvent),
    readyCondition({
      now,
      runtimeErrors: k.runtimeErrors,
      networkErrors: k.networkErrors,
      recordEvent: nodeEvent,
    }),
  ];
}

/** setNodeStatus: every setter in turn; one that fails is logged and the rest still run. */
export async function setNodeStatus(
  k: KubeletNodeConfig,
  node: Node,
  setters = k.setNodeStatusFuncs ?? defaultNodeStatusFuncs(k),
) {
  for (const set of setters) {
    try {
      await set(node);
    } catch (err) {
      logOf(k)(`"Failed to set some node status fields" err=${errText(err)} node="${k.nodeName}"`);
    }
  }
}

// #region initial-node
/** The labels a kubelet sets on its own Node (and reconciles on a Node it finds). */
export const labelHostname = "kubernetes.io/hostname";
export const labelOSStable = "kubernetes.io/os";
export const labelArchStable = "kubernetes.io/arch";
/** The beta labels, still set in 1.32 (kubeletapis.LabelOS, LabelArch). */
export const labelOS = "beta.kubernetes.io/os";
export const labelArch = "beta.kubernetes.io/arch";
export const taintNodeUnschedulable = "node.kubernetes.io/unschedulable";

/** initialNode: the Node this kubelet registers, status included. */
export async function initialNode(k: KubeletNodeConfig): Promise<Node> {
  const registerSchedulable = k.registerSchedulable ?? true;
  const node: Node = {
    apiVersion: "v1",
    kind: "Node",
    metadata: {
      name: k.nodeName,
      labels: {
        [labelHostname]: k.hostname,
        [labelOSStable]: goos(),
        [labelArchStable]: goarch(),
        [labelOS]: goos(),
        [labelArch]: goarch(),
      },
    },
    spec: { unschedulable: !registerSchedulable || undefined },
  };
  const taints: Taint[] = [...(k.registerWithTaints ?? [])];
  // Tainted from the first moment, so no scheduler can race a pod onto an unschedulable node.
  if (
    !registerSchedulable &&
    !taints.some((t) => t.key === taintNodeUnschedulable && t.effect === "NoSchedule")
  ) {
    taints.push({ key: taintNodeUnschedulable, effect: "NoSchedule" });
  }
  if (taints.length > 0) node.spec = { ...node.spec, taints };
  for (const [key, value] of Object.entries(k.nodeLabels ?? {})) {
    const current = node.metadata.labels?.[key];
    if (current !== undefined) {
      logOf(k)(
        `"the node label will overwrite default setting" labelKey="${key}" labelValue="${value}" default="${current}"`,
      );
    }
    (node.metadata.labels as Record<string, string>)[key] = value;
  }
  // Upstream's --pod-cidr serves only a kubelet without an API server; the node IPAM controller
  // writes spec.podCIDR(s). We have no IPAM controller, so the kubelet registers its own.
  if (k.podCIDR) {
    const cidrs = k.podCIDR.split(",");
    node.spec = { ...node.spec, podCIDR: cidrs[0], podCIDRs: cidrs };
  }
  await setNodeStatus(k, node);
  return node;
}
// #endregion initial-node

/** updateDefaultLabels: the kubelet's own labels on an existing Node follow its initial Node. */
export function updateDefaultLabels(initial: Node, existing: Node): boolean {
  const defaultLabels = [
    labelHostname,
    "topology.kubernetes.io/zone",
    "topology.kubernetes.io/region",
    "failure-domain.beta.kubernetes.io/zone",
    "failure-domain.beta.kubernetes.io/region",
    "node.kubernetes.io/instance-type",
    "beta.kubernetes.io/instance-type",
    labelOSStable,
    labelArchStable,
    "node.kubernetes.io/windows-build",
    labelOS,
    labelArch,
  ];
  let needsUpdate = false;
  existing.metadata.labels = existing.metadata.labels ?? {};
  const labels = existing.metadata.labels;
  for (const label of defaultLabels) {
    const want = initial.metadata.labels?.[label];
    if (want === undefined) continue;
    if (labels[label] !== want) {
      labels[label] = want;
      needsUpdate = true;
    }
    // Set, but never to an empty value.
    if (labels[label] === "") delete labels[label];
  }
  return needsUpdate;
}

/**
 * updateDefaultResources: a Node found without capacity or allocatable (made by hand, or by an
 * older kubelet) gets the initial Node's, so the scheduler sees room on it at once.
 */
export function updateDefaultResources(initial: Node, existing: Node): boolean {
  let requiresUpdate = false;
  existing.status = existing.status ?? {};
  for (const field of ["capacity", "allocatable"] as const) {
    if (existing.status[field] !== undefined) continue;
    existing.status[field] = { ...initial.status?.[field] };
    requiresUpdate = requiresUpdate || initial.status?.[field] !== undefined;
  }
  return requiresUpdate;
}

/**
 * tryRegisterWithAPIServer: create the Node; if it exists, reconcile the kubelet's labels and
 * default resources on it (PATCH nodes/<name>/status — the status subresource writes metadata too).
 */
export async function tryRegisterWithAPIServer(k: KubeletNodeConfig, node: Node, signal?: AbortSignal) {
  const log = logOf(k);
  const nodes = k.client.coreV1.nodes();
  try {
    await nodes.create(node, { signal });
    return true;
  } catch (err) {
    if (signal?.aborted) return false;
    if (!isAlreadyExists(err)) {
      log(`"Unable to register node with API server" err=${errText(err)} node="${k.nodeName}"`);
      return false;
    }
  }
  let existing: Node;
  try {
    existing = await nodes.get(k.nodeName, { signal });
  } catch (err) {
    log(
      `"Unable to register node with API server, error getting existing node" err=${errText(err)} node="${k.nodeName}"`,
    );
    return false;
  }
  const original = structuredClone(existing);
  log(`"Node was previously registered" node="${k.nodeName}"`);
  // Upstream also reconciles the attach-detach annotation, extended and huge-page resources:
  // none of them exist here.
  let requiresUpdate = updateDefaultLabels(node, existing);
  requiresUpdate = updateDefaultResources(node, existing) || requiresUpdate;
  if (requiresUpdate) {
    try {
      await patchNodeStatus(k.client, k.nodeName, original, existing, signal);
    } catch (err) {
      log(
        `"Unable to reconcile node with API server,error updating node" err=${errText(err)} node="${k.nodeName}"`,
      );
      return false;
    }
  }
  return true;
}

// #region register
/**
 * registerWithAPIServer: until it works (or `signal` aborts), wait, build the initial Node and try
 * to register it; the wait doubles from 100 ms to at most 7 s. Resolves true once registered.
 */
export async function registerWithAPIServer(k: KubeletNodeConfig, signal?: AbortSignal): Promise<boolean> {
  const log = logOf(k);
  let step = 100;
  while (!signal?.aborted) {
    await sleep(k.clock, step, signal);
    if (signal?.aborted) break;
    step = Math.min(step * 2, 7000);
    const node = await initialNode(k);
    log(`"Attempting to register node" node="${k.nodeName}"`);
    if (await tryRegisterWithAPIServer(k, node, signal)) {
      log(`"Successfully registered node" node="${k.nodeName}"`);
      return true;
    }
  }
  return false;
}
// #endregion register

// #region status-changed
/** nodeStatusHasChanged: any difference but the conditions' heartbeat times (quantities by value). */
export function nodeStatusHasChanged(original: Node["status"], status: Node["status"]): boolean {
  if (!original && !status) return false;
  if (!original || !status) return true;
  if (nodeConditionsHaveChanged(original.conditions ?? [], status.conditions ?? [])) return true;
  const { conditions: _a, ...rest } = original;
  const { conditions: _b, ...next } = status;
  return !deepEqual(semantic(rest), semantic(next));
}

function nodeConditionsHaveChanged(
  original: NonNullable<Node["status"]>["conditions"] & object,
  conditions: NonNullable<Node["status"]>["conditions"] & object,
) {
  if (original.length !== conditions.length) return true;
  const byType = (list: typeof original) =>
    [...list]
      .sort((a, b) => (a.type < b.type ? -1 : a.type > b.type ? 1 : 0))
      .map(({ lastHeartbeatTime: _, ...c }) => c);
  const a = byType(original);
  const b = byType(conditions);
  return a.some((c, i) => !deepEqual(c, b[i]));
}

/** apiequality.Semantic: quantities compare by value (`1Gi` equals `1024Mi`). */
function semantic(status: Record<string, unknown>) {
  const out: Record<string, unknown> = { ...status };
  for (const field of ["capacity", "allocatable"]) {
    const list = status[field] as ResourceList | undefined;
    if (list)
      out[field] = Object.fromEntries(Object.entries(list).map(([k, v]) => [k, canonicalQuantity(v)]));
  }
  return out;
}
// #endregion status-changed

/** What the status loop remembers between periods (fields of upstream's Kubelet). */
export interface NodeStatusState {
  registrationCompleted: boolean;
  /** When the last PATCH succeeded (clock ms); undefined: never, so the first update always writes. */
  lastStatusReportTime?: number;
  /** Counts, for tests and the benchmark: status PATCHes sent. */
  patches: number;
}

// #region update-node-status
/**
 * tryUpdateNodeStatus: GET the Node, recompute its status, PATCH it if it changed or the report
 * period is over.
 */
export async function tryUpdateNodeStatus(
  k: KubeletNodeConfig,
  state: NodeStatusState,
  tryNumber: number,
  signal?: AbortSignal,
): Promise<void> {
  // The first try reads a cache (the kubelet's lister, or the API server's watch cache): GETs of
  // Nodes are most of a large cluster's load. The retries — after a conflict — read etcd.
  let original: Node | undefined;
  try {
    if (tryNumber === 0 && k.nodeLister) original = structuredClone(k.nodeLister());
    else {
      const opts = tryNumber === 0 ? { resourceVersion: "0", signal } : { signal };
      original = await k.client.coreV1.nodes().get(k.nodeName, opts);
    }
  } catch (err) {
    throw new Error(`error getting node "${k.nodeName}": ${err instanceof Error ? err.message : err}`);
  }
  if (!original) throw new Error(`nil "${k.nodeName}" node object`);
  const { node, changed } = await updateNode(k, original);
  const shouldPatch =
    changed ||
    state.lastStatusReportTime === undefined ||
    k.clock.now() - state.lastStatusReportTime >= optionsOf(k).nodeStatusReportFrequencyMs;
  if (!shouldPatch) return;
  await patchNodeStatus(k.client, k.nodeName, original, node, signal);
  state.patches++;
  state.lastStatusReportTime = k.clock.now();
}

/** updateNode: the recomputed Node, and whether it differs from what the server has. */
async function updateNode(k: KubeletNodeConfig, original: Node): Promise<{ node: Node; changed: boolean }> {
  const node = structuredClone(original);
  // The OS and architecture labels are required: put them back if someone removed or changed them.
  let requiredLabelsMissing = false;
  node.metadata.labels = node.metadata.labels ?? {};
  const labels = node.metadata.labels;
  for (const [label, value] of [
    [labelOSStable, goos()],
    [labelArchStable, goarch()],
  ]) {
    if (labels[label] !== value) {
      labels[label] = value;
      requiredLabelsMissing = true;
    }
  }
  await setNodeStatus(k, node);
  return { node, changed: requiredLabelsMissing || nodeStatusHasChanged(original.status, node.status) };
}

/** updateNodeStatus: tryUpdateNodeStatus up to nodeStatusUpdateRetry times. */
export async function updateNodeStatus(k: KubeletNodeConfig, state: NodeStatusState, signal?: AbortSignal) {
  for (let i = 0; i < nodeStatusUpdateRetry; i++) {
    if (signal?.aborted) return;
    try {
      await tryUpdateNodeStatus(k, state, i, signal);
      return;
    } catch (err) {
      if (signal?.aborted) return; // stopped mid-request
      if (i > 0) k.onRepeatedHeartbeatFailure?.();
      logOf(k)(`"Error updating node status, will retry" err=${errText(err)}`);
    }
  }
  throw new Error("update node status exceeds retry count");
}
// #endregion update-node-status

export interface NodeStatusUpdater {
  /** What the loop remembers (registration done, last report time, PATCH count). */
  readonly state: NodeStatusState;
  /** Stops the loop; resolves once the current registration or update has returned. */
  stop(): Promise<void>;
}

/**
 * The status loop (Kubelet.Run's `JitterUntil(syncNodeStatus, nodeStatusUpdateFrequency, 0.04,
 * true)`): each period, register if not yet done (`registerNode`, default true), then update.
 */
export function startNodeStatusUpdater(
  k: KubeletNodeConfig & { registerNode?: boolean; random?: () => number },
): NodeStatusUpdater {
  const state: NodeStatusState = { registrationCompleted: false, patches: 0 };
  const abort = new AbortController();
  const signal = abort.signal;
  const syncNodeStatus = async () => {
    if ((k.registerNode ?? true) && !state.registrationCompleted) {
      state.registrationCompleted = await registerWithAPIServer(k, signal);
      if (!state.registrationCompleted) return; // stopped while registering
    }
    try {
      await updateNodeStatus(k, state, signal);
    } catch (err) {
      if (!signal.aborted) logOf(k)(`"Unable to update node status" err=${errText(err)}`);
    }
  };
  const done = jitterUntil(syncNodeStatus, optionsOf(k).nodeStatusUpdateFrequencyMs, 0.04, true, {
    clock: k.clock,
    signal,
    random: k.random,
  });
  return {
    state,
    async stop() {
      abort.abort();
      await done;
    },
  };
}

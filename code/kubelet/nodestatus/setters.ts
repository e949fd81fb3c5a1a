/**
 * Node status setters — the small functions that, one after another, fill in a Node's status:
 * addresses, capacity and allocatable, versions, the kubelet's port, images, OS and architecture,
 * and the four conditions (MemoryPressure, DiskPressure, PIDPressure, Ready).
 * Mirrors kubernetes/kubernetes pkg/kubelet/nodestatus/setters.go.
 *
 * Solves:
 * - the same code builds the Node the kubelet registers and every later status heartbeat: each
 *   setter is handed the node (fresh, or as the API server last stored it) and changes its own
 *   fields in place, so a heartbeat keeps what other writers put there;
 * - a condition says *since when* as well as *what*: `lastTransitionTime` moves only when the
 *   status flips, `lastHeartbeatTime` on every heartbeat — `kubectl describe node` shows both;
 * - the scheduler must not fill a node to the last byte the kubelet itself and the OS need:
 *   allocatable = capacity − kube-reserved − system-reserved − the hard eviction threshold.
 *
 * Invariants:
 * - a setter changes only its own fields; an error a setter throws is logged by the caller and the
 *   next setters still run (upstream's setNodeStatus);
 * - a pressure condition that does not exist yet starts as Unknown, so the first heartbeat always
 *   counts as a transition (to False, normally) and sets `lastTransitionTime`;
 * - Ready is the last condition in the list (older API servers read it from the end);
 * - allocatable is never negative.
 *
 * What upstream does differently: the machine comes from cAdvisor, which also reports huge pages
 * (`hugepages-2Mi: 0` on Linux) — ours has none; without --node-ip upstream looks the node name up
 * in DNS or takes the default route's interface and refuses a loopback --node-ip, while every
 * kubelet here runs on one machine and defaults to 127.0.0.1; the setters for volumes
 * (VolumesInUse, VolumeLimits), device plugins, runtime handlers and node features are left out
 * (none of them exist here).
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/nodestatus/setters.go (Setter, NodeAddress, MachineInfo, VersionInfo, DaemonEndpoints, Images, GoRuntime, ReadyCondition, MemoryPressureCondition, PIDPressureCondition, DiskPressureCondition)
 * @upstream kubernetes/kubernetes pkg/kubelet/cm/node_container_manager_linux.go (GetNodeAllocatableReservation, hardEvictionReservation)
 * @upstream kubernetes/kubernetes pkg/kubelet/cadvisor/util.go (CapacityFromMachineInfo)
 * @upstream kubernetes/kubernetes pkg/kubelet/eviction/defaults_linux.go (DefaultEvictionHard)
 * @chapter 07-kubelet
 */

import { readFile, statfs } from "node:fs/promises";
import { arch, cpus, platform, release, totalmem } from "node:os";
import type {
  ContainerImage,
  Node,
  NodeCondition,
  NodeStatus,
  NodeSystemInfo,
  ResourceList,
} from "../../api/core.ts";
import { formatQuantity, parseQuantity, type Quantity, subQuantity } from "../../api/quantity.ts";
import type { Image } from "../runtime/cri.ts";

/** Modifies `node` in place; may throw (the caller logs it and runs the next setter). */
export type Setter = (node: Node) => void | Promise<void>;

/** Receives the node's events (upstream: Kubelet.recordEvent with the node's reference). */
export type RecordEvent = (eventType: "Normal" | "Warning", reason: string, message: string) => void;

/** metav1.Time: RFC 3339 in whole seconds, as the API stores conditions' times. */
export function metaTime(ms: number): string {
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}

/** What cAdvisor tells the kubelet about the machine (cadvisorapiv1.MachineInfo, the fields used). */
export interface MachineInfo {
  numCores: number;
  /** Bytes. */
  memoryCapacity: number;
  /** Bytes of the filesystem holding the kubelet's root dir (cAdvisor's rootfs). */
  rootfsCapacity: number;
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  /** cAdvisor's ContainerOsVersion: /etc/os-release's PRETTY_NAME. */
  osImage: string;
}

/** Go's GOOS for this process (`linux`, `darwin`, `windows`). */
export function goos(): string {
  return platform() === "win32" ? "windows" : platform();
}

/** Go's GOARCH for this process (`amd64`, `arm64`, …). */
export function goarch(): string {
  const names: Record<string, string> = { x64: "amd64", ia32: "386", arm64: "arm64", arm: "arm" };
  return names[arch()] ?? arch();
}

async function firstLine(path: string): Promise<string> {
  try {
    return (await readFile(path, "utf8")).split("\n")[0].trim();
  } catch {
    return ""; // not readable here (no such file on macOS, or root only): cAdvisor leaves it empty too
  }
}

/**
 * This machine, read once (upstream caches it too: GetCachedMachineInfo). A kubelet that simulates
 * another machine (the fake runtime's) passes its own MachineInfo instead.
 */
export async function machineInfoFromHost(rootDir: string): Promise<MachineInfo> {
  let rootfsCapacity = 0;
  try {
    const fs = await statfs(rootDir);
    rootfsCapacity = fs.blocks * fs.bsize;
  } catch {
    // left at 0: the Ready condition then reports the missing capacity
  }
  const osRelease = await readFile("/etc/os-release", "utf8").catch(() => "");
  const pretty = /^PRETTY_NAME="?([^"\n]*)"?$/m.exec(osRelease)?.[1];
  return {
    numCores: cpus().length,
    memoryCapacity: totalmem(),
    rootfsCapacity,
    machineID: await firstLine("/etc/machine-id"),
    systemUUID: await firstLine("/sys/class/dmi/id/product_uuid"),
    bootID: await firstLine("/proc/sys/kernel/random/boot_id"),
    kernelVersion: release(),
    osImage: pretty ?? `${goos()} ${release()}`,
  };
}

/**
 * A simulated machine of the given size (`{cpu: "4", memory: "16Gi", "ephemeral-storage":
 * "100Gi"}`), for fake-runtime kubelets: many "machines" in one process, each with a boot id of
 * its own. Missing sizes are taken from `base` (default: zero, which the Ready condition reports).
 */
export function machineInfoFromCapacity(
  nodeName: string,
  capacity: ResourceList,
  base: Partial<MachineInfo> = {},
): MachineInfo {
  const units = (name: string) => {
    const q = capacity[name] === undefined ? undefined : parseQuantity(capacity[name]);
    return q ? Number(q.nanos / 1_000_000_000n) : undefined;
  };
  return {
    numCores: units("cpu") ?? base.numCores ?? 0,
    memoryCapacity: units("memory") ?? base.memoryCapacity ?? 0,
    rootfsCapacity: units("ephemeral-storage") ?? base.rootfsCapacity ?? 0,
    machineID: base.machineID ?? "",
    systemUUID: base.systemUUID ?? "",
    bootID: base.bootID ?? `simulated-${nodeName}`,
    kernelVersion: base.kernelVersion ?? release(),
    osImage: base.osImage ?? "simulated",
  };
}

// #region allocatable
/** A hard eviction threshold `signal<value>`: a quantity (`100Mi`) or a percentage (`10%`). */
export interface EvictionThreshold {
  signal: "memory.available" | "nodefs.available" | "imagefs.available" | "nodefs.inodesFree";
  quantity?: string;
  percentage?: number;
}

/** The kubelet's default --eviction-hard on Linux. */
export const defaultEvictionHard: EvictionThreshold[] = [
  { signal: "memory.available", quantity: "100Mi" },
  { signal: "nodefs.available", percentage: 0.1 },
  { signal: "nodefs.inodesFree", percentage: 0.05 },
  { signal: "imagefs.available", percentage: 0.15 },
];

/** The part of capacity the hard eviction thresholds keep back: memory and node filesystem only. */
export function hardEvictionReservation(
  thresholds: readonly EvictionThreshold[],
  capacity: ResourceList,
): ResourceList {
  const reserved: ResourceList = {};
  const resourceOf = { "memory.available": "memory", "nodefs.available": "ephemeral-storage" } as const;
  for (const t of thresholds) {
    if (t.signal !== "memory.available" && t.signal !== "nodefs.available") continue;
    const resource = resourceOf[t.signal];
    if (t.quantity !== undefined) {
      reserved[resource] = t.quantity;
    } else if (t.percentage !== undefined) {
      // GetThresholdQuantity: the percentage of the capacity, in whole units.
      const cap = parseQuantity(capacity[resource] ?? "0");
      const units = cap ? Number(cap.nanos / 1_000_000_000n) : 0;
      reserved[resource] = String(Math.floor(units * t.percentage));
    }
  }
  return reserved;
}

/** GetNodeAllocatableReservation: kube-reserved + system-reserved + eviction, per resource. */
export function nodeAllocatableReservation(
  capacity: ResourceList,
  kubeReserved: ResourceList = {},
  systemReserved: ResourceList = {},
  evictionHard: readonly EvictionThreshold[] = defaultEvictionHard,
): ResourceList {
  const eviction = hardEvictionReservation(evictionHard, capacity);
  const result: ResourceList = {};
  for (const name of Object.keys(capacity)) {
    let sum = 0n;
    for (const part of [systemReserved[name], kubeReserved[name], eviction[name]]) {
      sum += part === undefined ? 0n : (parseQuantity(part)?.nanos ?? 0n);
    }
    if (sum !== 0n) result[name] = formatQuantity({ nanos: sum, format: "DecimalSI" });
  }
  return result;
}

/** allocatable[k] = capacity[k] − reservation[k], never below zero, in capacity's format. */
export function allocatableFrom(capacity: ResourceList, reservation: ResourceList): ResourceList {
  const allocatable: ResourceList = {};
  for (const [name, text] of Object.entries(capacity)) {
    const cap = parseQuantity(text) as Quantity;
    const res = parseQuantity(reservation[name] ?? "0") as Quantity;
    const value = subQuantity(cap, res);
    allocatable[name] = formatQuantity(value.nanos < 0n ? { ...value, nanos: 0n } : value);
  }
  return allocatable;
}
// #endregion allocatable

/**
 * NodeAddress without a cloud provider: InternalIP (the node IP the caller gives; upstream
 * resolves the hostname or picks the default route's interface) and Hostname.
 */
export function nodeAddress(nodeIP: string, hostname: string): Setter {
  return (node) => {
    node.status = node.status ?? {};
    node.status.addresses = [
      { type: "InternalIP", address: nodeIP },
      { type: "Hostname", address: hostname },
    ];
  };
}

export interface MachineInfoSetterOptions {
  nodeName: string;
  /** --max-pods (110). */
  maxPods: number;
  /** --pods-per-core (0: no limit). */
  podsPerCore?: number;
  machineInfo: () => MachineInfo;
  /** GetNodeAllocatableReservation of the capacity just computed. */
  allocatableReservation: (capacity: ResourceList) => ResourceList;
  recordEvent?: RecordEvent;
}

/** MachineInfo: capacity from the machine (CapacityFromMachineInfo), pods, boot id, allocatable. */
export function machineInfo(o: MachineInfoSetterOptions): Setter {
  return (node) => {
    const status = statusOf(node);
    const info = o.machineInfo();
    const nodeInfo = nodeInfoOf(status);
    // Capacity is updated key by key, not replaced: other writers may advertise extended resources.
    const capacity: ResourceList = { ...status.capacity };
    nodeInfo.machineID = info.machineID;
    nodeInfo.systemUUID = info.systemUUID;
    capacity.cpu = formatQuantity({ nanos: BigInt(info.numCores) * 1_000_000_000n, format: "DecimalSI" });
    capacity.memory = formatQuantity({
      nanos: BigInt(info.memoryCapacity) * 1_000_000_000n,
      format: "BinarySI",
    });
    const pods = o.podsPerCore ? Math.min(info.numCores * o.podsPerCore, o.maxPods) : o.maxPods;
    capacity.pods = String(pods);
    if (nodeInfo.bootID !== "" && nodeInfo.bootID !== info.bootID) {
      o.recordEvent?.("Warning", "Rebooted", `Node ${o.nodeName} has been rebooted, boot id: ${info.bootID}`);
    }
    nodeInfo.bootID = info.bootID;
    if (info.rootfsCapacity > 0) {
      capacity["ephemeral-storage"] = formatQuantity({
        nanos: BigInt(info.rootfsCapacity) * 1_000_000_000n,
        format: "BinarySI",
      });
    }
    status.capacity = capacity;
    status.allocatable = allocatableFrom(capacity, o.allocatableReservation(capacity));
  };
}

/** VersionInfo: kernel, OS image, `<runtime>://<version>`, the kubelet's version. */
export function versionInfo(
  machine: () => MachineInfo,
  runtimeType: string,
  runtimeVersion: () => string | undefined,
  kubeletVersion: string,
): Setter {
  return (node) => {
    const status = statusOf(node);
    const nodeInfo = nodeInfoOf(status);
    const info = machine();
    nodeInfo.kernelVersion = info.kernelVersion;
    nodeInfo.osImage = info.osImage;
    nodeInfo.containerRuntimeVersion = `${runtimeType}://${runtimeVersion() ?? "Unknown"}`;
    nodeInfo.kubeletVersion = kubeletVersion;
    // DisableNodeKubeProxyVersion is deprecated and off in 1.32, so the field is still set.
    nodeInfo.kubeProxyVersion = kubeletVersion;
  };
}

/** DaemonEndpoints: the port the kubelet's server listens on (the API server dials it for logs and exec). */
export function daemonEndpoints(kubeletPort: number): Setter {
  return (node) => {
    node.status = node.status ?? {};
    node.status.daemonEndpoints = { kubeletEndpoint: { Port: kubeletPort } };
  };
}

/** Upstream's MaxNamesPerImageInNodeStatus. */
export const maxNamesPerImageInNodeStatus = 5;

/** Images: the largest `maxImages` images (-1: all), each with up to 5 names. */
export function images(maxImages: number, listImages: () => Promise<Image[]>): Setter {
  return async (node) => {
    node.status = node.status ?? {};
    let list: Image[];
    try {
      list = await listImages();
    } catch (err) {
      node.status.images = [];
      throw new Error(`error getting image list: ${(err as Error).message}`);
    }
    // imageManager.GetImageList sorts by size, largest first.
    list = [...list].sort((a, b) => b.size - a.size);
    if (maxImages > -1 && maxImages < list.length) list = list.slice(0, maxImages);
    const onNode: ContainerImage[] = list.map((image) => ({
      names: image.repoTags.slice(0, maxNamesPerImageInNodeStatus),
      sizeBytes: image.size,
    }));
    node.status.images = onNode;
  };
}

/** GoRuntime: operatingSystem and architecture, as Go names them. */
export function goRuntime(os = goos(), architecture = goarch()): Setter {
  return (node) => {
    const status = statusOf(node);
    const nodeInfo = nodeInfoOf(status);
    nodeInfo.operatingSystem = os;
    nodeInfo.architecture = architecture;
  };
}

// #region pressure-conditions
interface PressureWords {
  type: "MemoryPressure" | "DiskPressure" | "PIDPressure";
  whenTrue: { reason: string; message: string; event: string };
  whenFalse: { reason: string; message: string; event: string };
}

const memoryPressure: PressureWords = {
  type: "MemoryPressure",
  whenTrue: {
    reason: "KubeletHasInsufficientMemory",
    message: "kubelet has insufficient memory available",
    event: "NodeHasInsufficientMemory",
  },
  whenFalse: {
    reason: "KubeletHasSufficientMemory",
    message: "kubelet has sufficient memory available",
    event: "NodeHasSufficientMemory",
  },
};
const diskPressure: PressureWords = {
  type: "DiskPressure",
  whenTrue: {
    reason: "KubeletHasDiskPressure",
    message: "kubelet has disk pressure",
    event: "NodeHasDiskPressure",
  },
  whenFalse: {
    reason: "KubeletHasNoDiskPressure",
    message: "kubelet has no disk pressure",
    event: "NodeHasNoDiskPressure",
  },
};
const pidPressure: PressureWords = {
  type: "PIDPressure",
  whenTrue: {
    reason: "KubeletHasInsufficientPID",
    message: "kubelet has insufficient PID available",
    event: "NodeHasInsufficientPID",
  },
  whenFalse: {
    reason: "KubeletHasSufficientPID",
    message: "kubelet has sufficient PID available",
    event: "NodeHasSufficientPID",
  },
};

/**
 * The three pressure setters are one algorithm with different words (upstream writes it out three
 * times): the heartbeat time always moves; status, reason, message and the transition time only
 * when the pressure flips — and a condition seen for the first time starts Unknown, so it flips.
 */
function pressureCondition(
  words: PressureWords,
  now: () => number,
  underPressure: () => boolean,
  recordEvent: (eventType: "Normal", event: string) => void,
): Setter {
  return (node) => {
    const status = statusOf(node);
    const conditions = conditionsOf(status);
    const currentTime = metaTime(now());
    let condition = conditions.find((c) => c.type === words.type);
    const isNew = condition === undefined;
    condition = condition ?? { type: words.type, status: "Unknown" };
    condition.lastHeartbeatTime = currentTime;
    const want = underPressure() ? "True" : "False";
    if (condition.status !== want) {
      const w = want === "True" ? words.whenTrue : words.whenFalse;
      condition.status = want;
      condition.reason = w.reason;
      condition.message = w.message;
      condition.lastTransitionTime = currentTime;
      recordEvent("Normal", w.event);
    }
    if (isNew) conditions.push(condition);
  };
}

export const memoryPressureCondition = (
  now: () => number,
  underPressure: () => boolean,
  recordEvent: (eventType: "Normal", event: string) => void,
) => pressureCondition(memoryPressure, now, underPressure, recordEvent);

export const diskPressureCondition = (
  now: () => number,
  underPressure: () => boolean,
  recordEvent: (eventType: "Normal", event: string) => void,
) => pressureCondition(diskPressure, now, underPressure, recordEvent);

export const pidPressureCondition = (
  now: () => number,
  underPressure: () => boolean,
  recordEvent: (eventType: "Normal", event: string) => void,
) => pressureCondition(pidPressure, now, underPressure, recordEvent);
// #endregion pressure-conditions

// #region ready-condition
export interface ReadyConditionOptions {
  now: () => number;
  /** runtimeState.runtimeErrors: e.g. `container runtime is down`, `PLEG is not healthy: …`. */
  runtimeErrors?: () => string | undefined;
  /** runtimeState.networkErrors: e.g. `container runtime network not ready: …`. */
  networkErrors?: () => string | undefined;
  /** runtimeState.storageErrors. */
  storageErrors?: () => string | undefined;
  /** The node shutdown manager's error, if the node is shutting down. */
  nodeShutdownErrors?: () => string | undefined;
  /** recordNodeStatusEvent: NodeReady / NodeNotReady. */
  recordEvent: (eventType: "Normal", event: string) => void;
  /** LocalStorageCapacityIsolation (GA, on): ephemeral-storage capacity is required too. */
  localStorageCapacityIsolation?: boolean;
}

/**
 * ReadyCondition: True ("kubelet is posting ready status") unless the runtime, network, storage or
 * shutdown manager report an error or a required capacity is missing; then False/KubeletNotReady
 * with the errors as the message (one error alone, several as `[a, b]` — errors.NewAggregate).
 */
export function readyCondition(o: ReadyConditionOptions): Setter {
  return (node) => {
    const status = statusOf(node);
    const conditions = conditionsOf(status);
    const currentTime = metaTime(o.now());
    const errs = [
      o.runtimeErrors?.(),
      o.networkErrors?.(),
      o.storageErrors?.(),
      o.nodeShutdownErrors?.(),
    ].filter((e): e is string => !!e);
    const required = ["cpu", "memory", "pods"];
    if (o.localStorageCapacityIsolation ?? true) required.push("ephemeral-storage");
    const missing = required.filter((r) => status.capacity?.[r] === undefined);
    if (missing.length > 0) errs.push(`missing node capacity for resources: ${missing.join(", ")}`);

    const next: NodeCondition =
      errs.length === 0
        ? {
            type: "Ready",
            status: "True",
            reason: "KubeletReady",
            message: "kubelet is posting ready status",
          }
        : {
            type: "Ready",
            status: "False",
            reason: "KubeletNotReady",
            message: errs.length === 1 ? errs[0] : `[${errs.join(", ")}]`,
          };
    next.lastHeartbeatTime = currentTime;

    const i = conditions.findIndex((c) => c.type === "Ready");
    let transitioned = false;
    if (i >= 0) {
      // Same status: the transition time is kept, whatever the reason or message now says.
      transitioned = conditions[i].status !== next.status;
      next.lastTransitionTime = transitioned ? currentTime : conditions[i].lastTransitionTime;
      conditions[i] = next;
    } else {
      next.lastTransitionTime = currentTime;
      conditions.push(next);
    }
    if (transitioned) o.recordEvent("Normal", next.status === "True" ? "NodeReady" : "NodeNotReady");
  };
}
// #endregion ready-condition

function statusOf(node: Node): NodeStatus {
  node.status = node.status ?? {};
  return node.status;
}

function conditionsOf(status: NodeStatus): NodeCondition[] {
  status.conditions = status.conditions ?? [];
  return status.conditions;
}

function nodeInfoOf(status: NodeStatus): NodeSystemInfo {
  status.nodeInfo = status.nodeInfo ?? emptyNodeSystemInfo();
  return status.nodeInfo;
}

function emptyNodeSystemInfo(): NodeSystemInfo {
  return {
    machineID: "",
    systemUUID: "",
    bootID: "",
    kernelVersion: "",
    osImage: "",
    containerRuntimeVersion: "",
    kubeletVersion: "",
    kubeProxyVersion: "",
    operatingSystem: "",
    architecture: "",
  };
}

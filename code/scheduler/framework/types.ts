/**
 * Scheduler types — a pod as the scheduler sees it (PodInfo, QueuedPodInfo), the resources it
 * requests (Resource), and the host ports and images a node reports.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/types.go (PodInfo, QueuedPodInfo, Resource, AffinityTerm, HostPortInfo, ImageStateSummary, GetPodKey)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-helpers/resource/helpers.go (PodRequests)
 * @upstream kubernetes/kubernetes pkg/scheduler/util/pod_resources.go (DefaultMilliCPURequest, DefaultMemoryRequest)
 * @chapter 05-scheduler
 *
 * Solves: every Filter and Score plugin asks the same questions of a pod thousands of times a
 * cycle (what does it request? which pods must it avoid?), so the answers are computed once,
 * when the pod enters the scheduler, and carried with it.
 *
 * Invariants:
 * - a PodInfo's derived fields (terms, requests) match its `pod`; `updatePod` recomputes them.
 * - resource amounts are integers: milli-CPU, bytes, counts — upstream's int64 fields.
 * - a QueuedPodInfo's `unschedulablePlugins` and `pendingPlugins` hold the plugins that
 *   rejected the pod in its last attempt only; `pop` clears them.
 */

import type { Container, Pod, PodAffinityTerm, ResourceList } from "../../api/core.ts";
import { type LabelSelector, labelSelectorAsSelector, nothing, type Selector } from "../../api/labels.ts";
import { parseQuantity } from "../../api/quantity.ts";

// #region resource
/** The non-zero defaults: a container that does not say what it needs is counted as this much
 * when spreading, so that a thousand request-less pods do not all land on one "empty" node. */
export const DefaultMilliCPURequest = 100;
export const DefaultMemoryRequest = 200 * 1024 * 1024;

/** Resource: the amounts a pod requests or a node offers, in the units plugins compare. */
export class Resource {
  milliCPU = 0;
  memory = 0;
  ephemeralStorage = 0;
  /** Only meaningful for a node's allocatable: how many pods fit (`pods`). */
  allowedPodNumber = 0;
  /** Extended resources (`example.com/gpu`), hugepages, attachable volumes. */
  scalarResources = new Map<string, number>();

  static fromList(rl: ResourceList | undefined): Resource {
    const r = new Resource();
    r.add(rl);
    return r;
  }

  /** Adds a resource list (upstream's Resource.Add): CPU in milli-units, the rest in whole units. */
  add(rl: ResourceList | undefined): void {
    for (const [name, text] of Object.entries(rl ?? {})) {
      const q = parseQuantity(text);
      if (!q) continue;
      if (name === "cpu") this.milliCPU += Number(ceilDiv(q.nanos, 1_000_000n));
      else if (name === "memory") this.memory += Number(ceilDiv(q.nanos, NANO));
      else if (name === "pods") this.allowedPodNumber += Number(ceilDiv(q.nanos, NANO));
      else if (name === "ephemeral-storage") this.ephemeralStorage += Number(ceilDiv(q.nanos, NANO));
      else if (isScalarResourceName(name)) this.addScalar(name, Number(ceilDiv(q.nanos, NANO)));
    }
  }

  addScalar(name: string, amount: number): void {
    this.scalarResources.set(name, (this.scalarResources.get(name) ?? 0) + amount);
  }

  /** Adds (sign 1) or subtracts (sign -1) another Resource. */
  addResource(o: Resource, sign: 1 | -1 = 1): void {
    this.milliCPU += sign * o.milliCPU;
    this.memory += sign * o.memory;
    this.ephemeralStorage += sign * o.ephemeralStorage;
    this.allowedPodNumber += sign * o.allowedPodNumber;
    for (const [name, v] of o.scalarResources) this.addScalar(name, sign * v);
  }

  clone(): Resource {
    const r = new Resource();
    r.milliCPU = this.milliCPU;
    r.memory = this.memory;
    r.ephemeralStorage = this.ephemeralStorage;
    r.allowedPodNumber = this.allowedPodNumber;
    r.scalarResources = new Map(this.scalarResources);
    return r;
  }
}

const NANO = 1_000_000_000n;
function ceilDiv(a: bigint, b: bigint): bigint {
  const d = a / b;
  return a % b !== 0n && a > 0n ? d + 1n : d;
}

/** IsScalarResourceName: extended (`vendor/x`), hugepages, `kubernetes.io/`-prefixed, attachable volumes. */
export function isScalarResourceName(name: string): boolean {
  if (name.startsWith("hugepages-") || name.startsWith("attachable-volumes-")) return true;
  if (name.startsWith("kubernetes.io/")) return true;
  return name.includes("/") && !name.startsWith("requests.");
}
// #endregion resource

// #region pod-requests
/**
 * PodRequests: what a pod needs while it runs. Regular containers add up; init containers run
 * one at a time, so the pod needs the largest of them (plus the sidecars started before it);
 * sidecars (init containers with restartPolicy Always) keep running, so they add up too.
 * With `nonZero`, a container that omits a CPU or memory request counts the defaults above.
 */
export function podRequests(pod: Pod, nonZero = false): Resource {
  const containerReqs = (c: Container): Resource => {
    const r = Resource.fromList(c.resources?.requests);
    if (nonZero) {
      // Only a missing request gets the default; an explicit "0" stays zero, as upstream.
      if (c.resources?.requests?.cpu === undefined) r.milliCPU = DefaultMilliCPURequest;
      if (c.resources?.requests?.memory === undefined) r.memory = DefaultMemoryRequest;
    }
    return r;
  };
  const reqs = new Resource();
  for (const c of pod.spec.containers ?? []) reqs.addResource(containerReqs(c));
  const sidecars = new Resource();
  const initMax = new Resource();
  for (const c of pod.spec.initContainers ?? []) {
    const r = containerReqs(c);
    let during: Resource;
    if (c.restartPolicy === "Always") {
      reqs.addResource(r);
      sidecars.addResource(r);
      during = sidecars.clone();
    } else {
      during = r;
      during.addResource(sidecars);
    }
    maxInto(initMax, during);
  }
  maxInto(reqs, initMax);
  const overhead = (pod.spec as { overhead?: ResourceList }).overhead;
  if (overhead) reqs.add(overhead);
  return reqs;
}

function maxInto(into: Resource, o: Resource): void {
  into.milliCPU = Math.max(into.milliCPU, o.milliCPU);
  into.memory = Math.max(into.memory, o.memory);
  into.ephemeralStorage = Math.max(into.ephemeralStorage, o.ephemeralStorage);
  for (const [name, v] of o.scalarResources) {
    into.scalarResources.set(name, Math.max(into.scalarResources.get(name) ?? 0, v));
  }
}
// #endregion pod-requests

// #region pod-info
/** AffinityTerm: a pod affinity term with its selectors parsed once. */
export interface AffinityTerm {
  /** Namespaces named by the term; the pod's own namespace when it names none and has no selector. */
  namespaces: Set<string>;
  selector: Selector;
  topologyKey: string;
  namespaceSelector: Selector;
}

export interface WeightedAffinityTerm extends AffinityTerm {
  weight: number;
}

/** GetPodKey: the pod's UID — unique across a pod's delete and re-create, unlike ns/name. */
export function getPodKey(pod: Pod): string {
  return pod.metadata.uid ?? `${pod.metadata.namespace ?? ""}/${pod.metadata.name ?? ""}`;
}

/** The PVCs a pod uses, as "namespace/name": claims by name, and generic ephemeral volumes' claims. */
function pvcKeys(pod: Pod): string[] {
  const ns = pod.metadata.namespace ?? "";
  const keys: string[] = [];
  for (const v of pod.spec.volumes ?? []) {
    const claim = (v.persistentVolumeClaim as { claimName?: string } | undefined)?.claimName;
    if (claim) keys.push(`${ns}/${claim}`);
    else if (v.ephemeral) keys.push(`${ns}/${pod.metadata.name}-${v.name}`);
  }
  return keys;
}

/** PodInfo: a pod plus what the scheduler derives from it once. */
export class PodInfo {
  pod!: Pod;
  requiredAffinityTerms: AffinityTerm[] = [];
  requiredAntiAffinityTerms: AffinityTerm[] = [];
  preferredAffinityTerms: WeightedAffinityTerm[] = [];
  preferredAntiAffinityTerms: WeightedAffinityTerm[] = [];
  /** What the pod requests, and the same with the non-zero defaults (for NodeInfo's sums). */
  requests = new Resource();
  nonZeroRequests = new Resource();
  /**
   * The containers' host ports (hostPort > 0) and the PVCs the pod uses ("namespace/claim"):
   * NodeInfo adds and subtracts them on every add and remove — in a preemption dry run, for
   * every victim on every candidate node — so they are read off the pod once, like `requests`.
   */
  hostPorts: { hostIP?: string; protocol?: string; hostPort: number }[] = [];
  pvcKeys: string[] = [];
  /** The first error parsing the pod's terms (an invalid selector); the terms are then partial. */
  parseError?: Error;

  constructor(pod: Pod) {
    this.updatePod(pod);
  }

  updatePod(pod: Pod): void {
    this.pod = pod;
    this.parseError = undefined;
    const a = pod.spec.affinity;
    this.requiredAffinityTerms = this.terms(a?.podAffinity?.requiredDuringSchedulingIgnoredDuringExecution);
    this.requiredAntiAffinityTerms = this.terms(
      a?.podAntiAffinity?.requiredDuringSchedulingIgnoredDuringExecution,
    );
    this.preferredAffinityTerms = this.weighted(
      a?.podAffinity?.preferredDuringSchedulingIgnoredDuringExecution,
    );
    this.preferredAntiAffinityTerms = this.weighted(
      a?.podAntiAffinity?.preferredDuringSchedulingIgnoredDuringExecution,
    );
    this.requests = podRequests(pod);
    this.nonZeroRequests = podRequests(pod, true);
    this.hostPorts = [];
    for (const c of pod.spec.containers ?? [])
      for (const p of c.ports ?? [])
        if ((p.hostPort ?? 0) > 0)
          this.hostPorts.push({ hostIP: p.hostIP, protocol: p.protocol, hostPort: p.hostPort! });
    this.pvcKeys = pvcKeys(pod);
  }

  private terms(ts: PodAffinityTerm[] | undefined): AffinityTerm[] {
    return (ts ?? []).map((t) => this.term(t));
  }

  private weighted(
    ts: { weight: number; podAffinityTerm: PodAffinityTerm }[] | undefined,
  ): WeightedAffinityTerm[] {
    return (ts ?? []).map((t) => ({ ...this.term(t.podAffinityTerm), weight: t.weight }));
  }

  private term(t: PodAffinityTerm): AffinityTerm {
    const namespaces = new Set(t.namespaces ?? []);
    // No namespaces and no namespace selector: the term means "pods in my namespace".
    if (namespaces.size === 0 && t.namespaceSelector === undefined) {
      namespaces.add(this.pod.metadata.namespace ?? "");
    }
    return {
      namespaces,
      selector: this.selector(t.labelSelector),
      topologyKey: t.topologyKey,
      // A missing namespace selector selects nothing; an empty one selects every namespace.
      namespaceSelector: this.selector(t.namespaceSelector),
    };
  }

  private selector(s: LabelSelector | undefined): Selector {
    const r = labelSelectorAsSelector(s);
    if (r.ok) return r.value;
    this.parseError ??= new Error(r.error.message);
    return nothing();
  }
}

/** QueuedPodInfo: a PodInfo plus its history in the scheduling queue. */
export interface QueuedPodInfo {
  podInfo: PodInfo;
  /** When the pod was last added to the queue (ms on the queue's clock): the backoff starts here. */
  timestamp: number;
  /** Scheduling attempts so far; each `pop` adds one. */
  attempts: number;
  /** When the pod was first popped — for the pod-scheduling SLI; undefined until then. */
  initialAttemptTimestamp?: number;
  /** The plugins that rejected the pod (Unschedulable) in its last attempt. */
  unschedulablePlugins: Set<string>;
  /** The plugins that returned Pending in its last attempt. */
  pendingPlugins: Set<string>;
  /** A PreEnqueue plugin (SchedulingGates) keeps the pod out of activeQ. */
  gated: boolean;
}

export function newQueuedPodInfo(pod: Pod, now: number): QueuedPodInfo {
  return {
    podInfo: new PodInfo(pod),
    timestamp: now,
    attempts: 0,
    unschedulablePlugins: new Set(),
    pendingPlugins: new Set(),
    gated: false,
  };
}
// #endregion pod-info

// #region host-ports
export const DefaultBindAllHostIP = "0.0.0.0";

/** HostPortInfo: ip → set of "protocol/port" in use on a node. */
export class HostPortInfo {
  readonly ports = new Map<string, Set<string>>();

  private static sanitize(ip: string | undefined, protocol: string | undefined): [string, string] {
    return [ip || DefaultBindAllHostIP, protocol || "TCP"];
  }

  add(ip: string | undefined, protocol: string | undefined, port: number): void {
    if (port <= 0) return;
    const [i, p] = HostPortInfo.sanitize(ip, protocol);
    let set = this.ports.get(i);
    if (!set) {
      set = new Set();
      this.ports.set(i, set);
    }
    set.add(`${p}/${port}`);
  }

  remove(ip: string | undefined, protocol: string | undefined, port: number): void {
    if (port <= 0) return;
    const [i, p] = HostPortInfo.sanitize(ip, protocol);
    const set = this.ports.get(i);
    if (!set) return;
    set.delete(`${p}/${port}`);
    if (set.size === 0) this.ports.delete(i);
  }

  /** CheckConflict: 0.0.0.0 conflicts with the same protocol/port on any IP, and any IP with 0.0.0.0. */
  checkConflict(ip: string | undefined, protocol: string | undefined, port: number): boolean {
    if (port <= 0) return false;
    const [i, p] = HostPortInfo.sanitize(ip, protocol);
    const pp = `${p}/${port}`;
    if (i === DefaultBindAllHostIP) {
      for (const set of this.ports.values()) if (set.has(pp)) return true;
      return false;
    }
    return (this.ports.get(i)?.has(pp) ?? false) || (this.ports.get(DefaultBindAllHostIP)?.has(pp) ?? false);
  }

  len(): number {
    let n = 0;
    for (const set of this.ports.values()) n += set.size;
    return n;
  }

  clone(): HostPortInfo {
    const c = new HostPortInfo();
    for (const [ip, set] of this.ports) c.ports.set(ip, new Set(set));
    return c;
  }
}
// #endregion host-ports

/** ImageStateSummary: an image's size and how many nodes have it (for ImageLocality's spread). */
export interface ImageStateSummary {
  size: number;
  numNodes: number;
  /** The cache's live set of nodes with the image; a snapshot keeps only the count. */
  nodes?: Set<string>;
}

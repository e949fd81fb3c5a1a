/**
 * The cluster view's rows — what the live page shows of each Node, Pod, Lease and Event, cut
 * from the objects the view's informers hold, in the words `kubectl get` uses.
 * Mirrors what the Kubernetes Dashboard's backend does for its lists (kubernetes/dashboard
 * modules/api/pkg/resource/pod/list.go: a presentation row per object, its status computed on the
 * server "based on the same logic as kubectl") and what `kubectl get --watch` prints per change
 * (the API server's table printers).
 *
 * Solves:
 * - a browser must not receive whole objects at every heartbeat: a Node's status is rewritten
 *   every few seconds with only its heartbeat times changed, so the server sends a row, and
 *   sends it again only when the row (not the object) changed;
 * - the page must say what a learner's `kubectl get pods` says: the STATUS and READY cells come
 *   from the same printer (code/apiserver/printers/pods.ts printPod), so `Terminating`,
 *   `CrashLoopBackOff` and `0/1` read the same in both;
 * - a Lease is a leader's claim or a node's heartbeat depending on where it lives: upstream puts
 *   the control plane's leader Leases in kube-system under the component's name and each
 *   kubelet's heartbeat in kube-node-lease under the node's name.
 *
 * Invariants:
 * - every row has `key` = `<namespace>/<name>` (`<name>` for a Node), the informer's key, so a
 *   delete names the row to remove without the object;
 * - rows are plain JSON (no Date, no undefined-only fields that matter): what the server
 *   compares to skip an unchanged row is what the page receives.
 *
 * @upstream kubernetes/dashboard modules/api/pkg/resource/pod/list.go (Pod, toPod: a presentation row per pod)
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (printPod, printNode, printEvent: the cells)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/core/v1/types.go (NamespaceNodeLease)
 * @upstream kubernetes/kubernetes pkg/scheduler/apis/config/v1/defaults.go (SetDefaults_KubeSchedulerConfiguration: the kube-system/kube-scheduler Lease)
 * @chapter 08-cluster
 */
import type { Lease } from "../../../api/coordination.ts";
import type { Event, Node, Pod } from "../../../api/core.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { corePrinters } from "../../../apiserver/printers/core.ts";
import { printPod } from "../../../apiserver/printers/pods.ts";

/** The four resources the view watches, by their resource names. */
export type ViewResource = "nodes" | "pods" | "leases" | "events";
export const viewResources: readonly ViewResource[] = ["nodes", "pods", "leases", "events"];

export interface NodeRow {
  key: string;
  name: string;
  /** kubectl's STATUS cell: `Ready`, `NotReady`, `Unknown`, with `,SchedulingDisabled` when cordoned. */
  status: string;
  ready: boolean;
  cordoned: boolean;
  /** `key=value:Effect` (or `key:Effect`), as `kubectl describe node` prints taints. */
  taints: string[];
  kubeletVersion: string;
}

export interface PodRow {
  key: string;
  namespace: string;
  name: string;
  /** spec.nodeName; "" while the pod is not scheduled. */
  node: string;
  phase: string;
  /** kubectl's STATUS cell (`Running`, `ContainerCreating`, `Terminating`, `CrashLoopBackOff`, …). */
  status: string;
  /** kubectl's READY cell, `ready/total`. */
  readyCount: string;
  /** The Ready condition is True. */
  ready: boolean;
  restarts: string;
  terminating: boolean;
}

/** leader: a control-plane component's election Lease; heartbeat: a kubelet's node Lease. */
export type LeaseRole = "leader" | "heartbeat" | "other";

export interface LeaseRow {
  key: string;
  namespace: string;
  name: string;
  role: LeaseRole;
  holder: string;
  /** RFC 3339 (MicroTime); the page shows its age, and "expired" past renewTime + duration. */
  renewTime: string;
  acquireTime: string;
  leaseDurationSeconds: number;
  leaseTransitions: number;
}

export interface EventRow {
  key: string;
  namespace: string;
  /** When it was last seen (lastTimestamp, else eventTime, else firstTimestamp, else creation). */
  lastSeen: string;
  type: string;
  reason: string;
  /** `pod/web-1`, as kubectl get events' OBJECT column. */
  object: string;
  source: string;
  message: string;
  count: number;
}

export type ViewRow = NodeRow | PodRow | LeaseRow | EventRow;

/** The page's message kinds, sent as Server-Sent Events of these names. */
export interface SnapshotMessage {
  nodes: NodeRow[];
  pods: PodRow[];
  leases: LeaseRow[];
  events: EventRow[];
  /** Which informers have listed at least once: an empty list before that means "not yet". */
  synced: Record<ViewResource, boolean>;
}
export type ChangeMessage =
  | { resource: ViewResource; op: "upsert"; row: ViewRow }
  | { resource: ViewResource; op: "delete"; key: string };

/** Leases in kube-system that are leader elections (the components' --leader-elect-resource-name defaults). */
export const leaderLeaseNames: ReadonlySet<string> = new Set(["kube-scheduler", "kube-controller-manager"]);
/** Where kubelets keep their heartbeats (upstream's v1.NamespaceNodeLease). */
export const namespaceNodeLease = "kube-node-lease";

/** How many recent events the page keeps (the view's choice, not upstream's). */
export const recentEventsLimit = 50;

export function objectKey(obj: KubeObject): string {
  const ns = obj.metadata.namespace;
  return ns ? `${ns}/${obj.metadata.name}` : (obj.metadata.name ?? "");
}

// #region rows
export function nodeRow(node: Node, now = new Date()): NodeRow {
  const status = String(corePrinters.nodes!.print(node, now).cells[1]);
  return {
    key: objectKey(node),
    name: node.metadata.name ?? "",
    status,
    ready: status.split(",")[0] === "Ready",
    cordoned: node.spec?.unschedulable === true,
    taints: (node.spec?.taints ?? []).map((t) =>
      t.value ? `${t.key}=${t.value}:${t.effect}` : `${t.key}:${t.effect}`,
    ),
    kubeletVersion: node.status?.nodeInfo?.kubeletVersion ?? "",
  };
}

export function podRow(pod: Pod, now = new Date()): PodRow {
  // NAME READY STATUS RESTARTS AGE …: the cells kubectl get pods prints.
  const cells = printPod(pod, now).cells;
  return {
    key: objectKey(pod),
    namespace: pod.metadata.namespace ?? "",
    name: pod.metadata.name ?? "",
    node: pod.spec?.nodeName ?? "",
    phase: pod.status?.phase ?? "Pending",
    status: String(cells[2]),
    readyCount: String(cells[1]),
    ready: pod.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false,
    restarts: String(cells[3]),
    terminating: Boolean(pod.metadata.deletionTimestamp),
  };
}

export function leaseRole(lease: Lease): LeaseRole {
  if (lease.metadata.namespace === namespaceNodeLease) return "heartbeat";
  if (lease.metadata.namespace === "kube-system" && leaderLeaseNames.has(lease.metadata.name ?? ""))
    return "leader";
  return "other";
}

export function leaseRow(lease: Lease): LeaseRow {
  return {
    key: objectKey(lease),
    namespace: lease.metadata.namespace ?? "",
    name: lease.metadata.name ?? "",
    role: leaseRole(lease),
    holder: lease.spec?.holderIdentity ?? "",
    renewTime: lease.spec?.renewTime ?? "",
    acquireTime: lease.spec?.acquireTime ?? "",
    leaseDurationSeconds: lease.spec?.leaseDurationSeconds ?? 0,
    leaseTransitions: lease.spec?.leaseTransitions ?? 0,
  };
}

export function eventRow(event: Event, now = new Date()): EventRow {
  // LAST SEEN TYPE REASON OBJECT SUBOBJECT SOURCE MESSAGE FIRST SEEN COUNT NAME (printEvent).
  const cells = corePrinters.events!.print(event, now).cells;
  return {
    key: objectKey(event),
    namespace: event.metadata.namespace ?? "",
    lastSeen:
      event.lastTimestamp ||
      event.eventTime ||
      event.firstTimestamp ||
      event.metadata.creationTimestamp ||
      "",
    type: String(cells[1]),
    reason: String(cells[2]),
    object: String(cells[3]),
    source: String(cells[5]),
    message: String(cells[6]),
    count: Number(cells[8]),
  };
}
// #endregion rows

/** The row of any object of `resource`. */
export function rowFor(resource: ViewResource, obj: KubeObject, now = new Date()): ViewRow {
  switch (resource) {
    case "nodes":
      return nodeRow(obj as Node, now);
    case "pods":
      return podRow(obj as Pod, now);
    case "leases":
      return leaseRow(obj as Lease);
    case "events":
      return eventRow(obj as Event, now);
  }
}

/**
 * The `limit` most recent events, newest first (ties by key, so the order is stable). Compared as
 * times, not text: a MicroTime (`…05.123456Z`) sorts before a Time of the same second (`…05Z`)
 * as text.
 */
export function recentEvents(rows: EventRow[], limit = recentEventsLimit): EventRow[] {
  const at = (r: EventRow) => Date.parse(r.lastSeen) || 0;
  return [...rows].sort((a, b) => at(b) - at(a) || a.key.localeCompare(b.key)).slice(0, limit);
}

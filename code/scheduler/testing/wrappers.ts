/**
 * Test wrappers — small builders for pods and nodes, so a scheduler test reads as the cluster
 * it sets up ("a pod asking 500m CPU on node-a") rather than as nested JSON.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/testing/wrappers.go (MakePod, MakeNode, PodWrapper, NodeWrapper)
 * @chapter 05-scheduler
 *
 * Invariants: every pod gets a UID (its name unless given) and namespace "default"; builders
 * return plain API objects, never shared between calls.
 */
import type { Node, Pod } from "../../api/core.ts";

export interface PodOptions {
  namespace?: string;
  uid?: string;
  priority?: number;
  nodeName?: string;
  /** Per-container requests; one container per entry (default: one container, no requests). */
  requests?: Record<string, string>[];
  labels?: Record<string, string>;
  gates?: string[];
  hostPorts?: number[];
  schedulerName?: string;
  nominatedNodeName?: string;
  antiAffinityKey?: string;
  affinityKey?: string;
  pvc?: string;
}

export function makePod(name: string, o: PodOptions = {}): Pod {
  const containers = (o.requests ?? [{}]).map((requests, i) => ({
    name: `c${i}`,
    image: "pause",
    ...(Object.keys(requests).length > 0 ? { resources: { requests } } : {}),
    ...(i === 0 && o.hostPorts
      ? { ports: o.hostPorts.map((hostPort) => ({ containerPort: hostPort, hostPort })) }
      : {}),
  }));
  const term = (key: string) => [
    { labelSelector: { matchLabels: { app: key } }, topologyKey: "kubernetes.io/hostname" },
  ];
  const affinity =
    o.antiAffinityKey || o.affinityKey
      ? {
          ...(o.affinityKey
            ? { podAffinity: { requiredDuringSchedulingIgnoredDuringExecution: term(o.affinityKey) } }
            : {}),
          ...(o.antiAffinityKey
            ? { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: term(o.antiAffinityKey) } }
            : {}),
        }
      : undefined;
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: o.namespace ?? "default", uid: o.uid ?? name, labels: o.labels },
    spec: {
      containers,
      schedulerName: o.schedulerName ?? "default-scheduler",
      ...(o.priority !== undefined ? { priority: o.priority } : {}),
      ...(o.nodeName ? { nodeName: o.nodeName } : {}),
      ...(o.gates ? { schedulingGates: o.gates.map((g) => ({ name: g })) } : {}),
      ...(affinity ? { affinity } : {}),
      ...(o.pvc ? { volumes: [{ name: "data", persistentVolumeClaim: { claimName: o.pvc } }] } : {}),
    },
    ...(o.nominatedNodeName ? { status: { nominatedNodeName: o.nominatedNodeName } } : {}),
  };
}

export interface NodeOptions {
  zone?: string;
  region?: string;
  allocatable?: Record<string, string>;
  images?: { names: string[]; sizeBytes: number }[];
  labels?: Record<string, string>;
}

export function makeNode(name: string, o: NodeOptions = {}): Node {
  const labels: Record<string, string> = { "kubernetes.io/hostname": name, ...o.labels };
  if (o.zone) labels["topology.kubernetes.io/zone"] = o.zone;
  if (o.region) labels["topology.kubernetes.io/region"] = o.region;
  const allocatable = o.allocatable ?? { cpu: "4", memory: "8Gi", pods: "110" };
  return {
    apiVersion: "v1",
    kind: "Node",
    metadata: { name, uid: `node-${name}`, labels },
    spec: {},
    status: { capacity: allocatable, allocatable, ...(o.images ? { images: o.images } : {}) },
  };
}

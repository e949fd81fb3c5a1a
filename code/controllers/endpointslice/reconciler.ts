/**
 * The EndpointSlice reconciler — given a Service, the pods it selects and the slices that exist,
 * decides which slices to create, update and delete so that together they list one endpoint per
 * pod, at most maxEndpointsPerSlice to a slice, with as few writes as it can.
 * Mirrors kubernetes/kubernetes staging/src/k8s.io/endpointslice/reconciler.go.
 *
 * Solves:
 * - one pod's readiness change must rewrite one slice of 100 endpoints, not every slice of a big
 *   Service: endpoints stay in the slice that holds them, and a slice is written only when one
 *   of its endpoints (or its labels) changed;
 * - new endpoints go first into slices that are being written anyway, then into the unchanged
 *   slice that they fill closest to full, and only then into new slices;
 * - a slice that would be deleted while another is created is reused (an update instead of a
 *   delete plus a create);
 * - clients tell "no endpoints" from "not reconciled yet": a Service without endpoints keeps one
 *   empty placeholder slice.
 *
 * Invariants:
 * - all endpoints of a slice share the slice's ports (the pods resolve the Service's targetPorts
 *   to the same numbers); pods with different numbers for a named port get different slices;
 * - every managed slice carries `kubernetes.io/service-name`, `endpointslice.kubernetes.io/managed-by`
 *   and the Service's own labels, and is owned (controller reference) by the Service;
 * - the decision is a pure function of its inputs (the controller performs the writes).
 *
 * What upstream does differently: it also keeps topology hints, the last-change-trigger-time
 * annotation and metrics; its endpoint sets are Go maps, so which endpoint goes where is random
 * (here: the pods' order).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/endpointslice/reconciler.go (Reconciler.Reconcile, reconcileByAddressType, reconcileByPortMapping, finalize, placeholderSliceCompare)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/endpointslice/utils.go (podToEndpoint, getEndpointPorts, getEndpointAddresses, newEndpointSlice, getEndpointSlicePrefix, setEndpointSliceLabels, isReservedLabelKey, getSliceToFill, getAddressTypesForService, endpointSliceEndpointLen)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/endpointslice/util/endpointset.go (hashEndpoint)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/endpointslice/util/controller_utils.go (EndpointsEqualBeyondHash, NewPortMapKey)
 * @chapter 07-kubelet
 */
import type { Node, Pod, Service } from "../../api/core.ts";
import {
  type AddressType,
  type Endpoint,
  type EndpointPort,
  type EndpointSlice,
  LabelManagedBy,
  LabelServiceName,
} from "../../api/discovery.ts";
import { isPodReady } from "../active-pods.ts";
import { findPort, shouldPodBeInEndpoints, shouldSetHostname } from "../endpoint/endpoints-util.ts";

/** The managed-by value of the slices this controller keeps. */
export const controllerName = "endpointslice-controller.k8s.io";
/** `--max-endpoints-per-slice` default. */
export const defaultMaxEndpointsPerSlice = 100;
/** v1.IsHeadlessService */
const IsHeadlessService = "service.kubernetes.io/headless";
/** v1.LabelTopologyZone */
const LabelTopologyZone = "topology.kubernetes.io/zone";

export interface ReconcileInput {
  service: Service;
  pods: readonly Pod[];
  /** The Service's managed slices, minus any being deleted. */
  existingSlices: readonly EndpointSlice[];
  /** The node of a pod, undefined if the cache has none. */
  nodeByName: (name: string) => Node | undefined;
  maxEndpointsPerSlice?: number;
}

export interface ReconcilePlan {
  /** No name: created with generateName `<svc>-`. */
  create: EndpointSlice[];
  update: EndpointSlice[];
  delete: EndpointSlice[];
  /** Pods skipped because their node is not (yet) in the cache: the Service is retried. */
  errors: string[];
}

const isIPv6 = (ip: string) => ip.includes(":");

/** getAddressTypesForService: the Service's IP families; else its cluster IP's; else IPv4. */
export function addressTypesForService(service: Service): AddressType[] {
  const families = service.spec?.ipFamilies ?? [];
  if (families.length > 0) return families.map((f) => (f === "IPv6" ? "IPv6" : "IPv4"));
  const clusterIP = service.spec?.clusterIP;
  if (clusterIP && clusterIP !== "None") return [isIPv6(clusterIP) ? "IPv6" : "IPv4"];
  return ["IPv4"];
}

// #region pod-to-endpoint
/** podToEndpoint: the pod's addresses of the slice's type and its three conditions. */
export function podToEndpoint(
  pod: Pod,
  node: Node | undefined,
  service: Service,
  addressType: AddressType,
): Endpoint {
  const serving = isPodReady(pod);
  const terminating = !!pod.metadata.deletionTimestamp;
  // Ready is never true while terminating, unless the Service publishes not-ready addresses.
  const ready = service.spec?.publishNotReadyAddresses === true || (serving && !terminating);
  const ips = (pod.status?.podIPs ?? []).map((p) => p.ip);
  if (ips.length === 0 && pod.status?.podIP) ips.push(pod.status.podIP);
  const endpoint: Endpoint = {
    addresses: ips.filter((ip) => isIPv6(ip) === (addressType === "IPv6")),
    conditions: { ready, serving, terminating },
    targetRef: {
      kind: "Pod",
      namespace: pod.metadata.namespace,
      name: pod.metadata.name,
      uid: pod.metadata.uid,
    },
  };
  if (pod.spec.nodeName) endpoint.nodeName = pod.spec.nodeName;
  const zone = node?.metadata.labels?.[LabelTopologyZone];
  if (zone) endpoint.zone = zone;
  if (shouldSetHostname(pod, service)) endpoint.hostname = pod.spec.hostname;
  return endpoint;
}
// #endregion pod-to-endpoint

/** getEndpointPorts: each Service port resolved on this pod; a named port the pod lacks is left out. */
export function getEndpointPorts(service: Service, pod: Pod): EndpointPort[] {
  const ports: EndpointPort[] = [];
  for (const sp of service.spec?.ports ?? []) {
    const port = findPort(pod, sp);
    if (port === undefined) continue;
    const p: EndpointPort = { name: sp.name ?? "", port, protocol: sp.protocol ?? "TCP" };
    if (sp.appProtocol) p.appProtocol = sp.appProtocol;
    ports.push(p);
  }
  return ports;
}

/** NewPortMapKey: the same ports in any order are the same key. */
export function portMapKey(ports: readonly EndpointPort[] | undefined): string {
  const norm = (ports ?? []).map((p) => [
    p.name ?? "",
    p.port ?? null,
    p.protocol ?? "TCP",
    p.appProtocol ?? "",
  ]);
  return JSON.stringify(norm.sort((a, b) => String(a[0]).localeCompare(String(b[0]))));
}

/** hashEndpoint: an endpoint is identified by its addresses, hostname and target. */
export function endpointKey(e: Endpoint): string {
  return JSON.stringify([
    [...e.addresses].sort(),
    e.hostname ?? "",
    e.targetRef?.namespace ?? "",
    e.targetRef?.name ?? "",
  ]);
}

/** EndpointsEqualBeyondHash: the same endpoint, nothing to write (conditions, node, zone, target). */
export function endpointsEqualBeyondHash(a: Endpoint, b: Endpoint): boolean {
  const rest = (e: Endpoint) =>
    JSON.stringify([
      e.conditions?.ready ?? null,
      e.conditions?.serving ?? null,
      e.conditions?.terminating ?? null,
      e.nodeName ?? null,
      e.zone ?? null,
      e.targetRef ? [e.targetRef.kind, e.targetRef.namespace, e.targetRef.name, e.targetRef.uid] : null,
    ]);
  return rest(a) === rest(b);
}

const reserved = new Set([LabelServiceName, LabelManagedBy, IsHeadlessService]);

/** setEndpointSliceLabels: the Service's labels plus the reserved ones; changed = the Service's differ. */
export function endpointSliceLabels(
  slice: EndpointSlice | undefined,
  service: Service,
): [Record<string, string>, boolean] {
  const own = (m: Record<string, string> | undefined) =>
    Object.fromEntries(Object.entries(m ?? {}).filter(([k]) => !reserved.has(k)));
  const sliceLabels = own(slice?.metadata.labels);
  const labels = own(service.metadata.labels);
  const changed =
    JSON.stringify(Object.entries(sliceLabels).sort()) !== JSON.stringify(Object.entries(labels).sort());
  const clusterIP = service.spec?.clusterIP;
  if (!clusterIP || clusterIP === "None") labels[IsHeadlessService] = "";
  labels[LabelServiceName] = service.metadata.name ?? "";
  labels[LabelManagedBy] = controllerName;
  return [labels, changed];
}

/** newEndpointSlice: generateName `<svc>-`, owned by the Service, no endpoints yet. */
export function newEndpointSlice(
  service: Service,
  ports: EndpointPort[],
  addressType: AddressType,
): EndpointSlice {
  const name = service.metadata.name ?? "";
  // getEndpointSlicePrefix: a name whose prefix is not a valid DNS subdomain falls back.
  const prefix =
    /^[a-z0-9]([-a-z0-9.]*[a-z0-9])?-$/.test(`${name}-`) && name.length <= 240
      ? `${name}-`
      : "endpointslice-";
  return {
    apiVersion: "discovery.k8s.io/v1",
    kind: "EndpointSlice",
    metadata: {
      generateName: prefix,
      namespace: service.metadata.namespace,
      labels: endpointSliceLabels(undefined, service)[0],
      ownerReferences: [
        {
          apiVersion: "v1",
          kind: "Service",
          name,
          uid: service.metadata.uid ?? "",
          controller: true,
          blockOwnerDeletion: true,
        },
      ],
    },
    addressType,
    endpoints: [],
    ports,
  };
}

const ownedBy = (slice: EndpointSlice, service: Service) =>
  (slice.metadata.ownerReferences ?? []).some((r) => r.kind === "Service" && r.uid === service.metadata.uid);

// #region reconcile
/** Reconcile: the plan for every address type of the Service; slices of other types are deleted. */
export function reconcile(input: ReconcileInput): ReconcilePlan {
  const plan: ReconcilePlan = { create: [], update: [], delete: [], errors: [] };
  const types = addressTypesForService(input.service);
  for (const slice of input.existingSlices) {
    if (!types.includes(slice.addressType)) plan.delete.push(slice);
  }
  for (const addressType of types) {
    const existing = input.existingSlices.filter((s) => s.addressType === addressType);
    const p = reconcileByAddressType(input, existing, addressType);
    plan.create.push(...p.create);
    plan.update.push(...p.update);
    plan.delete.push(...p.delete);
    plan.errors.push(...p.errors);
  }
  return plan;
}

function reconcileByAddressType(
  input: ReconcileInput,
  existing: EndpointSlice[],
  addressType: AddressType,
): ReconcilePlan {
  const { service } = input;
  const max = input.maxEndpointsPerSlice ?? defaultMaxEndpointsPerSlice;
  const errors: string[] = [];
  // Desired endpoints, grouped by the ports they share.
  const desired = new Map<string, { ports: EndpointPort[]; endpoints: Map<string, Endpoint> }>();
  for (const pod of input.pods) {
    // Terminating pods stay in, marked terminating: consumers may still drain to serving ones.
    if (!shouldPodBeInEndpoints(pod, true)) continue;
    const ports = getEndpointPorts(service, pod);
    const node = pod.spec.nodeName ? input.nodeByName(pod.spec.nodeName) : undefined;
    if (pod.spec.nodeName && !node && service.spec?.publishNotReadyAddresses !== true) {
      // The node may not be in the cache yet: leave the pod out now and retry the Service.
      errors.push(
        `skipping Pod ${pod.metadata.name} for Service ${service.metadata.namespace}/${service.metadata.name}: Node ${pod.spec.nodeName} Not Found`,
      );
      continue;
    }
    const endpoint = podToEndpoint(pod, node, service, addressType);
    if (endpoint.addresses.length === 0) continue;
    const key = portMapKey(ports);
    const group = desired.get(key) ?? { ports, endpoints: new Map() };
    group.endpoints.set(endpointKey(endpoint), endpoint);
    desired.set(key, group);
  }

  const existingByPorts = new Map<string, EndpointSlice[]>();
  for (const s of existing) {
    const key = portMapKey(s.ports);
    existingByPorts.set(key, [...(existingByPorts.get(key) ?? []), s]);
  }
  const create: EndpointSlice[] = [];
  const update: EndpointSlice[] = [];
  const toDelete: EndpointSlice[] = [];
  for (const [key, group] of desired) {
    const p = reconcileByPortMapping(
      service,
      existingByPorts.get(key) ?? [],
      group.endpoints,
      group.ports,
      addressType,
      max,
    );
    create.push(...p.create);
    update.push(...p.update);
    toDelete.push(...p.delete);
  }
  // Slices whose ports no pod has any more.
  for (const [key, slices] of existingByPorts) if (!desired.has(key)) toDelete.push(...slices);

  // No endpoints at all: keep (or create) one empty placeholder slice.
  if (existing.length === toDelete.length && create.length === 0) {
    const placeholder = newEndpointSlice(service, [], addressType);
    if (toDelete.length === 1 && isPlaceholder(toDelete[0] as EndpointSlice, placeholder))
      toDelete.length = 0;
    else create.push(placeholder);
  }
  // finalize: a slice to delete becomes the name of a slice to create (an update, one write less).
  for (let i = 0; i < toDelete.length && create.length > 0; ) {
    const old = toDelete[i] as EndpointSlice;
    if (old.addressType === addressType && ownedBy(old, service)) {
      const slice = create.pop() as EndpointSlice;
      slice.metadata = {
        ...slice.metadata,
        name: old.metadata.name,
        resourceVersion: old.metadata.resourceVersion,
      };
      delete slice.metadata.generateName;
      update.push(slice);
      toDelete.splice(i, 1);
    } else i++;
  }
  return { create, update, delete: toDelete, errors };
}

/** placeholderSliceCompare: no endpoints, no ports, the same labels and owner. */
function isPlaceholder(slice: EndpointSlice, placeholder: EndpointSlice): boolean {
  const same = (a: unknown, b: unknown) => JSON.stringify(a) === JSON.stringify(b);
  return (
    (slice.endpoints ?? []).length === 0 &&
    (slice.ports ?? []).length === 0 &&
    same(
      Object.entries(slice.metadata.labels ?? {}).sort(),
      Object.entries(placeholder.metadata.labels ?? {}).sort(),
    ) &&
    slice.addressType === placeholder.addressType
  );
}

/** reconcileByPortMapping: the slices of one port set. */
function reconcileByPortMapping(
  service: Service,
  existing: EndpointSlice[],
  desired: Map<string, Endpoint>,
  ports: EndpointPort[],
  addressType: AddressType,
  max: number,
): { create: EndpointSlice[]; update: EndpointSlice[]; delete: EndpointSlice[] } {
  const create: EndpointSlice[] = [];
  const update: EndpointSlice[] = [];
  const toDelete: EndpointSlice[] = [];
  let unchanged: EndpointSlice[] = [];
  // 1. Keep each existing endpoint that is still desired where it is; drop the others.
  for (const slice of existing) {
    let needsUpdate = false;
    const kept: Endpoint[] = [];
    for (const e of slice.endpoints ?? []) {
      const key = endpointKey(e);
      const want = desired.get(key);
      if (!want) {
        needsUpdate = true;
        continue;
      }
      if (!endpointsEqualBeyondHash(want, e)) needsUpdate = true;
      kept.push(want);
      desired.delete(key);
    }
    const [labels, labelsChanged] = endpointSliceLabels(slice, service);
    if (labelsChanged) needsUpdate = true;
    if (kept.length === 0) toDelete.push(slice);
    else if (needsUpdate)
      update.push({ ...structuredClone(slice), endpoints: kept, metadata: { ...slice.metadata, labels } });
    else unchanged.push(slice);
  }
  // 2. Fill the slices written anyway, fullest first.
  const pop = (): Endpoint => {
    const [key, e] = desired.entries().next().value as [string, Endpoint];
    desired.delete(key);
    return e;
  };
  if (desired.size > 0) {
    update.sort((a, b) => b.endpoints.length - a.endpoints.length);
    for (const slice of update)
      while (desired.size > 0 && slice.endpoints.length < max) slice.endpoints.push(pop());
  }
  // 3. The rest: into the unchanged slice they fill closest to full, else into new slices.
  while (desired.size > 0) {
    let target: EndpointSlice | undefined;
    if (desired.size < max && unchanged.length > 0) {
      const fits = unchanged
        .filter((s) => max - s.endpoints.length >= desired.size)
        .sort((a, b) => b.endpoints.length - a.endpoints.length)[0];
      if (fits) {
        unchanged = unchanged.filter((s) => s !== fits);
        target = structuredClone(fits);
        update.push(target);
      }
    }
    if (!target) {
      target = newEndpointSlice(service, ports, addressType);
      create.push(target);
    }
    while (desired.size > 0 && target.endpoints.length < max) target.endpoints.push(pop());
  }
  return { create, update, delete: toDelete };
}
// #endregion reconcile

/**
 * Which pods a Service's endpoints list, at which address and port — the small decisions the
 * Endpoints controller makes for every pod, and which Services a pod change concerns.
 * Mirrors kubernetes/kubernetes staging/src/k8s.io/endpointslice/util/controller_utils.go
 * (ShouldPodBeInEndpoints, ShouldSetHostname, GetPodServiceMemberships,
 * GetServicesToUpdateOnPodChange, podEndpointsChanged) and pkg/api/v1/pod/util.go (FindPort).
 *
 * Solves:
 * - a finished pod (Succeeded / Failed) or one without an IP cannot receive traffic, and a pod
 *   being deleted should stop receiving it — unless the Service publishes not-ready addresses;
 * - a Service's `targetPort` may name a container port (`http`), and two pods of one Service may
 *   map that name to different numbers: the port is resolved per pod;
 * - a pod update must wake only the Services whose endpoints it could change: most pod updates
 *   (a status heartbeat, an annotation) change nothing an Endpoints object holds.
 *
 * Invariants:
 * - a Service without a selector selects no pod (not every pod): its Endpoints are written by
 *   someone else;
 * - when only the labels changed, the Services the pod joined or left are synced, not those it
 *   stayed in.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/endpointslice/util/controller_utils.go (ShouldPodBeInEndpoints, ShouldSetHostname, GetPodServiceMemberships, GetServicesToUpdateOnPodChange, podEndpointsChanged, determineNeededServiceUpdates)
 * @upstream kubernetes/kubernetes pkg/api/v1/pod/util.go (FindPort, IsPodTerminal)
 * @upstream kubernetes/kubernetes pkg/controller/endpoint/endpoints_controller.go (podToEndpointAddressForService, endpointPortFromServicePort)
 * @chapter 07-kubelet
 */
import type { EndpointAddress, EndpointPort, Pod, Service, ServicePort } from "../../api/core.ts";
import { isPodReady } from "../active-pods.ts";

/** The Service selects the pod (a Service without a selector selects none). */
export function serviceSelectsPod(service: Service, pod: Pod): boolean {
  const selector = service.spec?.selector;
  if (!selector || Object.keys(selector).length === 0) return false;
  const labels = pod.metadata.labels ?? {};
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

// #region should-pod-be-in-endpoints
/** Whether the pod gets an address at all (ready or not): ShouldPodBeInEndpoints. */
export function shouldPodBeInEndpoints(pod: Pod, includeTerminating: boolean): boolean {
  const phase = pod.status?.phase;
  // Terminal: it will never serve again.
  if (phase === "Succeeded" || phase === "Failed") return false;
  if (!pod.status?.podIP && (pod.status?.podIPs ?? []).length === 0) return false;
  if (!includeTerminating && pod.metadata.deletionTimestamp) return false;
  return true;
}
// #endregion should-pod-be-in-endpoints

const isIPv6 = (ip: string | undefined) => !!ip && ip.includes(":");

/**
 * The pod's address of the Service's IP family (the first of spec.ipFamilies; else the family of
 * the cluster IP; for a headless Service, of the pod's IP). Undefined: no IP of that family.
 */
export function podToEndpointAddressForService(svc: Service, pod: Pod): EndpointAddress | undefined {
  let ipv6: boolean;
  const families = svc.spec?.ipFamilies ?? [];
  const clusterIP = svc.spec?.clusterIP;
  if (families.length > 0) ipv6 = families[0] === "IPv6";
  else if (clusterIP && clusterIP !== "None") ipv6 = isIPv6(clusterIP);
  else ipv6 = isIPv6(pod.status?.podIP);
  const ip = (pod.status?.podIPs ?? []).find((p) => isIPv6(p.ip) === ipv6)?.ip;
  if (!ip) return undefined;
  return {
    ip,
    // Upstream points at spec.nodeName even when empty; validation then refuses "". A pod with an
    // IP always has a node in a real cluster, but tests write IPs on unscheduled pods: leave it out.
    ...(pod.spec.nodeName ? { nodeName: pod.spec.nodeName } : {}),
    targetRef: {
      kind: "Pod",
      namespace: pod.metadata.namespace,
      name: pod.metadata.name,
      uid: pod.metadata.uid,
    },
  };
}

/** A pod's hostname goes into its address when its subdomain is this Service (ShouldSetHostname). */
export function shouldSetHostname(pod: Pod, svc: Service): boolean {
  return (
    !!pod.spec.hostname &&
    pod.spec.subdomain === svc.metadata.name &&
    (pod.metadata.namespace ?? "") === (svc.metadata.namespace ?? "")
  );
}

// #region find-port
/**
 * The container port a Service port reaches on this pod (FindPort): a number as it is; a name
 * looked up in the containers' ports (and restartable init containers', the sidecars) with the
 * same protocol. Undefined when no container names it.
 */
export function findPort(pod: Pod, svcPort: ServicePort): number | undefined {
  const target = svcPort.targetPort ?? svcPort.port;
  if (typeof target === "number") return target;
  const protocol = svcPort.protocol ?? "TCP";
  const sidecars = (pod.spec.initContainers ?? []).filter((c) => c.restartPolicy === "Always");
  for (const c of [...pod.spec.containers, ...sidecars]) {
    for (const p of c.ports ?? []) {
      if (p.name === target && (p.protocol ?? "TCP") === protocol) return p.containerPort;
    }
  }
  return undefined;
}
// #endregion find-port

export function endpointPortFromServicePort(servicePort: ServicePort, portNum: number): EndpointPort {
  const p: EndpointPort = { port: portNum, protocol: servicePort.protocol ?? "TCP" };
  if (servicePort.name) p.name = servicePort.name;
  if (servicePort.appProtocol) p.appProtocol = servicePort.appProtocol;
  return p;
}

const serviceKey = (s: Service) => `${s.metadata.namespace ?? ""}/${s.metadata.name ?? ""}`;

/** The keys of the Services (of the pod's namespace) that select the pod (GetPodServiceMemberships). */
export function getPodServiceMemberships(services: readonly Service[], pod: Pod): Set<string> {
  const keys = new Set<string>();
  for (const s of services) {
    if ((s.metadata.namespace ?? "") !== (pod.metadata.namespace ?? "")) continue;
    if (serviceSelectsPod(s, pod)) keys.add(serviceKey(s));
  }
  return keys;
}

// #region pod-endpoints-changed
/** [the pod changed in a way its endpoints show, its labels (or hostname) changed]. */
export function podEndpointsChanged(oldPod: Pod, newPod: Pod): [boolean, boolean] {
  const labelsChanged =
    JSON.stringify(oldPod.metadata.labels ?? {}) !== JSON.stringify(newPod.metadata.labels ?? {}) ||
    oldPod.spec.hostname !== newPod.spec.hostname ||
    oldPod.spec.subdomain !== newPod.spec.subdomain;
  if (oldPod.metadata.deletionTimestamp !== newPod.metadata.deletionTimestamp) return [true, labelsChanged];
  if (isPodReady(oldPod) !== isPodReady(newPod)) return [true, labelsChanged];
  const oldIPs = (oldPod.status?.podIPs ?? []).map((p) => p.ip);
  const newIPs = (newPod.status?.podIPs ?? []).map((p) => p.ip);
  if (oldIPs.length !== newIPs.length || oldIPs.some((ip, i) => ip !== newIPs[i]))
    return [true, labelsChanged];
  // Name, namespace and UID never change; nodeName is set before the pod has an IP.
  return [false, labelsChanged];
}
// #endregion pod-endpoints-changed

/** The Services to sync after a pod update (GetServicesToUpdateOnPodChange). */
export function getServicesToUpdateOnPodChange(
  services: readonly Service[],
  oldPod: Pod,
  newPod: Pod,
): Set<string> {
  // A resync delivers the same version again: nothing changed.
  if (oldPod.metadata.resourceVersion === newPod.metadata.resourceVersion) return new Set();
  const [podChanged, labelsChanged] = podEndpointsChanged(oldPod, newPod);
  if (!podChanged && !labelsChanged) return new Set();
  const now = getPodServiceMemberships(services, newPod);
  if (!labelsChanged) return now;
  const before = getPodServiceMemberships(services, oldPod);
  // The pod itself changed: every Service it was or is in. Only its labels: the ones it joined or left.
  if (podChanged) return new Set([...before, ...now]);
  const diff = new Set<string>();
  for (const k of before) if (!now.has(k)) diff.add(k);
  for (const k of now) if (!before.has(k)) diff.add(k);
  return diff;
}

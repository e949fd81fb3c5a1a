/**
 * Core-group tables other than pods: nodes, namespaces, services, endpoints, events,
 * configmaps, secrets, serviceaccounts. Upstream: their print functions in
 * pkg/printers/internalversion/printers.go.
 *
 * Solves: each answers the question people run `kubectl get` for —
 * - nodes: can it take pods? (`Ready`, `NotReady`, `Ready,SchedulingDisabled` when cordoned),
 *   what is it for (ROLES from `node-role.kubernetes.io/<role>` labels), which kubelet;
 * - services: how is it reached (TYPE, CLUSTER-IP, EXTERNAL-IP — `<pending>` while a cloud
 *   load balancer is being made — and PORT(S) as `80:30080/TCP`);
 * - endpoints: which pod addresses are behind it, the first three and `+ N more...`;
 * - events: what happened to which object, most useful first (LAST SEEN, TYPE, REASON, OBJECT,
 *   MESSAGE), with the older columns kept for `-o wide`;
 * - configmaps, secrets, serviceaccounts: how much is in them.
 *
 * Invariants: cells follow upstream's printers with options.Wide = true (the server always
 * fills the wide columns; kubectl hides priority-1 columns unless `-o wide`).
 *
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (printNode, findNodeRoles, getNodeInternalIP, getNodeExternalIP, printNamespace, printService, getServiceExternalIP, loadBalancerStatusStringer, makePortString, printEndpoints, formatEndpoints, printEvent, formatEventSource, printConfigMap, printSecret, printServiceAccount)
 * @chapter 02-apiserver
 */
import type {
  ConfigMap,
  Endpoints,
  Event,
  Namespace,
  Node,
  Secret,
  Service,
  ServiceAccount,
} from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import {
  ageColumn,
  column,
  formatLabels,
  nameColumn,
  nameDescription,
  translateTimestampSince,
} from "./helpers.ts";
import type { TablePrinter } from "./table.ts";

// #region node-table
const nodeAddressesDescription =
  "List of addresses reachable to the node. Queried from cloud provider, if available. More info: https://kubernetes.io/docs/concepts/nodes/node/#addresses Note: This field is declared as mergeable, but the merge key is not sufficiently unique, which can cause data corruption when it is merged. Callers should instead use a full-replacement patch. See https://pr.k8s.io/79391 for an example. Consumers should assume that addresses can change during the lifetime of a Node. However, there are some exceptions where this may not be possible, such as Pods that inherit a Node's address in its own status or consumers of the downward API (status.hostIP).";

const labelNodeRolePrefix = "node-role.kubernetes.io/";
const nodeLabelRole = "kubernetes.io/role";

/** Roles from `node-role.kubernetes.io/<role>` (any value) and the older `kubernetes.io/role=<role>`, sorted, unique. */
export function findNodeRoles(node: Node): string[] {
  const roles = new Set<string>();
  for (const [k, v] of Object.entries(node.metadata.labels ?? {})) {
    if (k.startsWith(labelNodeRolePrefix)) {
      const role = k.slice(labelNodeRolePrefix.length);
      if (role) roles.add(role);
    } else if (k === nodeLabelRole && v !== "") {
      roles.add(v);
    }
  }
  return [...roles].sort();
}

function printNode(obj: KubeObject, now: Date) {
  const node = obj as Node;
  const status: string[] = [];
  // Only Ready is shown: pressure conditions surface as taints, not in this column. Upstream
  // keys conditions by type in a map, so the last Ready condition wins.
  const ready = [...(node.status?.conditions ?? [])].reverse().find((c) => c.type === "Ready");
  if (ready) status.push(ready.status === "True" ? "Ready" : "NotReady");
  if (status.length === 0) status.push("Unknown");
  if (node.spec?.unschedulable) status.push("SchedulingDisabled");
  const roles = findNodeRoles(node).join(",") || "<none>";
  const info = node.status?.nodeInfo;
  const address = (type: string) => node.status?.addresses?.find((a) => a.type === type)?.address ?? "<none>";
  return {
    cells: [
      node.metadata.name ?? "",
      status.join(","),
      roles,
      translateTimestampSince(node.metadata.creationTimestamp, now),
      info?.kubeletVersion ?? "",
      address("InternalIP"),
      address("ExternalIP"),
      info?.osImage || "<unknown>",
      info?.kernelVersion || "<unknown>",
      info?.containerRuntimeVersion || "<unknown>",
    ],
  };
}

const nodePrinter: TablePrinter = {
  columns: [
    nameColumn,
    column("Status", "string", "The status of the node"),
    column("Roles", "string", "The roles of the node"),
    ageColumn,
    column("Version", "string", "Kubelet Version reported by the node."),
    column("Internal-IP", "string", nodeAddressesDescription, 1),
    column("External-IP", "string", nodeAddressesDescription, 1),
    column(
      "OS-Image",
      "string",
      "OS Image reported by the node from /etc/os-release (e.g. Debian GNU/Linux 7 (wheezy)).",
      1,
    ),
    column(
      "Kernel-Version",
      "string",
      "Kernel Version reported by the node from 'uname -r' (e.g. 3.16.0-0.bpo.4-amd64).",
      1,
    ),
    column(
      "Container-Runtime",
      "string",
      "ContainerRuntime Version reported by the node through runtime remote API (e.g. containerd://1.4.2).",
      1,
    ),
  ],
  print: printNode,
};
// #endregion node-table

const namespacePrinter: TablePrinter = {
  columns: [nameColumn, column("Status", "string", "The status of the namespace"), ageColumn],
  print: (obj, now) => ({
    cells: [
      obj.metadata.name ?? "",
      (obj as Namespace).status?.phase ?? "",
      translateTimestampSince(obj.metadata.creationTimestamp, now),
    ],
  }),
};

// #region service-table
const loadBalancerWidth = 16;

/** The load balancer's IPs (or hostnames), sorted and unique; cut to 16 characters unless wide. */
function loadBalancerStatusStringer(svc: Service, wide: boolean): string {
  const result = new Set<string>();
  for (const ingress of svc.status?.loadBalancer?.ingress ?? []) {
    if (ingress.ip) result.add(ingress.ip);
    else if (ingress.hostname) result.add(ingress.hostname);
  }
  let r = [...result].sort().join(",");
  if (!wide && r.length > loadBalancerWidth) r = `${r.slice(0, loadBalancerWidth - 3)}...`;
  return r;
}

export function getServiceExternalIP(svc: Service, wide: boolean): string {
  const externalIPs = svc.spec?.externalIPs ?? [];
  switch (svc.spec?.type) {
    case "ClusterIP":
    case "NodePort":
      return externalIPs.length > 0 ? externalIPs.join(",") : "<none>";
    case "LoadBalancer": {
      const lbIps = loadBalancerStatusStringer(svc, wide);
      if (externalIPs.length > 0) return [...(lbIps ? lbIps.split(",") : []), ...externalIPs].join(",");
      return lbIps || "<pending>";
    }
    case "ExternalName":
      return svc.spec.externalName ?? "";
  }
  return "<unknown>";
}

/** `80/TCP`, or `80:30080/TCP` with a node port. */
export function makePortString(svc: Service): string {
  return (svc.spec?.ports ?? [])
    .map((p) => {
      const protocol = p.protocol ?? "TCP";
      return p.nodePort ? `${p.port}:${p.nodePort}/${protocol}` : `${p.port}/${protocol}`;
    })
    .join(",");
}

const serviceSpecDescriptions = {
  type: 'type determines how the Service is exposed. Defaults to ClusterIP. Valid options are ExternalName, ClusterIP, NodePort, and LoadBalancer. "ClusterIP" allocates a cluster-internal IP address for load-balancing to endpoints. Endpoints are determined by the selector or if that is not specified, by manual construction of an Endpoints object or EndpointSlice objects. If clusterIP is "None", no virtual IP is allocated and the endpoints are published as a set of endpoints rather than a virtual IP. "NodePort" builds on ClusterIP and allocates a port on every node which routes to the same endpoints as the clusterIP. "LoadBalancer" builds on NodePort and creates an external load-balancer (if supported in the current cloud) which routes to the same endpoints as the clusterIP. "ExternalName" aliases this service to the specified externalName. Several other fields do not apply to ExternalName services. More info: https://kubernetes.io/docs/concepts/services-networking/service/#publishing-services-service-types',
  clusterIP:
    'clusterIP is the IP address of the service and is usually assigned randomly. If an address is specified manually, is in-range (as per system configuration), and is not in use, it will be allocated to the service; otherwise creation of the service will fail. This field may not be changed through updates unless the type field is also being changed to ExternalName (which requires this field to be blank) or the type field is being changed from ExternalName (in which case this field may optionally be specified, as describe above).  Valid values are "None", empty string (""), or a valid IP address. Setting this to "None" makes a "headless service" (no virtual IP), which is useful when direct endpoint connections are preferred and proxying is not required.  Only applies to types ClusterIP, NodePort, and LoadBalancer. If this field is specified when creating a Service of type ExternalName, creation will fail. This field will be wiped when updating a Service to type ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies',
  externalIPs:
    "externalIPs is a list of IP addresses for which nodes in the cluster will also accept traffic for this service.  These IPs are not managed by Kubernetes.  The user is responsible for ensuring that traffic arrives at a node with this IP.  A common example is external load-balancers that are not part of the Kubernetes system.",
  ports:
    "The list of ports that are exposed by this service. More info: https://kubernetes.io/docs/concepts/services-networking/service/#virtual-ips-and-service-proxies",
  selector:
    "Route service traffic to pods with label keys and values matching this selector. If empty or not present, the service is assumed to have an external process managing its endpoints, which Kubernetes will not modify. Only applies to types ClusterIP, NodePort, and LoadBalancer. Ignored if type is ExternalName. More info: https://kubernetes.io/docs/concepts/services-networking/service/",
};

function printService(obj: KubeObject, now: Date) {
  const svc = obj as Service;
  // Upstream reads clusterIPs[0]; conversion from v1 fills clusterIPs from clusterIP.
  const internalIP = svc.spec?.clusterIPs?.[0] || svc.spec?.clusterIP || "<none>";
  return {
    cells: [
      svc.metadata.name ?? "",
      svc.spec?.type ?? "",
      internalIP,
      getServiceExternalIP(svc, true),
      makePortString(svc) || "<none>",
      translateTimestampSince(svc.metadata.creationTimestamp, now),
      formatLabels(svc.spec?.selector),
    ],
  };
}

const servicePrinter: TablePrinter = {
  columns: [
    nameColumn,
    column("Type", "string", serviceSpecDescriptions.type),
    column("Cluster-IP", "string", serviceSpecDescriptions.clusterIP),
    column("External-IP", "string", serviceSpecDescriptions.externalIPs),
    column("Port(s)", "string", serviceSpecDescriptions.ports),
    ageColumn,
    column("Selector", "string", serviceSpecDescriptions.selector, 1),
  ],
  print: printService,
};
// #endregion service-table

// #region endpoints-table
/** `net.JoinHostPort`: an IPv6 address goes in brackets. */
const joinHostPort = (host: string, port: number) =>
  host.includes(":") ? `[${host}]:${port}` : `${host}:${port}`;

/** The first three `ip:port` pairs (ready addresses only), then `+ N more...`; "<none>" without subsets. */
export function formatEndpoints(endpoints: Endpoints): string {
  const subsets = endpoints.subsets ?? [];
  if (subsets.length === 0) return "<none>";
  const list: string[] = [];
  const max = 3;
  let more = false;
  let count = 0;
  for (const ss of subsets) {
    const addresses = ss.addresses ?? [];
    if ((ss.ports ?? []).length === 0) {
      // A headless service may have no ports: list the bare addresses.
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === max) {
          more = true;
          break;
        }
        list.push(a.ip);
      }
      continue;
    }
    for (const port of ss.ports ?? []) {
      count += addresses.length;
      for (const a of addresses) {
        if (list.length === max) {
          more = true;
          break;
        }
        list.push(joinHostPort(a.ip, port.port));
      }
    }
  }
  const ret = list.join(",");
  return more ? `${ret} + ${count - max} more...` : ret;
}

const endpointsPrinter: TablePrinter = {
  columns: [
    nameColumn,
    column(
      "Endpoints",
      "string",
      "The set of all endpoints is the union of all subsets. Addresses are placed into subsets according to the IPs they share. A single address with multiple ports, some of which are ready and some of which are not (because they come from different containers) will result in the address being displayed in different subsets for the different ports. No address will appear in both Addresses and NotReadyAddresses in the same subset. Sets of addresses and ports that comprise a service.",
    ),
    ageColumn,
  ],
  print: (obj, now) => ({
    cells: [
      obj.metadata.name ?? "",
      formatEndpoints(obj as Endpoints),
      translateTimestampSince(obj.metadata.creationTimestamp, now),
    ],
  }),
};
// #endregion endpoints-table

// #region event-table
/** The v1 Event fields printEvent reads that code/api/core.ts does not declare. */
type EventV1 = Event & { series?: { count?: number; lastObservedTime?: string } };

/**
 * `kubelet, node-1`: component and host, each falling back to the new API's reporting fields
 * (`reportingComponent` in JSON is Go's ReportingController).
 */
export function formatEventSource(event: EventV1): string {
  const component = event.source?.component || event.reportingComponent || "";
  const instance = event.source?.host || event.reportingInstance || "";
  return instance ? `${component}, ${instance}` : component;
}

function printEvent(obj: KubeObject, now: Date) {
  const event = obj as EventV1;
  // Events from the events.k8s.io API carry eventTime instead of firstTimestamp.
  const firstTimestamp = event.firstTimestamp
    ? translateTimestampSince(event.firstTimestamp, now)
    : translateTimestampSince(event.eventTime, now);
  let lastTimestamp = event.lastTimestamp
    ? translateTimestampSince(event.lastTimestamp, now)
    : firstTimestamp;
  let count = event.count ?? 0;
  if (event.series) {
    lastTimestamp = translateTimestampSince(event.series.lastObservedTime, now);
    count = event.series.count ?? 0;
  } else if (count === 0) {
    // Singleton events of the new API have no count.
    count = 1;
  }
  const involved = event.involvedObject ?? {};
  const kind = (involved.kind ?? "").toLowerCase();
  const target = involved.name ? `${kind}/${involved.name}` : kind;
  return {
    cells: [
      lastTimestamp,
      event.type ?? "",
      event.reason ?? "",
      target,
      involved.fieldPath ?? "",
      formatEventSource(event),
      (event.message ?? "").trim(),
      firstTimestamp,
      count,
      event.metadata.name ?? "",
    ],
  };
}

const eventPrinter: TablePrinter = {
  columns: [
    column("Last Seen", "string", "The time at which the most recent occurrence of this event was recorded."),
    column("Type", "string", "Type of this event (Normal, Warning), new types could be added in the future"),
    column(
      "Reason",
      "string",
      "This should be a short, machine understandable string that gives the reason for the transition into the object's current status.",
    ),
    column("Object", "string", "The object that this event is about."),
    column(
      "Subobject",
      "string",
      'If referring to a piece of an object instead of an entire object, this string should contain a valid JSON/Go field access statement, such as desiredState.manifest.containers[2]. For example, if the object reference is to a container within a pod, this would take on a value like: "spec.containers{name}" (where "name" refers to the name of the container that triggered the event) or if no container name is specified "spec.containers[2]" (container with index 2 in this pod). This syntax is chosen only to have some well-defined way of referencing a part of an object.',
      1,
    ),
    column(
      "Source",
      "string",
      "The component reporting this event. Should be a short machine understandable string.",
      1,
    ),
    column("Message", "string", "A human-readable description of the status of this operation."),
    column(
      "First Seen",
      "string",
      "The time at which the event was first recorded. (Time of server receipt is in TypeMeta.)",
      1,
    ),
    column("Count", "string", "The number of times this event has occurred.", 1),
    column("Name", "string", nameDescription, 1, "name"),
  ],
  print: printEvent,
};
// #endregion event-table

const configMapPrinter: TablePrinter = {
  columns: [
    nameColumn,
    column(
      "Data",
      "string",
      "Data contains the configuration data. Each key must consist of alphanumeric characters, '-', '_' or '.'. Values with non-UTF-8 byte sequences must use the BinaryData field. The keys stored in Data must not overlap with the keys in the BinaryData field, this is enforced during validation process.",
    ),
    ageColumn,
  ],
  print: (obj, now) => {
    const cm = obj as ConfigMap;
    const data = Object.keys(cm.data ?? {}).length + Object.keys(cm.binaryData ?? {}).length;
    return {
      cells: [cm.metadata.name ?? "", data, translateTimestampSince(cm.metadata.creationTimestamp, now)],
    };
  },
};

const secretPrinter: TablePrinter = {
  columns: [
    nameColumn,
    column(
      "Type",
      "string",
      "Used to facilitate programmatic handling of secret data. More info: https://kubernetes.io/docs/concepts/configuration/secret/#secret-types",
    ),
    column(
      "Data",
      "string",
      "Data contains the secret data. Each key must consist of alphanumeric characters, '-', '_' or '.'. The serialized form of the secret data is a base64 encoded string, representing the arbitrary (possibly non-string) data value here. Described in https://tools.ietf.org/html/rfc4648#section-4",
    ),
    ageColumn,
  ],
  print: (obj, now) => {
    const secret = obj as Secret;
    return {
      cells: [
        secret.metadata.name ?? "",
        secret.type ?? "",
        Object.keys(secret.data ?? {}).length,
        translateTimestampSince(secret.metadata.creationTimestamp, now),
      ],
    };
  },
};

const serviceAccountPrinter: TablePrinter = {
  columns: [
    nameColumn,
    column(
      "Secrets",
      "string",
      'Secrets is a list of the secrets in the same namespace that pods running using this ServiceAccount are allowed to use. Pods are only limited to this list if this service account has a "kubernetes.io/enforce-mountable-secrets" annotation set to "true". The "kubernetes.io/enforce-mountable-secrets" annotation is deprecated since v1.32. Prefer separate namespaces to isolate access to mounted secrets. This field should not be used to find auto-generated service account token secrets for use outside of pods. Instead, tokens can be requested directly using the TokenRequest API, or service account token secrets can be manually created. More info: https://kubernetes.io/docs/concepts/configuration/secret',
    ),
    ageColumn,
  ],
  print: (obj, now) => {
    const sa = obj as ServiceAccount;
    return {
      cells: [
        sa.metadata.name ?? "",
        (sa.secrets ?? []).length,
        translateTimestampSince(sa.metadata.creationTimestamp, now),
      ],
    };
  },
};

/** The core group's printers other than pods, by resource. */
export const corePrinters: Readonly<Record<string, TablePrinter>> = {
  nodes: nodePrinter,
  namespaces: namespacePrinter,
  services: servicePrinter,
  endpoints: endpointsPrinter,
  events: eventPrinter,
  configmaps: configMapPrinter,
  secrets: secretPrinter,
  serviceaccounts: serviceAccountPrinter,
};

/**
 * Validation of the core kinds other than Pod — Namespace, Node, Event, ConfigMap, Secret,
 * ServiceAccount, Service, Endpoints.
 * Upstream: kubernetes' pkg/apis/core/validation/validation.go and events.go.
 *
 * Solves:
 * - each kind's own rules on top of ObjectMeta's: a namespace name is a DNS label (it becomes
 *   part of `<svc>.<ns>.svc`), a service name a DNS-1035 label, ConfigMap and Secret keys
 *   become file names and their total must fit in one etcd value (1 MiB), an Endpoints address
 *   must be a routable IP;
 * - the update rules: a Secret's `type` never changes, an `immutable: true` ConfigMap or Secret
 *   keeps its data, a node keeps its pod CIDRs and provider ID once set.
 *
 * Invariants:
 * - paths and messages are upstream's, including its oddities (node taints are reported under
 *   `metadata.taints`, a namespace's status phase under `status.Phase`, a LoadBalancer's
 *   missing flag under `allocateLoadBalancerNodePorts` with no `spec.`);
 * - ConfigMap and Secret sizes are counted on decoded bytes (`binaryData` and Secret `data` are
 *   base64 in JSON); a Secret's `stringData` has been merged into `data` before validation
 *   (defaults.ts mergeSecretStringData, upstream's conversion).
 *
 * Simplified: Service cluster-IP/IP-family consistency (the service registry allocates those),
 * LoadBalancer status, the JSON well-formedness of docker-config Secrets and node config
 * sources are not validated.
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidateNamespace, ValidateNamespaceUpdate, ValidateNamespaceStatusUpdate, ValidateNamespaceFinalizeUpdate, ValidateNode, ValidateNodeUpdate, validateNodeTaints, ValidateResourceQuantityValue, ValidateConfigMap, ValidateConfigMapUpdate, ValidateSecret, ValidateSecretUpdate, ValidateServiceAccount, ValidateService, ValidateServiceUpdate, validateServicePort, ValidateEndpoints, validateEndpointSubsets, ValidateNonSpecialIP, validateEndpointPort)
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/events.go (ValidateEventCreate, ValidateEventUpdate, legacyValidateEvent)
 * @upstream kubernetes/kubernetes pkg/apis/core/types.go (MaxSecretSize)
 * @chapter 02-apiserver
 */

import {
  childPath,
  duplicate,
  type FieldError,
  forbidden,
  GoValue,
  indexPath,
  invalid,
  keyPath,
  notSupported,
  required,
  tooLong,
} from "./field-errors.ts";
import { arr, isSet, type JSONObject, num, obj, str } from "./json.ts";
import type { KubeObject } from "./meta.ts";
import {
  deepEqual,
  validateFinalizerName,
  validateImmutableField,
  validateKubeFinalizerName,
  validateLabelName,
  validateLabels,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from "./object-meta-validation.ts";
import { quantityValue, validateResourceQuantity } from "./resource-validation.ts";
import {
  isConfigMapKey,
  isDNS1123Label,
  isDNS1123Subdomain,
  isQualifiedName,
  isValidIP,
  isValidLabelValue,
  isValidPortName,
  isValidPortNum,
  nameIsDNS1035Label,
  nameIsDNSLabel,
  nameIsDNSSubdomain,
  parseIPSloppy,
} from "./string-validation.ts";

/** core.MaxSecretSize: a ConfigMap's or Secret's whole payload fits in one etcd value. */
export const MAX_SECRET_SIZE = 1 * 1024 * 1024;

function byteLength(text: string): number {
  return new TextEncoder().encode(text).length;
}

/** Bytes a base64 JSON value decodes to. */
function decodedLength(base64: string): number {
  return Buffer.from(base64, "base64").length;
}

// #region namespace
/**
 * ValidateNamespace: a DNS-label name, and `spec.finalizers` — the list the namespace controller
 * works through (deleting everything inside) before a terminating namespace may go.
 */
export function validateNamespace(namespace: KubeObject): FieldError[] {
  const errors = validateObjectMeta(namespace.metadata, false, nameIsDNSLabel);
  for (const finalizer of arr(obj(namespace.spec)?.finalizers).map(String)) {
    errors.push(...validateFinalizerName(finalizer, "spec.finalizers"));
    errors.push(...validateKubeFinalizerName(finalizer, "spec.finalizers"));
  }
  return errors;
}

/** ValidateNamespaceUpdate: only metadata rules — spec and status change through their own paths. */
export function validateNamespaceUpdate(namespace: KubeObject, old: KubeObject): FieldError[] {
  return validateObjectMetaUpdate(namespace.metadata, old.metadata);
}

/** ValidateNamespaceStatusUpdate: the phase follows the deletion timestamp, nothing else. */
export function validateNamespaceStatusUpdate(namespace: KubeObject, old: KubeObject): FieldError[] {
  const errors = validateObjectMetaUpdate(namespace.metadata, old.metadata);
  const phase = str(obj(namespace.status)?.phase);
  if (!namespace.metadata?.deletionTimestamp) {
    if (phase !== "Active") {
      errors.push(invalid("status.Phase", phase, "may only be 'Active' if `deletionTimestamp` is empty"));
    }
  } else if (phase !== "Terminating") {
    errors.push(
      invalid("status.Phase", phase, "may only be 'Terminating' if `deletionTimestamp` is not empty"),
    );
  }
  return errors;
}

/** ValidateNamespaceFinalizeUpdate: the `finalize` subresource, where the namespace controller removes its finalizer. */
export function validateNamespaceFinalizeUpdate(namespace: KubeObject, old: KubeObject): FieldError[] {
  const errors = validateObjectMetaUpdate(namespace.metadata, old.metadata);
  arr(obj(namespace.spec)?.finalizers).forEach((finalizer, i) => {
    errors.push(...validateFinalizerName(String(finalizer), indexPath("spec.finalizers", i)));
    errors.push(...validateKubeFinalizerName(String(finalizer), indexPath("spec.finalizers", i)));
  });
  return errors;
}
// #endregion namespace

// #region node
const TAINT_EFFECTS = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/** Go's %#v of a core.Taint, as upstream shows a duplicate one (a set timeAdded falls back to JSON). */
function goTaint(taint: JSONObject): GoValue {
  if (isSet(taint.timeAdded)) return new GoValue(JSON.stringify(taint), taint);
  const fields = `Key:${JSON.stringify(str(taint.key))}, Value:${JSON.stringify(str(taint.value))}, Effect:${JSON.stringify(str(taint.effect))}`;
  return new GoValue(`core.Taint{${fields}, TimeAdded:(*v1.Time)(nil)}`, taint);
}

/** validateNodeTaints: valid key, value and effect, and unique by (key, effect). */
function validateNodeTaints(taints: unknown, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const seen = new Map<string, Set<string>>();
  arr(taints).forEach((entry, i) => {
    const taint = obj(entry) ?? {};
    const at = indexPath(path, i);
    const key = str(taint.key);
    const value = str(taint.value);
    const effect = str(taint.effect);
    errors.push(...validateLabelName(key, childPath(at, "key")));
    const valueErrors = isValidLabelValue(value);
    if (valueErrors.length > 0) errors.push(invalid(childPath(at, "value"), value, valueErrors.join(";")));
    if (effect === "") errors.push(required(childPath(at, "effect")));
    else if (!TAINT_EFFECTS.includes(effect))
      errors.push(notSupported(childPath(at, "effect"), effect, TAINT_EFFECTS));
    if (seen.get(effect)?.has(key)) {
      errors.push({
        ...duplicate(at, goTaint(taint)),
        detail: "taints must be unique by key and effect pair",
      });
      return;
    }
    if (!seen.has(effect)) seen.set(effect, new Set());
    seen.get(effect)?.add(key);
  });
  return errors;
}

/** ValidateResourceQuantityValue for one resource list entry (`pods` counts whole pods). */
function validateResourceQuantityValue(name: string, quantity: unknown, path: string): FieldError[] {
  const errors = validateResourceQuantity(name, quantity, path);
  if (name === "pods" && !Number.isInteger(quantityValue(quantity) ?? 0)) {
    errors.push(invalid(path, String(quantity), "must be an integer"));
  }
  return errors;
}

/** The kubelet's report of what the node has (`capacity`) and what pods may use (`allocatable`). */
function validateNodeResources(node: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const status = obj(node.status) ?? {};
  for (const list of ["capacity", "allocatable"]) {
    for (const [name, quantity] of Object.entries(obj(status[list]) ?? {})) {
      // The path uses dots, not brackets, for the resource name (field.NewPath("status", list, name)).
      errors.push(...validateResourceQuantityValue(name, quantity, childPath("status", list, name)));
    }
  }
  return errors;
}

function isValidCIDR(value: string): boolean {
  const [ip, prefix, ...rest] = value.split("/");
  const parsed = parseIPSloppy(ip);
  if (!parsed || rest.length > 0 || prefix === undefined || !/^\d+$/.test(prefix)) return false;
  return Number(prefix) <= (parsed.family === 4 ? 32 : 128);
}

/** ValidateNode: a DNS-subdomain name (nodes are cluster-scoped), then taints, resources and pod CIDRs. */
export function validateNode(node: KubeObject): FieldError[] {
  const errors = validateObjectMeta(node.metadata, false, nameIsDNSSubdomain);
  const spec = obj(node.spec) ?? {};
  // Upstream reports taints under metadata.taints: its field path starts from "metadata".
  errors.push(...validateNodeTaints(spec.taints, "metadata.taints"));
  errors.push(...validateNodeResources(node));
  arr(spec.podCIDRs).forEach((cidr, i) => {
    if (!isValidCIDR(String(cidr))) {
      errors.push(
        invalid(
          indexPath("spec.podCIDRs", i),
          cidr,
          "must be a valid CIDR value, (e.g. 10.9.8.0/24 or 2001:db8::/64)",
        ),
      );
    }
  });
  return errors;
}

/**
 * ValidateNodeUpdate: status and most of spec may change (the kubelet and the node controller
 * rewrite them all the time), but pod CIDRs and the provider ID are fixed once set.
 */
export function validateNodeUpdate(node: KubeObject, old: KubeObject): FieldError[] {
  const errors = validateObjectMetaUpdate(node.metadata, old.metadata);
  errors.push(...validateNodeResources(node));
  const seen: unknown[] = [];
  arr(obj(node.status)?.addresses).forEach((address, i) => {
    if (seen.some((s) => deepEqual(s, address)))
      errors.push(duplicate(indexPath("status.addresses", i), address));
    seen.push(address);
  });
  const spec = obj(node.spec) ?? {};
  const oldSpec = obj(old.spec) ?? {};
  const oldCIDRs = arr(oldSpec.podCIDRs);
  const newCIDRs = arr(spec.podCIDRs);
  if (oldCIDRs.length > 0) {
    const message = 'node updates may not change podCIDR except from "" to valid';
    if (oldCIDRs.length !== newCIDRs.length) errors.push(forbidden("spec.podCIDRs", message));
    else {
      oldCIDRs.forEach((cidr, i) => {
        if (cidr !== newCIDRs[i]) errors.push(forbidden("spec.podCIDRs", message));
      });
    }
  }
  const oldProvider = str(oldSpec.providerID);
  if (oldProvider.length > 0 && oldProvider !== str(spec.providerID)) {
    errors.push(
      forbidden("spec.providerID", 'node updates may not change providerID except from "" to valid'),
    );
  }
  errors.push(...validateNodeTaints(spec.taints, "metadata.taints"));
  return errors;
}
// #endregion node

// #region event
/**
 * legacyValidateEvent — all that a core/v1 Event gets (events.k8s.io/v1, which we do not serve,
 * adds ObjectMeta validation): its namespace must agree with the involved object's.
 */
export function validateEvent(event: KubeObject): FieldError[] {
  const errors: FieldError[] = [];
  const namespace = event.metadata?.namespace ?? "";
  const involvedNamespace = str(obj(event.involvedObject)?.namespace);
  const mismatch = (): FieldError =>
    invalid("involvedObject.namespace", involvedNamespace, "does not match event.namespace");
  if (!event.eventTime) {
    if (involvedNamespace === "") {
      // An event about a cluster-scoped object lives in no namespace, or "default" for old clients.
      if (namespace !== "" && namespace !== "default") errors.push(mismatch());
    } else if (namespace !== involvedNamespace) {
      errors.push(mismatch());
    }
  } else {
    if (involvedNamespace === "" && namespace !== "default" && namespace !== "kube-system")
      errors.push(mismatch());
    const reportingController = str(event.reportingComponent);
    if (reportingController === "") errors.push(required("reportingController"));
    for (const m of isQualifiedName(reportingController))
      errors.push(invalid("reportingController", reportingController, m));
    const limits: [string, number][] = [
      ["reportingInstance", 128],
      ["action", 128],
      ["reason", 128],
    ];
    for (const [field, limit] of limits) {
      const value = str(event[field]);
      if (value === "") errors.push(required(field));
      if (byteLength(value) > limit) errors.push(invalid(field, "", `can have at most ${limit} characters`));
    }
    if (byteLength(str(event.message)) > 1024)
      errors.push(invalid("message", "", "can have at most 1024 characters"));
  }
  for (const m of isDNS1123Subdomain(namespace)) errors.push(invalid("namespace", namespace, m));
  return errors;
}

/** ValidateEventUpdate for core/v1: the same legacy rules on the new event. */
export function validateEventUpdate(event: KubeObject, _old: KubeObject): FieldError[] {
  return validateEvent(event);
}
// #endregion event

// #region config
/**
 * ValidateConfigMap: every key of `data` and `binaryData` can be a file name in a volume, no key
 * is in both, and the whole payload fits in one etcd value.
 */
export function validateConfigMap(configMap: KubeObject): FieldError[] {
  const errors = validateObjectMeta(configMap.metadata, true, nameIsDNSSubdomain);
  const data = obj(configMap.data) ?? {};
  const binaryData = obj(configMap.binaryData) ?? {};
  let totalSize = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const m of isConfigMapKey(key)) errors.push(invalid(keyPath("data", key), key, m));
    if (key in binaryData)
      errors.push(invalid(keyPath("data", key), key, "duplicate of key present in binaryData"));
    totalSize += byteLength(str(value));
  }
  for (const [key, value] of Object.entries(binaryData)) {
    for (const m of isConfigMapKey(key)) errors.push(invalid(keyPath("binaryData", key), key, m));
    totalSize += decodedLength(str(value));
  }
  // The empty path: the error is about the object as a whole.
  if (totalSize > MAX_SECRET_SIZE) errors.push(tooLong("", MAX_SECRET_SIZE));
  return errors;
}

/** An `immutable: true` object keeps its data and its immutability for ever. */
function validateImmutableData(object: KubeObject, old: KubeObject, fields: string[]): FieldError[] {
  if (old.immutable !== true) return [];
  const errors: FieldError[] = [];
  const message = "field is immutable when `immutable` is set";
  if (object.immutable !== true) errors.push(forbidden("immutable", message));
  for (const field of fields) {
    if (!deepEqual(object[field] ?? null, old[field] ?? null)) errors.push(forbidden(field, message));
  }
  return errors;
}

export function validateConfigMapUpdate(configMap: KubeObject, old: KubeObject): FieldError[] {
  const errors = validateObjectMetaUpdate(configMap.metadata, old.metadata);
  errors.push(...validateImmutableData(configMap, old, ["data", "binaryData"]));
  errors.push(...validateConfigMap(configMap));
  return errors;
}

/** The keys each built-in Secret type must carry. */
const SECRET_TYPE_KEYS: Record<string, string[]> = {
  "kubernetes.io/dockercfg": [".dockercfg"],
  "kubernetes.io/dockerconfigjson": [".dockerconfigjson"],
  "kubernetes.io/tls": ["tls.crt", "tls.key"],
};

/** ValidateSecret: keys as for a ConfigMap, then the keys the Secret's `type` promises its consumers. */
export function validateSecret(secret: KubeObject): FieldError[] {
  const errors = validateObjectMeta(secret.metadata, true, nameIsDNSSubdomain);
  const data = obj(secret.data) ?? {};
  let totalSize = 0;
  for (const [key, value] of Object.entries(data)) {
    for (const m of isConfigMapKey(key)) errors.push(invalid(keyPath("data", key), key, m));
    totalSize += decodedLength(str(value));
  }
  if (totalSize > MAX_SECRET_SIZE) errors.push(tooLong("data", MAX_SECRET_SIZE));
  const type = str(secret.type);
  if (type === "kubernetes.io/service-account-token") {
    // The token controller fills in the token; the secret must say which account it is for.
    const annotation = "kubernetes.io/service-account.name";
    if (!secret.metadata?.annotations?.[annotation])
      errors.push(required(keyPath("metadata.annotations", annotation)));
  } else if (type === "kubernetes.io/basic-auth") {
    if (!("username" in data) && !("password" in data)) {
      errors.push(required("data[username]"), required("data[password]"));
    }
  } else if (type === "kubernetes.io/ssh-auth") {
    if (decodedLength(str(data["ssh-privatekey"])) === 0) errors.push(required("data[ssh-privatekey]"));
  } else {
    for (const key of SECRET_TYPE_KEYS[type] ?? [])
      if (!(key in data)) errors.push(required(keyPath("data", key)));
  }
  return errors;
}

export function validateSecretUpdate(secret: KubeObject, old: KubeObject): FieldError[] {
  const errors = validateObjectMetaUpdate(secret.metadata, old.metadata);
  errors.push(...validateImmutableField(str(secret.type), str(old.type), "type"));
  errors.push(...validateImmutableData(secret, old, ["data"]));
  errors.push(...validateSecret(secret));
  return errors;
}

export function validateServiceAccount(serviceAccount: KubeObject): FieldError[] {
  return validateObjectMeta(serviceAccount.metadata, true, nameIsDNSSubdomain);
}

export function validateServiceAccountUpdate(serviceAccount: KubeObject, old: KubeObject): FieldError[] {
  return [
    ...validateObjectMetaUpdate(serviceAccount.metadata, old.metadata),
    ...validateServiceAccount(serviceAccount),
  ];
}
// #endregion config

// #region service
const SUPPORTED_PORT_PROTOCOLS = ["SCTP", "TCP", "UDP"];
const SERVICE_TYPES = ["ClusterIP", "ExternalName", "LoadBalancer", "NodePort"];

function isHeadless(spec: JSONObject): boolean {
  const clusterIPs = arr(spec.clusterIPs);
  if (clusterIPs.length > 0) return clusterIPs.length === 1 && clusterIPs[0] === "None";
  return spec.clusterIP === "None";
}

/** A Service's `targetPort`: a number, or the name of a container port (the same rule as probe-validation.ts). */
function validatePortNumOrName(port: unknown, path: string): FieldError[] {
  if (typeof port === "string") return isValidPortName(port).map((m) => invalid(path, port, m));
  const n = typeof port === "number" ? port : 0;
  return isValidPortNum(n).map((m) => invalid(path, n, m));
}

/** One Service port: named when there are several (Endpoints and kube-proxy match them by name). */
function validateServicePort(
  port: JSONObject,
  requireName: boolean,
  names: Set<string>,
  path: string,
): FieldError[] {
  const errors: FieldError[] = [];
  const name = str(port.name);
  if (requireName && name === "") errors.push(required(childPath(path, "name")));
  else if (name !== "") {
    for (const m of isDNS1123Label(name)) errors.push(invalid(childPath(path, "name"), name, m));
    if (names.has(name)) errors.push(duplicate(childPath(path, "name"), name));
    else names.add(name);
  }
  for (const m of isValidPortNum(num(port.port)))
    errors.push(invalid(childPath(path, "port"), num(port.port), m));
  const protocol = str(port.protocol);
  if (protocol === "") errors.push(required(childPath(path, "protocol")));
  else if (!SUPPORTED_PORT_PROTOCOLS.includes(protocol)) {
    errors.push(notSupported(childPath(path, "protocol"), protocol, SUPPORTED_PORT_PROTOCOLS));
  }
  errors.push(...validatePortNumOrName(port.targetPort, childPath(path, "targetPort")));
  if (isSet(port.appProtocol)) {
    const appProtocol = str(port.appProtocol);
    for (const m of isQualifiedName(appProtocol))
      errors.push(invalid(childPath(path, "appProtocol"), appProtocol, m));
  }
  return errors;
}

/** Go's %#v of the (protocol, port) key upstream reports a duplicate service port with. */
function servicePortKey(protocol: string, port: number): GoValue {
  return new GoValue(
    `core.ServicePort{Name:"", Protocol:${JSON.stringify(protocol)}, AppProtocol:(*string)(nil), Port:${port}, TargetPort:intstr.IntOrString{Type:0, IntVal:0, StrVal:""}, NodePort:0}`,
    { protocol, port },
  );
}

/**
 * ValidateService, in upstream's order: the type decides what else may be set — an ExternalName
 * service is only a DNS CNAME (no cluster IP, no ports required), a headless one (`clusterIP:
 * None`) needs no ports, NodePort and LoadBalancer need a cluster IP and may carry node ports;
 * then ports, selector, session affinity, external IPs, and the traffic policies, which only mean
 * something for traffic that enters from outside the cluster.
 */
export function validateService(service: KubeObject): FieldError[] {
  const errors = validateObjectMeta(service.metadata, true, nameIsDNS1035Label);
  const spec = obj(service.spec) ?? {};
  const type = str(spec.type);
  const ports = arr(spec.ports).map((p) => obj(p) ?? {});
  const headless = isHeadless(spec);
  if (ports.length === 0 && !headless && type !== "ExternalName") errors.push(required("spec.ports"));
  if ((type === "LoadBalancer" || type === "NodePort") && headless) {
    errors.push(invalid("spec.clusterIPs[0]", "None", `may not be set to 'None' for ${type} services`));
  }
  if (type === "ExternalName") {
    if (arr(spec.clusterIPs).length > 0)
      errors.push(forbidden("spec.clusterIPs", "may not be set for ExternalName services"));
    if (arr(spec.ipFamilies).length > 0)
      errors.push(forbidden("spec.ipFamilies", "may not be set for ExternalName services"));
    if (isSet(spec.ipFamilyPolicy))
      errors.push(forbidden("spec.ipFamilyPolicy", "may not be set for ExternalName services"));
    // A CNAME may end with a dot to mark it fully qualified.
    const cname = str(spec.externalName).replace(/\.$/, "");
    if (cname.length > 0)
      for (const m of isDNS1123Subdomain(cname)) errors.push(invalid("spec.externalName", cname, m));
    else errors.push(required("spec.externalName"));
  }
  const names = new Set<string>();
  ports.forEach((port, i) => {
    errors.push(...validateServicePort(port, ports.length > 1, names, indexPath("spec.ports", i)));
  });
  if (isSet(spec.selector)) errors.push(...validateLabels(spec.selector, "spec.selector"));

  const affinity = str(spec.sessionAffinity);
  if (affinity === "") errors.push(required("spec.sessionAffinity"));
  else if (affinity !== "ClientIP" && affinity !== "None") {
    errors.push(notSupported("spec.sessionAffinity", affinity, ["ClientIP", "None"]));
  }
  if (affinity === "ClientIP") {
    const config = obj(spec.sessionAffinityConfig);
    const when = "when session affinity type is ClientIP";
    const clientIP = obj(config?.clientIP);
    if (!config) errors.push(required("spec.sessionAffinityConfig", when));
    else if (!clientIP) errors.push(required("spec.sessionAffinityConfig.clientIP", when));
    else if (!isSet(clientIP.timeoutSeconds))
      errors.push(required("spec.sessionAffinityConfig.clientIP.timeoutSeconds", when));
    else {
      const timeout = num(clientIP.timeoutSeconds);
      if (timeout <= 0 || timeout > 86400) {
        errors.push(
          invalid(
            "spec.sessionAffinityConfig.clientIP.timeoutSeconds",
            timeout,
            "must be greater than 0 and less than 86400",
          ),
        );
      }
    }
  } else if (affinity === "None" && isSet(spec.sessionAffinityConfig)) {
    errors.push(forbidden("spec.sessionAffinityConfig", "must not be set when session affinity is None"));
  }

  arr(spec.externalIPs).forEach((ip, i) => {
    const at = indexPath("spec.externalIPs", i);
    const messages = isValidIP(str(ip));
    if (messages.length > 0) for (const m of messages) errors.push(invalid(at, str(ip), m));
    else errors.push(...validateNonSpecialIP(str(ip), at));
  });

  if (type === "") errors.push(required("spec.type"));
  else if (!SERVICE_TYPES.includes(type)) errors.push(notSupported("spec.type", type, SERVICE_TYPES));
  if (type === "ClusterIP") {
    ports.forEach((port, i) => {
      if (num(port.nodePort) !== 0) {
        errors.push(
          forbidden(
            childPath(indexPath("spec.ports", i), "nodePort"),
            "may not be used when `type` is 'ClusterIP'",
          ),
        );
      }
    });
  }
  const nodePorts = new Set<string>();
  ports.forEach((port, i) => {
    const nodePort = num(port.nodePort);
    if (nodePort === 0) return;
    const key = `${str(port.protocol)}/${nodePort}`;
    if (nodePorts.has(key))
      errors.push(duplicate(childPath(indexPath("spec.ports", i), "nodePort"), nodePort));
    nodePorts.add(key);
  });
  const portKeys = new Set<string>();
  ports.forEach((port, i) => {
    const key = `${str(port.protocol)}/${num(port.port)}`;
    if (portKeys.has(key))
      errors.push(duplicate(indexPath("spec.ports", i), servicePortKey(str(port.protocol), num(port.port))));
    portKeys.add(key);
  });

  if (isSet(spec.allocateLoadBalancerNodePorts) && type !== "LoadBalancer") {
    errors.push(
      forbidden("spec.allocateLoadBalancerNodePorts", "may only be used when `type` is 'LoadBalancer'"),
    );
  }
  if (type === "LoadBalancer" && !isSet(spec.allocateLoadBalancerNodePorts)) {
    errors.push(required("allocateLoadBalancerNodePorts"));
  }

  const externallyAccessible =
    type === "LoadBalancer" ||
    type === "NodePort" ||
    (type === "ClusterIP" && arr(spec.externalIPs).length > 0);
  const externalPolicy = str(spec.externalTrafficPolicy);
  if (!externallyAccessible) {
    if (externalPolicy !== "") {
      errors.push(
        invalid(
          "spec.externalTrafficPolicy",
          externalPolicy,
          "may only be set for externally-accessible services",
        ),
      );
    }
  } else if (externalPolicy === "") errors.push(required("spec.externalTrafficPolicy"));
  else if (externalPolicy !== "Cluster" && externalPolicy !== "Local") {
    errors.push(notSupported("spec.externalTrafficPolicy", externalPolicy, ["Cluster", "Local"]));
  }
  const healthCheckNodePort = num(spec.healthCheckNodePort);
  const needsHealthCheck = type === "LoadBalancer" && externalPolicy === "Local";
  if (!needsHealthCheck && healthCheckNodePort !== 0) {
    errors.push(
      invalid(
        "spec.healthCheckNodePort",
        healthCheckNodePort,
        "may only be set when `type` is 'LoadBalancer' and `externalTrafficPolicy` is 'Local'",
      ),
    );
  }
  const internalPolicy = spec.internalTrafficPolicy;
  if (!isSet(internalPolicy)) {
    if (type === "NodePort" || type === "LoadBalancer" || type === "ClusterIP")
      errors.push(required("spec.internalTrafficPolicy"));
  } else if (internalPolicy !== "Cluster" && internalPolicy !== "Local") {
    errors.push(notSupported("spec.internalTrafficPolicy", str(internalPolicy), ["Cluster", "Local"]));
  }
  return errors;
}

/** ValidateServiceUpdate: the primary cluster IP, once allocated, stays (unless ExternalName is involved). */
export function validateServiceUpdate(service: KubeObject, old: KubeObject): FieldError[] {
  const errors = validateObjectMetaUpdate(service.metadata, old.metadata);
  const spec = obj(service.spec) ?? {};
  const oldSpec = obj(old.spec) ?? {};
  if (spec.type !== "ExternalName" && oldSpec.type !== "ExternalName") {
    const ips = arr(spec.clusterIPs);
    const oldIPs = arr(oldSpec.clusterIPs);
    if (ips.length > 0 && oldIPs.length > 0 && ips[0] !== oldIPs[0]) {
      errors.push(invalid("spec.clusterIPs[0]", str(ips[0]), "may not change once set"));
    }
  }
  errors.push(...validateService(service));
  return errors;
}
// #endregion service

// #region endpoints
/** ValidateNonSpecialIP: an endpoint must be reachable from other nodes. */
export function validateNonSpecialIP(ip: string, path: string): FieldError[] {
  const parsed = parseIPSloppy(ip);
  if (!parsed) return [invalid(path, ip, "must be a valid IP address")];
  const errors: FieldError[] = [];
  const lower = ip.toLowerCase();
  const [a, b, c] = parsed.bytes;
  const v4 = parsed.family === 4;
  if (v4 ? parsed.bytes.every((x) => x === 0) : /^[0:]+$/.test(lower)) {
    errors.push(invalid(path, ip, `may not be unspecified (${ip})`));
  }
  if (v4 ? a === 127 : /^[0:]*:0*1$/.test(lower)) {
    errors.push(invalid(path, ip, "may not be in the loopback range (127.0.0.0/8, ::1/128)"));
  }
  if (v4 ? a === 169 && b === 254 : /^fe[89ab]/.test(lower)) {
    errors.push(invalid(path, ip, "may not be in the link-local range (169.254.0.0/16, fe80::/10)"));
  }
  if (v4 ? a === 224 && b === 0 && c === 0 : /^ff02:/.test(lower)) {
    errors.push(invalid(path, ip, "may not be in the link-local multicast range (224.0.0.0/24, ff02::/10)"));
  }
  return errors;
}

/** One address of a subset: an IP other nodes can reach, and optional hostname and node name. */
function validateEndpointAddress(address: JSONObject, path: string): FieldError[] {
  const ip = str(address.ip);
  const errors = isValidIP(ip).map((m) => invalid(childPath(path, "ip"), ip, m));
  const hostname = str(address.hostname);
  if (hostname.length > 0)
    for (const m of isDNS1123Label(hostname)) errors.push(invalid(childPath(path, "hostname"), hostname, m));
  if (isSet(address.nodeName)) {
    const nodeName = str(address.nodeName);
    for (const m of nameIsDNSSubdomain(nodeName, false))
      errors.push(invalid(childPath(path, "nodeName"), nodeName, m));
  }
  errors.push(...validateNonSpecialIP(ip, childPath(path, "ip")));
  return errors;
}

/**
 * ValidateEndpoints: what the endpoints controller writes for a Service and kube-proxy reads —
 * each subset has addresses, and ports named whenever there are several (a Service port finds its
 * endpoint port by name).
 */
export function validateEndpoints(endpoints: KubeObject): FieldError[] {
  const errors = validateObjectMeta(endpoints.metadata, true, nameIsDNSSubdomain);
  arr(endpoints.subsets).forEach((entry, i) => {
    const subset = obj(entry) ?? {};
    const at = indexPath("subsets", i);
    const addresses = arr(subset.addresses);
    const notReady = arr(subset.notReadyAddresses);
    if (addresses.length === 0 && notReady.length === 0) {
      errors.push(required(at, "must specify `addresses` or `notReadyAddresses`"));
    }
    addresses.forEach((a, j) => {
      errors.push(...validateEndpointAddress(obj(a) ?? {}, indexPath(childPath(at, "addresses"), j)));
    });
    notReady.forEach((a, j) => {
      errors.push(...validateEndpointAddress(obj(a) ?? {}, indexPath(childPath(at, "notReadyAddresses"), j)));
    });
    const ports = arr(subset.ports);
    ports.forEach((p, j) => {
      const port = obj(p) ?? {};
      const portPath = indexPath(childPath(at, "ports"), j);
      const name = str(port.name);
      if (ports.length > 1 && name === "") errors.push(required(childPath(portPath, "name")));
      else if (name !== "")
        for (const m of isDNS1123Label(name)) errors.push(invalid(childPath(portPath, "name"), name, m));
      for (const m of isValidPortNum(num(port.port)))
        errors.push(invalid(childPath(portPath, "port"), num(port.port), m));
      const protocol = str(port.protocol);
      if (protocol === "") errors.push(required(childPath(portPath, "protocol")));
      else if (!SUPPORTED_PORT_PROTOCOLS.includes(protocol)) {
        errors.push(notSupported(childPath(portPath, "protocol"), protocol, SUPPORTED_PORT_PROTOCOLS));
      }
      if (isSet(port.appProtocol)) {
        const appProtocol = str(port.appProtocol);
        for (const m of isQualifiedName(appProtocol))
          errors.push(invalid(childPath(portPath, "appProtocol"), appProtocol, m));
      }
    });
  });
  return errors;
}

export function validateEndpointsUpdate(endpoints: KubeObject, old: KubeObject): FieldError[] {
  return [...validateObjectMetaUpdate(endpoints.metadata, old.metadata), ...validateEndpoints(endpoints)];
}
// #endregion endpoints

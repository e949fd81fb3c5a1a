/**
 * Defaulting — the values the API server fills in for fields a client left out, before
 * validation and before the object is stored.
 * Upstream: the SetDefaults_* functions in kubernetes' pkg/apis/{core,apps,scheduling}/v1/defaults.go
 * and the `+default=` markers on k8s.io/api's types.
 *
 * Solves:
 * - `kubectl run web --image=nginx` sends a pod with one container and nothing else; every
 *   later reader (scheduler, kubelet, `kubectl get -o yaml`) sees `restartPolicy: Always`,
 *   `schedulerName: default-scheduler`, `imagePullPolicy: Always`, probe periods … because the
 *   API server wrote them into the stored object, once, here;
 * - validation can then insist on those fields (`spec.restartPolicy: Required value`) and
 *   catch only what a client got wrong, never what it merely omitted.
 *
 * Invariants:
 * - defaulting only fills what is absent (or, as upstream, empty/zero); it never overwrites a
 *   value the client set — running it twice changes nothing the second time;
 * - it never fails: a field of the wrong JSON type is left alone for validation to report;
 * - only what upstream's defaulters do is done here. What upstream does elsewhere is NOT here:
 *   - registry strategies (PrepareForCreate): a pod's `status: {phase: Pending, qosClass}`,
 *     a namespace's `spec.finalizers: [kubernetes]` and its status reset to Active, a
 *     Deployment/ReplicaSet's cleared status and `generation: 1`, a Service's `clusterIP`,
 *     `clusterIPs`, `ipFamilies`, `ipFamilyPolicy` and node ports (allocated by its REST storage);
 *   - admission plugins: a pod's `priority` and `preemptionPolicy` (Priority),
 *     `serviceAccountName: default` (ServiceAccount), the not-ready/unreachable tolerations
 *     (DefaultTolerationSeconds).
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/defaults.go (SetDefaults_Pod, SetDefaults_PodSpec, SetDefaults_Container, SetDefaults_Probe, SetDefaults_HTTPGetAction, SetDefaults_Volume, SetDefaults_SecretVolumeSource, SetDefaults_ConfigMapVolumeSource, SetDefaults_Service, SetDefaults_Secret, SetDefaults_Endpoints, SetDefaults_Namespace, SetDefaults_NamespaceStatus, SetDefaults_NodeStatus, SetDefaults_ObjectFieldSelector, SetDefaults_ConfigMap)
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/zz_generated.defaults.go (SetObjectDefaults_Pod: container port protocol TCP, grpc service "")
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/core/v1/types.go (+default="TCP" on ContainerPort.Protocol and ServicePort.Protocol, +default="" on GRPCAction.Service)
 * @upstream kubernetes/kubernetes pkg/apis/apps/v1/defaults.go (SetDefaults_Deployment, SetDefaults_ReplicaSet)
 * @upstream kubernetes/kubernetes pkg/apis/scheduling/v1/defaults.go (SetDefaults_PriorityClass)
 * @upstream kubernetes/kubernetes pkg/apis/discovery/v1/defaults.go (SetDefaults_EndpointPort)
 * @upstream kubernetes/kubernetes pkg/util/parsers/parsers.go (ParseImageName: no tag means "latest")
 * @upstream kubernetes/kubernetes pkg/apis/core/v1/conversion.go (Convert_v1_Secret_To_core_Secret: stringData merged into data)
 * @chapter 02-apiserver
 */

import {
  setDefaultsMutatingWebhookConfiguration,
  setDefaultsValidatingWebhookConfiguration,
} from "./admissionregistration.ts";
import { arr, type JSONObject, obj } from "./json.ts";
import type { KubeObject } from "./meta.ts";
import { setDefaultsBinding } from "./rbac.ts";
// chapter 3: ValidatingAdmissionPolicy
import {
  setDefaultsValidatingAdmissionPolicy,
  setDefaultsValidatingAdmissionPolicyBinding,
} from "./validatingadmissionpolicy.ts";

/** Go's "zero value" test for the fields upstream defaults with `if x == ""` / `if x == 0` / `if x == nil`. */
function unset(value: unknown): boolean {
  return value === undefined || value === null || value === "" || value === 0;
}

/** Sets `o[key]` unless the client already gave it a (non-zero) value. */
function setIfUnset(o: JSONObject, key: string, value: unknown): void {
  if (unset(o[key])) o[key] = value;
}

/** The object at `o[key]`, created empty if absent — for nested defaults such as `spec.strategy`. */
function child(o: JSONObject, key: string): JSONObject | undefined {
  if (o[key] === undefined || o[key] === null) o[key] = {};
  return obj(o[key]);
}

// #region set-defaults
/**
 * setDefaults: fills in upstream's defaults for the object's kind, in place.
 * Kinds with no defaulters (Event, ServiceAccount, Lease, Binding, Scale, ConfigMap) are left
 * untouched.
 */
export function setDefaults(object: KubeObject): void {
  defaulters[`${object.apiVersion}/${object.kind}`]?.(object);
}

/**
 * The defaulters by `apiVersion/kind`. ConfigMap is absent on purpose: upstream's
 * SetDefaults_ConfigMap sets `data` to an empty map, which its JSON encoder then omits
 * (`omitempty`), so the stored and served JSON shows nothing — doing nothing is the faithful
 * equivalent for objects kept as JSON.
 */
const defaulters: Record<string, (object: KubeObject) => void> = {
  "v1/Pod": (o) => setDefaultsPod(o),
  "v1/Namespace": (o) => setDefaultsNamespace(o),
  "v1/Node": (o) => setDefaultsNode(o),
  "v1/Service": (o) => setDefaultsService(o),
  "v1/Endpoints": (o) => setDefaultsEndpoints(o),
  "discovery.k8s.io/v1/EndpointSlice": (o) => setDefaultsEndpointSlice(o),
  "v1/Secret": (o) => setDefaultsSecret(o),
  "apps/v1/Deployment": (o) => setDefaultsDeployment(o),
  "apps/v1/ReplicaSet": (o) => setDefaultsReplicaSet(o),
  "scheduling.k8s.io/v1/PriorityClass": (o) => setDefaultsPriorityClass(o),
  // chapter 3: RBAC
  "rbac.authorization.k8s.io/v1/RoleBinding": (o) => setDefaultsBinding(o),
  "rbac.authorization.k8s.io/v1/ClusterRoleBinding": (o) => setDefaultsBinding(o),
  // chapter 3: webhooks
  "admissionregistration.k8s.io/v1/MutatingWebhookConfiguration": (o) =>
    setDefaultsMutatingWebhookConfiguration(o),
  "admissionregistration.k8s.io/v1/ValidatingWebhookConfiguration": (o) =>
    setDefaultsValidatingWebhookConfiguration(o),
  // chapter 3: admission
  "v1/LimitRange": (o) => setDefaultsLimitRange(o),
  // chapter 3: ValidatingAdmissionPolicy
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicy": (o) => setDefaultsValidatingAdmissionPolicy(o),
  "admissionregistration.k8s.io/v1/ValidatingAdmissionPolicyBinding": (o) =>
    setDefaultsValidatingAdmissionPolicyBinding(o),
};
// #endregion set-defaults

// #region pod-defaults
/**
 * SetObjectDefaults_Pod: the pod-only defaults (requests from limits, `enableServiceLinks`,
 * host ports under hostNetwork), then everything a pod template also gets.
 */
export function setDefaultsPod(pod: KubeObject): void {
  // A pod sent with no `spec` (or `spec: null`) decodes upstream into the zero PodSpec, which
  // the defaulters then fill; without it here, every admission plugin met `spec` undefined and
  // the ServiceAccount plugin answered a 500 (found by testing/fuzz-secured.ts).
  const spec = child(pod as unknown as JSONObject, "spec");
  if (!spec) return;
  for (const container of [...arr(spec.containers), ...arr(spec.initContainers)]) {
    const resources = obj(obj(container)?.resources);
    const limits = obj(resources?.limits);
    // A container that states only limits is asking for exactly that much: its requests
    // become its limits, which is also what makes it Guaranteed QoS.
    if (resources && limits) {
      const requests = obj(resources.requests) ?? {};
      for (const [name, quantity] of Object.entries(limits))
        if (!(name in requests)) requests[name] = quantity;
      resources.requests = requests;
    }
  }
  if (spec.enableServiceLinks === undefined || spec.enableServiceLinks === null)
    spec.enableServiceLinks = true;
  if (spec.hostNetwork === true) {
    // With the host's network the container port IS a host port; say so explicitly.
    for (const container of [...arr(spec.containers), ...arr(spec.initContainers)]) {
      for (const port of arr(obj(container)?.ports)) {
        const p = obj(port);
        if (p && unset(p.hostPort)) p.hostPort = p.containerPort;
      }
    }
  }
  setDefaultsPodSpec(spec);
}

/**
 * SetDefaults_PodSpec plus the generated walk over volumes and containers: what a pod and a
 * pod template (in a Deployment or ReplicaSet) both get.
 */
export function setDefaultsPodSpec(spec: JSONObject): void {
  setIfUnset(spec, "dnsPolicy", "ClusterFirst");
  setIfUnset(spec, "restartPolicy", "Always");
  if (spec.securityContext === undefined || spec.securityContext === null) spec.securityContext = {};
  // `0` is a legitimate grace period ("kill at once"), so only an absent value is defaulted.
  if (spec.terminationGracePeriodSeconds === undefined || spec.terminationGracePeriodSeconds === null) {
    spec.terminationGracePeriodSeconds = 30;
  }
  setIfUnset(spec, "schedulerName", "default-scheduler");
  for (const volume of arr(spec.volumes)) {
    const v = obj(volume);
    if (v) setDefaultsVolume(v);
  }
  for (const list of [spec.initContainers, spec.containers, spec.ephemeralContainers]) {
    for (const container of arr(list)) {
      const c = obj(container);
      if (c) setDefaultsContainer(c);
    }
  }
}

/** The volume-source fields of core/v1 Volume: a volume with none of them becomes an emptyDir. */
const VOLUME_SOURCES = [
  "hostPath",
  "emptyDir",
  "gcePersistentDisk",
  "awsElasticBlockStore",
  "gitRepo",
  "secret",
  "nfs",
  "iscsi",
  "glusterfs",
  "persistentVolumeClaim",
  "rbd",
  "flexVolume",
  "cinder",
  "cephfs",
  "flocker",
  "downwardAPI",
  "fc",
  "azureFile",
  "configMap",
  "vsphereVolume",
  "quobyte",
  "azureDisk",
  "photonPersistentDisk",
  "projected",
  "portworxVolume",
  "scaleIO",
  "storageos",
  "csi",
  "ephemeral",
  "image",
];

/**
 * 0644 (420 in JSON): readable by everyone, writable by the owner — upstream's default mode for
 * the files of secret, configMap, downwardAPI and projected volumes.
 */
const DEFAULT_FILE_MODE = 0o644;

/** SetDefaults_Volume and its sources': no source at all means an emptyDir; file modes for the rest. */
export function setDefaultsVolume(volume: JSONObject): void {
  if (VOLUME_SOURCES.every((source) => volume[source] === undefined || volume[source] === null)) {
    volume.emptyDir = {};
  }
  for (const source of ["secret", "configMap", "downwardAPI", "projected"]) {
    const s = obj(volume[source]);
    if (s && (s.defaultMode === undefined || s.defaultMode === null)) s.defaultMode = DEFAULT_FILE_MODE;
  }
  for (const item of arr(obj(volume.downwardAPI)?.items)) {
    const fieldRef = obj(obj(item)?.fieldRef);
    if (fieldRef) setIfUnset(fieldRef, "apiVersion", "v1");
  }
  // HostPathUnset is the empty string: upstream writes `type: ""` rather than leaving it out.
  const hostPath = obj(volume.hostPath);
  if (hostPath && (hostPath.type === undefined || hostPath.type === null)) hostPath.type = "";
}

/** SetDefaults_Container plus the generated defaults of its ports, env and probes. */
export function setDefaultsContainer(container: JSONObject): void {
  if (unset(container.imagePullPolicy)) {
    // Only a moving tag needs a pull every time: `nginx` and `nginx:latest` may change under
    // the same name, `nginx:1.27` and a digest are assumed not to.
    const tag = imageTag(typeof container.image === "string" ? container.image : "");
    container.imagePullPolicy = tag === "latest" ? "Always" : "IfNotPresent";
  }
  setIfUnset(container, "terminationMessagePath", "/dev/termination-log");
  setIfUnset(container, "terminationMessagePolicy", "File");
  for (const port of arr(container.ports)) {
    const p = obj(port);
    if (p) setIfUnset(p, "protocol", "TCP");
  }
  for (const env of arr(container.env)) {
    const fieldRef = obj(obj(obj(env)?.valueFrom)?.fieldRef);
    if (fieldRef) setIfUnset(fieldRef, "apiVersion", "v1");
  }
  for (const probeName of ["livenessProbe", "readinessProbe", "startupProbe"]) {
    const probe = obj(container[probeName]);
    if (probe) setDefaultsProbe(probe);
  }
  const lifecycle = obj(container.lifecycle);
  for (const hook of ["postStart", "preStop"]) {
    const httpGet = obj(obj(lifecycle?.[hook])?.httpGet);
    if (httpGet) setDefaultsHTTPGetAction(httpGet);
  }
}

/** SetDefaults_Probe: probe every 10 s, 1 s timeout, 1 success to pass, 3 failures to fail. */
export function setDefaultsProbe(probe: JSONObject): void {
  setIfUnset(probe, "timeoutSeconds", 1);
  setIfUnset(probe, "periodSeconds", 10);
  setIfUnset(probe, "successThreshold", 1);
  setIfUnset(probe, "failureThreshold", 3);
  const httpGet = obj(probe.httpGet);
  if (httpGet) setDefaultsHTTPGetAction(httpGet);
  const grpc = obj(probe.grpc);
  if (grpc && (grpc.service === undefined || grpc.service === null)) grpc.service = "";
}

export function setDefaultsHTTPGetAction(action: JSONObject): void {
  setIfUnset(action, "path", "/");
  setIfUnset(action, "scheme", "HTTP");
}

// Image references as the container registry grammar (distribution/reference) spells them.
const DOMAIN_COMPONENT = "(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])";
const DOMAIN = `${DOMAIN_COMPONENT}(?:\\.${DOMAIN_COMPONENT})*(?::[0-9]+)?`;
const NAME_COMPONENT = "[a-z0-9]+(?:(?:[._]|__|-+)[a-z0-9]+)*";
const TAG = "[\\w][\\w.-]{0,127}";
const DIGEST = "[A-Za-z][A-Za-z0-9]*(?:[-_+.][A-Za-z][A-Za-z0-9]*)*:[0-9a-fA-F]{32,}";
const REFERENCE = new RegExp(
  `^(?:${DOMAIN}/)?${NAME_COMPONENT}(?:/${NAME_COMPONENT})*(?::(${TAG}))?(?:@(${DIGEST}))?$`,
);

/**
 * ParseImageName's tag: the explicit tag, "latest" when there is neither tag nor digest, ""
 * for a digest-only reference, and also "" for a reference that does not parse (upstream
 * ignores the parse error here and leaves it to the kubelet).
 */
export function imageTag(image: string): string {
  const match = REFERENCE.exec(image);
  if (!match) return "";
  const [, tag, digest] = match;
  if (tag) return tag;
  return digest ? "" : "latest";
}
// #endregion pod-defaults

// #region other-core-defaults
/**
 * SetDefaults_Namespace + SetDefaults_NamespaceStatus: the `kubernetes.io/metadata.name` label
 * (so a namespaceSelector can pick a namespace by name) and phase Active. The namespace strategy
 * also resets the status to Active on create and adds the `kubernetes` finalizer — that part
 * belongs to the registry, not here.
 */
export function setDefaultsNamespace(namespace: KubeObject): void {
  const name = namespace.metadata?.name;
  if (typeof name === "string" && name.length > 0) {
    namespace.metadata.labels = { ...(namespace.metadata.labels ?? {}), "kubernetes.io/metadata.name": name };
  }
  if (namespace.status === undefined || namespace.status === null) namespace.status = {};
  const status = obj(namespace.status);
  if (status) setIfUnset(status, "phase", "Active");
}

/** SetDefaults_NodeStatus: a node that reports only capacity can allocate all of it. */
export function setDefaultsNode(node: KubeObject): void {
  const status = obj(node.status);
  if (!status) return;
  const capacity = obj(status.capacity);
  if ((status.allocatable === undefined || status.allocatable === null) && capacity) {
    status.allocatable = { ...capacity };
  }
}

export function setDefaultsSecret(secret: KubeObject): void {
  setIfUnset(secret, "type", "Opaque");
  mergeSecretStringData(secret);
}

/**
 * Convert_v1_Secret_To_core_Secret's one trick: `stringData` (plain text, write-only) is merged
 * into `data` (base64), overwriting keys present in both, and never stored or returned.
 * Upstream does this while converting the request to its internal type, right after
 * defaulting; objects stay JSON here, so it runs as the last step of defaulting instead.
 */
export function mergeSecretStringData(secret: KubeObject): void {
  const stringData = obj(secret.stringData);
  if (stringData && Object.keys(stringData).length > 0) {
    const data = obj(secret.data) ?? {};
    for (const [key, value] of Object.entries(stringData)) {
      data[key] = Buffer.from(typeof value === "string" ? value : String(value), "utf8").toString("base64");
    }
    secret.data = data;
  }
  delete secret.stringData;
}

export function setDefaultsEndpoints(endpoints: KubeObject): void {
  for (const subset of arr(endpoints.subsets)) {
    for (const port of arr(obj(subset)?.ports)) {
      const p = obj(port);
      if (p) setIfUnset(p, "protocol", "TCP");
    }
  }
}

/** SetDefaults_EndpointPort: a slice's port has a name ("" when unnamed) and a protocol. */
export function setDefaultsEndpointSlice(slice: KubeObject): void {
  for (const port of arr(slice.ports)) {
    const p = obj(port);
    if (!p) continue;
    setIfUnset(p, "name", "");
    setIfUnset(p, "protocol", "TCP");
  }
}

/** v1.DefaultClientIPServiceAffinitySeconds: three hours of stickiness. */
const DEFAULT_CLIENT_IP_SERVICE_AFFINITY_SECONDS = 10800;

/** SetDefaults_Service, in upstream's order (the traffic policies depend on the defaulted type). */
export function setDefaultsService(service: KubeObject): void {
  const spec = obj(service.spec);
  if (!spec) return;
  setIfUnset(spec, "sessionAffinity", "None");
  if (spec.sessionAffinity === "None") delete spec.sessionAffinityConfig;
  if (spec.sessionAffinity === "ClientIP") {
    const timeout = obj(obj(spec.sessionAffinityConfig)?.clientIP)?.timeoutSeconds;
    if (timeout === undefined || timeout === null) {
      spec.sessionAffinityConfig = {
        clientIP: { timeoutSeconds: DEFAULT_CLIENT_IP_SERVICE_AFFINITY_SECONDS },
      };
    }
  }
  setIfUnset(spec, "type", "ClusterIP");
  for (const port of arr(spec.ports)) {
    const p = obj(port);
    if (!p) continue;
    setIfUnset(p, "protocol", "TCP");
    // targetPort 0 or "" means "the same number as port".
    if (unset(p.targetPort)) p.targetPort = p.port;
  }
  const type = spec.type;
  const externallyAccessible =
    type === "LoadBalancer" ||
    type === "NodePort" ||
    (type === "ClusterIP" && arr(spec.externalIPs).length > 0);
  if (externallyAccessible) setIfUnset(spec, "externalTrafficPolicy", "Cluster");
  if (
    (spec.internalTrafficPolicy === undefined || spec.internalTrafficPolicy === null) &&
    (type === "NodePort" || type === "LoadBalancer" || type === "ClusterIP")
  ) {
    spec.internalTrafficPolicy = "Cluster";
  }
  if (type === "LoadBalancer") {
    if (spec.allocateLoadBalancerNodePorts === undefined || spec.allocateLoadBalancerNodePorts === null) {
      spec.allocateLoadBalancerNodePorts = true;
    }
    for (const ingress of arr(obj(obj(service.status)?.loadBalancer)?.ingress)) {
      const i = obj(ingress);
      if (i && typeof i.ip === "string" && i.ip !== "" && (i.ipMode === undefined || i.ipMode === null)) {
        i.ipMode = "VIP";
      }
    }
  }
}
// #endregion other-core-defaults

// #region apps-defaults
/**
 * SetDefaults_Deployment: one replica, a rolling update that may go 25% over and 25% under the
 * desired count, ten old ReplicaSets kept for `kubectl rollout undo`, and ten minutes before
 * a stuck rollout is reported as not progressing. The pod template gets the pod-spec defaults.
 */
export function setDefaultsDeployment(deployment: KubeObject): void {
  const spec = obj(deployment.spec);
  if (!spec) return;
  if (spec.replicas === undefined || spec.replicas === null) spec.replicas = 1;
  const strategy = child(spec, "strategy");
  if (strategy) {
    setIfUnset(strategy, "type", "RollingUpdate");
    if (strategy.type === "RollingUpdate") {
      const rollingUpdate = child(strategy, "rollingUpdate");
      if (rollingUpdate) {
        // `0` is a meaningful value here (never go under / over), so only absence is defaulted.
        if (rollingUpdate.maxUnavailable === undefined || rollingUpdate.maxUnavailable === null) {
          rollingUpdate.maxUnavailable = "25%";
        }
        if (rollingUpdate.maxSurge === undefined || rollingUpdate.maxSurge === null)
          rollingUpdate.maxSurge = "25%";
      }
    }
  }
  if (spec.revisionHistoryLimit === undefined || spec.revisionHistoryLimit === null)
    spec.revisionHistoryLimit = 10;
  if (spec.progressDeadlineSeconds === undefined || spec.progressDeadlineSeconds === null) {
    spec.progressDeadlineSeconds = 600;
  }
  setDefaultsPodTemplate(spec.template);
}

/** SetDefaults_ReplicaSet: one replica; the pod template gets the pod-spec defaults. */
export function setDefaultsReplicaSet(replicaSet: KubeObject): void {
  const spec = obj(replicaSet.spec);
  if (!spec) return;
  if (spec.replicas === undefined || spec.replicas === null) spec.replicas = 1;
  setDefaultsPodTemplate(spec.template);
}

function setDefaultsPodTemplate(template: unknown): void {
  const spec = obj(obj(template)?.spec);
  if (spec) setDefaultsPodSpec(spec);
}
// #endregion apps-defaults

/** SetDefaults_PriorityClass: a higher-priority pod may evict lower ones unless told Never. */
export function setDefaultsPriorityClass(priorityClass: KubeObject): void {
  if (priorityClass.preemptionPolicy === undefined || priorityClass.preemptionPolicy === null) {
    priorityClass.preemptionPolicy = "PreemptLowerPriority";
  }
}

// chapter 3: admission
// #region limit-range-defaults
/**
 * SetDefaults_LimitRangeItem, for Container items: a missing default limit is the max, a
 * missing default request is the default limit, else the min — so LimitRanger's defaults
 * always lie inside the bounds it enforces. (Empty maps are omitted, as Go's omitempty.)
 */
export function setDefaultsLimitRange(limitRange: KubeObject): void {
  const limits = (
    limitRange.spec as { limits?: Record<string, Record<string, string> | string>[] } | undefined
  )?.limits;
  for (const item of limits ?? []) {
    if (item.type !== "Container") continue;
    const list = (k: string) => ({ ...((item[k] as Record<string, string> | undefined) ?? {}) });
    const [max, min, def, defReq] = [list("max"), list("min"), list("default"), list("defaultRequest")];
    for (const [k, v] of Object.entries(max)) if (!(k in def)) def[k] = v;
    for (const [k, v] of Object.entries(def)) if (!(k in defReq)) defReq[k] = v;
    for (const [k, v] of Object.entries(min)) if (!(k in defReq)) defReq[k] = v;
    if (Object.keys(def).length > 0) item.default = def;
    if (Object.keys(defReq).length > 0) item.defaultRequest = defReq;
  }
}
// #endregion limit-range-defaults

/**
 * Core kinds (group "", version v1) — Namespace, Pod, Node, Event, ConfigMap, Secret,
 * ServiceAccount, Service, Endpoints, Binding — as TypeScript views of their JSON.
 * Upstream: k8s.io/api's core/v1/types.go, the Go structs these views follow field for field.
 *
 * Solves:
 * - every component reads the same field names (`spec.nodeName`, `status.podIP`,
 *   `spec.containers[0].readinessProbe.periodSeconds`) with the compiler checking the spelling;
 * - the API server stores and serves the JSON a client sent, so these interfaces describe that
 *   JSON rather than being classes: an object read back from the store is still a plain
 *   `KubeObject`, and a field a client sent that we do not model here survives untouched.
 *
 * Invariants:
 * - field names, optionality and enum spellings are upstream's (v1.32); only the fields the
 *   course uses are declared, everything else passes through as unknown JSON;
 * - a field that upstream types as `*int32` / `*bool` is optional here: absent means "not set",
 *   which is what the defaulting in defaults.ts fills in;
 * - an `IntOrString` (a port, `maxSurge`) is `number | string`, exactly as it travels in JSON.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/core/v1/types.go (Namespace, Pod, PodSpec, Container, Probe, PodStatus, Node, Event, ConfigMap, Secret, ServiceAccount, Service, Endpoints, Binding)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/intstr/intstr.go (IntOrString)
 * @chapter 02-apiserver
 */

import type { LabelSelector } from "./labels.ts";
import type { KubeObject, ObjectMeta } from "./meta.ts";

/** `80` or `"http"`: a port number or a named port; `"25%"` for rollout limits. */
export type IntOrString = number | string;

/** Resource name (`cpu`, `memory`, `ephemeral-storage`, `example.com/gpu`) to a quantity string (`500m`, `1Gi`). */
export type ResourceList = Record<string, string>;

export interface ObjectReference {
  kind?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiVersion?: string;
  resourceVersion?: string;
  fieldPath?: string;
}

// #region namespace
export type NamespacePhase = "Active" | "Terminating";

export interface Namespace extends KubeObject {
  spec?: { finalizers?: string[] };
  status?: { phase?: NamespacePhase; conditions?: NamespaceCondition[] };
}

export interface NamespaceCondition {
  type: string;
  status: ConditionStatus;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}
// #endregion namespace

export type ConditionStatus = "True" | "False" | "Unknown";
export type Protocol = "TCP" | "UDP" | "SCTP";

// #region container
export interface ContainerPort {
  name?: string;
  hostPort?: number;
  containerPort: number;
  /** Defaulted to TCP. */
  protocol?: Protocol;
  hostIP?: string;
}

export interface ObjectFieldSelector {
  /** Defaulted to "v1". */
  apiVersion?: string;
  fieldPath: string;
}

export interface EnvVarSource {
  fieldRef?: ObjectFieldSelector;
  resourceFieldRef?: { containerName?: string; resource: string; divisor?: string };
  configMapKeyRef?: { name?: string; key: string; optional?: boolean };
  secretKeyRef?: { name?: string; key: string; optional?: boolean };
}

export interface EnvVar {
  name: string;
  value?: string;
  valueFrom?: EnvVarSource;
}

export interface EnvFromSource {
  prefix?: string;
  configMapRef?: { name?: string; optional?: boolean };
  secretRef?: { name?: string; optional?: boolean };
}

export interface ResourceRequirements {
  limits?: ResourceList;
  requests?: ResourceList;
}

export interface HTTPHeader {
  name: string;
  value: string;
}

export interface HTTPGetAction {
  /** Defaulted to "/". */
  path?: string;
  port: IntOrString;
  host?: string;
  /** Defaulted to HTTP. */
  scheme?: "HTTP" | "HTTPS";
  httpHeaders?: HTTPHeader[];
}

export interface TCPSocketAction {
  port: IntOrString;
  host?: string;
}

export interface ExecAction {
  command?: string[];
}

export interface GRPCAction {
  port: number;
  /** Defaulted to "" (the gRPC health protocol's "whole server"). */
  service?: string;
}

/** Exactly one of the four handlers; validation rejects zero or several. */
export interface ProbeHandler {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
  grpc?: GRPCAction;
}

export interface Probe extends ProbeHandler {
  initialDelaySeconds?: number;
  /** Defaulted to 1. */
  timeoutSeconds?: number;
  /** Defaulted to 10. */
  periodSeconds?: number;
  /** Defaulted to 1; must be 1 for liveness and startup probes. */
  successThreshold?: number;
  /** Defaulted to 3. */
  failureThreshold?: number;
  /** Per-probe override of the pod's grace period when this probe kills the container. */
  terminationGracePeriodSeconds?: number;
}

export interface LifecycleHandler {
  exec?: ExecAction;
  httpGet?: HTTPGetAction;
  tcpSocket?: TCPSocketAction;
  sleep?: { seconds: number };
}

export interface VolumeMount {
  name: string;
  mountPath: string;
  readOnly?: boolean;
  subPath?: string;
}

export type PullPolicy = "Always" | "IfNotPresent" | "Never";

export interface Container {
  name: string;
  image?: string;
  command?: string[];
  args?: string[];
  workingDir?: string;
  ports?: ContainerPort[];
  env?: EnvVar[];
  envFrom?: EnvFromSource[];
  resources?: ResourceRequirements;
  volumeMounts?: VolumeMount[];
  livenessProbe?: Probe;
  readinessProbe?: Probe;
  startupProbe?: Probe;
  lifecycle?: { postStart?: LifecycleHandler; preStop?: LifecycleHandler };
  /** Defaulted to /dev/termination-log. */
  terminationMessagePath?: string;
  /** Defaulted to File. */
  terminationMessagePolicy?: "File" | "FallbackToLogsOnError";
  /** Defaulted from the image tag: Always for `:latest` or no tag, IfNotPresent otherwise. */
  imagePullPolicy?: PullPolicy;
  /** Only on init containers: `Always` makes it a sidecar. */
  restartPolicy?: "Always";
  securityContext?: Record<string, unknown>;
  stdin?: boolean;
  tty?: boolean;
}
// #endregion container

// #region volume
export interface KeyToPath {
  key: string;
  path: string;
  mode?: number;
}

export interface Volume {
  name: string;
  emptyDir?: { medium?: string; sizeLimit?: string };
  /** `defaultMode` is defaulted to 0644 (420). */
  configMap?: { name?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  /** `defaultMode` is defaulted to 0644 (420). */
  secret?: { secretName?: string; items?: KeyToPath[]; defaultMode?: number; optional?: boolean };
  hostPath?: { path: string; type?: string };
  [source: string]: unknown;
}
// #endregion volume

// #region scheduling-constraints
export type TaintEffect = "NoSchedule" | "PreferNoSchedule" | "NoExecute";

export interface Toleration {
  key?: string;
  /** Empty means Equal. */
  operator?: "Exists" | "Equal";
  value?: string;
  /** Empty matches every effect. */
  effect?: TaintEffect;
  tolerationSeconds?: number;
}

export interface Taint {
  key: string;
  value?: string;
  effect: TaintEffect;
  timeAdded?: string;
}

export interface NodeSelectorRequirement {
  key: string;
  operator: "In" | "NotIn" | "Exists" | "DoesNotExist" | "Gt" | "Lt";
  values?: string[];
}

export interface NodeSelectorTerm {
  matchExpressions?: NodeSelectorRequirement[];
  matchFields?: NodeSelectorRequirement[];
}

export interface PodAffinityTerm {
  labelSelector?: LabelSelector;
  namespaces?: string[];
  namespaceSelector?: LabelSelector;
  topologyKey: string;
  matchLabelKeys?: string[];
  mismatchLabelKeys?: string[];
}

export interface WeightedPodAffinityTerm {
  weight: number;
  podAffinityTerm: PodAffinityTerm;
}

// topologySpreadConstraints (chapter 5, PodTopologySpread)
export type UnsatisfiableConstraintAction = "DoNotSchedule" | "ScheduleAnyway";
/** Honor: only nodes that pass the policy count as domains; Ignore: every node counts. */
export type NodeInclusionPolicy = "Honor" | "Ignore";

/** How far apart the counts of matching pods in the domains of `topologyKey` may drift. */
export interface TopologySpreadConstraint {
  maxSkew: number;
  topologyKey: string;
  whenUnsatisfiable: UnsatisfiableConstraintAction;
  labelSelector?: LabelSelector;
  /** With fewer eligible domains than this, the global minimum counts as 0. */
  minDomains?: number;
  /** Defaulted (by the scheduler) to Honor. */
  nodeAffinityPolicy?: NodeInclusionPolicy;
  /** Defaulted (by the scheduler) to Ignore. */
  nodeTaintsPolicy?: NodeInclusionPolicy;
  /** Keys whose values are taken from the incoming pod's labels and ANDed into the selector. */
  matchLabelKeys?: string[];
}

export interface Affinity {
  nodeAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: { nodeSelectorTerms: NodeSelectorTerm[] };
    preferredDuringSchedulingIgnoredDuringExecution?: { weight: number; preference: NodeSelectorTerm }[];
  };
  podAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
    preferredDuringSchedulingIgnoredDuringExecution?: WeightedPodAffinityTerm[];
  };
  podAntiAffinity?: {
    requiredDuringSchedulingIgnoredDuringExecution?: PodAffinityTerm[];
    preferredDuringSchedulingIgnoredDuringExecution?: WeightedPodAffinityTerm[];
  };
}
// #endregion scheduling-constraints

// #region pod
export type RestartPolicy = "Always" | "OnFailure" | "Never";
export type DNSPolicy = "ClusterFirstWithHostNet" | "ClusterFirst" | "Default" | "None";
export type PreemptionPolicy = "PreemptLowerPriority" | "Never";

export interface PodSpec {
  volumes?: Volume[];
  initContainers?: Container[];
  containers: Container[];
  /** Defaulted to Always. */
  restartPolicy?: RestartPolicy;
  /** Defaulted to 30. */
  terminationGracePeriodSeconds?: number;
  activeDeadlineSeconds?: number;
  /** Defaulted to ClusterFirst. */
  dnsPolicy?: DNSPolicy;
  nodeSelector?: Record<string, string>;
  serviceAccountName?: string;
  /** Set by the scheduler through the binding subresource; the kubelet of that node runs the pod. */
  nodeName?: string;
  hostNetwork?: boolean;
  /** Defaulted to {}. */
  securityContext?: Record<string, unknown>;
  hostname?: string;
  subdomain?: string;
  affinity?: Affinity;
  topologySpreadConstraints?: TopologySpreadConstraint[];
  /** Defaulted to default-scheduler: the scheduler only picks up pods that name it. */
  schedulerName?: string;
  tolerations?: Toleration[];
  /** Filled from `priorityClassName` by the Priority admission plugin, not by defaulting. */
  priorityClassName?: string;
  priority?: number;
  preemptionPolicy?: PreemptionPolicy;
  /** Defaulted to true (on Pods only, not on pod templates). */
  enableServiceLinks?: boolean;
  /** While any gate remains the scheduler leaves the pod alone; gates may only be removed. */
  schedulingGates?: { name: string }[];
  /** Extra conditions (set by other controllers) that must be True for the pod to be Ready. */
  readinessGates?: { conditionType: string }[];
  ephemeralContainers?: Container[];
}

export type PodPhase = "Pending" | "Running" | "Succeeded" | "Failed" | "Unknown";

export interface PodCondition {
  type: "PodScheduled" | "Ready" | "Initialized" | "ContainersReady" | "PodReadyToStartContainers" | string;
  status: ConditionStatus;
  lastProbeTime?: string | null;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface ContainerState {
  waiting?: { reason?: string; message?: string };
  running?: { startedAt?: string };
  terminated?: {
    exitCode: number;
    signal?: number;
    reason?: string;
    message?: string;
    startedAt?: string;
    finishedAt?: string;
    containerID?: string;
  };
}

export interface ContainerStatus {
  name: string;
  state?: ContainerState;
  lastState?: ContainerState;
  ready: boolean;
  restartCount: number;
  image: string;
  imageID: string;
  containerID?: string;
  started?: boolean;
}

export interface PodStatus {
  phase?: PodPhase;
  conditions?: PodCondition[];
  message?: string;
  reason?: string;
  nominatedNodeName?: string;
  hostIP?: string;
  hostIPs?: { ip: string }[];
  podIP?: string;
  podIPs?: { ip: string }[];
  startTime?: string;
  initContainerStatuses?: ContainerStatus[];
  containerStatuses?: ContainerStatus[];
  qosClass?: "Guaranteed" | "Burstable" | "BestEffort";
}

export interface Pod extends KubeObject {
  spec: PodSpec;
  status?: PodStatus;
}

/** The pod part of a ReplicaSet or Deployment: metadata (labels) and spec, no status. */
export interface PodTemplateSpec {
  metadata?: ObjectMeta;
  spec: PodSpec;
}

/** POSTed to pods/<name>/binding by the scheduler: "run this pod on that node". */
export interface Binding extends KubeObject {
  target: ObjectReference;
}
// #endregion pod

// #region node
export interface NodeCondition {
  type: "Ready" | "MemoryPressure" | "DiskPressure" | "PIDPressure" | "NetworkUnavailable" | string;
  status: ConditionStatus;
  lastHeartbeatTime?: string;
  lastTransitionTime?: string;
  reason?: string;
  message?: string;
}

export interface NodeAddress {
  type: "Hostname" | "InternalIP" | "ExternalIP" | "InternalDNS" | "ExternalDNS";
  address: string;
}

export interface NodeSystemInfo {
  machineID: string;
  systemUUID: string;
  bootID: string;
  kernelVersion: string;
  osImage: string;
  containerRuntimeVersion: string;
  kubeletVersion: string;
  kubeProxyVersion: string;
  operatingSystem: string;
  architecture: string;
}

export interface NodeSpec {
  podCIDR?: string;
  podCIDRs?: string[];
  providerID?: string;
  unschedulable?: boolean;
  taints?: Taint[];
}

export interface NodeStatus {
  capacity?: ResourceList;
  /** Defaulted to a copy of `capacity` when absent. */
  allocatable?: ResourceList;
  conditions?: NodeCondition[];
  addresses?: NodeAddress[];
  daemonEndpoints?: { kubeletEndpoint?: { Port: number } };
  nodeInfo?: NodeSystemInfo;
  // scheduler (chapter 5): the images the kubelet reports, for the cache's ImageStates.
  images?: ContainerImage[];
}

/** An image on a node: its names (tags, digests) and size; read by ImageLocality. */
export interface ContainerImage {
  names?: string[];
  sizeBytes?: number;
}

export interface Node extends KubeObject {
  spec?: NodeSpec;
  status?: NodeStatus;
}
// #endregion node

// #region event
export interface Event extends KubeObject {
  involvedObject: ObjectReference;
  reason?: string;
  message?: string;
  source?: { component?: string; host?: string };
  firstTimestamp?: string | null;
  lastTimestamp?: string | null;
  count?: number;
  /** Normal or Warning. */
  type?: string;
  eventTime?: string | null;
  reportingComponent?: string;
  reportingInstance?: string;
  action?: string;
}
// #endregion event

// #region config
export interface ConfigMap extends KubeObject {
  data?: Record<string, string>;
  /** Values are base64 in JSON. */
  binaryData?: Record<string, string>;
  immutable?: boolean;
}

export interface Secret extends KubeObject {
  /** Values are base64 in JSON. */
  data?: Record<string, string>;
  /** Write-only convenience: merged into `data` by the API server, never returned. */
  stringData?: Record<string, string>;
  /** Defaulted to Opaque. */
  type?: string;
  immutable?: boolean;
}

export interface ServiceAccount extends KubeObject {
  secrets?: ObjectReference[];
  imagePullSecrets?: { name?: string }[];
  automountServiceAccountToken?: boolean;
}
// #endregion config

// #region service
export type ServiceType = "ClusterIP" | "NodePort" | "LoadBalancer" | "ExternalName";

export interface ServicePort {
  name?: string;
  /** Defaulted to TCP. */
  protocol?: Protocol;
  appProtocol?: string;
  port: number;
  /** Defaulted to `port`. */
  targetPort?: IntOrString;
  nodePort?: number;
}

export interface ServiceSpec {
  ports?: ServicePort[];
  selector?: Record<string, string>;
  /** Allocated by the service registry (not by defaulting) unless "None" (headless). */
  clusterIP?: string;
  clusterIPs?: string[];
  /** Defaulted to ClusterIP. */
  type?: ServiceType;
  externalIPs?: string[];
  /** Defaulted to None. */
  sessionAffinity?: "None" | "ClientIP";
  sessionAffinityConfig?: { clientIP?: { timeoutSeconds?: number } };
  externalName?: string;
  externalTrafficPolicy?: "Cluster" | "Local";
  /** Endpoints list every selected pod as ready, ready or not (for peer discovery before readiness). */
  publishNotReadyAddresses?: boolean;
  internalTrafficPolicy?: "Cluster" | "Local";
  ipFamilies?: ("IPv4" | "IPv6")[];
  ipFamilyPolicy?: "SingleStack" | "PreferDualStack" | "RequireDualStack";
  allocateLoadBalancerNodePorts?: boolean;
}

export interface Service extends KubeObject {
  spec?: ServiceSpec;
  status?: { loadBalancer?: { ingress?: { ip?: string; hostname?: string; ipMode?: string }[] } };
}

export interface EndpointAddress {
  ip: string;
  hostname?: string;
  nodeName?: string;
  targetRef?: ObjectReference;
}

export interface EndpointPort {
  name?: string;
  port: number;
  /** Defaulted to TCP. */
  protocol?: Protocol;
  appProtocol?: string;
}

export interface EndpointSubset {
  addresses?: EndpointAddress[];
  notReadyAddresses?: EndpointAddress[];
  ports?: EndpointPort[];
}

export interface Endpoints extends KubeObject {
  subsets?: EndpointSubset[];
}
// #endregion service

// chapter 3: admission — the objects LimitRanger and ResourceQuota read.
// #region limit-range
export type LimitType = "Container" | "Pod" | "PersistentVolumeClaim";

export interface LimitRangeItem {
  type: LimitType;
  max?: ResourceList;
  min?: ResourceList;
  /** The limit a container gets when it states none (Container only). */
  default?: ResourceList;
  /** The request a container gets when it states none (Container only). */
  defaultRequest?: ResourceList;
  maxLimitRequestRatio?: ResourceList;
}

export interface LimitRange extends KubeObject {
  spec?: { limits?: LimitRangeItem[] };
}
// #endregion limit-range

// #region resource-quota
export interface ResourceQuota extends KubeObject {
  spec?: { hard?: ResourceList; scopes?: string[]; scopeSelector?: unknown };
  /** `hard` as enforced and `used` as charged; written by quota admission and the quota controller. */
  status?: { hard?: ResourceList; used?: ResourceList };
}
// #endregion resource-quota

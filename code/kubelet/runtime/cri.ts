/**
 * CRI — the Container Runtime Interface: the two services the kubelet calls to run pods, with the
 * messages and states of the CRI's protobuf API.
 * Mirrors kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/apis/services.go.
 *
 * Solves:
 * - the kubelet must not care whether containers are containerd tasks, CRI-O processes, our child
 *   processes or timers in a simulation; it speaks only this interface, so a runtime is swappable.
 * - a pod is more than its containers (network namespace, IP, shared lifetime): the CRI models it as
 *   a *pod sandbox* that is run first and that containers are created into.
 *
 * Invariants (the contract every implementation keeps, from api.proto's comments):
 * - a container moves CREATED → RUNNING → EXITED, and only forward; StartContainer on anything but
 *   CREATED fails.
 * - StopContainer and StopPodSandbox succeed on something already stopped; RemoveContainer,
 *   RemovePodSandbox and RemoveImage succeed on something already removed (they are idempotent).
 * - StopContainer returns once the container has exited: SIGTERM, wait up to `timeout` seconds,
 *   then SIGKILL. StopPodSandbox and RemovePodSandbox force-stop the sandbox's containers.
 * - any other call with an id that names nothing gives an error with gRPC code NotFound (see cri-errors.ts), which the
 *   kubelet tests with `crierrors.IsNotFound`.
 * - times are nanoseconds since the Unix epoch; 0 means "not yet".
 *
 * Shape: upstream's Go interfaces take a context first; ours are async methods without one. The
 * kubelet's labels (io.kubernetes.pod.name, …) are plain labels here: the runtime stores and
 * filters them but does not interpret them.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/apis/services.go (RuntimeService, ContainerManager, PodSandboxManager, ImageManagerService)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/cri-api/pkg/apis/runtime/v1/api.proto (PodSandboxConfig, ContainerConfig, ContainerStatus, ContainerState, PodSandboxState, ContainerFilter, PodSandboxFilter, ExecSyncResponse, Image)
 * @upstream kubernetes/kubernetes pkg/kubelet/types/labels.go (KubernetesPodNameLabel, KubernetesPodNamespaceLabel, KubernetesPodUIDLabel, KubernetesContainerNameLabel)
 * @chapter 07-kubelet
 */

// #region states
export type ContainerState =
  | "CONTAINER_CREATED"
  | "CONTAINER_RUNNING"
  | "CONTAINER_EXITED"
  | "CONTAINER_UNKNOWN";
export type PodSandboxState = "SANDBOX_READY" | "SANDBOX_NOTREADY";
// #endregion states

/** The labels the kubelet puts on every sandbox and container, so that it can list "its" pods back. */
export const KubernetesPodNameLabel = "io.kubernetes.pod.name";
export const KubernetesPodNamespaceLabel = "io.kubernetes.pod.namespace";
export const KubernetesPodUIDLabel = "io.kubernetes.pod.uid";
export const KubernetesContainerNameLabel = "io.kubernetes.container.name";

// #region sandbox
export interface PodSandboxMetadata {
  name: string;
  uid: string;
  namespace: string;
  /** How many times the kubelet has made a sandbox for this pod before (0 the first time). */
  attempt: number;
}

export interface PortMapping {
  protocol: "TCP" | "UDP" | "SCTP";
  containerPort: number;
  /** A port on the node forwarded to containerPort (pod.spec.containers[].ports[].hostPort). */
  hostPort?: number;
  hostIp?: string;
}

export interface PodSandboxConfig {
  metadata: PodSandboxMetadata;
  hostname?: string;
  /** Where the pod's container logs go: the kubelet's /var/log/pods/<ns>_<name>_<uid>. */
  logDirectory?: string;
  /** Every containerPort of the pod's containers, as the kubelet collects them. */
  portMappings?: PortMapping[];
  labels?: Record<string, string>;
  annotations?: Record<string, string>;
  /** The node's network (hostNetwork: true) rather than one of the pod's own. */
  hostNetwork?: boolean;
}

export interface PodSandbox {
  id: string;
  metadata: PodSandboxMetadata;
  state: PodSandboxState;
  createdAt: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
  runtimeHandler: string;
}

export interface PodSandboxStatus extends PodSandbox {
  /** The pod's IP, which the kubelet reports as status.podIP. */
  network: { ip: string };
}

export interface PodSandboxFilter {
  id?: string;
  state?: PodSandboxState;
  /** Every pair must match (equality only, as in the CRI). */
  labelSelector?: Record<string, string>;
}
// #endregion sandbox

// #region container
export interface ContainerMetadata {
  name: string;
  /** The restart count: the kubelet creates attempt N+1 when attempt N has exited. */
  attempt: number;
}

export interface ImageSpec {
  image: string;
}

export interface ContainerConfig {
  metadata: ContainerMetadata;
  image: ImageSpec;
  command?: string[];
  args?: string[];
  envs?: { key: string; value: string }[];
  workingDir?: string;
  labels?: Record<string, string>;
  /** The kubelet keeps its own state here: io.kubernetes.container.hash, .restartCount, … */
  annotations?: Record<string, string>;
  /** Relative to the sandbox's logDirectory: `<container>/<restartCount>.log`. */
  logPath?: string;
  stdin?: boolean;
  tty?: boolean;
  /** From resources.limits (LinuxContainerResources); the runtime enforces what it can. */
  linux?: { resources?: { memoryLimitInBytes?: number; cpuQuota?: number; cpuPeriod?: number } };
}

export interface Container {
  id: string;
  podSandboxId: string;
  metadata: ContainerMetadata;
  image: ImageSpec;
  /** What the image name resolved to when it was pulled (a digest in a real runtime). */
  imageRef: string;
  state: ContainerState;
  createdAt: number;
  labels: Record<string, string>;
  annotations: Record<string, string>;
}

export interface ContainerStatus extends Container {
  startedAt: number;
  finishedAt: number;
  exitCode: number;
  /** Why it exited: "Completed" (code 0), "Error", "OOMKilled" — what kubectl shows as the reason. */
  reason: string;
  message: string;
  logPath: string;
}

export interface ContainerFilter {
  id?: string;
  state?: ContainerState;
  podSandboxId?: string;
  labelSelector?: Record<string, string>;
}

export interface ExecSyncResult {
  stdout: string;
  stderr: string;
}
// #endregion container

// #region images
export interface Image {
  id: string;
  repoTags: string[];
  size: number;
}

export interface ImageFilter {
  image?: ImageSpec;
}
// #endregion images

// #region services
/** The containers and sandboxes half of the CRI (services.go: ContainerManager + PodSandboxManager). */
export interface RuntimeService {
  /** Creates and starts a sandbox; it is READY when this returns. */
  RunPodSandbox(config: PodSandboxConfig, runtimeHandler?: string): Promise<string>;
  /** Force-stops the sandbox's containers and marks it NOTREADY. Idempotent. */
  StopPodSandbox(podSandboxId: string): Promise<void>;
  /** Force-removes the sandbox and its containers. Idempotent. */
  RemovePodSandbox(podSandboxId: string): Promise<void>;
  PodSandboxStatus(podSandboxId: string): Promise<PodSandboxStatus>;
  ListPodSandbox(filter?: PodSandboxFilter): Promise<PodSandbox[]>;

  CreateContainer(
    podSandboxId: string,
    config: ContainerConfig,
    sandboxConfig: PodSandboxConfig,
  ): Promise<string>;
  StartContainer(containerId: string): Promise<void>;
  /** SIGTERM, up to `timeout` seconds' grace, then SIGKILL; resolves when the container has exited. */
  StopContainer(containerId: string, timeout: number): Promise<void>;
  /** Removes the container, force-stopping it if it runs. Idempotent. */
  RemoveContainer(containerId: string): Promise<void>;
  ListContainers(filter?: ContainerFilter): Promise<Container[]>;
  ContainerStatus(containerId: string): Promise<ContainerStatus>;
  /**
   * Runs `cmd` in the container and waits for it (exec probes use this). A non-zero exit rejects
   * with a CodeExitError, as the kubelet's remote runtime client turns ExecSyncResponse.exit_code
   * into one.
   */
  ExecSync(containerId: string, cmd: string[], timeoutMs: number): Promise<ExecSyncResult>;
}

/** The images half of the CRI (services.go: ImageManagerService). */
export interface ImageManagerService {
  ListImages(filter?: ImageFilter): Promise<Image[]>;
  /** The image, or null if it is not present (not an error: that is how the kubelet asks "pulled?"). */
  ImageStatus(image: ImageSpec): Promise<Image | null>;
  /** Pulls the image and returns its ref (the id the runtime knows it by). */
  PullImage(image: ImageSpec, sandboxConfig?: PodSandboxConfig): Promise<string>;
  /** Idempotent. */
  RemoveImage(image: ImageSpec): Promise<void>;
}
// #endregion services

// #region streaming
/**
 * What `kubectl exec` needs of a runtime. Upstream's CRI `Exec` returns the URL of the runtime's
 * streaming server, which the kubelet redirects or proxies to; ours hands the kubelet the streams
 * directly (the kubelet serves them over its own WebSocket endpoint).
 */
export interface ExecRequest {
  containerId: string;
  cmd: string[];
  tty: boolean;
  stdin: boolean;
}

export interface ExecProcess {
  stdin: NodeJS.WritableStream | null;
  stdout: NodeJS.ReadableStream;
  /** null with a TTY: stderr is merged into stdout, as a terminal does. */
  stderr: NodeJS.ReadableStream | null;
  /** A terminal size change (kubectl's resize channel); a no-op without a TTY. */
  resize(width: number, height: number): void;
  /** The command's exit code once it has ended. */
  exited: Promise<number>;
  kill(): void;
}

/** A runtime that can run interactive commands in a container (the process runtime; not the fake). */
export interface StreamingRuntime {
  Exec(req: ExecRequest): Promise<ExecProcess>;
}
// #endregion streaming

/** True if every pair of `selector` is in `labels` — the CRI's label_selector is equality only. */
export function matchesLabels(
  selector: Record<string, string> | undefined,
  labels: Record<string, string>,
): boolean {
  if (!selector) return true;
  return Object.entries(selector).every(([k, v]) => labels[k] === v);
}

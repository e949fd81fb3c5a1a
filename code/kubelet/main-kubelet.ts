/**
 * startMainKubelet — one whole kubelet from its parts: the runtime manager over a CRI runtime, the
 * probe results shared between the prober and the runtime manager, the sync loop, node
 * registration and status, the node Lease, and the kubelet's HTTPS server.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kubelet.go (NewMainKubelet, Run) and cmd/kubelet/app/server.go (RunKubelet).
 *
 * Solves:
 * - code/cmd/kubelet.ts (one kubelet per process, on the process runtime) and the benchmarks (a
 *   hundred kubelets in one process, on the fake runtime) build the same kubelet the same way;
 * - the pieces that must share state are wired once: the liveness and startup results managers
 *   are read by the runtime manager (a failed liveness probe kills the container) and written by
 *   the probe workers; the reason cache is written by syncs and read by the status generator;
 * - `kubectl logs` and `exec` reach the right file and process: the server's `findContainer`
 *   answers from the kubelet's own view of the pod (its status manager), as upstream's
 *   validateContainerLogStatus does, and asks the runtime where that container's log is.
 *
 * Invariants:
 * - `stop()` stops everything this started (loops, timers, listeners) and nothing else: the
 *   containers keep running, as when a real kubelet stops, so a new kubelet can adopt them.
 * - the Node is registered by the status loop's first period, before any status or Lease write.
 *
 * What upstream does differently: NewMainKubelet also builds the volume, image-GC, eviction,
 * cgroup, CSI, device and certificate managers; none exist here.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet.go (NewMainKubelet, Run)
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (validateContainerLogStatus, GetKubeletContainerLogs)
 * @upstream kubernetes/kubernetes cmd/kubelet/app/server.go (RunKubelet, startKubelet)
 * @chapter 07-kubelet
 */

import { isAbsolute, join } from "node:path";
import type { ResourceList, Taint } from "../api/core.ts";
import type { Clientset } from "../client/kubernetes/clientset.ts";
import { type Clock, realClock } from "../client/util/clock.ts";
import { newEventRecorder } from "../controllers/event-recorder.ts";
import type { ComponentTracerProvider } from "../tracing/provider.ts";
import { parseContainerID } from "./container/runtime.ts";
import { Kubelet } from "./kubelet.ts";
import {
  type NodeStatusOptions,
  type NodeStatusUpdater,
  startNodeStatusUpdater,
} from "./kubelet-node-status.ts";
import { generateAPIPodStatus } from "./kubelet-pods.ts";
import { KubeGenericRuntimeManager } from "./kuberuntime/kuberuntime-manager.ts";
import { type NodeLeaseController, startNodeLeaseController } from "./nodelease/controller.ts";
import type { EvictionThreshold, MachineInfo } from "./nodestatus/setters.ts";
import { podFullName } from "./pod/pod-manager.ts";
import type { Dial } from "./prober/probe/probe.ts";
import { ResultsManager } from "./prober/results/results-manager.ts";
import type { ImageManagerService, RuntimeService, StreamingRuntime } from "./runtime/cri.ts";
import { CodeExitError } from "./runtime/cri-errors.ts";
import { tracedImageService, tracedRuntimeService } from "./runtime/traced-cri.ts";
import { newSubjectAccessReviewAuthorizer } from "./server/auth.ts";
import { type ContainerLocation, type KubeletServer, startKubeletServer } from "./server/server.ts";
import { ReasonCache } from "./util/reason-cache.ts";

/** The CRI runtime a kubelet runs on, and what it offers beyond the CRI. */
export interface KubeletRuntime {
  /** The prefix of container IDs: `process://…`, `fake://…`. */
  name: string;
  /** The node's containerRuntimeVersion shows `<name>://<version>`. */
  version?: string;
  runtimeService: RuntimeService;
  imageService: ImageManagerService;
  /** kubectl exec; absent: exec is refused. */
  streaming?: StreamingRuntime;
  /** Where a pod's address really is on this machine; absent: pod addresses are used as they are. */
  dial?: Dial;
  /** Stops watching the runtime (its containers keep running). */
  close?(): void;
}

export interface MainKubeletOptions {
  nodeName: string;
  hostname: string;
  client: Clientset;
  runtime: KubeletRuntime;
  /** --root-dir: container logs go to <rootDir>/pods-logs (upstream: /var/log/pods). */
  rootDir: string;
  clock?: Clock;
  machine: MachineInfo;
  nodeIP: string;
  nodeLabels?: Record<string, string>;
  registerWithTaints?: Taint[];
  registerNode?: boolean;
  podCIDR?: string;
  kubeReserved?: ResourceList;
  systemReserved?: ResourceList;
  evictionHard?: EvictionThreshold[];
  nodeStatus?: Partial<NodeStatusOptions>;
  staticPodPath?: string;
  syncFrequencyMs?: number;
  fileCheckFrequencyMs?: number;
  /** The kubelet server; absent: none (a simulated kubelet), and daemonEndpoints names port 0. */
  server?: {
    address: string;
    /** 0 picks a free port. */
    port: number;
    clientCA: string;
    tls?: { cert: string; key: string };
    certDir?: string;
  };
  log?: (line: string) => void;
  /** chapter 8: KubeletConfiguration `tracing`'s provider (absent: no tracing). */
  tracerProvider?: ComponentTracerProvider;
}

export interface MainKubelet {
  kubelet: Kubelet;
  server?: KubeletServer;
  nodeStatus: NodeStatusUpdater;
  nodeLease: NodeLeaseController;
  stop(): Promise<void>;
}

// #region new-main-kubelet
export async function startMainKubelet(o: MainKubeletOptions): Promise<MainKubelet> {
  const clock = o.clock ?? realClock;
  const log = o.log ?? (() => {});
  const { runtime } = o;
  const recorder = newEventRecorder(
    o.client,
    "kubelet",
    { group: "", version: "v1", kind: "Pod" },
    { clock, host: o.nodeName },
  );
  const nodeRecorder = newEventRecorder(
    o.client,
    "kubelet",
    { group: "", version: "v1", kind: "Node" },
    { clock, host: o.nodeName },
  );
  // Written by the probe workers, read by the runtime manager (kill on liveness/startup failure).
  const livenessManager = new ResultsManager();
  const readinessManager = new ResultsManager();
  const startupManager = new ResultsManager();
  const reasonCache = new ReasonCache();
  const podLogsRootDirectory = join(o.rootDir, "pods-logs");
  // chapter 8: with tracing on, the CRI calls are spans (upstream: otelgrpc on the CRI client).
  const traced = o.tracerProvider?.recording === true;
  const runtimeManager = new KubeGenericRuntimeManager({
    runtimeService: traced ? tracedRuntimeService(runtime.runtimeService) : runtime.runtimeService,
    imageService: traced ? tracedImageService(runtime.imageService) : runtime.imageService,
    clock,
    recorder,
    podLogsRootDirectory,
    livenessManager,
    startupManager,
    podNetworkResolve: runtime.dial
      ? (ip, port) => runtime.dial?.(ip, port) ?? { host: ip, port }
      : undefined,
    runtimeName: runtime.name,
  });
  const kubelet = new Kubelet({
    nodeName: o.nodeName,
    clientset: o.client,
    runtime: runtimeManager,
    clock,
    recorder,
    rootDir: o.rootDir,
    podManifestPath: o.staticPodPath || undefined,
    // The concrete cache, not the loop's narrower view of it: the generator reads reasons back.
    generateAPIPodStatus: (pod, podStatus, podIsTerminal, deps) =>
      generateAPIPodStatus(pod, podStatus, podIsTerminal, { ...deps, reasonCache }),
    reasonCache: {
      update: (uid, result) => reasonCache.update(uid, result),
      remove: (uid) => reasonCache.removePod(uid),
    },
    nodeIPs: [o.nodeIP],
    execSync: (containerID) => async (cmd, timeoutMs) => {
      // The CRI client turns a non-zero exit into a CodeExitError; the exec prober wants the code.
      try {
        const out = await runtime.runtimeService.ExecSync(parseContainerID(containerID).id, cmd, timeoutMs);
        return { exitCode: 0, ...out };
      } catch (err) {
        if (err instanceof CodeExitError)
          return { exitCode: err.exitCode, stdout: err.stdout, stderr: err.stderr };
        throw err;
      }
    },
    dial: runtime.dial,
    livenessManager,
    readinessManager,
    startupManager,
    syncFrequencyMs: o.syncFrequencyMs,
    fileCheckFrequencyMs: o.fileCheckFrequencyMs,
    tracerProvider: o.tracerProvider, // chapter 8
    onError: (err) => log(`E ${JSON.stringify(err instanceof Error ? err.message : String(err))}`),
  });

  let server: KubeletServer | undefined;
  if (o.server) {
    server = await startKubeletServer({
      nodeName: o.nodeName,
      port: o.server.port,
      address: o.server.address,
      tls: o.server.tls,
      certDir: o.server.certDir,
      clientCA: o.server.clientCA,
      authorizer: newSubjectAccessReviewAuthorizer(
        o.client.restClientFor({ group: "authorization.k8s.io", version: "v1" }),
      ),
      host: {
        getPods: () => kubelet.getPods(),
        findContainer: (ns, name, container, previous) =>
          findContainer(kubelet, runtime, ns, name, container, previous),
        streaming: runtime.streaming,
      },
      log,
    });
  }

  const nodeStatus = startNodeStatusUpdater({
    client: o.client,
    clock,
    nodeName: o.nodeName,
    hostname: o.hostname,
    nodeIP: o.nodeIP,
    kubeletPort: server?.port ?? 0,
    nodeLabels: o.nodeLabels,
    registerWithTaints: o.registerWithTaints,
    registerNode: o.registerNode,
    podCIDR: o.podCIDR,
    machine: o.machine,
    kubeReserved: o.kubeReserved,
    systemReserved: o.systemReserved,
    evictionHard: o.evictionHard,
    runtimeType: runtime.name,
    runtimeVersion: () => runtime.version,
    listImages: () => runtime.imageService.ListImages(),
    recordEvent: (type, reason, message) =>
      nodeRecorder({ metadata: { name: o.nodeName, uid: o.nodeName } }, type, reason, message),
    log,
    options: o.nodeStatus,
  });
  const nodeLease = startNodeLeaseController({
    client: o.client,
    clock,
    nodeName: o.nodeName,
    leaseDurationSeconds: o.nodeStatus?.nodeLeaseDurationSeconds,
    log,
  });
  kubelet.run();

  return {
    kubelet,
    server,
    nodeStatus,
    nodeLease,
    async stop() {
      await kubelet.stop();
      await Promise.all([nodeStatus.stop(), nodeLease.stop(), server?.close()]);
      runtime.close?.();
      // Events still queued get two seconds: a stopping kubelet must not wait on an absent API server.
      let timer: NodeJS.Timeout | undefined;
      await Promise.race([
        Promise.all([recorder.flush(), nodeRecorder.flush()]),
        new Promise((r) => {
          timer = setTimeout(r, 2000);
        }),
      ]);
      clearTimeout(timer);
    },
  };
}
// #endregion new-main-kubelet

// #region find-container
/**
 * validateContainerLogStatus: which container instance `kubectl logs [--previous]` means, from
 * the status the kubelet itself last computed; then the runtime says where its log file is.
 */
async function findContainer(
  kubelet: Kubelet,
  runtime: KubeletRuntime,
  namespace: string,
  podName: string,
  containerName: string,
  previous: boolean,
): Promise<ContainerLocation | { error: string }> {
  const pod = kubelet.podManager.getPodByFullName(
    podFullName({ metadata: { name: podName, namespace }, spec: { containers: [] } }),
  );
  if (!pod) return { error: `pod "${podName}" does not exist` };
  const status = kubelet.statusManager.getPodStatus(pod.metadata.uid ?? "") ?? pod.status;
  const all = [...(status?.containerStatuses ?? []), ...(status?.initContainerStatuses ?? [])];
  const cs = all.find((c) => c.name === containerName);
  if (!cs) return { error: `container "${containerName}" in pod "${podName}" is not available` };
  let containerID: string | undefined;
  if (previous) {
    containerID = cs.lastState?.terminated?.containerID;
    if (!containerID)
      return { error: `previous terminated container "${containerName}" in pod "${podName}" not found` };
  } else {
    const waiting = cs.state?.waiting;
    if (waiting && !cs.state?.terminated && !cs.lastState?.terminated)
      return {
        error: `container "${containerName}" in pod "${podName}" is waiting to start: ${waiting.reason ?? "unknown reason"}`,
      };
    containerID =
      cs.state?.running || cs.state?.terminated ? cs.containerID : cs.lastState?.terminated?.containerID;
    if (!containerID)
      return {
        error: `container "${containerName}" in pod "${podName}" is waiting to start: no container ID`,
      };
  }
  const id = parseContainerID(containerID).id;
  let s: Awaited<ReturnType<RuntimeService["ContainerStatus"]>>;
  try {
    s = await runtime.runtimeService.ContainerStatus(id);
  } catch (err) {
    return { error: `failed to get container status "${id}": ${(err as Error).message}` };
  }
  let logPath = s.logPath;
  if (!isAbsolute(logPath)) {
    const sandbox = await runtime.runtimeService.PodSandboxStatus(s.podSandboxId).catch(() => undefined);
    const dir = (sandbox as { logDirectory?: string } | undefined)?.logDirectory;
    if (dir) logPath = join(dir, logPath);
  }
  return { containerId: id, logPath, running: s.state === "CONTAINER_RUNNING" };
}
// #endregion find-container

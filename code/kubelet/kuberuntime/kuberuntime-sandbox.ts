/**
 * Pod sandboxes — the CRI's pod-level object: the kubelet describes one from the pod (name,
 * attempt, hostname, log directory, ports, labels) and lists them back by the pod's uid.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_sandbox.go.
 *
 * Solves: the network identity of a pod (its IP, its ports, its hostname) belongs to the pod, not
 * to any one container, and must outlive container restarts; the sandbox is that object, made
 * before any container and replaced only when it dies.
 *
 * Invariants:
 * - `attempt` counts sandboxes made for this pod (0, 1, …), so a replaced sandbox is told apart;
 * - the log directory is `<podLogsRootDirectory>/<namespace>_<name>_<uid>`; it exists before the
 *   sandbox is run (the runtime writes container logs below it);
 * - port mappings come from every port of the pod's (app) containers, hostPort included;
 * - a host-network pod gets no hostname of its own (it has the node's);
 * - a pod's sandboxes are listed newest first (by createdAt).
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_sandbox.go (generatePodSandboxConfig, createPodSandbox, getSandboxIDByPodUID, determinePodSandboxIPs)
 * @upstream kubernetes/kubernetes pkg/kubelet/container/helpers.go (MakePortMappings)
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (GeneratePodHostNameAndDomain)
 * @chapter 07-kubelet
 */

import type { Pod } from "../../api/core.ts";
import type { PodSandboxConfig, PortMapping, RuntimeService } from "../runtime/cri.ts";
import { KubernetesPodUIDLabel } from "../runtime/cri.ts";
import { buildPodLogsDirectory } from "./helpers.ts";
import type { OSInterface } from "./kuberuntime-container.ts";
import { newPodAnnotations, newPodLabels } from "./labels.ts";

export function generatePodSandboxConfig(
  pod: Pod,
  attempt: number,
  podLogsRootDirectory: string,
): PodSandboxConfig {
  const { name = "", namespace = "", uid = "" } = pod.metadata;
  const config: PodSandboxConfig = {
    metadata: { name, namespace, uid, attempt },
    labels: newPodLabels(pod),
    annotations: newPodAnnotations(pod),
    logDirectory: buildPodLogsDirectory(podLogsRootDirectory, namespace, name, uid),
    hostNetwork: pod.spec.hostNetwork === true,
  };
  // A host-network pod shares the node's hostname; others get spec.hostname or the pod's name.
  if (!pod.spec.hostNetwork) config.hostname = (pod.spec.hostname || name).slice(0, 63);
  const portMappings: PortMapping[] = [];
  for (const c of pod.spec.containers) {
    for (const p of c.ports ?? []) {
      const m: PortMapping = { protocol: p.protocol ?? "TCP", containerPort: p.containerPort };
      if (p.hostPort) m.hostPort = p.hostPort;
      if (p.hostIP) m.hostIp = p.hostIP;
      portMappings.push(m);
    }
  }
  if (portMappings.length > 0) config.portMappings = portMappings;
  return config;
}

/** Makes the pod's log directory and runs its sandbox; on failure, upstream's message. */
export async function createPodSandbox(
  runtimeService: RuntimeService,
  pod: Pod,
  attempt: number,
  podLogsRootDirectory: string,
  os: OSInterface,
): Promise<{ id: string } | { id: ""; message: string; err: Error }> {
  const config = generatePodSandboxConfig(pod, attempt, podLogsRootDirectory);
  const podName = `${pod.metadata.name}_${pod.metadata.namespace}(${pod.metadata.uid})`;
  try {
    await os.mkdirAll(config.logDirectory ?? "");
  } catch (e) {
    const err = e as Error;
    return { id: "", err, message: `Create pod log directory for pod "${podName}" failed: ${err.message}` };
  }
  try {
    return { id: await runtimeService.RunPodSandbox(config) };
  } catch (e) {
    const err = e as Error;
    return { id: "", err, message: `Failed to create sandbox for pod "${podName}": ${err.message}` };
  }
}

/** The pod's sandbox ids, newest first. */
export async function getSandboxIDByPodUID(runtimeService: RuntimeService, uid: string): Promise<string[]> {
  const sandboxes = await runtimeService.ListPodSandbox({ labelSelector: { [KubernetesPodUIDLabel]: uid } });
  return sandboxes.sort((a, b) => b.createdAt - a.createdAt || cmpDesc(a.id, b.id)).map((s) => s.id);
}

/** Ties in createdAt (a coarse clock) go to the later id, which the runtimes hand out in order. */
function cmpDesc(a: string, b: string): number {
  return a < b ? 1 : a > b ? -1 : 0;
}

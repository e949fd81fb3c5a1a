/**
 * podSandboxChanged — whether the kubelet must (re)create the pod's sandbox, the runtime's
 * "pod-level" container that holds the network namespace and the pod's IP.
 *
 * Solves: the kubelet must know whether the pod has a working sandbox before it starts any
 * container in it (and PodReadyToStartContainers reports exactly that): none yet, a dead one, two
 * at once after a crash, or one without an IP all mean "make a new one".
 *
 * Invariants:
 * - `sandboxes` are newest first, as the runtime manager sorts them;
 * - only the newest sandbox is kept, and only if it is the one ready sandbox, its network mode
 *   matches `hostNetwork`, and (off the host network) it has an IP.
 *
 * Reduced: upstream also returns the next attempt number and the old sandbox's id, and compares
 * the runtime's namespace mode (NODE or POD) where we compare a `hostNetwork` flag.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/util/util.go (PodSandboxChanged)
 * @chapter 07-kubelet
 */

import type { Pod } from "../../api/core.ts";

/** What the kubelet sees of a sandbox through CRI's PodSandboxStatus. */
export interface SandboxStatus {
  state: "SANDBOX_READY" | "SANDBOX_NOTREADY";
  /** Whether its network namespace is the node's. */
  hostNetwork: boolean;
  /** "" when the network plugin gave it none; missing when the runtime reported no network status. */
  ip?: string;
}

/** The runtime's view of a pod (kubecontainer.PodStatus), reduced to what these checks read. */
export interface RuntimePodStatus {
  sandboxStatuses: SandboxStatus[];
}

export function podSandboxChanged(pod: Pod, podStatus: RuntimePodStatus): boolean {
  const sandboxes = podStatus.sandboxStatuses;
  if (sandboxes.length === 0) return true;
  // Two ready sandboxes: something went wrong; start over with one.
  if (sandboxes.filter((s) => s.state === "SANDBOX_READY").length > 1) return true;
  const newest = sandboxes[0];
  if (newest.state !== "SANDBOX_READY") return true;
  if (newest.hostNetwork !== (pod.spec.hostNetwork === true)) return true;
  if (!pod.spec.hostNetwork && newest.ip === "") return true;
  return false;
}

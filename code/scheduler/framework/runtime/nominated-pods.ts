/**
 * Nominated pods in Filter — Filter run on a node as if the pods nominated to it (by an earlier
 * preemption) were already there, then again without them.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/runtime/framework.go (RunFilterPluginsWithNominatedPods, addGENominatedPods)
 * @chapter 05-scheduler
 *
 * Upstream keeps these two functions in framework.go beside the other runners; here they are a
 * file of their own because they are one idea of their own (the room a preemption freed must
 * stay free for the preemptor) and our rule is one concept per file.
 *
 * Solves: a preemptor waits for its victims to terminate; meanwhile its node looks free, and a
 * lower-priority pod would take the room the victims died for.
 *
 * Invariants:
 * - only pods nominated at the incoming pod's priority or above are added, and never the pod
 *   itself; they are added to copies of the NodeInfo and CycleState, never to the originals.
 * - the second pass (without nominated pods) runs only if some pod was added and the first
 *   pass succeeded; the pod must fit both ways.
 */
import type { Pod } from "../../../api/core.ts";
import type { CycleState } from "../cycle-state.ts";
import type { NodeInfo } from "../node-info.ts";
import { isRejected, isSuccess, Status } from "../status.ts";
import type { Handle } from "./registry.ts";

/** What these functions need of the framework: its nominator and two of its runners. */
export type NominatedPodsRunner = Pick<Handle, "podNominator" | "runPreFilterExtensionAddPod"> & {
  runFilterPlugins(state: CycleState, pod: Pod, nodeInfo: NodeInfo): Status | undefined;
};

// #region nominated-pods
/**
 * RunFilterPluginsWithNominatedPods: Filter runs first with the pods nominated to this node
 * at the pod's priority or above added (it must not take the room they wait for), then — only
 * if some were added and the first pass succeeded — again without them, since a filter like
 * pod affinity may pass only because of a nominated pod that may yet land elsewhere.
 */
export function runFilterPluginsWithNominatedPods(
  fw: NominatedPodsRunner,
  state: CycleState,
  pod: Pod,
  nodeInfo: NodeInfo,
): Status | undefined {
  let status: Status | undefined;
  let podsAdded = false;
  for (let i = 0; i < 2; i++) {
    let stateToUse = state;
    let nodeInfoToUse = nodeInfo;
    if (i === 0) {
      const added = addGENominatedPods(fw, pod, state, nodeInfo);
      if (added instanceof Status) return added;
      [podsAdded, stateToUse, nodeInfoToUse] = added;
    } else if (!podsAdded || !isSuccess(status)) {
      break;
    }
    status = fw.runFilterPlugins(stateToUse, pod, nodeInfoToUse);
    if (!isSuccess(status) && !isRejected(status)) return status;
  }
  return status;
}

/** addGENominatedPods: copies of state and nodeInfo with the ≥-priority nominated pods added. */
function addGENominatedPods(
  fw: NominatedPodsRunner,
  pod: Pod,
  state: CycleState,
  nodeInfo: NodeInfo,
): [boolean, CycleState, NodeInfo] | Status {
  const nominated = fw.podNominator()?.nominatedPodsForNode(nodeInfo.nodeName()) ?? [];
  if (nominated.length === 0) return [false, state, nodeInfo];
  const nodeInfoOut = nodeInfo.snapshot();
  const stateOut = state.clone();
  let podsAdded = false;
  const priority = pod.spec.priority ?? 0;
  for (const pi of nominated) {
    if ((pi.pod.spec.priority ?? 0) < priority || pi.pod.metadata.uid === pod.metadata.uid) continue;
    nodeInfoOut.addPodInfo(pi);
    const s = fw.runPreFilterExtensionAddPod(stateOut, pod, pi, nodeInfoOut);
    if (!isSuccess(s)) return s!;
    podsAdded = true;
  }
  return [podsAdded, stateOut, nodeInfoOut];
}
// #endregion nominated-pods

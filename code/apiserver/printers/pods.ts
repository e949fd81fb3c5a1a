/**
 * The pod table — NAME READY STATUS RESTARTS AGE (+ IP NODE NOMINATED NODE READINESS GATES).
 * Upstream: printPod in pkg/printers/internalversion/printers.go.
 *
 * Solves: one word must summarize a pod whose phase, init containers, sidecars and containers
 * each have a state. STATUS is the most specific thing that is going on, found in this order:
 * - the pod's phase, or `status.reason` when set (Evicted, NodeLost), or SchedulingGated;
 * - while init containers run: `Init:<reason>`, `Init:ExitCode:N`, `Init:Signal:N`, or
 *   `Init:i/n` (how many finished);
 * - then the last container (in reverse order, so the first container's state wins) that is
 *   waiting (CrashLoopBackOff, ImagePullBackOff, ContainerCreating) or terminated (Completed,
 *   Error, OOMKilled, ExitCode:N) — a pod "Completed" with a container still running reads
 *   Running (or NotReady);
 * - finally `Terminating` once deletion started (Unknown for a pod on a lost node).
 * RESTARTS adds when the last restart happened: `3 (2m ago)`.
 *
 * Invariants:
 * - READY counts ready running containers plus started, ready sidecars (restartable init
 *   containers), over containers + sidecars;
 * - restarts count init containers' restarts only while initializing; afterwards sidecars'
 *   and containers'.
 *
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (printPod, hasPodReadyCondition, isPodInitializedConditionTrue, podSuccessConditions, podFailedConditions)
 * @upstream kubernetes/kubernetes pkg/api/v1/pod/util.go (IsRestartableInitContainer)
 * @chapter 02-apiserver
 */
import type { Container, ContainerStatus, Pod } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import { humanDuration } from "./duration.ts";
import { ageColumn, column, nameColumn, translateTimestampSince } from "./helpers.ts";
import type { TablePrinter, TableRowCondition } from "./table.ts";

/** The v1 pod field printPod reads that code/api/core.ts does not declare. */
type PodV1 = Pod & { spec: Pod["spec"] & { readinessGates?: { conditionType: string }[] } };

// #region pod-columns
export const podColumns = [
  nameColumn,
  column("Ready", "string", "The aggregate readiness state of this pod for accepting traffic."),
  column("Status", "string", "The aggregate status of the containers in this pod."),
  column(
    "Restarts",
    "string",
    "The number of times the containers in this pod have been restarted and when the last container in this pod has restarted.",
  ),
  ageColumn,
  column(
    "IP",
    "string",
    "podIP address allocated to the pod. Routable at least within the cluster. Empty if not yet allocated.",
    1,
  ),
  column(
    "Node",
    "string",
    "NodeName indicates in which node this pod is scheduled. If empty, this pod is a candidate for scheduling by the scheduler defined in schedulerName. Once this field is set, the kubelet for this node becomes responsible for the lifecycle of this pod. This field should not be used to express a desire for the pod to be scheduled on a specific node. https://kubernetes.io/docs/concepts/scheduling-eviction/assign-pod-node/#nodename",
    1,
  ),
  column(
    "Nominated Node",
    "string",
    "nominatedNodeName is set only when this pod preempts other pods on the node, but it cannot be scheduled right away as preemption victims receive their graceful termination periods. This field does not guarantee that the pod will be scheduled on this node. Scheduler may decide to place the pod elsewhere if other nodes become available sooner. Scheduler may also decide to give the resources on this node to a higher priority pod that is created after preemption. As a result, this field may be different than PodSpec.nodeName when the pod is scheduled.",
    1,
  ),
  column(
    "Readiness Gates",
    "string",
    'If specified, all readiness gates will be evaluated for pod readiness. A pod is ready when all its containers are ready AND all conditions specified in the readiness gates have status equal to "True" More info: https://git.k8s.io/enhancements/keps/sig-network/580-pod-readiness-gates',
    1,
  ),
];
// #endregion pod-columns

const podSuccessConditions: TableRowCondition[] = [
  { type: "Completed", status: "True", reason: "Succeeded", message: "The pod has completed successfully." },
];
const podFailedConditions: TableRowCondition[] = [
  { type: "Completed", status: "True", reason: "Failed", message: "The pod failed." },
];

/** The reason the node lifecycle controller gives a pod on a node that stopped reporting. */
const nodeUnreachablePodReason = "NodeLost";

const isRestartableInitContainer = (c: Container | undefined) => c?.restartPolicy === "Always";

/** Milliseconds of a finishedAt timestamp; 0 (Go's zero time, "never") when absent. */
const finishedAt = (s: ContainerStatus): number => {
  // `lastState` in JSON is Go's LastTerminationState.
  const t = s.lastState?.terminated?.finishedAt;
  return t ? Date.parse(t) || 0 : 0;
};

// #region print-pod
export function printPod(obj: KubeObject, now: Date): { cells: unknown[]; conditions?: TableRowCondition[] } {
  const pod = obj as PodV1;
  const spec = pod.spec ?? { containers: [] };
  const status = pod.status ?? {};
  let restarts = 0;
  let sidecarRestarts = 0;
  let totalContainers = (spec.containers ?? []).length;
  let readyContainers = 0;
  let lastRestart = 0;
  let lastSidecarRestart = 0;

  const phase = status.phase ?? "";
  let reason: string = status.reason || phase;
  if (status.conditions?.some((c) => c.type === "PodScheduled" && c.reason === "SchedulingGated")) {
    reason = "SchedulingGated";
  }

  const initContainers = new Map<string, Container>();
  for (const c of spec.initContainers ?? []) {
    initContainers.set(c.name, c);
    if (isRestartableInitContainer(c)) totalContainers++;
  }

  // Init containers run one after another: the first unfinished one tells the story.
  let initializing = false;
  const initStatuses = (status.initContainerStatuses ?? []) as ContainerStatus[];
  for (let i = 0; i < initStatuses.length; i++) {
    const c = initStatuses[i];
    const sidecar = isRestartableInitContainer(initContainers.get(c.name));
    restarts += c.restartCount ?? 0;
    lastRestart = Math.max(lastRestart, finishedAt(c));
    if (sidecar) {
      sidecarRestarts += c.restartCount ?? 0;
      lastSidecarRestart = Math.max(lastSidecarRestart, finishedAt(c));
    }
    const terminated = c.state?.terminated;
    const waiting = c.state?.waiting;
    if (terminated && terminated.exitCode === 0) continue;
    if (sidecar && c.started) {
      if (c.ready) readyContainers++;
      continue;
    }
    if (terminated) {
      if (!terminated.reason) {
        reason = terminated.signal
          ? `Init:Signal:${terminated.signal}`
          : `Init:ExitCode:${terminated.exitCode}`;
      } else {
        reason = `Init:${terminated.reason}`;
      }
    } else if (waiting?.reason && waiting.reason !== "PodInitializing") {
      reason = `Init:${waiting.reason}`;
    } else {
      reason = `Init:${i}/${(spec.initContainers ?? []).length}`;
    }
    initializing = true;
    break;
  }

  const initialized =
    status.conditions?.some((c) => c.type === "Initialized" && c.status === "True") ?? false;
  if (!initializing || initialized) {
    restarts = sidecarRestarts;
    lastRestart = lastSidecarRestart;
    let hasRunning = false;
    const statuses = (status.containerStatuses ?? []) as ContainerStatus[];
    // Backwards, so that the first container's state is the one left in `reason`.
    for (let i = statuses.length - 1; i >= 0; i--) {
      const c = statuses[i];
      restarts += c.restartCount ?? 0;
      lastRestart = Math.max(lastRestart, finishedAt(c));
      const waiting = c.state?.waiting;
      const terminated = c.state?.terminated;
      if (waiting?.reason) reason = waiting.reason;
      else if (terminated?.reason) reason = terminated.reason;
      else if (terminated) {
        reason = terminated.signal ? `Signal:${terminated.signal}` : `ExitCode:${terminated.exitCode}`;
      } else if (c.ready && c.state?.running) {
        hasRunning = true;
        readyContainers++;
      }
    }
    // A finished container next to one still running does not make the pod Completed.
    if (reason === "Completed" && hasRunning) {
      const podReady = status.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
      reason = podReady ? "Running" : "NotReady";
    }
  }

  if (pod.metadata.deletionTimestamp && status.reason === nodeUnreachablePodReason) {
    reason = "Unknown";
  } else if (pod.metadata.deletionTimestamp && phase !== "Succeeded" && phase !== "Failed") {
    reason = "Terminating";
  }

  let restartsCell = String(restarts);
  if (restarts !== 0 && lastRestart !== 0) {
    restartsCell = `${restarts} (${humanDuration(now.getTime() - lastRestart)} ago)`;
  }

  // Upstream reads podIPs[0]; a v1 client may have set only podIP (conversion fills podIPs from it).
  const podIP = status.podIPs?.[0]?.ip || status.podIP || "<none>";
  let readinessGates = "<none>";
  const gates = spec.readinessGates ?? [];
  if (gates.length > 0) {
    let trueConditions = 0;
    for (const gate of gates) {
      const condition = status.conditions?.find((c) => c.type === gate.conditionType);
      if (condition?.status === "True") trueConditions++;
    }
    readinessGates = `${trueConditions}/${gates.length}`;
  }

  const cells = [
    pod.metadata.name ?? "",
    `${readyContainers}/${totalContainers}`,
    reason,
    restartsCell,
    translateTimestampSince(pod.metadata.creationTimestamp, now),
    podIP,
    spec.nodeName || "<none>",
    status.nominatedNodeName || "<none>",
    readinessGates,
  ];
  const conditions =
    phase === "Succeeded" ? podSuccessConditions : phase === "Failed" ? podFailedConditions : undefined;
  return { cells, conditions };
}
// #endregion print-pod

export const podPrinter: TablePrinter = { columns: podColumns, print: printPod };

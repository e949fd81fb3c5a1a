/**
 * Scheduler.scheduleOne — one pod's trip: pop it, run the scheduling cycle (snapshot, filter,
 * score, assume, Reserve, Permit) synchronously, then the binding cycle (wait on Permit,
 * PreBind, Bind, PostBind) asynchronously, so the next pod's cycle need not wait for the API.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/schedule_one.go (ScheduleOne, schedulingCycle, bindingCycle, handleBindingCycleError, frameworkForPod, skipPodSchedule, assume, bind, finishBinding, handleSchedulingFailure, truncateMessage, updatePod, clearNominatedNode)
 * @chapter 05-scheduler
 *
 * Solves: binding is an API round trip; the decision is microseconds. Doing them in one step
 * would cap throughput at one pod per round trip. Assuming the pod in the cache at the end of
 * the scheduling cycle lets the next cycle see the node as taken, while the bind runs in the
 * background; if it fails, Unreserve and ForgetPod give the room back.
 *
 * Invariants:
 * - scheduling cycles run one at a time (`scheduleOne` awaits only `pop`); binding cycles
 *   overlap with later scheduling cycles and with each other.
 * - an assumed pod is counted on its node from `assume` until its bind succeeds (then the
 *   informer's add confirms it) or fails (then `forgetPod` removes it) — never both absent and
 *   bound, so no node is ever promised twice.
 * - every failure ends in `handleSchedulingFailure`: the pod goes back to the queue (unless it
 *   was deleted or is already bound), a FailedScheduling event is recorded and PodScheduled is
 *   set False; every popped pod is marked `done` exactly when its attempt ends.
 */
import type { Pod } from "../api/core.ts";
import { type Clock, realClock } from "../client/util/clock.ts";
import { type ComponentTracerProvider, noopProvider } from "../tracing/provider.ts";
import { activeSpan, podAttributes, startSpan, withSpan } from "../tracing/tracing.ts";
import type { Cache } from "./backend/cache/cache.ts";
import type { Snapshot } from "./backend/cache/snapshot.ts";
import type { PriorityQueue } from "./backend/queue/scheduling-queue.ts";
import { Explain, type ExplainResult, explainAnnotations } from "./explain.ts";
import { NoNodesAvailableError, type ScheduleResult, type SearchState, schedulePod } from "./find-nodes.ts";
import { CycleState } from "./framework/cycle-state.ts";
import { Diagnosis, FitError } from "./framework/diagnosis.ts";
import { AssignedPodDelete } from "./framework/events.ts";
import { type NominatingInfo, NominatingMode } from "./framework/interface.ts";
import type { Framework } from "./framework/runtime/framework.ts";
import { asError, asStatus, Code, isRejected, isSuccess, isWait, Status } from "./framework/status.ts";
import { PodInfo, type QueuedPodInfo } from "./framework/types.ts";
import type { SchedulerMetricsRecorder } from "./metrics/metrics.ts";

/** chapter 8: the instrumentation scope of the scheduler's spans (a course addition). */
const tracingScope = "k8s.io/kubernetes/pkg/scheduler";

/** clearNominatedNode: a failure not caused by the pod's fit clears any nomination. */
export const clearNominatedNode: NominatingInfo = {
  nominatedNodeName: "",
  nominatingMode: NominatingMode.ModeOverride,
};
/** NoteLengthLimit: an event message's maximum length (bytes; characters here). */
export const noteLengthLimit = 1024;

export interface EventRecorder {
  eventf(pod: Pod, type: "Normal" | "Warning", reason: string, action: string, message: string): void;
}

export interface PodScheduledCondition {
  type: "PodScheduled";
  status: "False";
  reason: "Unschedulable" | "SchedulerError";
  message: string;
}

export interface SchedulerOptions {
  cache: Cache;
  queue: PriorityQueue;
  snapshot: Snapshot;
  /** Profiles by schedulerName; each Framework was built over `snapshot`. */
  profiles: Map<string, Framework>;
  rand?: () => number;
  clock?: Clock;
  percentageOfNodesToScore?: number;
  recorder?: EventRecorder;
  /** Patches the pod's PodScheduled condition and nominatedNodeName (a client in the binary). */
  updatePod?: (pod: Pod, condition: PodScheduledCondition, ni: NominatingInfo | undefined) => Promise<void>;
  /** The informer's current copy of the pod; undefined: deleted. Default: the popped pod. */
  getPod?: (pod: Pod) => Pod | undefined;
  /** Called with anything the scheduler would log as an error. */
  onError?: (err: Error) => void;
  // explain (schedex): record every cycle's Filter and Score results (the binary's --explain).
  explain?: boolean;
  /** With `explain`: writes the simulator's annotations on the pod (a PATCH in the binary). */
  annotatePod?: (pod: Pod, annotations: Record<string, string>) => Promise<void>;
  /** With `explain`: the cycle's results, for a table (formatExplainTable). */
  onExplain?: (pod: Pod, result: ExplainResult) => void;
  // scheduler binary (schedcmd): attempts by result, for /metrics (metrics/metrics.ts).
  metrics?: SchedulerMetricsRecorder;
  /**
   * chapter 8: tracing — a span per attempt (`scheduleOne`, its extension points as events) and
   * per binding cycle (`bindingCycle`, the parent of the API server's binding request). A course
   * addition: upstream 1.32's scheduler has no tracing.
   */
  tracerProvider?: ComponentTracerProvider;
}

export class Scheduler implements SearchState {
  nextStartNodeIndex = 0;
  percentageOfNodesToScore: number;
  rand: () => number;
  readonly cache: Cache;
  readonly queue: PriorityQueue;
  readonly snapshot: Snapshot;
  readonly profiles: Map<string, Framework>;
  private readonly clock: Clock;
  private readonly o: SchedulerOptions;
  private readonly bindings = new Set<Promise<void>>();

  constructor(o: SchedulerOptions) {
    this.o = o;
    this.cache = o.cache;
    this.queue = o.queue;
    this.snapshot = o.snapshot;
    this.profiles = o.profiles;
    this.rand = o.rand ?? Math.random;
    this.clock = o.clock ?? realClock;
    this.percentageOfNodesToScore = o.percentageOfNodesToScore ?? 0;
  }

  /**
   * Run: schedule pods until the queue closes. Between two cycles the loop yields to the event
   * loop (setImmediate runs after pending I/O): a pop from a non-empty activeQ resolves as a
   * microtask, so without the yield a full queue would run cycle after cycle while no binding,
   * eviction or informer event reached the socket — upstream's goroutines run beside the loop.
   */
  // #region run-loop
  async run(): Promise<void> {
    while (await this.scheduleOne()) await yieldToIO();
    await this.waitForBindings();
  }
  // #endregion run-loop

  /** Resolves when every binding cycle started so far has ended (tests, shutdown). */
  async waitForBindings(): Promise<void> {
    while (this.bindings.size > 0) await Promise.all([...this.bindings]);
  }

  private logError(err: Error): void {
    this.o.onError?.(err);
  }

  // #region schedule-one
  /** ScheduleOne: one pod's scheduling cycle; its binding cycle is left running. False once closed. */
  async scheduleOne(): Promise<boolean> {
    const podInfo = await this.queue.pop();
    if (!podInfo) return false;
    // chapter 8: tracing — the attempt in its span (nothing when tracing is off).
    const tp = this.o.tracerProvider ?? noopProvider;
    return startSpan(
      tp,
      tracingScope,
      "scheduleOne",
      () => podAttributes(podInfo.podInfo.pod),
      () => this.scheduleOnePod(podInfo),
    );
  }

  private scheduleOnePod(podInfo: QueuedPodInfo): boolean {
    const pod = podInfo.podInfo.pod;
    const uid = pod.metadata.uid ?? "";
    const fwk = this.profiles.get(pod.spec.schedulerName ?? "default-scheduler");
    if (!fwk) {
      this.logError(new Error(`profile not found for scheduler name "${pod.spec.schedulerName}"`));
      this.queue.done(uid);
      return true;
    }
    if (this.skipPodSchedule(pod)) {
      this.queue.done(uid);
      return true;
    }
    const state = new CycleState();
    const explain = this.o.explain ? new Explain(fwk) : undefined;
    state.explain = explain;
    // schedcmd: an attempt's duration (scheduling + binding) for scheduler_scheduling_attempt_duration_seconds.
    const start = this.clock.now();
    const observe = (s: Status | undefined) =>
      this.o.metrics?.observeAttempt(
        isSuccess(s) ? "scheduled" : isRejected(s) ? "unschedulable" : "error",
        fwk.profileName,
        (this.clock.now() - start) / 1000,
      );
    const [result, assumedPodInfo, status, ni] = this.schedulingCycle(state, fwk, podInfo);
    activeSpan()?.setAttributes({
      "k8s.node.name": result?.suggestedHost ?? "",
      status: status?.message() ?? "",
    });
    if (explain) this.reportExplain(explain, pod, isSuccess(status) || isWait(status), result);
    if (!isSuccess(status) && !isWait(status)) {
      observe(status);
      this.handleSchedulingFailure(fwk, assumedPodInfo, status!, ni, pod);
      return true;
    }
    const binding = (async () => {
      const s = await withSpan(
        "bindingCycle",
        () => ({ ...podAttributes(pod), "k8s.node.name": result!.suggestedHost }),
        () => this.bindingCycle(state, fwk, result!, assumedPodInfo),
      );
      observe(s);
      if (!isSuccess(s)) {
        this.handleBindingCycleError(state, fwk, assumedPodInfo, result!, s!, pod);
        return;
      }
      this.queue.done(uid);
    })();
    this.bindings.add(binding);
    void binding.finally(() => this.bindings.delete(binding));
    return true;
  }

  /** explain (schedex): the cycle's results, as annotations on the pod and to onExplain. */
  private reportExplain(ex: Explain, pod: Pod, ok: boolean, result: ScheduleResult | undefined): void {
    ex.selectedNode = ok && result ? result.suggestedHost : "";
    const r = ex.result();
    this.o.onExplain?.(pod, r);
    this.o.annotatePod?.(pod, explainAnnotations(r)).catch((e: Error) => this.logError(e));
  }

  private skipPodSchedule(pod: Pod): boolean {
    if (pod.metadata.deletionTimestamp) {
      const msg = `skip schedule deleting pod: ${pod.metadata.namespace}/${pod.metadata.name}`;
      this.o.recorder?.eventf(pod, "Warning", "FailedScheduling", "Scheduling", msg);
      return true;
    }
    // Assumed already: an update re-queued it during its previous cycle.
    return this.cache.isAssumedPod(pod);
  }
  // #endregion schedule-one

  // #region scheduling-cycle
  schedulingCycle(
    state: CycleState,
    fwk: Framework,
    podInfo: QueuedPodInfo,
  ): [ScheduleResult | undefined, QueuedPodInfo, Status | undefined, NominatingInfo | undefined] {
    const pod = podInfo.podInfo.pod;
    const snapErr = this.cache.updateSnapshot(this.snapshot).error;
    const result = snapErr ?? schedulePod(this, fwk, this.snapshot, state, pod);
    if (result instanceof Error) {
      if (result instanceof NoNodesAvailableError) {
        return [
          undefined,
          podInfo,
          new Status(Code.UnschedulableAndUnresolvable, [], result),
          clearNominatedNode,
        ];
      }
      if (!(result instanceof FitError)) return [undefined, podInfo, asStatus(result), clearNominatedNode];
      // No node fits: PostFilter (preemption) may make room for a later cycle.
      if (!fwk.hasPostFilterPlugins())
        return [undefined, podInfo, new Status(Code.Unschedulable, [], result), undefined];
      const [pr, ps] = fwk.runPostFilterPlugins(state, pod, result.diagnosis.nodeToStatus);
      result.diagnosis.postFilterMsg = ps?.message() ?? "";
      return [undefined, podInfo, new Status(Code.Unschedulable, [], result), pr?.nominatingInfo];
    }
    const host = result.suggestedHost;
    // assume: a copy of the pod with nodeName set, counted on the node from now on.
    const assumed: QueuedPodInfo = {
      ...podInfo,
      podInfo: new PodInfo({ ...pod, spec: { ...pod.spec, nodeName: host } }),
    };
    const assumedPod = assumed.podInfo.pod;
    const err = this.cache.assumePod(assumedPod);
    if (err) return [result, assumed, asStatus(err), clearNominatedNode];
    this.queue.deleteNominatedPodIfExists(assumedPod);

    const undo = (s: Status): [undefined, QueuedPodInfo, Status, NominatingInfo] => {
      fwk.runReservePluginsUnreserve(state, assumedPod, host);
      const fe = this.cache.forgetPod(assumedPod);
      if (fe) this.logError(fe);
      return [undefined, assumed, rejectedOnNode(s, pod, host), clearNominatedNode];
    };
    const rs = fwk.runReservePluginsReserve(state, assumedPod, host);
    if (!isSuccess(rs)) return undo(rs!);
    const ps = fwk.runPermitPlugins(state, assumedPod, host);
    if (!isWait(ps) && !isSuccess(ps)) return undo(ps!);
    return [result, assumed, ps, undefined];
  }
  // #endregion scheduling-cycle

  // #region binding-cycle
  async bindingCycle(
    state: CycleState,
    fwk: Framework,
    result: ScheduleResult,
    assumed: QueuedPodInfo,
  ): Promise<Status | undefined> {
    const pod = assumed.podInfo.pod;
    const host = result.suggestedHost;
    const ws = await fwk.waitOnPermit(pod);
    if (!isSuccess(ws)) return rejectedOnNode(ws!, pod, host);
    const pb = await fwk.runPreBindPlugins(state, pod, host);
    if (!isSuccess(pb)) return rejectedOnNode(pb!, pod, host);
    let bs: Status | undefined;
    try {
      bs = await fwk.runBindPlugins(state, pod, host);
    } finally {
      this.finishBinding(pod, host, bs);
    }
    if (!isSuccess(bs)) return bs;
    fwk.runPostBindPlugins(state, pod, host);
    return undefined;
  }

  private finishBinding(pod: Pod, host: string, s: Status | undefined): void {
    const err = this.cache.finishBinding(pod);
    if (err) this.logError(err);
    if (!isSuccess(s)) return;
    const msg = `Successfully assigned ${pod.metadata.namespace}/${pod.metadata.name} to ${host}`;
    this.o.recorder?.eventf(pod, "Normal", "Scheduled", "Binding", msg);
  }

  handleBindingCycleError(
    state: CycleState,
    fwk: Framework,
    assumed: QueuedPodInfo,
    result: ScheduleResult,
    status: Status,
    original: Pod,
  ): void {
    const pod = assumed.podInfo.pod;
    fwk.runReservePluginsUnreserve(state, pod, result.suggestedHost);
    const fe = this.cache.forgetPod(pod);
    let moveAfter = false;
    if (fe) this.logError(fe);
    else if (isRejected(status)) moveAfter = true;
    // The forgotten pod freed room: that is a pod delete for the others waiting.
    else this.queue.moveAllToActiveOrBackoffQueue(AssignedPodDelete, pod, undefined);
    this.handleSchedulingFailure(fwk, assumed, status, clearNominatedNode, original);
    // After the failure handler, so the pod itself is not moved by its own event.
    if (moveAfter) {
      const uid = pod.metadata.uid;
      this.queue.moveAllToActiveOrBackoffQueue(
        AssignedPodDelete,
        pod,
        undefined,
        (p) => p.metadata.uid !== uid,
      );
    }
  }
  // #endregion binding-cycle

  // #region failure
  handleSchedulingFailure(
    _fwk: Framework,
    podInfo: QueuedPodInfo,
    status: Status,
    ni: NominatingInfo | undefined,
    original: Pod,
  ): void {
    const reason = isRejected(status) ? "Unschedulable" : "SchedulerError";
    const err = asError(status);
    const errMsg = status.message();
    if (err instanceof FitError) {
      podInfo.unschedulablePlugins = err.diagnosis.unschedulablePlugins;
      podInfo.pendingPlugins = err.diagnosis.pendingPlugins;
    } else if (err && !(err instanceof NoNodesAvailableError)) {
      this.logError(err);
    }
    const uid = podInfo.podInfo.pod.metadata.uid ?? "";
    const cached = this.o.getPod ? this.o.getPod(original) : original;
    if (cached && !cached.spec.nodeName) {
      // Back to the queue as the informer has it now (not the assumed copy with a nodeName).
      podInfo.podInfo = new PodInfo(cached);
      const e = this.queue.addUnschedulableIfNotPresent(podInfo, this.queue.schedulingCycle());
      if (e) this.logError(e);
    }
    this.queue.done(uid);
    this.queue.addNominatedPod(podInfo.podInfo, ni);
    if (!err) return;
    const pod = podInfo.podInfo.pod;
    this.o.recorder?.eventf(pod, "Warning", "FailedScheduling", "Scheduling", truncateMessage(errMsg));
    const condition: PodScheduledCondition = {
      type: "PodScheduled",
      status: "False",
      reason,
      message: errMsg,
    };
    this.o.updatePod?.(pod, condition, ni).catch((e: Error) => this.logError(e));
  }
  // #endregion failure
}

/** A rejection at Reserve, Permit or PreBind becomes a FitError naming the one node tried. */
function rejectedOnNode(s: Status, pod: Pod, host: string): Status {
  if (!isRejected(s)) return s;
  const d = new Diagnosis();
  d.unschedulablePlugins.add(s.plugin);
  d.nodeToStatus.set(host, s);
  return new Status(s.code, [], new FitError(pod, 1, d)).withPlugin(s.plugin);
}

export function truncateMessage(message: string): string {
  if (message.length <= noteLengthLimit) return message;
  const suffix = " ...";
  return message.slice(0, noteLengthLimit - suffix.length) + suffix;
}

/** One turn of the event loop: pending socket reads and writes run before the next cycle. */
function yieldToIO(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/**
 * PriorityQueue — the scheduling queue: activeQ (ready, in priority order), backoffQ (waiting
 * out a per-pod backoff) and unschedulablePods (rejected, waiting for an event that may help).
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/backend/queue/scheduling_queue.go (PriorityQueue, Add, AddUnschedulableIfNotPresent, Pop, Done, Update, Delete, Activate, MoveAllToActiveOrBackoffQueue, AssignedPodAdded, AssignedPodUpdated, flushUnschedulablePodsLeftover, isPodWorthRequeuing, requeuePodViaQueueingHint, moveToActiveQ, PendingPods)
 * @chapter 05-scheduler
 *
 * Solves: the scheduler must try the most important pod next, must not spin on pods no node can
 * take, and must retry a rejected pod soon after the cluster changes in a way that could help —
 * and only then. The three parts divide that work:
 * - activeQ orders the ready pods (QueueSort: priority, then queue time);
 * - unschedulablePods parks the rejected ones; each rejecting plugin registered the events that
 *   may undo its rejection, and its queueing hint judges each such event for each pod;
 * - backoffQ delays a moved pod that failed recently (1 s doubling to 10 s), so a pod that keeps
 *   failing cannot crowd out the others.
 *
 * Invariants:
 * - a pod is in at most one of activeQ, backoffQ and unschedulablePods, and is not in any of
 *   them while in flight (between `pop` and `addUnschedulableIfNotPresent` / `done`).
 * - a pod only enters activeQ through `moveToActiveQ`, which runs the PreEnqueue plugins: a gated
 *   pod goes to unschedulablePods instead, marked `gated`, and no cluster event moves it.
 * - a pod stays in unschedulablePods at most `podMaxInUnschedulablePodsDuration` (5 min) plus one
 *   flush period (30 s): the flush moves it whatever the hints say.
 * - queue times are `clock.now()`; no real timer is read, so tests step a FakeClock.
 */
import type { Pod } from "../../../api/core.ts";
import { type Clock, realClock, type Timer } from "../../../client/util/clock.ts";
import {
  AssignedPodAdd,
  BackoffComplete,
  type ClusterEvent,
  EventForceActivate,
  EventUnschedulableTimeout,
  eventLabel,
  isWildCard,
  matchEvent,
  PodAdd,
  podSchedulingPropertiesChange,
  QueueingHint,
  ScheduleAttemptFailure,
  UnscheduledPodAdd,
  UnscheduledPodUpdate,
} from "../../framework/events.ts";
import type { LessFunc, NominatingInfo, PodNominator, PreEnqueuePlugin } from "../../framework/interface.ts";
import { isSuccess } from "../../framework/status.ts";
import { getPodKey, newQueuedPodInfo, type PodInfo, type QueuedPodInfo } from "../../framework/types.ts";
import { ActiveQueue, type InFlightEvent } from "./active-queue.ts";
import {
  BackoffQueue,
  DefaultPodInitialBackoffDuration,
  DefaultPodMaxBackoffDuration,
} from "./backoff-queue.ts";
import { Nominator, type PodLister } from "./nominator.ts";
import type { QueueingHintMapPerProfile } from "./queueing-hint-map.ts";
import { UnschedulablePods } from "./unschedulable-pods.ts";

export const DefaultPodMaxInUnschedulablePodsDuration = 5 * 60_000;
/** How often backoffQ's finished pods move to activeQ, and how often the leftover flush runs. */
export const backoffFlushPeriod = 1_000;
export const unschedulableFlushPeriod = 30_000;

export type QueueName = "Active" | "Backoff" | "Unschedulable";

export interface PriorityQueueOptions {
  clock?: Clock;
  podInitialBackoffDuration?: number;
  podMaxBackoffDuration?: number;
  podMaxInUnschedulablePodsDuration?: number;
  /** Per profile, the PreEnqueue plugins in order. */
  preEnqueuePluginMap?: Map<string, PreEnqueuePlugin[]>;
  queueingHintMap?: QueueingHintMapPerProfile;
  /**
   * The SchedulerQueueingHints feature (on by default in 1.32): a rejected pod's hints are run
   * over the events seen while it was in flight. Off: the older moveRequestCycle rule, and every
   * hint counts as Queue.
   */
  queueingHintsEnabled?: boolean;
  podLister?: PodLister;
  // scheduler binary (schedcmd): scheduler_queue_incoming_pods_total{queue,event} (metrics/metrics.ts).
  onIncoming?: (queue: "active" | "backoff" | "unschedulable", event: string) => void;
}

/** What a hint (or the lack of one) decides for a pod. */
enum Strategy {
  queueSkip,
  queueAfterBackoff,
  queueImmediately,
}

export class PriorityQueue implements PodNominator {
  readonly clock: Clock;
  readonly activeQ: ActiveQueue;
  readonly backoffQ: BackoffQueue;
  readonly unschedulablePods = new UnschedulablePods();
  readonly nominator: Nominator;
  private readonly podMaxInUnschedulablePodsDuration: number;
  private readonly preEnqueuePluginMap: Map<string, PreEnqueuePlugin[]>;
  private readonly queueingHintMap: QueueingHintMapPerProfile;
  readonly queueingHintsEnabled: boolean;
  /** The scheduling cycle in which the last move request came (the rule without hints). */
  private moveRequestCycle = -1;
  private timers: Timer[] = [];
  private stopped = false;

  constructor(lessFn: LessFunc, opts: PriorityQueueOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.queueingHintsEnabled = opts.queueingHintsEnabled ?? true;
    this.activeQ = new ActiveQueue(lessFn, this.queueingHintsEnabled);
    this.backoffQ = new BackoffQueue(
      this.clock,
      opts.podInitialBackoffDuration ?? DefaultPodInitialBackoffDuration,
      opts.podMaxBackoffDuration ?? DefaultPodMaxBackoffDuration,
    );
    this.podMaxInUnschedulablePodsDuration =
      opts.podMaxInUnschedulablePodsDuration ?? DefaultPodMaxInUnschedulablePodsDuration;
    this.preEnqueuePluginMap = opts.preEnqueuePluginMap ?? new Map();
    this.queueingHintMap = opts.queueingHintMap ?? new Map();
    this.nominator = new Nominator(opts.podLister);
    this.onIncoming = opts.onIncoming ?? (() => {});
  }
  private readonly onIncoming: NonNullable<PriorityQueueOptions["onIncoming"]>;

  // #region run
  /** Run: the two periodic flushes, on the queue's clock. */
  run(): void {
    const every = (ms: number, fn: () => void) => {
      const tick = () => {
        if (this.stopped) return;
        fn();
        this.timers.push(this.clock.afterFunc(ms, tick));
      };
      this.timers.push(this.clock.afterFunc(ms, tick));
    };
    every(backoffFlushPeriod, () => this.flushBackoffQCompleted());
    every(unschedulableFlushPeriod, () => this.flushUnschedulablePodsLeftover());
  }

  close(): void {
    this.stopped = true;
    for (const t of this.timers.splice(0)) t.stop();
    this.activeQ.close();
  }
  // #endregion run

  // #region add
  /** Add: a new unscheduled pod from the informer. */
  add(pod: Pod): void {
    const pInfo = newQueuedPodInfo(pod, this.clock.now());
    if (this.moveToActiveQ(pInfo, PodAdd)) this.activeQ.broadcast();
  }

  /** runPreEnqueuePlugins: false (and the plugin recorded as rejector) if any plugin says no. */
  private runPreEnqueuePlugins(pInfo: QueuedPodInfo): boolean {
    const pod = pInfo.podInfo.pod;
    for (const pl of this.preEnqueuePluginMap.get(pod.spec.schedulerName ?? "default-scheduler") ?? []) {
      if (isSuccess(pl.preEnqueue(pod))) continue;
      pInfo.unschedulablePlugins.add(pl.name());
      return false;
    }
    return true;
  }

  /** moveToActiveQ: the only way into activeQ; a gated pod is parked in unschedulablePods. */
  private moveToActiveQ(pInfo: QueuedPodInfo, event: string): boolean {
    pInfo.gated = !this.runPreEnqueuePlugins(pInfo);
    if (pInfo.gated) {
      if (!this.activeQ.has(pInfo) && !this.backoffQ.has(pInfo)) {
        this.unschedulablePods.addOrUpdate(pInfo);
        this.onIncoming("unschedulable", event);
      }
      return false;
    }
    pInfo.initialAttemptTimestamp ??= this.clock.now();
    this.activeQ.addOrUpdate(pInfo);
    this.onIncoming("active", event);
    this.unschedulablePods.delete(pInfo.podInfo.pod);
    this.backoffQ.delete(pInfo);
    if (
      event === PodAdd ||
      event === eventLabel(UnscheduledPodAdd) ||
      event === eventLabel(UnscheduledPodUpdate)
    ) {
      this.nominator.addNominatedPod(pInfo.podInfo);
    }
    return true;
  }
  // #endregion add

  schedulingCycle(): number {
    return this.activeQ.schedulingCycle();
  }

  /** Pop: the next pod to schedule; waits for one; undefined after close. */
  pop(): Promise<QueuedPodInfo | undefined> {
    return this.activeQ.pop();
  }

  /** Done: the pod's scheduling (and binding) attempt is over. */
  done(uid: string): void {
    this.activeQ.done(uid);
  }

  // #region add-unschedulable
  /**
   * AddUnschedulableIfNotPresent: a popped pod that failed comes back. With hints, the events
   * seen while it was in flight decide (any Queue → backoffQ/activeQ, else unschedulablePods).
   * Without, the moveRequestCycle rule: if a move request came during or after the pod's cycle,
   * the event the pod missed may have helped, so it goes to backoffQ, not unschedulablePods.
   * A pod no plugin rejected failed on an error and always goes to backoffQ.
   */
  addUnschedulableIfNotPresent(pInfo: QueuedPodInfo, podSchedulingCycle: number): Error | undefined {
    const pod = pInfo.podInfo.pod;
    const name = `${pod.metadata.namespace}/${pod.metadata.name}`;
    if (this.unschedulablePods.get(pod))
      return new Error(`Pod ${name} is already present in unschedulable queue`);
    if (this.activeQ.has(pInfo)) return new Error(`Pod ${name} is already present in the active queue`);
    if (this.backoffQ.has(pInfo)) return new Error(`Pod ${name} is already present in the backoff queue`);
    // The backoff counts from now, not from the pod's first arrival.
    pInfo.timestamp = this.clock.now();
    const rejectors = rejectorPlugins(pInfo);
    if (!this.queueingHintsEnabled) {
      if (this.moveRequestCycle >= podSchedulingCycle || rejectors.size === 0) {
        this.backoffQ.add(pInfo);
        this.onIncoming("backoff", ScheduleAttemptFailure);
      } else {
        this.unschedulablePods.addOrUpdate(pInfo);
        this.onIncoming("unschedulable", ScheduleAttemptFailure);
      }
    } else {
      const queue = this.requeuePodViaQueueingHint(
        pInfo,
        this.hintForInFlightPod(pInfo),
        ScheduleAttemptFailure,
      );
      if (queue === "Active") this.activeQ.broadcast();
    }
    this.nominator.addNominatedPod(pInfo.podInfo);
    return undefined;
  }

  private hintForInFlightPod(pInfo: QueuedPodInfo): Strategy {
    const events = this.activeQ.clusterEventsForPod(getPodKey(pInfo.podInfo.pod));
    if (events instanceof Error) return Strategy.queueSkip;
    // No rejector: an error (an API server hiccup), not the cluster; retry after backoff.
    if (rejectorPlugins(pInfo).size === 0) return Strategy.queueAfterBackoff;
    let strategy = Strategy.queueSkip;
    for (const e of events) {
      const s = this.isPodWorthRequeuing(pInfo, e.event, e.oldObj, e.newObj);
      if (s === Strategy.queueImmediately) return s;
      if (s === Strategy.queueAfterBackoff) {
        strategy = s;
        if (pInfo.pendingPlugins.size === 0) return s;
      }
    }
    return strategy;
  }
  // #endregion add-unschedulable

  // #region worth-requeuing
  /**
   * isPodWorthRequeuing: runs the hints of the plugins that rejected the pod, for the registered
   * events that match. Queue from an Unschedulable rejector means "after backoff"; Queue from a
   * Pending rejector means "now" (the pod waited on something that has now happened).
   */
  private isPodWorthRequeuing(
    pInfo: QueuedPodInfo,
    event: ClusterEvent,
    oldObj: unknown,
    newObj: unknown,
  ): Strategy {
    const rejectors = rejectorPlugins(pInfo);
    if (rejectors.size === 0) return Strategy.queueAfterBackoff;
    // The wildcard (the 5-minute flush, Activate) moves every pod, whatever its rejectors.
    if (isWildCard(event)) return Strategy.queueAfterBackoff;
    const pod = pInfo.podInfo.pod;
    const hintMap = this.queueingHintMap.get(pod.spec.schedulerName ?? "default-scheduler");
    if (!hintMap) return Strategy.queueAfterBackoff;
    let strategy = Strategy.queueSkip;
    for (const { event: registered, hints } of hintMap) {
      if (!matchEvent(registered, event)) continue;
      for (const h of hints) {
        if (!rejectors.has(h.pluginName)) continue;
        let hint = this.queueingHintsEnabled ? h.queueingHintFn(pod, oldObj, newObj) : QueueingHint.Queue;
        // A failing hint must not strand the pod: treat its error as Queue.
        if (hint instanceof Error) hint = QueueingHint.Queue;
        if (hint === QueueingHint.QueueSkip) continue;
        if (pInfo.pendingPlugins.has(h.pluginName)) return Strategy.queueImmediately;
        if (pInfo.pendingPlugins.size === 0) return Strategy.queueAfterBackoff;
        strategy = Strategy.queueAfterBackoff;
      }
    }
    return strategy;
  }

  /** requeuePodViaQueueingHint: puts the pod where the strategy says; returns which queue. */
  private requeuePodViaQueueingHint(pInfo: QueuedPodInfo, strategy: Strategy, event: string): QueueName {
    if (strategy === Strategy.queueSkip) {
      this.unschedulablePods.addOrUpdate(pInfo);
      this.onIncoming("unschedulable", event);
      return "Unschedulable";
    }
    // The pod may have finished its backoff while parked; then it goes straight to activeQ.
    if (strategy === Strategy.queueAfterBackoff && this.backoffQ.isPodBackingoff(pInfo)) {
      this.backoffQ.add(pInfo);
      this.onIncoming("backoff", event);
      return "Backoff";
    }
    return this.moveToActiveQ(pInfo, event) ? "Active" : "Unschedulable";
  }
  // #endregion worth-requeuing

  // #region move-on-event
  /**
   * MoveAllToActiveOrBackoffQueue: a cluster event happened; the unschedulable pods (passing
   * `preCheck`) whose rejectors' hints say Queue move to backoffQ or activeQ.
   */
  moveAllToActiveOrBackoffQueue(
    event: ClusterEvent,
    oldObj: unknown,
    newObj: unknown,
    preCheck?: (pod: Pod) => boolean,
  ): void {
    const pods = [...this.unschedulablePods.podInfoMap.values()].filter(
      (p) => !preCheck || preCheck(p.podInfo.pod),
    );
    this.movePodsToActiveOrBackoffQueue(pods, event, oldObj, newObj);
  }

  private movePodsToActiveOrBackoffQueue(
    pods: QueuedPodInfo[],
    event: ClusterEvent,
    oldObj: unknown,
    newObj: unknown,
  ): void {
    let activated = false;
    for (const pInfo of pods) {
      // Gated pods wait for their own update (a gate removed), never for a cluster event.
      if (pInfo.gated) continue;
      const strategy = this.isPodWorthRequeuing(pInfo, event, oldObj, newObj);
      if (strategy === Strategy.queueSkip) continue;
      this.unschedulablePods.delete(pInfo.podInfo.pod);
      if (this.requeuePodViaQueueingHint(pInfo, strategy, eventLabel(event)) === "Active") activated = true;
    }
    this.moveRequestCycle = this.activeQ.schedulingCycle();
    if (this.queueingHintsEnabled) this.activeQ.addEventIfAnyInFlight({ event, oldObj, newObj });
    if (activated) this.activeQ.broadcast();
  }

  /** AssignedPodAdded: a pod was bound somewhere — pods waiting on affinity to it may fit now. */
  assignedPodAdded(pod: Pod): void {
    this.moveAllToActiveOrBackoffQueue(AssignedPodAdd, undefined, pod);
  }

  /** AssignedPodUpdated: a bound pod changed (its labels, or a request scaled down). */
  assignedPodUpdated(oldPod: Pod, newPod: Pod, event: ClusterEvent): void {
    this.moveAllToActiveOrBackoffQueue(event, oldPod, newPod);
  }
  // #endregion move-on-event

  // #region flush
  /** flushBackoffQCompleted: pods whose backoff ended go to activeQ (every second). */
  flushBackoffQCompleted(): void {
    let activated = false;
    for (const pInfo of this.backoffQ.popCompleted()) {
      if (this.moveToActiveQ(pInfo, BackoffComplete)) activated = true;
    }
    if (activated) this.activeQ.broadcast();
  }

  /** flushUnschedulablePodsLeftover: pods parked longer than 5 minutes are moved regardless. */
  flushUnschedulablePodsLeftover(): void {
    const now = this.clock.now();
    const old = [...this.unschedulablePods.podInfoMap.values()].filter(
      (p) => now - p.timestamp > this.podMaxInUnschedulablePodsDuration,
    );
    if (old.length > 0)
      this.movePodsToActiveOrBackoffQueue(old, EventUnschedulableTimeout, undefined, undefined);
  }
  // #endregion flush

  // #region update-delete
  /** Update: an unscheduled pod changed; an update may make a rejected or gated pod schedulable. */
  update(oldPod: Pod | undefined, newPod: Pod): void {
    const events = oldPod ? podSchedulingPropertiesChange(newPod, oldPod) : [UnscheduledPodUpdate];
    if (this.queueingHintsEnabled && oldPod) {
      const recorded = events.map((event): InFlightEvent => ({ event, oldObj: oldPod, newObj: newPod }));
      // In flight: the pod comes back through addUnschedulableIfNotPresent, which sees these.
      if (this.activeQ.addEventsIfPodInFlight(getPodKey(newPod), recorded)) return;
    }
    if (oldPod) {
      const lookup = lookupInfo(oldPod);
      const inActive = this.activeQ.get(lookup);
      if (inActive) {
        this.updatePodInfo(inActive, oldPod, newPod);
        this.activeQ.addOrUpdate(inActive);
        return;
      }
      const inBackoff = this.backoffQ.get(lookup);
      if (inBackoff) {
        this.updatePodInfo(inBackoff, oldPod, newPod);
        this.backoffQ.add(inBackoff);
        return;
      }
    }
    const parked = this.unschedulablePods.get(newPod);
    if (parked) {
      this.updatePodInfo(parked, oldPod ?? newPod, newPod);
      if (this.queueingHintsEnabled) {
        for (const event of events) {
          const strategy = this.isPodWorthRequeuing(parked, event, oldPod, newPod);
          // The pod's own update may lift its gate: give PreEnqueue another look.
          const queue = this.requeuePodViaQueueingHint(parked, strategy, eventLabel(event));
          if (queue !== "Unschedulable") this.unschedulablePods.delete(parked.podInfo.pod);
          if (queue === "Active") {
            this.activeQ.broadcast();
            break;
          }
        }
        return;
      }
      if (oldPod && isPodUpdated(oldPod, newPod)) {
        if (this.backoffQ.isPodBackingoff(parked)) {
          this.backoffQ.add(parked);
          this.unschedulablePods.delete(parked.podInfo.pod);
        } else if (this.moveToActiveQ(parked, BackoffComplete)) this.activeQ.broadcast();
        return;
      }
      this.unschedulablePods.addOrUpdate(parked);
      return;
    }
    // In no queue (not seen before, or dropped): treat it as new.
    const pInfo = newQueuedPodInfo(newPod, this.clock.now());
    if (this.moveToActiveQ(pInfo, eventLabel(UnscheduledPodUpdate))) this.activeQ.broadcast();
  }

  private updatePodInfo(pInfo: QueuedPodInfo, oldPod: Pod, newPod: Pod): void {
    pInfo.podInfo.updatePod(newPod);
    this.nominator.updateNominatedPod(oldPod, pInfo.podInfo);
  }

  /** Delete: the pod is gone (deleted, or bound by someone else). */
  delete(pod: Pod): void {
    this.nominator.deleteNominatedPodIfExists(pod);
    const lookup = lookupInfo(pod);
    if (!this.activeQ.delete(lookup)) {
      this.backoffQ.delete(lookup);
      this.unschedulablePods.delete(pod);
    }
  }

  /** Activate: move these pods to activeQ now, skipping backoff (used by plugins and preemption). */
  activate(pods: Pod[]): void {
    let activated = false;
    for (const pod of pods) {
      const lookup = lookupInfo(pod);
      const pInfo = this.unschedulablePods.get(pod) ?? this.backoffQ.get(lookup);
      if (!pInfo) {
        // In flight: record the wildcard so that it is retried when it comes back.
        if (this.activeQ.isInFlight(getPodKey(pod))) {
          this.activeQ.addEventsIfPodInFlight(getPodKey(pod), [
            { event: EventForceActivate, oldObj: undefined, newObj: pod },
          ]);
        }
        continue;
      }
      if (this.moveToActiveQ(pInfo, eventLabel(EventForceActivate))) activated = true;
    }
    if (activated) this.activeQ.broadcast();
  }
  // #endregion update-delete

  // #region nominator
  addNominatedPod(pi: PodInfo, nominatingInfo?: NominatingInfo): void {
    this.nominator.addNominatedPod(pi, nominatingInfo);
  }
  deleteNominatedPodIfExists(pod: Pod): void {
    this.nominator.deleteNominatedPodIfExists(pod);
  }
  updateNominatedPod(oldPod: Pod, newPodInfo: PodInfo): void {
    this.nominator.updateNominatedPod(oldPod, newPodInfo);
  }
  nominatedPodsForNode(nodeName: string): PodInfo[] {
    return this.nominator.nominatedPodsForNode(nodeName);
  }
  // #endregion nominator

  // #region pending-pods
  /** PendingPods: every queued pod, and upstream's one-line summary of where they are. */
  pendingPods(): { pods: Pod[]; summary: string } {
    const pods = [
      ...this.activeQ.list(),
      ...this.backoffQ.list(),
      ...this.unschedulablePods.podInfoMap.values(),
    ].map((p) => p.podInfo.pod);
    const summary = `activeQ:${this.activeQ.len()}; backoffQ:${this.backoffQ.len()}; unschedulablePods:${this.unschedulablePods.len()}`;
    return { pods, summary };
  }

  /** The scheduler_pending_pods gauge's values, by its `queue` label. */
  pendingPodsMetric(): { active: number; backoff: number; unschedulable: number; gated: number } {
    const gated = this.unschedulablePods.gatedCount();
    return {
      active: this.activeQ.len(),
      backoff: this.backoffQ.len(),
      unschedulable: this.unschedulablePods.len() - gated,
      gated,
    };
  }
  // #endregion pending-pods

  /** Where a pod is now, for tests and debugging. */
  whereIs(pod: Pod): QueueName | "InFlight" | undefined {
    const lookup = lookupInfo(pod);
    if (this.activeQ.has(lookup)) return "Active";
    if (this.backoffQ.has(lookup)) return "Backoff";
    if (this.unschedulablePods.get(pod)) return "Unschedulable";
    if (this.activeQ.isInFlight(getPodKey(pod))) return "InFlight";
    return undefined;
  }
}

/** newQueuedPodInfoForLookup: enough of a QueuedPodInfo to find a pod by key — no PodInfo is
 * computed, since parsing a pod's terms and requests for a lookup would cost more than the lookup. */
function lookupInfo(pod: Pod): QueuedPodInfo {
  return {
    podInfo: { pod } as PodInfo,
    timestamp: 0,
    attempts: 0,
    unschedulablePlugins: new Set(),
    pendingPlugins: new Set(),
    gated: false,
  };
}

const rejectorPlugins = (pInfo: QueuedPodInfo): Set<string> =>
  new Set([...pInfo.unschedulablePlugins, ...pInfo.pendingPlugins]);

/** isPodUpdated: a change beyond resourceVersion, generation and status. */
function isPodUpdated(oldPod: Pod, newPod: Pod): boolean {
  const strip = (p: Pod) => {
    const { resourceVersion: _rv, generation: _g, ...meta } = p.metadata;
    return JSON.stringify({ meta, spec: p.spec });
  };
  return strip(oldPod) !== strip(newPod);
}

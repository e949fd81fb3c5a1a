/**
 * ActiveQueue — activeQ, the heap of pods ready to be scheduled (in QueueSort order), plus the
 * pods popped from it and not yet done ("in flight") and the events seen while they were.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/backend/queue/active_queue.go (activeQueue, pop, done, inFlightPods, inFlightEvents, clusterEventsForPod, addEventIfAnyInFlight, schedulingCycle, broadcast)
 * @chapter 05-scheduler
 *
 * Solves:
 * - the scheduling loop waits for work: `pop` resolves at once if a pod is ready, else when
 *   one is added (a goroutine blocked on a condition variable upstream; a promise here).
 * - a pod is rejected at the end of its cycle, but a node may have been added *during* it; had
 *   the pod been in unschedulablePods that event would have moved it. So every event that
 *   arrives while any pod is in flight is recorded, and a rejected pod's hints are run over the
 *   events that arrived after it was popped.
 *
 * Invariants:
 * - `schedulingCycle` counts pops; it only grows.
 * - `inFlightEvents` holds, in arrival order, a marker per in-flight pod and each event that
 *   arrived after the oldest in-flight pod was popped; nothing before the oldest marker is kept.
 * - after `close`, every waiting and later `pop` resolves to undefined.
 */
import type { ClusterEvent } from "../../framework/events.ts";
import type { LessFunc } from "../../framework/interface.ts";
import { getPodKey, type QueuedPodInfo } from "../../framework/types.ts";
import { Heap } from "../heap/heap.ts";

export interface InFlightEvent {
  event: ClusterEvent;
  oldObj: unknown;
  newObj: unknown;
}

type Entry = { pod: string } | InFlightEvent;

export class ActiveQueue {
  private readonly heap: Heap<QueuedPodInfo>;
  private cycle = 0;
  private closed = false;
  private readonly waiters: ((p: QueuedPodInfo | undefined) => void)[] = [];
  /** pod UID → its marker in inFlightEvents. */
  private readonly inFlightPods = new Map<string, Entry>();
  private inFlightEvents: Entry[] = [];

  constructor(
    less: LessFunc,
    /** Whether events are recorded for in-flight pods (the SchedulerQueueingHints mode). */
    private readonly recordInFlightEvents: boolean,
  ) {
    this.heap = new Heap((p) => getPodKey(p.podInfo.pod), less);
  }

  addOrUpdate(pInfo: QueuedPodInfo): void {
    this.heap.addOrUpdate(pInfo);
  }

  delete(pInfo: QueuedPodInfo): boolean {
    return this.heap.delete(pInfo);
  }

  get(pInfo: QueuedPodInfo): QueuedPodInfo | undefined {
    return this.heap.get(pInfo);
  }

  has(pInfo: QueuedPodInfo): boolean {
    return this.heap.has(pInfo);
  }

  list(): QueuedPodInfo[] {
    return this.heap.list();
  }

  len(): number {
    return this.heap.len();
  }

  schedulingCycle(): number {
    return this.cycle;
  }

  // #region pop
  /** Pop: the head of activeQ, waiting for one if it is empty; undefined once closed. */
  pop(): Promise<QueuedPodInfo | undefined> {
    if (this.closed) return Promise.resolve(undefined);
    if (this.heap.len() > 0) return Promise.resolve(this.take());
    return new Promise((resolve) => this.waiters.push(resolve));
  }

  private take(): QueuedPodInfo {
    const pInfo = this.heap.pop()!;
    pInfo.attempts++;
    this.cycle++;
    if (this.recordInFlightEvents) {
      const marker = { pod: getPodKey(pInfo.podInfo.pod) };
      this.inFlightPods.set(marker.pod, marker);
      this.inFlightEvents.push(marker);
    }
    // The rejectors of the last attempt are history now; this attempt records its own.
    pInfo.unschedulablePlugins.clear();
    pInfo.pendingPlugins.clear();
    return pInfo;
  }

  /** broadcast: hands ready pods to waiting pops (upstream's cond.Broadcast). */
  broadcast(): void {
    while (this.waiters.length > 0 && this.heap.len() > 0) this.waiters.shift()!(this.take());
  }
  // #endregion pop

  // #region in-flight
  isInFlight(uid: string): boolean {
    return this.inFlightPods.has(uid);
  }

  inFlightUIDs(): string[] {
    return [...this.inFlightPods.keys()];
  }

  /** Records the event if any pod is in flight; returns whether it was recorded. */
  addEventIfAnyInFlight(e: InFlightEvent): boolean {
    if (this.inFlightPods.size === 0) return false;
    this.inFlightEvents.push(e);
    return true;
  }

  /** Records events for the pod if it is in flight (an update of the pod itself). */
  addEventsIfPodInFlight(uid: string, events: InFlightEvent[]): boolean {
    if (!this.inFlightPods.has(uid)) return false;
    this.inFlightEvents.push(...events);
    return true;
  }

  /** The events that arrived after the pod was popped, oldest first. */
  clusterEventsForPod(uid: string): InFlightEvent[] | Error {
    const marker = this.inFlightPods.get(uid);
    if (!marker)
      return new Error(
        `in flight Pod isn't found in the scheduling queue. If you see this error log, it's likely a bug in the scheduler`,
      );
    const at = this.inFlightEvents.indexOf(marker);
    return this.inFlightEvents.slice(at + 1).filter((e): e is InFlightEvent => "event" in e);
  }

  /** done: the pod's cycle is over; events nobody in flight can need any more are dropped. */
  done(uid: string): void {
    const marker = this.inFlightPods.get(uid);
    if (!marker) return;
    this.inFlightPods.delete(uid);
    this.inFlightEvents.splice(this.inFlightEvents.indexOf(marker), 1);
    const firstPod = this.inFlightEvents.findIndex((e) => "pod" in e);
    this.inFlightEvents = firstPod < 0 ? [] : this.inFlightEvents.slice(firstPod);
  }

  /** How many entries the in-flight log holds (markers and events) — for tests of its trimming. */
  inFlightLogLength(): number {
    return this.inFlightEvents.length;
  }
  // #endregion in-flight

  close(): void {
    this.closed = true;
    for (const w of this.waiters.splice(0)) w(undefined);
  }

  isClosed(): boolean {
    return this.closed;
  }
}

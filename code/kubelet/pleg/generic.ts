/**
 * GenericPLEG — the pod lifecycle event generator: relists the runtime every second and turns
 * what changed since the last relist into events for the sync loop.
 * Mirrors kubernetes/kubernetes pkg/kubelet/pleg/generic.go.
 *
 * Solves:
 * - a container can die at any moment, and nothing tells the kubelet (the CRI has no reliable
 *   event stream in 1.32's default mode): the kubelet must look. Inspecting every pod in detail
 *   every second is too expensive, so the PLEG lists everything cheaply (`getPods(true)`), compares
 *   each container's state with the previous list, and inspects (`getPodStatus`) only the pods in
 *   which something changed.
 * - a pod worker must wait for a runtime view newer than its own last action; the PLEG keeps the
 *   pod status cache and moves its global timestamp at the end of each relist (cache.ts).
 *
 * Invariants:
 * - for each container, old state → new state gives at most two events (generateEvents); no
 *   change gives none. ContainerChanged events update the cache but are not sent (upstream drops
 *   them before the channel).
 * - a pod whose inspection failed is inspected again on the next relist even if nothing changed.
 * - the cache's global timestamp is the relist's start time, set only after every changed pod's
 *   status was written.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/pleg/generic.go (GenericPLEG, NewGenericPLEG, Relist, generateEvents, convertState, podRecords, updateCache, Healthy)
 * @upstream kubernetes/kubernetes pkg/kubelet/pleg/pleg.go (PodLifeCycleEventType, PodLifecycleEvent, RelistDuration)
 * @chapter 07-kubelet
 */

import { type Clock, realClock } from "../../client/util/clock.ts";
import type { Cache } from "../container/cache.ts";
import { containerIDString, type Runtime, type RuntimePod, type State } from "../container/runtime.ts";

/** pleg.go: the default relist period and the health threshold. */
export const relistPeriodMs = 1000;
export const relistThresholdMs = 3 * 60 * 1000;

export type PodLifeCycleEventType =
  | "ContainerStarted"
  | "ContainerDied"
  | "ContainerRemoved"
  | "PodSync"
  | "ContainerChanged";

export interface PodLifecycleEvent {
  /** The pod's UID. */
  id: string;
  type: PodLifeCycleEventType;
  /** The container ID (`type://id`). */
  data: string;
}

/** The PLEG's own view of a container: the runtime's four states plus "gone". */
export type PlegContainerState = "running" | "exited" | "unknown" | "non-existent";

export function convertState(state: State): PlegContainerState {
  // The kubelet does not use "created" yet: it reads as unknown, as upstream converts it.
  if (state === "running" || state === "exited") return state;
  return "unknown";
}

// #region generate-events
/** The events one container's transition makes. */
export function generateEvents(
  podID: string,
  cid: string,
  oldState: PlegContainerState,
  newState: PlegContainerState,
): PodLifecycleEvent[] {
  if (oldState === newState) return [];
  const ev = (type: PodLifeCycleEventType) => ({ id: podID, type, data: cid });
  switch (newState) {
    case "running":
      return [ev("ContainerStarted")];
    case "exited":
      return [ev("ContainerDied")];
    case "unknown":
      return [ev("ContainerChanged")];
    case "non-existent":
      // Gone without a relist seeing it exit: it died and was removed in between.
      return oldState === "exited" ? [ev("ContainerRemoved")] : [ev("ContainerDied"), ev("ContainerRemoved")];
  }
}
// #endregion generate-events

interface PodRecord {
  old?: RuntimePod;
  current?: RuntimePod;
}

export interface GenericPLEGOptions {
  runtime: Runtime;
  cache: Cache;
  clock?: Clock;
  relistPeriodMs?: number;
  onError?: (err: unknown) => void;
}

export class GenericPLEG {
  private readonly clock: Clock;
  private podRecords = new Map<string, PodRecord>();
  private podsToReinspect = new Set<string>();
  private listeners: ((e: PodLifecycleEvent) => void)[] = [];
  private relistTime: number | undefined;
  private stopped = true;
  private timer?: { stop(): boolean };
  private running?: Promise<void>;

  constructor(private readonly o: GenericPLEGOptions) {
    this.clock = o.clock ?? realClock;
  }

  /** Upstream's Watch() channel, as a listener. */
  watch(listener: (e: PodLifecycleEvent) => void): () => void {
    this.listeners.push(listener);
    return () => {
      this.listeners = this.listeners.filter((l) => l !== listener);
    };
  }

  /** Relists every period (wait.Until: the next relist is a period after the previous one ends). */
  start(): void {
    if (!this.stopped) return;
    this.stopped = false;
    const tick = () => {
      if (this.stopped) return;
      this.running = this.relist()
        .catch((err) => this.o.onError?.(err))
        .finally(() => {
          this.running = undefined;
          if (!this.stopped) this.timer = this.clock.afterFunc(this.o.relistPeriodMs ?? relistPeriodMs, tick);
        });
    };
    tick();
  }

  async stop(): Promise<void> {
    this.stopped = true;
    this.timer?.stop();
    await this.running;
  }

  /** Healthy: a relist finished within the last three minutes. */
  healthy(): { ok: boolean; message: string } {
    if (this.relistTime === undefined) return { ok: false, message: "pleg has yet to be successful" };
    const elapsed = this.clock.now() - this.relistTime;
    if (elapsed > relistThresholdMs)
      return {
        ok: false,
        message: `pleg was last seen active ${elapsed}ms ago; threshold is ${relistThresholdMs}ms`,
      };
    return { ok: true, message: "" };
  }

  // #region pleg-relist
  /** One relist: list, diff against the last list, inspect what changed, publish events. */
  async relist(): Promise<void> {
    const timestamp = this.clock.now();
    const pods = await this.o.runtime.getPods(true);
    this.relistTime = timestamp;

    for (const pod of pods) {
      const r = this.podRecords.get(pod.id) ?? {};
      r.current = pod;
      this.podRecords.set(pod.id, r);
    }
    // A pod missing from this list has no current record: every one of its containers is gone.
    for (const [uid, r] of this.podRecords) {
      if (!pods.some((p) => p.id === uid)) r.current = undefined;
    }

    const eventsByPod = new Map<string, PodLifecycleEvent[]>();
    for (const [uid, r] of this.podRecords) {
      const events: PodLifecycleEvent[] = [];
      for (const cid of allContainerIDs(r)) {
        events.push(...generateEvents(uid, cid, stateOf(r.old, cid), stateOf(r.current, cid)));
      }
      eventsByPod.set(uid, events);
    }

    for (const [uid, events] of eventsByPod) {
      const r = this.podRecords.get(uid)!;
      if (events.length > 0 || this.podsToReinspect.has(uid)) {
        await this.updateCache(uid, r.current ?? r.old, timestamp);
      }
      // The current list becomes the old one; a pod gone from the runtime is forgotten.
      if (r.current) r.old = r.current;
      else this.podRecords.delete(uid);
      for (const e of events) {
        if (e.type === "ContainerChanged") continue; // not worth a sync
        for (const l of this.listeners) l(e);
      }
    }
    // Every pod not written above is still as cached, as of this relist.
    this.o.cache.updateTime(timestamp);
  }
  // #endregion pleg-relist

  private async updateCache(uid: string, pod: RuntimePod | undefined, timestamp: number): Promise<void> {
    if (!pod) {
      this.o.cache.delete(uid); // gone from the runtime altogether
      this.podsToReinspect.delete(uid);
      return;
    }
    try {
      const status = await this.o.runtime.getPodStatus(uid, pod.name, pod.namespace);
      this.o.cache.set(uid, status, undefined, timestamp);
      this.podsToReinspect.delete(uid);
    } catch (err) {
      this.o.cache.set(
        uid,
        {
          id: uid,
          name: pod.name,
          namespace: pod.namespace,
          ips: [],
          containerStatuses: [],
          sandboxStatuses: [],
          timeStamp: timestamp,
        },
        err as Error,
        timestamp,
      );
      this.podsToReinspect.add(uid);
    }
  }
}

function allContainerIDs(r: PodRecord): string[] {
  const ids = new Set<string>();
  for (const p of [r.old, r.current]) {
    if (!p) continue;
    for (const c of [...p.containers, ...p.sandboxes]) ids.add(containerIDString(c.id));
  }
  return [...ids];
}

function stateOf(pod: RuntimePod | undefined, cid: string): PlegContainerState {
  if (!pod) return "non-existent";
  const c = [...pod.containers, ...pod.sandboxes].find((x) => containerIDString(x.id) === cid);
  return c ? convertState(c.state) : "non-existent";
}

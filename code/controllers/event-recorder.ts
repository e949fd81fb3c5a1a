/**
 * An event recorder — writes a core/v1 Event for what a controller did ("Created pod: web-x7k2p"),
 * so `kubectl describe rs web` and `kubectl get events` show it, as they do upstream.
 * Mirrors client-go tools/record/event.go (EventRecorder.Eventf, recorder.makeEvent, the
 * `<name>.<unix-nanos in hex>` event name, recordToSink, recordEvent).
 *
 * Solves:
 * - the user's question "why does my ReplicaSet have 0 pods?" is answered where they look: a
 *   Warning FailedCreate event on the ReplicaSet carries the API server's refusal;
 * - a controller failing in a loop must not write a new Event every time: each event goes
 *   through an EventCorrelator (code/client/tools/record/events-cache.ts), so a repeat is a PATCH
 *   of the first one's count, similar events are combined, and an object over its budget is
 *   silenced.
 *
 * Invariants:
 * - recording never throws and never blocks the controller: the write runs in the background and
 *   its failure is only reported to `onError` (upstream drops events it cannot write, too);
 * - events are correlated and written one at a time, in the order recorded (upstream's one
 *   goroutine per sink): a repeat's PATCH is never sent before the create it patches;
 * - a PATCH that finds no Event (deleted, or expired by its TTL) becomes a create; a refusal by
 *   the server (a Status) is not retried; a transport error is, up to 12 tries, 10 s apart;
 * - at most 1000 events wait to be written; more are dropped (upstream's DropIfChannelFull);
 * - the event is in the involved object's namespace, named `<object>.<nanoseconds in hex>`; two
 *   events of one recorder in the same millisecond get different names.
 *
 * What upstream does differently: a broadcaster fans each event out to several sinks (the API,
 * the log), each with its own correlator; here one recorder has one sink and one correlator. This
 * file would live in code/client/tools/record/ beside events-cache.ts to match client-go; it
 * stays here because it implements the controllers' EventRecorder type (pod-control.ts).
 *
 * @upstream kubernetes/client-go tools/record/event.go (EventRecorder, recorder.generateEvent, makeEvent, recordToSink, recordEvent, maxTriesPerEvent, maxQueuedEvents)
 * @chapter 04-informers
 */

import type { Event } from "../api/core.ts";
import type { KubeObject } from "../api/meta.ts";
import type { GroupVersionKind } from "../api/schema.ts";
import { isAlreadyExists, StatusError } from "../client/errors.ts";
import type { Clientset } from "../client/kubernetes/clientset.ts";
import { StrategicMergePatchType } from "../client/rest/request.ts";
import { EventCorrelator, rfc3339 } from "../client/tools/record/events-cache.ts";
import { type Clock, realClock, sleep } from "../client/util/clock.ts";
import type { EventRecorder } from "./pod-control.ts";

/** recordToSink's limits. */
export const maxTriesPerEvent = 12;
export const defaultSleepDurationMs = 10_000;
export const maxQueuedEvents = 1000;

/** Where events are written (client-go's EventSink: the clientset's events, by namespace). */
export interface EventSink {
  create(event: Event): Promise<Event>;
  patch(event: Event, patch: Record<string, unknown>): Promise<Event>;
}

export function clientsetEventSink(client: Clientset): EventSink {
  return {
    create: (e) => client.coreV1.events(e.metadata.namespace ?? "default").create(e),
    patch: (e, p) =>
      client.coreV1
        .events(e.metadata.namespace ?? "default")
        .patch(e.metadata.name ?? "", StrategicMergePatchType, p),
  };
}

export interface EventRecorderOptions {
  clock?: Clock;
  onError?: (err: unknown) => void;
  /** The correlator's clock and limits; defaults to upstream's (correlator on `clock`). */
  correlator?: EventCorrelator;
  /** The wait between tries of a write that could not reach the server. */
  sleepDurationMs?: number;
  /** Where events go; the clientset's events when absent. */
  sink?: EventSink;
  /** The node the component runs on (source.host): the kubelet's events name their node. */
  host?: string;
}

/** A recorder, and a promise for the writes it has queued so far (tests, shutdown). */
export type CorrelatingEventRecorder = EventRecorder & { flush(): Promise<void> };

// #region event-recorder
/** A recorder for objects of one kind (list items carry no kind of their own). */
export function newEventRecorder(
  client: Clientset,
  component: string,
  involvedKind: GroupVersionKind,
  opts: EventRecorderOptions = {},
): CorrelatingEventRecorder {
  const clock = opts.clock ?? realClock;
  const correlator = opts.correlator ?? new EventCorrelator({ clock });
  const sink = opts.sink ?? clientsetEventSink(client);
  const sleepMs = opts.sleepDurationMs ?? defaultSleepDurationMs;
  // One write at a time, in order: the tail of the chain is the last queued event's write.
  let tail: Promise<void> = Promise.resolve();
  let queued = 0;
  // Our clock has milliseconds; Go's UnixNano differs for every call. A counter in the
  // sub-millisecond digits keeps the names of events made in one millisecond apart.
  let seq = 0;
  const record = (object: KubeObject, type: "Normal" | "Warning", reason: string, message: string) => {
    const now = clock.now();
    seq = (seq + 1) % 1_000_000;
    const { name = "", namespace = "default", uid, resourceVersion } = object.metadata;
    const event: Event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: { name: `${name}.${(BigInt(now) * 1_000_000n + BigInt(seq)).toString(16)}`, namespace },
      involvedObject: {
        apiVersion: involvedKind.group
          ? `${involvedKind.group}/${involvedKind.version}`
          : involvedKind.version,
        kind: involvedKind.kind,
        namespace,
        name,
        uid,
        resourceVersion,
      },
      reason,
      message,
      type,
      source: opts.host ? { component, host: opts.host } : { component },
      firstTimestamp: rfc3339(now),
      lastTimestamp: rfc3339(now),
      count: 1,
      reportingComponent: component,
    };
    if (queued >= maxQueuedEvents) return; // the channel is full: dropped, as upstream
    queued++;
    tail = tail.then(async () => {
      try {
        await recordToSink(sink, event, correlator, clock, sleepMs, opts.onError);
      } finally {
        queued--;
      }
    });
  };
  return Object.assign(record, { flush: () => tail });
}
// #endregion event-recorder

// #region record-to-sink
/** Correlates one event and writes what the correlator says: nothing, a patch, or a create. */
export async function recordToSink(
  sink: EventSink,
  event: Event,
  correlator: EventCorrelator,
  clock: Clock = realClock,
  sleepMs = defaultSleepDurationMs,
  onError?: (err: unknown) => void,
): Promise<void> {
  const result = correlator.eventCorrelate(event);
  if (result.skip || !result.event) return;
  for (let tries = 1; ; tries++) {
    const err = await recordEvent(sink, result.event, result.patch, correlator);
    if (err === undefined) return;
    // A Status is the server's considered answer: the same event would be refused again. (Code 0
    // is our own stand-in for "no answer": worth another try.)
    if ((err instanceof StatusError && err.code !== 0) || tries >= maxTriesPerEvent) {
      if (!isAlreadyExists(err)) onError?.(err);
      return;
    }
    // The first wait is random, so clients cut off together do not come back together.
    await sleep(clock, tries === 1 ? sleepMs * Math.random() : sleepMs);
  }
}

/** One try: patch a repeat (create it if it is gone), create a new one. Undefined on success. */
async function recordEvent(
  sink: EventSink,
  event: Event,
  patch: Record<string, unknown> | undefined,
  correlator: EventCorrelator,
): Promise<unknown> {
  try {
    let written: Event | undefined;
    if (patch && (event.count ?? 0) > 1) {
      try {
        written = await sink.patch(event, patch);
      } catch (err) {
        if (!(err instanceof StatusError && err.status.code === 404)) throw err;
      }
    }
    if (!written) {
      // A create must not carry the resourceVersion of a patched one.
      const { resourceVersion: _rv, ...metadata } = event.metadata;
      written = await sink.create({ ...event, metadata });
    }
    correlator.updateState(written);
    return undefined;
  } catch (err) {
    return err;
  }
}
// #endregion record-to-sink

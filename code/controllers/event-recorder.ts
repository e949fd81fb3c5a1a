/**
 * An event recorder — writes a core/v1 Event for what a controller did ("Created pod: web-x7k2p"),
 * so `kubectl describe rs web` and `kubectl get events` show it, as they do upstream.
 * Mirrors client-go tools/record/event.go (EventRecorder.Eventf, recorder.makeEvent, the
 * `<name>.<unix-nanos in hex>` event name) without its broadcaster and correlator.
 *
 * Solves:
 * - the user's question "why does my ReplicaSet have 0 pods?" is answered where they look: a
 *   Warning FailedCreate event on the ReplicaSet carries the API server's refusal.
 *
 * Invariants:
 * - recording never throws and never blocks the controller: the write runs in the background and
 *   its failure is only reported to `onError` (upstream drops events it cannot write, too);
 * - the event is in the involved object's namespace, named `<object>.<nanoseconds in hex>`; two
 *   events of one recorder in the same millisecond get different names.
 *
 * What upstream does differently: events go through a broadcaster and an EventCorrelator that
 * aggregates repeats (count, lastTimestamp) and rate-limits per object (a burst of 25); here each
 * call writes one Event with count 1. This file would live in code/client/tools/record/ to match
 * client-go; it is here until that package exists.
 *
 * @upstream kubernetes/client-go tools/record/event.go (EventRecorder, recorder.generateEvent, makeEvent)
 * @chapter 04-informers
 */

import type { Event } from "../api/core.ts";
import type { KubeObject } from "../api/meta.ts";
import type { Clientset } from "../client/kubernetes/clientset.ts";
import { type Clock, realClock } from "../client/util/clock.ts";
import type { EventRecorder, GroupVersionKind } from "./pod-control.ts";

const rfc3339 = (ms: number) => new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");

// #region event-recorder
/** A recorder for objects of one kind (list items carry no kind of their own). */
export function newEventRecorder(
  client: Clientset,
  component: string,
  involvedKind: GroupVersionKind,
  opts: { clock?: Clock; onError?: (err: unknown) => void } = {},
): EventRecorder {
  const clock = opts.clock ?? realClock;
  // Our clock has milliseconds; Go's UnixNano differs for every call. A counter in the
  // sub-millisecond digits keeps the names of events made in one millisecond apart.
  let seq = 0;
  return (object: KubeObject, type, reason, message) => {
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
      source: { component },
      firstTimestamp: rfc3339(now),
      lastTimestamp: rfc3339(now),
      count: 1,
      reportingComponent: component,
    };
    client.coreV1
      .events(namespace)
      .create(event)
      .catch((err) => opts.onError?.(err));
  };
}
// #endregion event-recorder

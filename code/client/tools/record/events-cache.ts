/**
 * EventCorrelator — what a recorder does with an event before it writes it: drop it if the
 * object is spamming, combine it with its similar siblings, and turn a repeat into a count.
 * Mirrors client-go tools/record/events_cache.go (EventCorrelator = EventAggregator +
 * eventLogger + EventSourceObjectSpamFilter).
 *
 * Solves:
 * - a controller in a crash loop reports "Back-off restarting failed container" every ten
 *   seconds; written as new objects, those fill etcd and bury `kubectl get events`. A repeat of an
 *   identical event becomes a PATCH of the first one (`count`, `lastTimestamp`) — one object;
 * - a controller that reports the same failure with a different detail each time ("pod a failed",
 *   "pod b failed", …) defeats the repeat rule; once 10 such similar events (same source, object,
 *   type, reason) come within 10 minutes of each other, they are reported as one combined event
 *   ("(combined from similar events): …") whose count goes up;
 * - one object can still produce events without end: a token bucket per (source, object, type),
 *   burst 25 and one token per 5 minutes, drops what is over it — before any write.
 *
 * Invariants:
 * - the three steps run in upstream's order: aggregate → observe (count) → spam filter; the
 *   filter sees the repeats too, so 30 identical events in a row write one Event with count 25;
 * - the logger counts an event it then drops: the next one that passes carries the full count;
 * - every cache is an LRU of 4096 entries: memory is bounded whatever the event keys are;
 * - nothing here reads the wall clock: time comes from the injected Clock.
 *
 * What upstream does differently: its aggregator pops an arbitrary message from the set once the
 * threshold is reached (Go map order); here the oldest one, so the tests are deterministic. The
 * patch is built directly (count, lastTimestamp, message) where upstream diffs two JSON copies
 * with CreateTwoWayMergePatch — the same three fields come out.
 *
 * @upstream kubernetes/client-go tools/record/events_cache.go (EventCorrelator, EventAggregator, eventLogger, EventSourceObjectSpamFilter, getEventKey, getSpamKey, EventAggregatorByReasonFunc)
 * @upstream kubernetes/utils lru/lru.go (Cache)
 * @chapter 04-informers
 */
import type { Event } from "../../../api/core.ts";
import { type Clock, realClock } from "../../util/clock.ts";
import { TokenBucket } from "../../util/flowcontrol/token-bucket.ts";

export const maxLruCacheEntries = 4096;
/** Similar events (same key, differing messages) before they are combined. */
export const defaultAggregateMaxEvents = 10;
/** A quiet spell this long (seconds) starts the similar-event count over. */
export const defaultAggregateIntervalInSeconds = 600;
/** Events one object may send at once… */
export const defaultSpamBurst = 25;
/** …and then one per five minutes. */
export const defaultSpamQPS = 1 / 300;

/** RFC 3339 to the second, as metav1.Time marshals. */
export const rfc3339 = (ms: number) =>
  new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(".000Z", "Z");

// #region keys
/** Everything that makes two events the same event — the message included (getEventKey). */
export function getEventKey(e: Event): string {
  const o = e.involvedObject;
  return [
    e.source?.component,
    e.source?.host,
    o.kind,
    o.namespace,
    o.name,
    o.fieldPath,
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.message,
  ]
    .map((s) => s ?? "")
    .join("");
}

/** Who is talking about which object, with which type: the spam filter's bucket (getSpamKey). */
export function getSpamKey(e: Event): string {
  const o = e.involvedObject;
  return [e.source?.component, e.source?.host, o.kind, o.namespace, o.name, o.uid, o.apiVersion, e.type]
    .map((s) => s ?? "")
    .join("");
}

/** Similar events share the first key (no message); the message tells them apart (EventAggregatorByReasonFunc). */
export function eventAggregatorByReasonFunc(e: Event): [aggregateKey: string, localKey: string] {
  const o = e.involvedObject;
  const aggregateKey = [
    e.source?.component,
    e.source?.host,
    o.kind,
    o.namespace,
    o.name,
    o.uid,
    o.apiVersion,
    e.type,
    e.reason,
    e.reportingComponent, // Go: ReportingController
    e.reportingInstance,
  ]
    .map((s) => s ?? "")
    .join("");
  return [aggregateKey, e.message ?? ""];
}

/** The combined event's message (EventAggregatorByReasonMessageFunc). */
export const eventAggregatorByReasonMessageFunc = (e: Event) =>
  `(combined from similar events): ${e.message ?? ""}`;
// #endregion keys

/** A bounded map that forgets the least recently used entry (k8s.io/utils/lru). */
class LRU<V> {
  private readonly entries = new Map<string, V>();
  constructor(private readonly size: number) {}

  get(key: string): V | undefined {
    const v = this.entries.get(key);
    if (v === undefined) return undefined;
    // Map iterates in insertion order: re-inserting makes it the most recent.
    this.entries.delete(key);
    this.entries.set(key, v);
    return v;
  }

  add(key: string, value: V): void {
    this.entries.delete(key);
    this.entries.set(key, value);
    if (this.entries.size > this.size) this.entries.delete(this.entries.keys().next().value as string);
  }
}

// #region spam-filter
/** A token bucket per spam key; `filter` says true when the event must be dropped. */
export class EventSourceObjectSpamFilter {
  private readonly cache: LRU<TokenBucket>;

  constructor(
    lruCacheSize: number,
    private readonly burst: number,
    private readonly qps: number,
    private readonly clock: Clock,
    private readonly spamKeyFunc: (e: Event) => string = getSpamKey,
  ) {
    this.cache = new LRU(lruCacheSize);
  }

  filter(event: Event): boolean {
    const key = this.spamKeyFunc(event);
    const bucket = this.cache.get(key) ?? new TokenBucket(this.qps, this.burst, this.clock);
    const drop = !bucket.tryAccept();
    this.cache.add(key, bucket);
    return drop;
  }
}
// #endregion spam-filter

// #region aggregator
interface AggregateRecord {
  /** The distinct messages seen under one aggregate key. */
  localKeys: Set<string>;
  /** When the last of them came (ms). */
  lastTimestamp: number;
}

/**
 * Counts the distinct messages of similar events; from the maxEvents-th on, it answers a new,
 * combined event under the aggregate key instead of the event itself (EventAggregate).
 */
export class EventAggregator {
  private readonly cache: LRU<AggregateRecord>;

  constructor(
    lruCacheSize: number,
    private readonly keyFunc: (e: Event) => [string, string],
    private readonly messageFunc: (e: Event) => string,
    private readonly maxEvents: number,
    private readonly maxIntervalInSeconds: number,
    private readonly clock: Clock,
  ) {
    this.cache = new LRU(lruCacheSize);
  }

  /** The event to pass on, and the key its repeats are counted under. */
  eventAggregate(newEvent: Event): { event: Event; key: string } {
    const now = this.clock.now();
    const [aggregateKey, localKey] = this.keyFunc(newEvent);
    let record = this.cache.get(aggregateKey);
    // A quiet spell longer than the interval: what came before is forgotten.
    if (!record || now - record.lastTimestamp > this.maxIntervalInSeconds * 1000) {
      record = { localKeys: new Set(), lastTimestamp: now };
    }
    record.localKeys.add(localKey);
    record.lastTimestamp = now;
    this.cache.add(aggregateKey, record);
    if (record.localKeys.size < this.maxEvents) return { event: newEvent, key: getEventKey(newEvent) };

    // Over the threshold: make room for one more message, and report the combined event. Its
    // key is the aggregate key, so the logger counts every later similar event on it.
    record.localKeys.delete(record.localKeys.values().next().value as string);
    const combined: Event = {
      apiVersion: "v1",
      kind: "Event",
      metadata: {
        name: `${newEvent.involvedObject.name ?? ""}.${(BigInt(now) * 1_000_000n).toString(16)}`,
        namespace: newEvent.metadata.namespace,
      },
      count: 1,
      firstTimestamp: rfc3339(now),
      involvedObject: newEvent.involvedObject,
      lastTimestamp: rfc3339(now),
      message: this.messageFunc(newEvent),
      type: newEvent.type,
      reason: newEvent.reason,
      source: newEvent.source,
    };
    return { event: combined, key: aggregateKey };
  }
}
// #endregion aggregator

// #region logger
interface EventLog {
  count: number;
  firstTimestamp?: string | null;
  name: string;
  resourceVersion?: string;
}

/** What was last written under each key: a repeat becomes a patch of that object (eventLogger). */
export class EventLogger {
  private readonly cache: LRU<EventLog>;

  constructor(lruCacheSize: number) {
    this.cache = new LRU(lruCacheSize);
  }

  /** The event as it should be written, and the patch for it when it is a repeat (eventObserve). */
  eventObserve(newEvent: Event, key: string): { event: Event; patch?: Record<string, unknown> } {
    const event: Event = { ...newEvent, metadata: { ...newEvent.metadata } };
    const last = this.cache.get(key);
    let patch: Record<string, unknown> | undefined;
    if (last && last.count > 0) {
      event.metadata.name = last.name;
      event.metadata.resourceVersion = last.resourceVersion;
      event.firstTimestamp = last.firstTimestamp;
      event.count = last.count + 1;
      // What differs from the first write: the count, the last time, and (combined) the message.
      patch = { count: event.count, lastTimestamp: event.lastTimestamp };
      if (event.message) patch.message = event.message;
    }
    this.cache.add(key, this.logOf(event));
    return { event, patch };
  }

  /** The server's answer: its name and resourceVersion are what the next patch must name (updateState). */
  updateState(event: Event): void {
    this.cache.add(getEventKey(event), this.logOf(event));
  }

  private logOf(e: Event): EventLog {
    return {
      count: e.count ?? 0,
      firstTimestamp: e.firstTimestamp,
      name: e.metadata.name ?? "",
      resourceVersion: e.metadata.resourceVersion,
    };
  }
}
// #endregion logger

// #region correlator
export interface CorrelatorOptions {
  lruCacheSize?: number;
  burstSize?: number;
  qps?: number;
  maxEvents?: number;
  maxIntervalInSeconds?: number;
  clock?: Clock;
  keyFunc?: (e: Event) => [string, string];
  messageFunc?: (e: Event) => string;
  spamKeyFunc?: (e: Event) => string;
}

export interface EventCorrelateResult {
  /** The event to write (absent when skipped). */
  event?: Event;
  /** Set for a repeat: patch `event.metadata.name` with it instead of creating. */
  patch?: Record<string, unknown>;
  /** Dropped by the spam filter: write nothing. */
  skip: boolean;
}

/** Aggregate, observe, filter — one event at a time (NewEventCorrelatorWithOptions, EventCorrelate). */
export class EventCorrelator {
  private readonly aggregator: EventAggregator;
  private readonly logger: EventLogger;
  private readonly spamFilter: EventSourceObjectSpamFilter;

  constructor(opts: CorrelatorOptions = {}) {
    const size = opts.lruCacheSize ?? maxLruCacheEntries;
    const clock = opts.clock ?? realClock;
    this.spamFilter = new EventSourceObjectSpamFilter(
      size,
      opts.burstSize ?? defaultSpamBurst,
      opts.qps ?? defaultSpamQPS,
      clock,
      opts.spamKeyFunc ?? getSpamKey,
    );
    this.aggregator = new EventAggregator(
      size,
      opts.keyFunc ?? eventAggregatorByReasonFunc,
      opts.messageFunc ?? eventAggregatorByReasonMessageFunc,
      opts.maxEvents ?? defaultAggregateMaxEvents,
      opts.maxIntervalInSeconds ?? defaultAggregateIntervalInSeconds,
      clock,
    );
    this.logger = new EventLogger(size);
  }

  eventCorrelate(newEvent: Event): EventCorrelateResult {
    const aggregated = this.aggregator.eventAggregate(newEvent);
    const observed = this.logger.eventObserve(aggregated.event, aggregated.key);
    if (this.spamFilter.filter(observed.event)) return { skip: true };
    return { event: observed.event, patch: observed.patch, skip: false };
  }

  /** After a successful write: remember the server's name and resourceVersion. */
  updateState(event: Event): void {
    this.logger.updateState(event);
  }
}
// #endregion correlator

import { describe, expect, it } from "vitest";
import type { Event } from "../../../api/core.ts";
import { FakeClock } from "../../util/clock.ts";
import { EventCorrelator, getEventKey } from "./events-cache.ts";

const start = Date.parse("2026-01-01T12:00:00Z");

function event(
  message: string,
  o: { reason?: string; type?: string; name?: string; seq?: number } = {},
): Event {
  const name = o.name ?? "web";
  return {
    apiVersion: "v1",
    kind: "Event",
    metadata: { name: `${name}.${(o.seq ?? 0).toString(16)}`, namespace: "default" },
    involvedObject: {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      namespace: "default",
      name,
      uid: `uid-${name}`,
    },
    reason: o.reason ?? "FailedCreate",
    message,
    type: o.type ?? "Warning",
    source: { component: "replicaset-controller" },
    firstTimestamp: "2026-01-01T12:00:00Z",
    lastTimestamp: "2026-01-01T12:00:00Z",
    count: 1,
  };
}

/** Feeds events through the correlator as the sink would: a create or patch succeeds at once. */
function sink(c: EventCorrelator) {
  const objects = new Map<string, Event>();
  const writes: string[] = [];
  let skipped = 0;
  const record = (e: Event) => {
    const r = c.eventCorrelate(e);
    if (r.skip) return void skipped++;
    const ev = r.event!;
    const name = ev.metadata.name!;
    if (r.patch) {
      writes.push(`PATCH ${name} ${JSON.stringify(r.patch)}`);
      objects.set(name, { ...objects.get(name)!, ...(r.patch as Partial<Event>) });
    } else {
      writes.push(`CREATE ${name}`);
      objects.set(name, { ...ev, metadata: { ...ev.metadata, resourceVersion: String(objects.size + 1) } });
    }
    c.updateState(objects.get(name)!);
  };
  return { record, objects, writes, skipped: () => skipped };
}

describe("EventCorrelator: repeats", () => {
  it("an identical event patches the first one's count and lastTimestamp", () => {
    const clock = new FakeClock(start);
    const s = sink(new EventCorrelator({ clock }));
    s.record(event("pods is forbidden", { seq: 1 }));
    clock.step(3000);
    s.record({ ...event("pods is forbidden", { seq: 2 }), lastTimestamp: "2026-01-01T12:00:03Z" });
    expect(s.writes).toEqual([
      "CREATE web.1",
      'PATCH web.1 {"count":2,"lastTimestamp":"2026-01-01T12:00:03Z","message":"pods is forbidden"}',
    ]);
    expect([...s.objects.values()].map((e) => [e.count, e.firstTimestamp, e.lastTimestamp])).toEqual([
      [2, "2026-01-01T12:00:00Z", "2026-01-01T12:00:03Z"],
    ]);
  });

  it("the patched event keeps the server's name and resourceVersion", () => {
    const c = new EventCorrelator({ clock: new FakeClock(start) });
    c.eventCorrelate(event("x", { seq: 1 }));
    c.updateState({
      ...event("x", { seq: 1 }),
      metadata: { name: "web.1", namespace: "default", resourceVersion: "42" },
    });
    const r = c.eventCorrelate(event("x", { seq: 2 }));
    expect(r.event?.metadata).toMatchObject({ name: "web.1", resourceVersion: "42" });
    expect(r.event?.count).toBe(2);
  });

  it("a different reason or type is a different event", () => {
    const s = sink(new EventCorrelator({ clock: new FakeClock(start) }));
    s.record(event("m", { seq: 1 }));
    s.record(event("m", { seq: 2, reason: "SuccessfulCreate", type: "Normal" }));
    s.record(event("m", { seq: 3, name: "db" }));
    expect(s.writes).toEqual(["CREATE web.1", "CREATE web.2", "CREATE db.3"]);
  });

  it("getEventKey includes the message; the repeat key does not change with the event's own name", () => {
    expect(getEventKey(event("a", { seq: 1 }))).toBe(getEventKey(event("a", { seq: 2 })));
    expect(getEventKey(event("a"))).not.toBe(getEventKey(event("b")));
  });
});

describe("EventCorrelator: similar events are combined", () => {
  it("the 10th distinct message within the interval becomes one combined event, then its count grows", () => {
    const clock = new FakeClock(start);
    const s = sink(new EventCorrelator({ clock }));
    for (let i = 1; i <= 12; i++) {
      s.record(event(`pod p${i} failed`, { seq: i }));
      clock.step(1000);
    }
    expect(s.writes.slice(0, 9)).toEqual(Array.from({ length: 9 }, (_, i) => `CREATE web.${i + 1}`));
    const combined = [...s.objects.values()].filter((e) => e.message?.startsWith("(combined"));
    expect(combined).toHaveLength(1);
    expect(combined[0].message).toBe("(combined from similar events): pod p12 failed");
    expect(combined[0].count).toBe(3);
    expect(combined[0].reason).toBe("FailedCreate");
    expect(s.objects.size).toBe(10);
  });

  it("a quiet spell longer than 10 minutes starts the count over", () => {
    const clock = new FakeClock(start);
    const s = sink(new EventCorrelator({ clock }));
    for (let i = 1; i <= 9; i++) s.record(event(`m${i}`, { seq: i }));
    clock.step(600_001);
    s.record(event("m10", { seq: 10 }));
    expect([...s.objects.values()].some((e) => e.message?.startsWith("(combined"))).toBe(false);
  });

  it("events 10 minutes apart at most keep aggregating (the window slides)", () => {
    const clock = new FakeClock(start);
    const s = sink(new EventCorrelator({ clock }));
    for (let i = 1; i <= 10; i++) {
      s.record(event(`m${i}`, { seq: i }));
      clock.step(600_000);
    }
    expect([...s.objects.values()].filter((e) => e.message?.startsWith("(combined"))).toHaveLength(1);
  });
});

describe("EventCorrelator: the spam filter", () => {
  it("lets 25 events of one object through, then one per 5 minutes", () => {
    const clock = new FakeClock(start);
    const s = sink(new EventCorrelator({ clock }));
    for (let i = 1; i <= 30; i++) s.record(event("same", { seq: i }));
    expect(s.skipped()).toBe(5);
    expect([...s.objects.values()].map((e) => e.count)).toEqual([25]);
    clock.step(299_000);
    s.record(event("same", { seq: 31 }));
    expect(s.skipped()).toBe(6);
    clock.step(1000);
    s.record(event("same", { seq: 32 }));
    // The dropped repeats were counted: the next write carries them.
    expect([...s.objects.values()].map((e) => e.count)).toEqual([32]);
  });

  it("keeps a bucket per object and type, across reasons and messages", () => {
    const clock = new FakeClock(start);
    const s = sink(new EventCorrelator({ clock }));
    for (let i = 1; i <= 25; i++) s.record(event(`m${i % 5}`, { seq: i, reason: `R${i % 3}` }));
    expect(s.skipped()).toBe(0);
    s.record(event("another", { seq: 26, reason: "Other" }));
    expect(s.skipped()).toBe(1);
    s.record(event("another", { seq: 27, type: "Normal" }));
    s.record(event("another", { seq: 28, name: "db" }));
    expect(s.skipped()).toBe(1);
  });
});

describe("EventCorrelator: memory", () => {
  it("forgets the least recently used key beyond its cache size", () => {
    const s = sink(new EventCorrelator({ clock: new FakeClock(start), lruCacheSize: 2 }));
    s.record(event("a", { seq: 1 }));
    s.record(event("b", { seq: 2 }));
    s.record(event("a", { seq: 3 })); // a is now the most recent
    s.record(event("c", { seq: 4 })); // evicts b
    s.record(event("b", { seq: 5 })); // b is new again
    expect(s.writes.map((w) => w.split(" ").slice(0, 2).join(" "))).toEqual([
      "CREATE web.1",
      "CREATE web.2",
      "PATCH web.1",
      "CREATE web.4",
      "CREATE web.5",
    ]);
  });
});

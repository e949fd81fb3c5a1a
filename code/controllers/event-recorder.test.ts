// The recorder against the API server: repeats become one Event whose count grows (a PATCH, not
// a new object), as far as the spam filter lets them; similar events are combined; a repeat of
// an Event someone deleted is created again. The correlator's clock is a FakeClock, so nothing
// here depends on how fast the server answers.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Event } from "../api/core.ts";
import type { KubeObject, StatusReason } from "../api/meta.ts";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { StatusError } from "../client/errors.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import { FakeClock } from "../client/util/clock.ts";
import { clientsetEventSink, type EventSink, newEventRecorder } from "./event-recorder.ts";

const rsKind = { group: "apps", version: "v1", kind: "ReplicaSet" };
const rs = (name: string): KubeObject => ({ metadata: { name, namespace: "default", uid: `uid-${name}` } });

describe("the event recorder against the API server", () => {
  let server: APIServer;
  let client: Clientset;
  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url, qps: -1 });
  });
  afterAll(async () => {
    client?.closeIdleConnections();
    await server?.close();
  });

  /** The sink, logging each write's verb. */
  const countingSink = (writes: string[]): EventSink => {
    const real = clientsetEventSink(client);
    return {
      create: (e) => {
        writes.push("create");
        return real.create(e);
      },
      patch: (e, p) => {
        writes.push("patch");
        return real.patch(e, p);
      },
    };
  };
  const eventsOf = async (name: string) =>
    (await client.coreV1.events("default").list()).items.filter((e: Event) => e.involvedObject.name === name);

  it("30 identical events: one Event, count 25 (the spam filter's burst), written by 1 create and 24 patches", async () => {
    const clock = new FakeClock(Date.parse("2026-01-01T12:00:00Z"));
    const writes: string[] = [];
    const errors: unknown[] = [];
    const record = newEventRecorder(client, "replicaset-controller", rsKind, {
      clock,
      sink: countingSink(writes),
      onError: (e) => errors.push(e),
    });
    for (let i = 0; i < 30; i++) {
      record(rs("web"), "Warning", "FailedCreate", 'pods "web-" is forbidden: exceeded quota');
      clock.step(1000);
    }
    await record.flush();
    expect(errors).toEqual([]);
    const events = await eventsOf("web");
    expect(events).toHaveLength(1);
    expect(events[0]).toMatchObject({
      count: 25,
      firstTimestamp: "2026-01-01T12:00:00Z",
      lastTimestamp: "2026-01-01T12:00:24Z",
      reason: "FailedCreate",
      type: "Warning",
      source: { component: "replicaset-controller" },
    });
    expect(writes.filter((w) => w === "create")).toHaveLength(1);
    expect(writes.filter((w) => w === "patch")).toHaveLength(24);
  });

  it("similar events (one reason, ten messages) are combined into one Event", async () => {
    const clock = new FakeClock(Date.parse("2026-01-01T13:00:00Z"));
    const record = newEventRecorder(client, "replicaset-controller", rsKind, { clock });
    for (let i = 1; i <= 12; i++) {
      record(rs("api"), "Normal", "SuccessfulCreate", `Created pod: api-${i}`);
      clock.step(1000);
    }
    await record.flush();
    const events = await eventsOf("api");
    expect(events).toHaveLength(10);
    const combined = events.filter((e) => e.message?.startsWith("(combined from similar events): "));
    expect(combined.map((e) => [e.count, e.message])).toEqual([
      [3, "(combined from similar events): Created pod: api-12"],
    ]);
  });

  it("a repeat of an Event that was deleted is created again", async () => {
    const clock = new FakeClock(Date.parse("2026-01-01T14:00:00Z"));
    const writes: string[] = [];
    const record = newEventRecorder(client, "replicaset-controller", rsKind, {
      clock,
      sink: countingSink(writes),
    });
    record(rs("db"), "Warning", "FailedDelete", "boom");
    await record.flush();
    const [first] = await eventsOf("db");
    await client.coreV1.events("default").delete(first.metadata.name ?? "");
    clock.step(1000);
    record(rs("db"), "Warning", "FailedDelete", "boom");
    await record.flush();
    expect(writes).toEqual(["create", "patch", "create"]);
    const events = await eventsOf("db");
    expect(events.map((e) => [e.metadata.name, e.count])).toEqual([[first.metadata.name, 2]]);
  });
});

describe("the event recorder's writes (recordToSink), on a fake sink", () => {
  const statusError = (code: number, reason: StatusReason) =>
    new StatusError({
      kind: "Status",
      apiVersion: "v1",
      metadata: {},
      status: "Failure",
      code,
      reason,
      message: reason,
    });

  /** A sink whose first `failures` creates throw `err`. */
  function failingSink(failures: number, err: () => unknown) {
    const calls: string[] = [];
    const sink: EventSink = {
      create: async (e) => {
        calls.push("create");
        if (failures-- > 0) throw err();
        return { ...e, metadata: { ...e.metadata, resourceVersion: "1" } };
      },
      patch: async (e) => {
        calls.push("patch");
        return e;
      },
    };
    return { sink, calls };
  }

  /** Steps the fake clock until the recorder's queue is empty. */
  async function drain(clock: FakeClock, flush: () => Promise<void>): Promise<void> {
    let done = false;
    void flush().then(() => {
      done = true;
    });
    for (let i = 0; i < 100 && !done; i++) {
      await new Promise((r) => setImmediate(r));
      clock.step(10_000);
    }
    expect(done).toBe(true);
  }

  it("retries a write that could not reach the server, then stops after 12 tries", async () => {
    const clock = new FakeClock(0);
    const flaky = failingSink(2, () => new Error("connect ECONNREFUSED"));
    const record = newEventRecorder({} as Clientset, "c", rsKind, { clock, sink: flaky.sink });
    record(rs("a"), "Normal", "R", "m");
    await drain(clock, record.flush);
    expect(flaky.calls).toEqual(["create", "create", "create"]);

    const down = failingSink(100, () => new Error("connect ECONNREFUSED"));
    const errors: unknown[] = [];
    const record2 = newEventRecorder({} as Clientset, "c", rsKind, {
      clock,
      sink: down.sink,
      onError: (e) => errors.push(e),
    });
    record2(rs("a"), "Normal", "R", "m");
    await drain(clock, record2.flush);
    expect(down.calls).toHaveLength(12);
    expect(errors).toHaveLength(1);
  });

  it("does not retry a refusal by the server, and says nothing of AlreadyExists", async () => {
    const clock = new FakeClock(0);
    const errors: unknown[] = [];
    const refused = failingSink(1, () => statusError(422, "Invalid"));
    const record = newEventRecorder({} as Clientset, "c", rsKind, {
      clock,
      sink: refused.sink,
      onError: (e) => errors.push(e),
    });
    record(rs("a"), "Normal", "R", "m");
    await record.flush();
    expect(refused.calls).toEqual(["create"]);
    expect(errors).toHaveLength(1);

    const exists = failingSink(1, () => statusError(409, "AlreadyExists"));
    const record2 = newEventRecorder({} as Clientset, "c", rsKind, {
      clock,
      sink: exists.sink,
      onError: (e) => errors.push(e),
    });
    record2(rs("a"), "Normal", "R", "m");
    await record2.flush();
    expect(exists.calls).toEqual(["create"]);
    expect(errors).toHaveLength(1);
  });
});

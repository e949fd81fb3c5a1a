// Exercise 6.4: your release against a lock in memory on a fake clock, then inside the course's real
// LeaderElector with releaseOnCancel, against a real API server: a clean hand-over to a follower, a
// leader that lost the Lease and must leave it alone, a shutdown while the server is unreachable.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type APIServer, startAPIServer } from "../../../code/apiserver/server.ts";
import { newStatusError, StatusError } from "../../../code/client/errors.ts";
import { type Clientset, newForConfig } from "../../../code/client/kubernetes/clientset.ts";
import { FakeClock } from "../../../code/client/util/clock.ts";
import type { Observation } from "../../../code/leaderelection/acquire-or-renew.ts";
import type {
  Interface,
  LeaderElectionRecord,
  ObservedLock,
} from "../../../code/leaderelection/resourcelock/interface.ts";
import { formatMicroTime, rawRecord } from "../../../code/leaderelection/resourcelock/lease-lock.ts";
import {
  advanceCandidates,
  advanceCandidatesUntil,
  type Candidate,
  newCandidate,
  runAll,
  stopAll,
} from "../../../code/leaderelection/testing/election-harness.ts";
import { release } from "./release.ts";

const t0 = Date.UTC(2026, 11, 2, 1, 0, 0);
const second = 1000;
const renewDeadline = 10 * second;
const retryPeriod = 2 * second;

/** A lock in memory: records every update; answers at once, with an error, or never. */
class MemoryLock implements Interface {
  updates: { record: LeaderElectionRecord; signal?: AbortSignal }[] = [];
  answer: "ok" | "conflict" | "hang" = "ok";
  constructor(private readonly id: string) {}
  get(): Promise<ObservedLock> {
    return Promise.reject(new Error("release must not read the lock: it decides from what was observed"));
  }
  create(): Promise<void> {
    return Promise.reject(new Error("release must not create the lock"));
  }
  update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    this.updates.push({ record, signal });
    if (this.answer === "conflict") {
      return Promise.reject(
        newStatusError(409, "Operation cannot be fulfilled: the object has been modified"),
      );
    }
    if (this.answer === "hang") {
      return new Promise((_, reject) => signal?.addEventListener("abort", () => reject(signal.reason)));
    }
    return Promise.resolve();
  }
  recordEvent(): void {}
  identity(): string {
    return this.id;
  }
  describe(): string {
    return "kube-system/memory";
  }
}

const held = (holderIdentity: string): Observation => {
  const record: LeaderElectionRecord = {
    holderIdentity,
    leaseDurationSeconds: 15,
    acquireTime: t0 - 60 * second,
    renewTime: t0 - second,
    leaderTransitions: 4,
  };
  return { record, raw: rawRecord(record), time: t0 - second };
};

/** Runs release, noting when it settled and how (it must not be awaited blindly: it may never settle). */
function started(p: Promise<Observation>, clock: FakeClock) {
  const out: { at?: number; value?: Observation; error?: unknown } = {};
  p.then(
    (value) => Object.assign(out, { at: clock.now(), value }),
    (error) => Object.assign(out, { at: clock.now(), error }),
  );
  return out;
}
const flush = () => new Promise<void>((r) => setImmediate(r));

describe("release on its own", () => {
  it("the leader writes the released record: no holder, a 1 s lease, both times now, leaderTransitions kept", async () => {
    const clock = new FakeClock(t0);
    const lock = new MemoryLock("me");
    const obs = held("me");
    const after = await release({ observed: obs, lock, clock, renewDeadline });
    const released = {
      holderIdentity: "",
      leaseDurationSeconds: 1,
      acquireTime: t0,
      renewTime: t0,
      leaderTransitions: 4,
    };
    expect(lock.updates.map((u) => u.record)).toEqual([released]);
    // What the elector now knows: it wrote the released record, just now.
    expect(after).toMatchObject({ record: released, time: t0 });
  });

  it("a candidate the observed record does not name writes nothing and keeps its observation", async () => {
    const clock = new FakeClock(t0);
    for (const holder of ["other", ""]) {
      const lock = new MemoryLock("me");
      const obs = held(holder);
      expect(await release({ observed: obs, lock, clock, renewDeadline })).toEqual(obs);
      expect(lock.updates).toEqual([]);
    }
  });

  it("a write that never comes back is given up after renewDeadline, not before", async () => {
    const clock = new FakeClock(t0);
    const lock = new MemoryLock("me");
    lock.answer = "hang";
    const out = started(release({ observed: held("me"), lock, clock, renewDeadline }), clock);
    clock.step(renewDeadline - 1);
    await flush();
    if (out.error !== undefined) throw out.error; // it gave up early: here is why
    expect(out.at).toBeUndefined();
    clock.step(1);
    await flush();
    expect(out.at).toBe(t0 + renewDeadline);
    expect(out.error).toBeDefined();
    expect(lock.updates[0].signal?.aborted).toBe(true);
  });

  it("a refused write rejects with the server's error", async () => {
    const clock = new FakeClock(t0);
    const lock = new MemoryLock("me");
    lock.answer = "conflict";
    const err = await release({ observed: held("me"), lock, clock, renewDeadline }).then(
      () => new Error("release resolved: it should reject with the server's 409"),
      (e: unknown) => e,
    );
    if (!(err instanceof StatusError)) throw err;
    expect(err.code).toBe(409);
  });
});

describe("inside the real LeaderElector, releaseOnCancel", () => {
  const ns = "kube-system";
  let server: APIServer;
  let client: Clientset;
  let seq = 0;
  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0, compactionIntervalMs: 0 });
    client = newForConfig({ host: server.url, qps: -1 });
  });
  afterAll(async () => {
    client?.closeIdleConnections();
    await server?.close();
  });

  const leases = () => client.coordinationV1.leases(ns);
  function pair(clock: FakeClock): { name: string; a: Candidate; b: Candidate } {
    const name = `release-on-cancel-${++seq}`;
    const [a, b] = ["a", "b"].map((id) =>
      newCandidate({
        clock,
        leases: client.coordinationV1,
        lease: { namespace: ns, name },
        id,
        config: { releaseOnCancel: true },
        steps: { release },
      }),
    );
    return { name, a, b };
  }

  it("a cancelled leader hands over: the follower leads within one jittered retry, as transition 1", async () => {
    const clock = new FakeClock(t0);
    const { name, a, b } = pair(clock);
    const cs = [a, b];
    runAll([a]);
    await advanceCandidatesUntil(clock, [a], () => a.seen.started.length > 0, 10 * second);
    runAll([b]);
    await advanceCandidates(clock, cs, 7 * second);
    a.abort.abort();
    const cancelledAt = clock.now();
    await advanceCandidatesUntil(clock, cs, () => b.seen.started.length > 0, 30 * second);
    expect(b.seen.started[0] - cancelledAt).toBeLessThanOrEqual(retryPeriod * 2.2);
    expect(a.seen.stopped).toHaveLength(1);
    expect(a.le.isLeader()).toBe(false);
    expect(a.le.getLeader()).toBe("");
    expect((await leases().get(name)).spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
    await stopAll(clock, [b]);
  });

  it("a leader that lost the Lease, then cancelled, leaves its successor's record alone", async () => {
    const clock = new FakeClock(t0);
    const { name, a } = pair(clock);
    runAll([a]);
    await advanceCandidatesUntil(clock, [a], () => a.seen.started.length > 0, 10 * second);
    await advanceCandidates(clock, [a], 3 * second);
    // Another candidate (not one of ours) holds the Lease now.
    const cur = await leases().get(name);
    const spec = {
      holderIdentity: "other",
      leaseDurationSeconds: 15,
      acquireTime: formatMicroTime(clock.now()),
      renewTime: formatMicroTime(clock.now()),
      leaseTransitions: 1,
    };
    await leases().update({ ...cur, spec });
    // a's next renewal is refused (409), it reads "other" within its lease: it keeps trying, then is cancelled.
    await advanceCandidates(clock, [a], 4 * second);
    expect(a.le.getLeader()).toBe("other");
    a.abort.abort();
    await advanceCandidatesUntil(clock, [a], () => a.seen.stopped.length > 0, 15 * second);
    expect((await leases().get(name)).spec).toMatchObject({ holderIdentity: "other", leaseTransitions: 1 });
    // Not a failed release: there was nothing of ours to release.
    expect(a.seen.logs.filter((l) => l.startsWith("Failed to release lock"))).toEqual([]);
  });

  it("shutting down while the API server is unreachable: run still ends, renewDeadline after the cancel", async () => {
    const clock = new FakeClock(t0);
    const { a } = pair(clock);
    runAll([a]);
    await advanceCandidatesUntil(clock, [a], () => a.seen.started.length > 0, 10 * second);
    await advanceCandidates(clock, [a], 3 * second);
    a.lock.fault = "hang";
    await advanceCandidates(clock, [a], 0.5 * second); // a renewal is now stuck on the wire
    a.abort.abort();
    const cancelledAt = clock.now();
    const took = await advanceCandidatesUntil(
      clock,
      [a],
      () => a.seen.stopped.length > 0,
      2 * renewDeadline,
      500,
    );
    expect(took).toBeLessThanOrEqual(renewDeadline);
    expect(a.seen.stopped[0] - cancelledAt).toBe(renewDeadline);
    expect(a.seen.logs.some((l) => l.startsWith("Failed to release lock"))).toBe(true);
  });
});

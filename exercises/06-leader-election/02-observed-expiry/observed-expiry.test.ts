// Exercise 6.2: your observe and isLeaseValid as functions, then inside the course's real
// LeaderElector against a real API server on a fake clock — a Lease held by "other", a holder
// that is not one of ours, written by the test with a clock an hour off.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Lease } from "../../../code/api/coordination.ts";
import { type APIServer, startAPIServer } from "../../../code/apiserver/server.ts";
import { type Clientset, newForConfig } from "../../../code/client/kubernetes/clientset.ts";
import { FakeClock } from "../../../code/client/util/clock.ts";
import { emptyObservation } from "../../../code/leaderelection/acquire-or-renew.ts";
import type { LeaderElectionRecord } from "../../../code/leaderelection/resourcelock/interface.ts";
import { formatMicroTime, rawRecord } from "../../../code/leaderelection/resourcelock/lease-lock.ts";
import {
  advanceCandidates,
  advanceCandidatesUntil,
  type Candidate,
  newCandidate,
  runAll,
  stopAll,
} from "../../../code/leaderelection/testing/election-harness.ts";
import { isLeaseValid, observe } from "./observed-expiry.ts";

const t0 = Date.UTC(2026, 11, 2, 1, 0, 0);
const second = 1000;
const hour = 3600 * second;

const record = (over: Partial<LeaderElectionRecord> = {}): LeaderElectionRecord => ({
  holderIdentity: "other",
  leaseDurationSeconds: 15,
  acquireTime: t0 - 60 * second,
  renewTime: t0,
  leaderTransitions: 2,
  ...over,
});
const read = (r: LeaderElectionRecord) => ({ record: r, raw: rawRecord(r) });

describe("observe", () => {
  it("the first read is a change: the record, its bytes, and our time", () => {
    const r = record();
    expect(observe(emptyObservation, read(r), t0 + 7)).toEqual({
      record: r,
      raw: rawRecord(r),
      time: t0 + 7,
    });
  });

  it("the same bytes again: nothing moves, however often we look", () => {
    const first = observe(emptyObservation, read(record()), t0);
    let obs = first;
    for (let t = 2; t <= 20; t += 2) obs = observe(obs, read(record()), t0 + t * second);
    expect(obs).toEqual(first);
  });

  it("a renewal by the same holder (only renewTime differs) restarts the clock", () => {
    const first = observe(emptyObservation, read(record()), t0);
    const renewed = record({ renewTime: t0 + 2 * second });
    expect(observe(first, read(renewed), t0 + 9 * second)).toEqual({
      record: renewed,
      raw: rawRecord(renewed),
      time: t0 + 9 * second,
    });
  });
});

describe("isLeaseValid", () => {
  const seen = (r: LeaderElectionRecord, at: number) => ({ record: r, raw: rawRecord(r), time: at });

  it("valid until observedTime + the record's leaseDurationSeconds, and not at that instant", () => {
    const obs = seen(record({ leaseDurationSeconds: 15 }), t0);
    expect(isLeaseValid(obs, t0)).toBe(true);
    expect(isLeaseValid(obs, t0 + 15 * second - 1)).toBe(true);
    expect(isLeaseValid(obs, t0 + 15 * second)).toBe(false);
    expect(isLeaseValid(seen(record({ leaseDurationSeconds: 40 }), t0), t0 + 30 * second)).toBe(true);
  });

  it("the holder's renewTime changes nothing: an hour behind is still valid, an hour ahead still expires", () => {
    expect(isLeaseValid(seen(record({ renewTime: t0 - hour }), t0), t0 + second)).toBe(true);
    expect(isLeaseValid(seen(record({ renewTime: t0 + hour }), t0), t0 + 16 * second)).toBe(false);
  });
});

describe("inside the real LeaderElector", () => {
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

  /** "other" writes the Lease with its own clock, `renewTime`. */
  async function otherWrites(name: string, renewTime: number, leaseDurationSeconds = 15): Promise<Lease> {
    const spec = {
      holderIdentity: "other",
      leaseDurationSeconds,
      acquireTime: formatMicroTime(t0 - hour),
      renewTime: formatMicroTime(renewTime),
      leaseTransitions: 0,
    };
    try {
      return await leases().update({ ...(await leases().get(name)), spec });
    } catch {
      return leases().create({
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name, namespace: ns },
        spec,
      });
    }
  }

  /** Candidate "b" on `name`, judging expiry with your functions; `random: 0` tries every 2 s exactly. */
  function follower(clock: FakeClock, name: string): Candidate {
    return newCandidate({
      clock,
      leases: client.coordinationV1,
      lease: { namespace: ns, name },
      id: "b",
      config: { random: () => 0 },
      steps: { observe, isLeaseValid },
    });
  }

  for (const [what, skew] of [
    ["an hour behind", -hour],
    ["an hour ahead", hour],
  ] as const) {
    it(`a silent holder whose clock is ${what}: taken over after 16 s of observed silence, at the first try that is not before it`, async () => {
      const clock = new FakeClock(t0);
      const name = `observed-expiry-${++seq}`;
      // A 16 s lease and tries every 2 s from t0: the try at exactly t0 + 16 s is the first after expiry.
      await otherWrites(name, clock.now() + skew, 16);
      const b = follower(clock, name);
      runAll([b]);
      const took = await advanceCandidatesUntil(clock, [b], () => b.seen.started.length > 0, 60 * second);
      expect(took).toBe(16 * second);
      expect((await leases().get(name)).spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
      await stopAll(clock, [b]);
    });
  }

  it("a holder an hour behind that keeps renewing is never taken over", async () => {
    const clock = new FakeClock(t0);
    const name = `observed-expiry-${++seq}`;
    await otherWrites(name, clock.now() - hour);
    const b = follower(clock, name);
    runAll([b]);
    for (let t = 0; t < 60; t += 3) {
      await advanceCandidates(clock, [b], 3 * second);
      // It renews every 3 s with its own (wrong) clock: the bytes change, and that is what b trusts.
      await otherWrites(name, clock.now() - hour);
    }
    expect(b.seen.started).toEqual([]);
    expect(b.le.getLeader()).toBe("other");
    expect((await leases().get(name)).spec?.holderIdentity).toBe("other");
    await stopAll(clock, [b]);
  });

  it("a holder that stops renewing is taken over 16 s after the last change b saw, not after its first sight", async () => {
    const clock = new FakeClock(t0);
    const name = `observed-expiry-${++seq}`;
    await otherWrites(name, clock.now() + hour, 16);
    const b = follower(clock, name);
    runAll([b]);
    // Renewals for 9 s (b reads at 0, 2, …; the last change it sees is at 10 s), then silence.
    for (let t = 0; t < 9; t += 3) {
      await advanceCandidates(clock, [b], 3 * second);
      await otherWrites(name, clock.now() + hour, 16);
    }
    const took = await advanceCandidatesUntil(clock, [b], () => b.seen.started.length > 0, 60 * second);
    expect(b.seen.started[0] - t0).toBe(10 * second + 16 * second);
    expect(took).toBeGreaterThan(0);
    await stopAll(clock, [b]);
  });
});

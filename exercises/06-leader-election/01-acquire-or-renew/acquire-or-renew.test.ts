// Exercise 6.1: your decideAcquireOrRenew as a table, then inside the course's real LeaderElector —
// three candidates on one Lease of a real API server, on a fake clock: exactly one leads, a
// leader whose fast path is refused renews through your table, a silent leader is replaced, a
// released Lease is taken at once.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type APIServer, startAPIServer } from "../../../code/apiserver/server.ts";
import { type Clientset, newForConfig } from "../../../code/client/kubernetes/clientset.ts";
import { FakeClock } from "../../../code/client/util/clock.ts";
import { emptyObservation, type Observation } from "../../../code/leaderelection/acquire-or-renew.ts";
import type { LeaderElectionConfig } from "../../../code/leaderelection/leader-elector.ts";
import type { LeaderElectionRecord } from "../../../code/leaderelection/resourcelock/interface.ts";
import { parseMicroTime } from "../../../code/leaderelection/resourcelock/lease-lock.ts";
import {
  advanceCandidates,
  advanceCandidatesUntil,
  type Candidate,
  leading,
  newCandidate,
  runAll,
  stopAll,
} from "../../../code/leaderelection/testing/election-harness.ts";
import { decideAcquireOrRenew } from "./acquire-or-renew.ts";

const t0 = Date.UTC(2026, 11, 2, 1, 0, 0);
const second = 1000;

const record = (over: Partial<LeaderElectionRecord> = {}): LeaderElectionRecord => ({
  holderIdentity: "other",
  leaseDurationSeconds: 15,
  acquireTime: t0 - 60 * second,
  renewTime: t0,
  leaderTransitions: 3,
  ...over,
});
const seenAt = (r: LeaderElectionRecord, at: number): Observation => ({
  ...emptyObservation,
  record: r,
  time: at,
});

describe("the decision table", () => {
  it("another holder within its lease: wait", () => {
    const obs = seenAt(record(), t0);
    expect(decideAcquireOrRenew(obs, t0 + 5 * second, "me", 15, true)).toEqual({
      action: "wait",
      holder: "other",
    });
  });

  it("another holder whose lease expired: acquire, a new term (both times now) and one more transition", () => {
    const obs = seenAt(record(), t0);
    const now = t0 + 20 * second;
    expect(decideAcquireOrRenew(obs, now, "me", 10, false)).toEqual({
      action: "acquire",
      record: {
        holderIdentity: "me",
        leaseDurationSeconds: 10,
        acquireTime: now,
        renewTime: now,
        leaderTransitions: 4,
      },
    });
  });

  it('a released lease (holder ""): acquire at once, even though its lease has not run out', () => {
    const released = record({ holderIdentity: "", leaseDurationSeconds: 1, leaderTransitions: 7 });
    const now = t0 + 100;
    const d = decideAcquireOrRenew(seenAt(released, t0), now, "me", 15, true);
    expect(d).toEqual({
      action: "acquire",
      record: {
        holderIdentity: "me",
        leaseDurationSeconds: 15,
        acquireTime: now,
        renewTime: now,
        leaderTransitions: 8,
      },
    });
  });

  for (const valid of [true, false]) {
    it(`our own lease (${valid ? "valid" : "expired: our renewals failed for a while"}): renew — same term, same count`, () => {
      const mine = record({ holderIdentity: "me", leaseDurationSeconds: 15 });
      const now = t0 + (valid ? 5 : 30) * second;
      expect(decideAcquireOrRenew(seenAt(mine, t0), now, "me", 15, valid)).toEqual({
        action: "renew",
        record: {
          holderIdentity: "me",
          leaseDurationSeconds: 15,
          acquireTime: mine.acquireTime,
          renewTime: now,
          leaderTransitions: 3,
        },
      });
    });
  }

  it("uses the leaseValid it is given (the elector's), and isLeaseValid when called without it", () => {
    const obs = seenAt(record(), t0);
    expect(decideAcquireOrRenew(obs, t0 + 5 * second, "me", 15, false).action).toBe("acquire");
    expect(decideAcquireOrRenew(obs, t0 + 5 * second, "me", 15).action).toBe("wait");
    expect(decideAcquireOrRenew(obs, t0 + 15 * second, "me", 15).action).toBe("acquire");
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

  /** Candidates on a fresh Lease, each deciding with your function. */
  function candidates(
    clock: FakeClock,
    ids: string[],
    config: Partial<LeaderElectionConfig> = {},
  ): Candidate[] {
    const lease = { namespace: ns, name: `acquire-or-renew-${++seq}` };
    return ids.map((id) =>
      newCandidate({
        clock,
        leases: client.coordinationV1,
        lease,
        id,
        config,
        steps: { decideAcquireOrRenew },
      }),
    );
  }
  const getLease = (cs: Candidate[]) =>
    client.coordinationV1.leases(ns).get(cs[0].lock.describe().split("/")[1]);

  /** Advances `ms` in 500 ms steps; fails if two candidates ever lead at once. */
  async function watchOneLeader(clock: FakeClock, cs: Candidate[], ms: number): Promise<void> {
    for (let t = 0; t < ms; t += 500) {
      await advanceCandidates(clock, cs, 500);
      expect(
        leading(cs).map((c) => c.id).length,
        `two leaders at ${clock.now() - t0} ms`,
      ).toBeLessThanOrEqual(1);
    }
  }

  it("three candidates: exactly one leads, the other two wait for a minute", async () => {
    const clock = new FakeClock(t0);
    const cs = candidates(clock, ["a", "b", "c"]);
    runAll(cs);
    await watchOneLeader(clock, cs, 60 * second);
    const [leader] = leading(cs);
    expect(leader).toBeDefined();
    expect(cs.filter((c) => c.seen.started.length > 0)).toEqual([leader]);
    // The followers decided "wait" on every read.
    for (const f of cs.filter((c) => c !== leader)) {
      expect(f.lock.calls.filter((x) => x.op === "get").length).toBeGreaterThan(15);
      expect(f.lock.calls.filter((x) => x.op !== "get" && !x.error)).toEqual([]);
    }
    expect((await getLease(cs)).spec).toMatchObject({ holderIdentity: leader.id, leaseTransitions: 0 });
    await stopAll(clock, cs);
  });

  it("a leader whose fast path is refused (someone edited the Lease) renews through the table: same acquireTime, same count", async () => {
    const clock = new FakeClock(t0);
    const cs = candidates(clock, ["a", "b"]);
    const [a] = cs;
    runAll([a]);
    await advanceCandidatesUntil(clock, [a], () => a.seen.started.length > 0, 10 * second);
    runAll(cs.slice(1));
    const first = await getLease(cs);
    for (let i = 0; i < 3; i++) {
      await advanceCandidates(clock, cs, 3 * second);
      // `kubectl annotate lease`: a new resourceVersion, the same spec.
      const cur = await getLease(cs);
      await client.coordinationV1.leases(ns).update({
        ...cur,
        metadata: { ...cur.metadata, annotations: { touched: String(i) } },
      });
    }
    await watchOneLeader(clock, cs, 6 * second);
    expect(
      a.seen.logs.filter((l) => l.startsWith("Failed to update lock optimistically")).length,
    ).toBeGreaterThan(0);
    const lease = await getLease(cs);
    expect(lease.spec).toMatchObject({
      holderIdentity: "a",
      acquireTime: first.spec?.acquireTime,
      leaseTransitions: 0,
    });
    expect(parseMicroTime(lease.spec?.renewTime)).toBeGreaterThan(clock.now() - 2 * second - 1);
    expect(a.seen.stopped).toEqual([]);
    await stopAll(clock, cs);
  });

  it("a silent leader: one follower takes over after the lease, as a new term with leaseTransitions 1", async () => {
    const clock = new FakeClock(t0);
    const cs = candidates(clock, ["a", "b", "c"]);
    const [a, ...followers] = cs;
    runAll([a]);
    await advanceCandidatesUntil(clock, [a], () => a.seen.started.length > 0, 10 * second);
    runAll(followers);
    await watchOneLeader(clock, cs, 6 * second);
    a.lock.fault = "fail"; // a can no longer reach the server
    const silentAt = clock.now();
    await watchOneLeader(clock, cs, 30 * second);
    const next = followers.filter((c) => c.seen.started.length > 0);
    expect(next).toHaveLength(1);
    const took = next[0].seen.started[0];
    expect(took - silentAt).toBeGreaterThanOrEqual(15 * second - 2 * second);
    const lease = await getLease(cs);
    expect(lease.spec).toMatchObject({ holderIdentity: next[0].id, leaseTransitions: 1 });
    expect(Math.abs(parseMicroTime(lease.spec?.acquireTime) - took)).toBeLessThan(1); // a new term: acquireTime is now
    await stopAll(clock, cs);
  });

  it("a released Lease is taken at the next try, not after the lease, with leaseTransitions 1", async () => {
    const clock = new FakeClock(t0);
    const cs = candidates(clock, ["a", "b"], { releaseOnCancel: true });
    const [a, b] = cs;
    runAll([a]);
    await advanceCandidatesUntil(clock, [a], () => a.seen.started.length > 0, 10 * second);
    runAll([b]);
    await advanceCandidates(clock, cs, 5 * second);
    a.abort.abort();
    const cancelledAt = clock.now();
    await advanceCandidatesUntil(clock, cs, () => b.seen.started.length > 0, 30 * second);
    expect(b.seen.started[0] - cancelledAt).toBeLessThanOrEqual(2 * second * 2.2);
    // b's very first read after the release is followed by its write: it did not wait.
    const released = a.lock.calls.find((c) => c.op === "update" && c.holder === "");
    expect(released).toBeDefined();
    const after = b.lock.calls
      .filter((c) => c.at > (released?.at ?? 0))
      .map((c) => `${c.op} ${c.holder ?? ""}`);
    expect(after.slice(0, 2)).toEqual(["get ", "update b"]);
    expect((await getLease(cs)).spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
    await stopAll(clock, cs);
  });
});

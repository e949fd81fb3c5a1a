/**
 * The elector against a real in-process API server, on a fake clock: races decided by 409s, expiry
 * by observed time under skewed holders, a leader that cannot renew, ReleaseOnCancel, onNewLeader,
 * a Lease deleted while held, the health check and the metrics.
 */
import { Registry } from "prom-client";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Lease } from "../api/coordination.ts";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { isAlreadyExists, isConflict } from "../client/errors.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import { FakeClock } from "../client/util/clock.ts";
import { mulberry32 } from "../testing/random.ts";
import { newLeaderHealthzAdaptor } from "./healthz-adaptor.ts";
import { type LeaderElectionConfig, type LeaderElector, newLeaderElector } from "./leader-elector.ts";
import { leaderElectionMetrics } from "./metrics.ts";
import { formatMicroTime, LeaseLock } from "./resourcelock/lease-lock.ts";
import { advance, advanceUntil, barrier, FaultyLock, settle } from "./testing/election-harness.ts";

const ns = "kube-system";
const start = Date.UTC(2026, 11, 2, 1, 0, 0);
const second = 1000;
// Upstream's component defaults: 15 s / 10 s / 2 s.
const leaseDuration = 15 * second;
const renewDeadline = 10 * second;
const retryPeriod = 2 * second;

let server: APIServer;
let client: Clientset;
let leaseSeq = 0;

beforeAll(async () => {
  server = await startAPIServer({ insecurePort: 0, compactionIntervalMs: 0 });
  client = newForConfig({ host: server.url, qps: -1 });
});

afterAll(async () => {
  client?.closeIdleConnections();
  await server?.close();
});

/** What one candidate's callbacks saw, in order, with the fake time of each. */
interface Seen {
  started: number[];
  stopped: number[];
  newLeaders: string[];
  leadingSignal?: AbortSignal;
  logs: string[];
}

interface Candidate {
  id: string;
  lock: FaultyLock;
  le: LeaderElector;
  seen: Seen;
  abort: AbortController;
  done?: Promise<void>;
}

/** A fresh Lease name per test, so tests on one server do not see each other's elections. */
function leaseName(): string {
  return `election-${++leaseSeq}`;
}

function candidate(
  clock: FakeClock,
  name: string,
  id: string,
  extra: Partial<LeaderElectionConfig> = {},
): Candidate {
  const inner = new LeaseLock({
    leaseMeta: { namespace: ns, name },
    client: client.coordinationV1,
    lockConfig: { identity: id },
  });
  const lock = new FaultyLock(inner, clock);
  const seen: Seen = { started: [], stopped: [], newLeaders: [], logs: [] };
  const le = newLeaderElector({
    lock,
    leaseDuration,
    renewDeadline,
    retryPeriod,
    name,
    clock,
    random: mulberry32(id.length * 7919 + leaseSeq),
    log: (l) => seen.logs.push(l),
    callbacks: {
      onStartedLeading: (signal) => {
        seen.started.push(clock.now());
        seen.leadingSignal = signal;
      },
      onStoppedLeading: () => {
        seen.stopped.push(clock.now());
      },
      onNewLeader: (identity) => {
        seen.newLeaders.push(identity);
      },
    },
    ...extra,
  });
  return { id, lock, le, seen, abort: new AbortController() };
}

function runAll(cs: Candidate[]): void {
  for (const c of cs) c.done = c.le.run(c.abort.signal);
}

async function stopAll(clock: FakeClock, cs: Candidate[]): Promise<void> {
  for (const c of cs) c.abort.abort();
  await advance(
    clock,
    cs.map((c) => c.lock),
    0,
  );
  await Promise.all(cs.map((c) => c.done));
}

const getLease = (name: string) => client.coordinationV1.leases(ns).get(name);

describe("two candidates racing for one Lease", () => {
  it("on a free Lease: both read the same resourceVersion, exactly one update wins, the other gets 409 Conflict", async () => {
    const clock = new FakeClock(start);
    const name = leaseName();
    // A Lease nobody holds (as a released one looks), so both go straight to the update.
    await client.coordinationV1.leases(ns).create({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name, namespace: ns },
      spec: { holderIdentity: "", leaseDurationSeconds: 1, leaseTransitions: 4 },
    });
    const a = candidate(clock, name, "a");
    const b = candidate(clock, name, "b");
    // Neither write is sent until both candidates have read and decided.
    a.lock.beforeWrite = b.lock.beforeWrite = barrier(2);
    const results = await Promise.all([a.le.tryAcquireOrRenew(), b.le.tryAcquireOrRenew()]);

    expect(results.filter(Boolean)).toHaveLength(1);
    const [winner, loser] = results[0] ? [a, b] : [b, a];
    expect(loser.lock.conflicts()).toHaveLength(1);
    expect(isConflict(loser.lock.conflicts()[0])).toBe(true);
    expect(winner.lock.conflicts()).toEqual([]);
    expect(
      loser.seen.logs.some((l) => l.startsWith("Failed to update lock: Operation cannot be fulfilled")),
    ).toBe(true);
    const lease = await getLease(name);
    expect(lease.spec?.holderIdentity).toBe(winner.id);
    expect(lease.spec?.leaseTransitions).toBe(5);
    expect(winner.le.isLeader()).toBe(true);
    expect(loser.le.isLeader()).toBe(false);
  });

  it("on no Lease at all: both create, one gets 409 AlreadyExists", async () => {
    const clock = new FakeClock(start);
    const name = leaseName();
    const a = candidate(clock, name, "a");
    const b = candidate(clock, name, "b");
    a.lock.beforeWrite = b.lock.beforeWrite = barrier(2);
    const results = await Promise.all([a.le.tryAcquireOrRenew(), b.le.tryAcquireOrRenew()]);

    expect(results.filter(Boolean)).toHaveLength(1);
    const [winner, loser] = results[0] ? [a, b] : [b, a];
    expect(loser.lock.conflicts()).toHaveLength(1);
    expect(isAlreadyExists(loser.lock.conflicts()[0])).toBe(true);
    expect((await getLease(name)).spec).toMatchObject({ holderIdentity: winner.id, leaseTransitions: 0 });
  });

  it("running: exactly one starts leading, and the other stays a follower for a minute", async () => {
    const clock = new FakeClock(start);
    const name = leaseName();
    const cs = [candidate(clock, name, "a"), candidate(clock, name, "b"), candidate(clock, name, "c")];
    runAll(cs);
    await advance(
      clock,
      cs.map((c) => c.lock),
      60 * second,
    );
    const leaders = cs.filter((c) => c.seen.started.length > 0);
    expect(leaders).toHaveLength(1);
    expect(cs.filter((c) => c.le.isLeader()).map((c) => c.id)).toEqual([leaders[0].id]);
    const lease = await getLease(name);
    expect(lease.spec?.holderIdentity).toBe(leaders[0].id);
    // The leader renewed every retryPeriod: its renewTime is within one period of now.
    expect(Date.parse(lease.spec?.renewTime ?? "")).toBeGreaterThan(clock.now() - retryPeriod - 1);
    await stopAll(clock, cs);
    expect(cs.map((c) => c.seen.stopped.length)).toEqual([1, 1, 1]);
  });
});

/** A Lease held by "other", written directly (the holder is not one of ours). */
async function heldBy(name: string, renewTime: number, leaseDurationSeconds = 15): Promise<Lease> {
  const spec = {
    holderIdentity: "other",
    leaseDurationSeconds,
    acquireTime: formatMicroTime(renewTime),
    renewTime: formatMicroTime(renewTime),
    leaseTransitions: 0,
  };
  try {
    const old = await getLease(name);
    return client.coordinationV1.leases(ns).update({ ...old, spec });
  } catch {
    return client.coordinationV1.leases(ns).create({
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: { name, namespace: ns },
      spec,
    });
  }
}

describe("expiry is judged by observed time, not by the holder's renewTime", () => {
  for (const [what, skew] of [
    ["an hour in the past", -3600 * second],
    ["an hour in the future", 3600 * second],
  ] as const) {
    it(`a silent holder whose clock is ${what} expires leaseDuration after we first saw it`, async () => {
      const clock = new FakeClock(start);
      const name = leaseName();
      await heldBy(name, clock.now() + skew);
      const b = candidate(clock, name, "b");
      runAll([b]);
      // First look at t0: the record is new to us, so its lease runs from t0 on *our* clock.
      const took = await advanceUntil(clock, [b.lock], () => b.seen.started.length > 0, 60 * second);
      // Not before 15 s (an hour-old renewTime does not make it expired at once) …
      expect(took).toBeGreaterThan(leaseDuration);
      // … and not an hour later (a future renewTime does not keep it valid): within one jittered retry.
      expect(took).toBeLessThanOrEqual(leaseDuration + retryPeriod * (1 + 1.2) + 100);
      const lease = await getLease(name);
      expect(lease.spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
      await stopAll(clock, [b]);
    });
  }

  it("a holder an hour behind that keeps writing is never taken over", async () => {
    const clock = new FakeClock(start);
    const name = leaseName();
    await heldBy(name, clock.now() - 3600 * second);
    const b = candidate(clock, name, "b");
    runAll([b]);
    for (let t = 0; t < 60; t += 2) {
      await advance(clock, [b.lock], retryPeriod);
      // The holder renews with its own (wrong) clock: the bytes change, and that is all b trusts.
      await heldBy(name, clock.now() - 3600 * second);
    }
    expect(b.seen.started).toEqual([]);
    expect(b.le.getLeader()).toBe("other");
    expect((await getLease(name)).spec?.holderIdentity).toBe("other");
    await stopAll(clock, [b]);
  });
});

describe("a leader that cannot renew within renewDeadline", () => {
  for (const fault of ["fail", "hang"] as const) {
    it(`stops leading (requests ${fault === "fail" ? "answered 503" : "never answered"}) before a follower may take over`, async () => {
      const clock = new FakeClock(start);
      const name = leaseName();
      const a = candidate(clock, name, "a");
      runAll([a]);
      await advanceUntil(clock, [a.lock], () => a.seen.started.length > 0, 10 * second);
      const b = candidate(clock, name, "b");
      runAll([b]);
      await advance(clock, [a.lock, b.lock], 6 * second);
      expect(b.le.getLeader()).toBe("a");

      a.lock.fault = fault;
      const lastRenewal = Math.max(
        ...a.lock.calls.filter((c) => c.op === "update" && !c.error).map((c) => c.at),
      );
      await advanceUntil(clock, [a.lock, b.lock], () => a.seen.stopped.length > 0, 30 * second);
      await a.done;
      const stoppedAt = a.seen.stopped[0];
      // The next try starts retryPeriod after the last success; the deadline is renewDeadline after that.
      expect(stoppedAt - lastRenewal).toBeGreaterThanOrEqual(retryPeriod + renewDeadline);
      expect(stoppedAt - lastRenewal).toBeLessThanOrEqual(retryPeriod + renewDeadline + retryPeriod);
      expect(a.seen.leadingSignal?.aborted).toBe(true);
      expect(a.seen.logs.some((l) => l.endsWith(": context deadline exceeded"))).toBe(true);

      // b takes over only after a has stopped: leaseDuration > renewDeadline is what orders them.
      await advanceUntil(clock, [a.lock, b.lock], () => b.seen.started.length > 0, 30 * second);
      expect(b.seen.started[0]).toBeGreaterThan(stoppedAt);
      await stopAll(clock, [b]);
    });
  }
});

describe("releaseOnCancel", () => {
  async function handover(releaseOnCancel: boolean): Promise<{ waited: number; lease: Lease }> {
    const clock = new FakeClock(start);
    const name = leaseName();
    const a = candidate(clock, name, "a", { releaseOnCancel });
    runAll([a]);
    await advanceUntil(clock, [a.lock], () => a.seen.started.length > 0, 10 * second);
    const b = candidate(clock, name, "b");
    runAll([b]);
    await advance(clock, [a.lock, b.lock], 7 * second);
    const cancelledAt = clock.now();
    a.abort.abort();
    await advanceUntil(clock, [a.lock, b.lock], () => b.seen.started.length > 0, 60 * second);
    await a.done;
    const lease = await getLease(name);
    await stopAll(clock, [b]);
    return { waited: b.seen.started[0] - cancelledAt, lease };
  }

  it("clears the holder on cancel, so a follower takes over at its next try", async () => {
    const { waited, lease } = await handover(true);
    // b's next try comes within one jittered retry period: retryPeriod × (1 + JitterFactor).
    expect(waited).toBeLessThanOrEqual(retryPeriod * 2.2);
    expect(lease.spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 1 });
  });

  it("without it, the follower waits out the lease", async () => {
    const { waited } = await handover(false);
    expect(waited).toBeGreaterThan(leaseDuration - retryPeriod);
  });

  it("writes upstream's released record: no holder, a 1 s lease", async () => {
    const clock = new FakeClock(start);
    const name = leaseName();
    const a = candidate(clock, name, "a", { releaseOnCancel: true });
    runAll([a]);
    await advanceUntil(clock, [a.lock], () => a.seen.started.length > 0, 10 * second);
    await stopAll(clock, [a]);
    const lease = await getLease(name);
    expect(lease.spec).toMatchObject({ holderIdentity: "", leaseDurationSeconds: 1, leaseTransitions: 0 });
    expect(a.le.isLeader()).toBe(false);
  });
});

describe("onNewLeader", () => {
  it("is called once per change of holder, however many times the record is read", async () => {
    const clock = new FakeClock(start);
    const name = leaseName();
    const a = candidate(clock, name, "a", { releaseOnCancel: true });
    runAll([a]);
    await advanceUntil(clock, [a.lock], () => a.seen.started.length > 0, 10 * second);
    const b = candidate(clock, name, "b");
    const c = candidate(clock, name, "c");
    runAll([b, c]);
    const all = [a.lock, b.lock, c.lock];
    await advance(clock, all, 30 * second);
    expect(b.lock.calls.filter((x) => x.op === "get").length).toBeGreaterThan(5);
    expect(b.seen.newLeaders).toEqual(["a"]);
    expect(c.seen.newLeaders).toEqual(["a"]);
    expect(a.seen.newLeaders).toEqual(["a"]);

    a.abort.abort();
    await advanceUntil(clock, all, () => b.seen.started.length + c.seen.started.length > 0, 30 * second);
    await advance(clock, all, 10 * second);
    const next = b.seen.started.length > 0 ? "b" : "c";
    // The follower that took it may have seen the empty record on its way ("" is a change too).
    for (const f of [b, c]) {
      expect(f.seen.newLeaders[0]).toBe("a");
      expect(f.seen.newLeaders.at(-1)).toBe(next);
      expect(f.seen.newLeaders.filter((x) => x === next)).toHaveLength(1);
    }
    await stopAll(clock, [b, c]);
  });
});

describe("a Lease deleted while held", () => {
  it("is recreated by the leader's next renewal: a PUT may create a Lease (AllowCreateOnUpdate)", async () => {
    const clock = new FakeClock(start);
    const name = leaseName();
    const a = candidate(clock, name, "a");
    runAll([a]);
    await advanceUntil(clock, [a.lock], () => a.seen.started.length > 0, 10 * second);
    await advance(clock, [a.lock], 5 * second);
    const before = await getLease(name);
    await client.coordinationV1.leases(ns).delete(name);

    await advance(clock, [a.lock], retryPeriod);
    const after = await getLease(name);
    expect(after.metadata.uid).not.toBe(before.metadata.uid);
    expect(after.spec).toMatchObject({ holderIdentity: "a", acquireTime: before.spec?.acquireTime });
    // The fast-path update went through: the server created the Lease from the PUT.
    expect(a.lock.calls.at(-1)).toMatchObject({ op: "update", holder: "a" });
    expect(a.lock.calls.at(-1)?.error).toBeUndefined();
    expect(a.seen.stopped).toEqual([]);
    expect(a.le.isLeader()).toBe(true);
    await stopAll(clock, [a]);
  });

  it("is recreated by a follower's read-then-create when the leader is gone — at once, not after leaseDuration", async () => {
    const clock = new FakeClock(start);
    const name = leaseName();
    const a = candidate(clock, name, "a");
    runAll([a]);
    await advanceUntil(clock, [a.lock], () => a.seen.started.length > 0, 10 * second);
    const b = candidate(clock, name, "b");
    runAll([b]);
    await advance(clock, [a.lock, b.lock], 5 * second);
    a.lock.fault = "fail"; // the leader can no longer write
    await client.coordinationV1.leases(ns).delete(name);
    const deletedAt = clock.now();

    await advanceUntil(clock, [a.lock, b.lock], () => b.seen.started.length > 0, 30 * second);
    expect(b.seen.started[0] - deletedAt).toBeLessThanOrEqual(retryPeriod * 2.2);
    // b read 404 and created it (then renewed at once: renew's first try is immediate, as upstream).
    const created = b.lock.calls.findIndex((c) => c.op === "create");
    const ops = b.lock.calls.slice(created - 1, created + 1).map((c) => `${c.op}${c.error ? " failed" : ""}`);
    expect(ops).toEqual(["get failed", "create"]);
    expect((await getLease(name)).spec).toMatchObject({ holderIdentity: "b", leaseTransitions: 0 });
    await stopAll(clock, [a, b]);
  });
});

describe("the leaderElection health check", () => {
  it("passes for a follower and a renewing leader; fails once the leader is silent past leaseDuration + timeout", async () => {
    const clock = new FakeClock(start);
    const name = leaseName();
    const timeout = 20 * second;
    const watchDog = newLeaderHealthzAdaptor(timeout);
    expect(watchDog.name()).toBe("leaderElection");
    expect(watchDog.check()).toBeUndefined(); // no elector yet
    const a = candidate(clock, name, "a", { watchDog });
    const b = candidate(clock, name, "b");
    // Driven by hand (no run loop), so nothing renews behind the test's back.
    expect(await a.le.tryAcquireOrRenew()).toBe(true);
    expect(await b.le.tryAcquireOrRenew()).toBe(false);
    expect(watchDog.check()).toBeUndefined();

    clock.step(leaseDuration + timeout);
    expect(watchDog.check()).toBeUndefined(); // exactly at the limit: still tolerated
    expect(b.le.check(timeout)).toBeUndefined(); // a follower is never unhealthy
    clock.step(1);
    expect(watchDog.check()?.message).toBe(`failed election to renew leadership on lease ${name}`);

    await settle([a.lock]);
    expect(await a.le.tryAcquireOrRenew()).toBe(true);
    expect(watchDog.check()).toBeUndefined();
  });
});

describe("leader_election_master_status", () => {
  it("is 0 for a follower, 1 while leading, 0 again after stopping", async () => {
    const clock = new FakeClock(start);
    const name = leaseName();
    const registry = new Registry();
    const metrics = leaderElectionMetrics(registry);
    const a = candidate(clock, name, "a", { metrics, name: "a-lease" });
    const b = candidate(clock, name, "b", { metrics, name: "b-lease" });
    const value = async (lease: string) =>
      (await registry.getSingleMetric("leader_election_master_status")?.get())?.values.find(
        (v) => v.labels.name === lease,
      )?.value;
    expect(await value("a-lease")).toBe(0);
    runAll([a]);
    await advanceUntil(clock, [a.lock], () => a.seen.started.length > 0, 10 * second);
    runAll([b]);
    await advance(clock, [a.lock, b.lock], 5 * second);
    expect(await value("a-lease")).toBe(1);
    expect(await value("b-lease")).toBe(0);
    await stopAll(clock, [a, b]);
    expect(await value("a-lease")).toBe(0);
    expect(await registry.metrics()).toContain("# TYPE leader_election_slowpath_total counter");
  });
});

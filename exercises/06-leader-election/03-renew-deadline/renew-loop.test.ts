// Exercise 6.3: your renewLoop on a fake clock with scripted renewals (exact times), then inside
// the course's real LeaderElector against a real API server: a leader that rides out a short
// outage, and one cut off for good that steps down before a follower may take over.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type APIServer, startAPIServer } from "../../../code/apiserver/server.ts";
import { type Clientset, newForConfig } from "../../../code/client/kubernetes/clientset.ts";
import { FakeClock, sleep } from "../../../code/client/util/clock.ts";
import {
  advance,
  advanceCandidates,
  advanceCandidatesUntil,
  newCandidate,
  runAll,
  stopAll,
} from "../../../code/leaderelection/testing/election-harness.ts";
import { renewLoop } from "./renew-loop.ts";

const second = 1000;
const retryPeriod = 2 * second;
const renewDeadline = 10 * second;

type Answer = "ok" | "fail" | "hang" | "slow-fail";

/** Your loop with tryRenew answering `script(t)` at fake time t (ms since start). */
function scripted(script: (t: number) => Answer) {
  const clock = new FakeClock(0);
  const abort = new AbortController();
  const tries: { at: number; answer: Answer; signal: AbortSignal }[] = [];
  const tryRenew = async (signal: AbortSignal): Promise<boolean> => {
    const answer = script(clock.now());
    tries.push({ at: clock.now(), answer, signal });
    if (answer === "ok") return true;
    if (answer === "fail") return false;
    // A request that takes 3 s to fail, or never comes back: only its signal ends it early.
    await sleep(clock, answer === "slow-fail" ? 3 * second : Number.MAX_SAFE_INTEGER, signal);
    return false;
  };
  let ended: { at: number; value: string | undefined } | undefined;
  let failure: unknown;
  const done = renewLoop(abort.signal, tryRenew, { clock, renewDeadline, retryPeriod }).then(
    (value) => {
      ended = { at: clock.now(), value };
    },
    (err: unknown) => {
      failure = err;
    },
  );
  /** Moves fake time `ms` on, timer by timer; a loop that threw fails the test with its error. */
  const run = async (ms: number) => {
    await advance(clock, [], ms);
    if (failure !== undefined) throw failure;
  };
  return {
    clock,
    abort,
    tries,
    done,
    ended: () => ended,
    run,
    /** Stops a loop that is still running, so a wrong one cannot outlive its test. */
    stop: async () => {
      abort.abort();
      await advance(clock, [], 0);
    },
  };
}

describe("renewLoop on a fake clock", () => {
  it("renews at once, then every retryPeriod after each success, for as long as renewals succeed", async () => {
    const s = scripted(() => "ok");
    await s.run(60 * second);
    expect(s.tries.map((t) => t.at)).toEqual(Array.from({ length: 31 }, (_, i) => i * retryPeriod));
    expect(s.ended()).toBeUndefined();
    await s.stop();
  });

  it("retries a failed renewal every retryPeriod: one success within the deadline keeps the lease", async () => {
    // An outage of 7 s (renewals at 4, 6, 8 and 10 s fail), shorter than renewDeadline.
    const s = scripted((t) => (t >= 3 * second && t < 11 * second ? "fail" : "ok"));
    await s.run(40 * second);
    expect(s.ended()).toBeUndefined();
    expect(s.tries.slice(0, 8).map((t) => [t.at / second, t.answer])).toEqual([
      [0, "ok"],
      [2, "ok"],
      [4, "fail"],
      [6, "fail"],
      [8, "fail"],
      [10, "fail"],
      [12, "ok"],
      [14, "ok"],
    ]);
    await s.stop();
  });

  it('gives up renewDeadline after the round that followed the last success began: "context deadline exceeded"', async () => {
    // Last success at 10 s; the next round starts at 12 s; its deadline is 22 s.
    const s = scripted((t) => (t > 10 * second ? "fail" : "ok"));
    await s.run(60 * second);
    expect(s.ended()).toEqual({ at: 22 * second, value: "context deadline exceeded" });
    expect(s.tries.filter((t) => t.answer === "fail").map((t) => t.at / second)).toEqual([
      12, 14, 16, 18, 20,
    ]);
  });

  it("cuts off a renewal that hangs when the deadline passes (its signal aborts)", async () => {
    const s = scripted((t) => (t > 10 * second ? "hang" : "ok"));
    try {
      await s.run(40 * second);
      expect(s.ended()).toEqual({ at: 22 * second, value: "context deadline exceeded" });
      const hung = s.tries.find((t) => t.answer === "hang");
      expect(hung?.at).toBe(12 * second);
      expect(hung?.signal.aborted).toBe(true);
    } finally {
      await s.stop();
    }
  });

  it("counts slow failures against the same deadline: it is measured from the round's start", async () => {
    // Each renewal from 12 s on takes 3 s to fail: tries at 12 s and 17 s, deadline still at 22 s.
    const s = scripted((t) => (t > 10 * second ? "slow-fail" : "ok"));
    try {
      await s.run(40 * second);
      expect(s.ended()).toEqual({ at: 22 * second, value: "context deadline exceeded" });
      expect(s.tries.filter((t) => t.answer === "slow-fail").map((t) => t.at / second)).toEqual([12, 17]);
    } finally {
      await s.stop();
    }
  });

  it("resolves undefined as soon as its signal aborts, in the middle of a round too, and tries no more", async () => {
    for (const at of [5 * second, 13 * second]) {
      const s = scripted((t) => (t > 10 * second ? "fail" : "ok"));
      await s.run(at);
      s.abort.abort();
      const count = s.tries.length;
      await s.run(30 * second);
      expect(s.ended()).toEqual({ at, value: undefined });
      expect(s.tries.length).toBe(count);
    }
  });
});

describe("inside the real LeaderElector", () => {
  const ns = "kube-system";
  let server: APIServer;
  let client: Clientset;
  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0, compactionIntervalMs: 0 });
    client = newForConfig({ host: server.url, qps: -1 });
  });
  afterAll(async () => {
    client?.closeIdleConnections();
    await server?.close();
  });

  it("a leader rides out a 6 s outage; cut off for good, it stops leading before the follower takes over", async () => {
    const clock = new FakeClock(Date.UTC(2026, 11, 2, 1, 0, 0));
    const lease = { namespace: ns, name: "renew-deadline" };
    const [a, b] = ["a", "b"].map((id) =>
      newCandidate({ clock, leases: client.coordinationV1, lease, id, steps: { renewLoop } }),
    );
    const cs = [a, b];
    runAll([a]);
    await advanceCandidatesUntil(clock, [a], () => a.seen.started.length > 0, 10 * second);
    runAll([b]);
    await advanceCandidates(clock, cs, 5 * second);

    a.lock.fault = "fail"; // 503s for 6 s
    await advanceCandidates(clock, cs, 6 * second);
    a.lock.fault = "none";
    await advanceCandidates(clock, cs, 10 * second);
    expect(a.seen.stopped).toEqual([]);
    expect(a.seen.leadingSignal?.aborted).toBe(false);
    expect(a.le.isLeader()).toBe(true);

    a.lock.fault = "hang"; // a partition: requests never come back
    const lastRenewal = Math.max(
      ...a.lock.calls.filter((c) => c.op === "update" && !c.error).map((c) => c.at),
    );
    await advanceCandidatesUntil(clock, cs, () => a.seen.stopped.length > 0, 30 * second);
    const stoppedAt = a.seen.stopped[0];
    expect(stoppedAt - lastRenewal).toBe(retryPeriod + renewDeadline);
    expect(a.seen.leadingSignal?.aborted).toBe(true);
    expect(a.seen.logs.some((l) => l.endsWith(": context deadline exceeded"))).toBe(true);

    await advanceCandidatesUntil(clock, cs, () => b.seen.started.length > 0, 30 * second);
    expect(b.seen.started[0]).toBeGreaterThan(stoppedAt);
    await stopAll(clock, [a, b]);
  });
});

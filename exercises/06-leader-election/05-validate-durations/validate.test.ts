// Exercise 6.5: your validateLeaderElectionConfig — each rule alone with upstream's message, configs
// that break several rules (the order decides which message), the exact boundaries; then why the
// first rule exists, on the course's real LeaderElector against a real API server: a config your
// validator must refuse, run anyway, makes two leaders.
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type APIServer, startAPIServer } from "../../../code/apiserver/server.ts";
import { type Clientset, newForConfig } from "../../../code/client/kubernetes/clientset.ts";
import { FakeClock } from "../../../code/client/util/clock.ts";
import {
  type LeaderElectionConfig,
  LeaderElectionConfigError,
} from "../../../code/leaderelection/leader-elector.ts";
import type { Interface } from "../../../code/leaderelection/resourcelock/interface.ts";
import {
  advanceCandidates,
  advanceCandidatesUntil,
  leading,
  newCandidate,
  runAll,
  stopAll,
} from "../../../code/leaderelection/testing/election-harness.ts";
import { validateLeaderElectionConfig } from "./validate.ts";

const lock = (identity: string): Interface => ({
  get: () => Promise.reject(new Error("unused")),
  create: () => Promise.resolve(),
  update: () => Promise.resolve(),
  recordEvent: () => {},
  identity: () => identity,
  describe: () => "kube-system/test",
});

// The core components' defaults: 15 s / 10 s / 2 s.
const valid: LeaderElectionConfig = {
  lock: lock("a"),
  leaseDuration: 15_000,
  renewDeadline: 10_000,
  retryPeriod: 2_000,
  callbacks: { onStartedLeading: () => {}, onStoppedLeading: () => {} },
};
const noCallbacks = {} as LeaderElectionConfig["callbacks"];

function message(change: Partial<LeaderElectionConfig>): string | undefined {
  const err = validateLeaderElectionConfig({ ...valid, ...change });
  if (err !== undefined) expect(err).toBeInstanceOf(LeaderElectionConfigError);
  return err?.message;
}

describe("one rule broken: upstream's message, word for word", () => {
  const cases: [string, Partial<LeaderElectionConfig>, string][] = [
    [
      "a lease shorter than the deadline",
      { leaseDuration: 8_000 },
      "leaseDuration must be greater than renewDeadline",
    ],
    [
      "a deadline within one jittered retry",
      { renewDeadline: 2_200 },
      "renewDeadline must be greater than retryPeriod*JitterFactor",
    ],
    ["a zero retry period", { retryPeriod: 0 }, "retryPeriod must be greater than zero"],
    [
      "no OnStartedLeading",
      { callbacks: { onStoppedLeading: () => {} } as unknown as LeaderElectionConfig["callbacks"] },
      "OnStartedLeading callback must not be nil",
    ],
    [
      "no OnStoppedLeading",
      { callbacks: { onStartedLeading: () => {} } as unknown as LeaderElectionConfig["callbacks"] },
      "OnStoppedLeading callback must not be nil",
    ],
    ["no lock", { lock: undefined }, "Lock must not be nil."],
    ["a lock with no identity", { lock: lock("") }, "Lock identity is empty"],
  ];
  for (const [what, change, text] of cases) {
    it(`${what}: "${text}"`, () => {
      expect(message(change)).toBe(text);
    });
  }
});

describe("several rules broken: the first in upstream's order wins", () => {
  const cases: [string, Partial<LeaderElectionConfig>, string][] = [
    // The comparisons come before the checks against zero.
    [
      "all zero",
      { leaseDuration: 0, renewDeadline: 0, retryPeriod: 0 },
      "leaseDuration must be greater than renewDeadline",
    ],
    [
      "no deadline, no retry period",
      { renewDeadline: 0, retryPeriod: 0 },
      "renewDeadline must be greater than retryPeriod*JitterFactor",
    ],
    [
      "all negative, in decreasing order",
      { leaseDuration: -1, renewDeadline: -2, retryPeriod: -3 },
      "leaseDuration must be greater than zero",
    ],
    [
      "a positive lease, a zero deadline, a negative retry",
      { leaseDuration: 1, renewDeadline: 0, retryPeriod: -1 },
      "renewDeadline must be greater than zero",
    ],
    [
      "bad durations and no callbacks",
      { leaseDuration: 5_000, callbacks: noCallbacks },
      "leaseDuration must be greater than renewDeadline",
    ],
    [
      "no callbacks and no lock",
      { callbacks: noCallbacks, lock: undefined },
      "OnStartedLeading callback must not be nil",
    ],
    [
      "no OnStoppedLeading and no lock",
      {
        callbacks: { onStartedLeading: () => {} } as unknown as LeaderElectionConfig["callbacks"],
        lock: undefined,
      },
      "OnStoppedLeading callback must not be nil",
    ],
  ];
  for (const [what, change, text] of cases) {
    it(`${what}: "${text}"`, () => {
      expect(message(change)).toBe(text);
    });
  }
});

describe("the boundaries", () => {
  it("accepts the core components' defaults", () => {
    expect(validateLeaderElectionConfig(valid)).toBeUndefined();
  });

  it("the lease must be strictly longer than the deadline", () => {
    expect(message({ leaseDuration: 10_000 })).toBe("leaseDuration must be greater than renewDeadline");
    expect(message({ leaseDuration: 10_001 })).toBeUndefined();
  });

  it("the deadline must be strictly longer than retryPeriod × 1.2", () => {
    // 2 s × 1.2 = 2.4 s; 1.001 s × 1.2 = 1.2012 s.
    expect(message({ renewDeadline: 2_400 })).toBe(
      "renewDeadline must be greater than retryPeriod*JitterFactor",
    );
    expect(message({ renewDeadline: 2_401 })).toBeUndefined();
    expect(message({ renewDeadline: 2_001 })).toBe(
      "renewDeadline must be greater than retryPeriod*JitterFactor",
    );
    expect(message({ renewDeadline: 1_201, retryPeriod: 1_001 })).toBe(
      "renewDeadline must be greater than retryPeriod*JitterFactor",
    );
    expect(message({ renewDeadline: 1_202, retryPeriod: 1_001 })).toBeUndefined();
  });

  it("short durations are fine as long as they are ordered: 3 ms / 2 ms / 1 ms", () => {
    expect(message({ leaseDuration: 3, renewDeadline: 2, retryPeriod: 1 })).toBeUndefined();
  });
});

describe("why leaseDuration must be greater than renewDeadline, on the real elector", () => {
  const second = 1000;
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

  /**
   * Leader a, follower b (starting 1 s later, trying every 2 s exactly); a is cut off from the API
   * server 6 s in. The most candidates that led at once, and when each stopped and started.
   */
  async function partition(
    durations: Pick<LeaderElectionConfig, "leaseDuration" | "renewDeadline" | "retryPeriod">,
  ) {
    const clock = new FakeClock(Date.UTC(2026, 11, 2, 1, 0, 0));
    const lease = { namespace: "kube-system", name: `durations-${durations.leaseDuration}` };
    const [a, b] = ["a", "b"].map((id) =>
      newCandidate({
        clock,
        leases: client.coordinationV1,
        lease,
        id,
        config: { ...durations, random: () => 0 },
        unvalidated: true,
      }),
    );
    const cs = [a, b];
    runAll([a]);
    await advanceCandidatesUntil(clock, [a], () => a.seen.started.length > 0, 5 * second);
    await advanceCandidates(clock, [a], second);
    runAll([b]);
    await advanceCandidates(clock, cs, 5 * second);
    a.lock.fault = "fail";
    let most = 0;
    await advanceCandidatesUntil(
      clock,
      cs,
      () => {
        most = Math.max(most, leading(cs).length);
        return b.seen.started.length > 0 && a.seen.stopped.length > 0;
      },
      60 * second,
    );
    await stopAll(clock, cs);
    return { most, aStopped: a.seen.stopped[0], bStarted: b.seen.started[0] };
  }

  it("10 s / 10 s / 2 s: your validator refuses it — run anyway, the follower leads before the cut-off leader stops", async () => {
    const equal = { leaseDuration: 10 * second, renewDeadline: 10 * second, retryPeriod: 2 * second };
    expect(message(equal)).toBe("leaseDuration must be greater than renewDeadline");
    const run = await partition(equal);
    expect(run.most).toBe(2);
    expect(run.bStarted).toBeLessThan(run.aStopped);
  });

  it("15 s / 10 s / 2 s: your validator accepts it — the leader stops first, then the follower takes over", async () => {
    const defaults = { leaseDuration: 15 * second, renewDeadline: 10 * second, retryPeriod: 2 * second };
    expect(message(defaults)).toBeUndefined();
    const run = await partition(defaults);
    expect(run.most).toBe(1);
    expect(run.bStarted).toBeGreaterThan(run.aStopped);
  });
});

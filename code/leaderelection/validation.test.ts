/**
 * NewLeaderElector's validation, in upstream's order with upstream's texts.
 */
import { describe, expect, it } from "vitest";
import {
  JitterFactor,
  jitter,
  type LeaderElectionConfig,
  LeaderElectionConfigError,
  newLeaderElector,
  validateLeaderElectionConfig,
} from "./leader-elector.ts";
import type { Interface } from "./resourcelock/interface.ts";

const lock = (identity: string): Interface => ({
  get: () => Promise.reject(new Error("unused")),
  create: () => Promise.resolve(),
  update: () => Promise.resolve(),
  recordEvent: () => {},
  identity: () => identity,
  describe: () => "kube-system/test",
});

const valid: LeaderElectionConfig = {
  lock: lock("a"),
  leaseDuration: 15_000,
  renewDeadline: 10_000,
  retryPeriod: 2_000,
  callbacks: { onStartedLeading: () => {}, onStoppedLeading: () => {} },
};

describe("validateLeaderElectionConfig", () => {
  const cases: [string, Partial<LeaderElectionConfig>, string][] = [
    [
      "lease not longer than the deadline",
      { leaseDuration: 10_000 },
      "leaseDuration must be greater than renewDeadline",
    ],
    // 2 s × 1.2 = 2.4 s: a deadline of 2.4 s leaves no room for a jittered retry.
    [
      "deadline within one jittered retry",
      { renewDeadline: 2_400 },
      "renewDeadline must be greater than retryPeriod*JitterFactor",
    ],
    [
      "negative lease (the order puts the comparisons first)",
      { leaseDuration: -1, renewDeadline: -2, retryPeriod: -3 },
      "leaseDuration must be greater than zero",
    ],
    [
      "zero deadline",
      { leaseDuration: 1, renewDeadline: 0, retryPeriod: -1 },
      "renewDeadline must be greater than zero",
    ],
    ["zero retry period", { retryPeriod: 0 }, "retryPeriod must be greater than zero"],
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
    ["empty identity", { lock: lock("") }, "Lock identity is empty"],
  ];
  for (const [name, change, text] of cases) {
    it(`${name}: "${text}"`, () => {
      const err = validateLeaderElectionConfig({ ...valid, ...change });
      expect(err).toBeInstanceOf(LeaderElectionConfigError);
      expect(err?.message).toBe(text);
      expect(() => newLeaderElector({ ...valid, ...change } as LeaderElectionConfig)).toThrow(text);
    });
  }

  it("accepts the core components' defaults and the tightest legal deadline", () => {
    expect(validateLeaderElectionConfig(valid)).toBeUndefined();
    expect(validateLeaderElectionConfig({ ...valid, renewDeadline: 2_401 })).toBeUndefined();
    expect(newLeaderElector(valid).isLeader()).toBe(false);
  });
});

describe("jitter", () => {
  it("spreads retryPeriod over [retryPeriod, retryPeriod × (1 + JitterFactor))", () => {
    expect(JitterFactor).toBe(1.2);
    expect(jitter(2_000, JitterFactor, () => 0)).toBe(2_000);
    expect(jitter(2_000, JitterFactor, () => 0.5)).toBe(3_200);
    expect(jitter(2_000, 0, () => 0.5)).toBe(3_000); // a factor ≤ 0 means 1, as wait.Jitter
  });
});

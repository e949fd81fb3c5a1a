/**
 * The decision table of tryAcquireOrRenew, and expiry by observed time, as pure functions.
 */
import { describe, expect, it } from "vitest";
import {
  canRenewOptimistically,
  decideAcquireOrRenew,
  emptyObservation,
  isLeaseExpired,
  isLeaseValid,
  type Observation,
  observe,
  observeOwnWrite,
} from "./acquire-or-renew.ts";
import type { LeaderElectionRecord } from "./resourcelock/interface.ts";
import { rawRecord } from "./resourcelock/lease-lock.ts";

const t0 = Date.UTC(2026, 11, 2, 1, 0, 0);
const hour = 3_600_000;

const record = (over: Partial<LeaderElectionRecord> = {}): LeaderElectionRecord => ({
  holderIdentity: "other",
  leaseDurationSeconds: 15,
  acquireTime: t0 - 60_000,
  renewTime: t0,
  leaderTransitions: 3,
  ...over,
});
const seen = (r: LeaderElectionRecord, at: number): Observation =>
  observe(emptyObservation, { record: r, raw: rawRecord(r) }, at);

describe("observe", () => {
  it("restarts the clock when the bytes change, and only then", () => {
    const first = seen(record(), t0);
    expect(first.time).toBe(t0);
    const same = observe(first, { record: record(), raw: rawRecord(record()) }, t0 + 10_000);
    expect(same).toBe(first);
    const renewed = record({ renewTime: t0 + 2000 });
    expect(observe(first, { record: renewed, raw: rawRecord(renewed) }, t0 + 10_000).time).toBe(t0 + 10_000);
  });

  it("sees two renewals within one second as the same bytes (metav1.Time marshals whole seconds)", () => {
    expect(rawRecord(record({ renewTime: t0 + 100 }))).toBe(rawRecord(record({ renewTime: t0 + 900 })));
    expect(rawRecord(record({ renewTime: t0 + 900 }))).not.toBe(rawRecord(record({ renewTime: t0 + 1000 })));
  });

  it("after our own write keeps the last bytes read, so the next read counts as a change", () => {
    const first = seen(record(), t0);
    const mine = observeOwnWrite(first, record({ holderIdentity: "me" }), t0 + 5);
    expect(mine).toMatchObject({ raw: first.raw, time: t0 + 5, record: { holderIdentity: "me" } });
  });
});

describe("isLeaseValid", () => {
  it("runs from observedTime for the observed record's leaseDurationSeconds, whatever renewTime says", () => {
    for (const renewTime of [t0 - hour, t0, t0 + hour]) {
      const obs = seen(record({ renewTime }), t0);
      expect(isLeaseValid(obs, t0 + 14_999), `renewTime ${renewTime - t0}`).toBe(true);
      expect(isLeaseValid(obs, t0 + 15_000), `renewTime ${renewTime - t0}`).toBe(false);
      expect(isLeaseExpired(obs, t0 + 15_000)).toBe(true);
    }
  });

  it("takes the duration the holder wrote, not ours", () => {
    const obs = seen(record({ leaseDurationSeconds: 60 }), t0);
    expect(isLeaseValid(obs, t0 + 59_000)).toBe(true);
  });

  it("is false for the nothing-seen observation", () => {
    expect(isLeaseValid(emptyObservation, t0)).toBe(false);
  });
});

describe("decideAcquireOrRenew", () => {
  const me = "me";
  const cases: {
    name: string;
    holder: string;
    at: number;
    want: "wait" | "renew" | "acquire";
    transitions?: number;
    acquireTime?: number;
  }[] = [
    { name: "another holder, lease valid", holder: "other", at: t0 + 10_000, want: "wait" },
    {
      name: "another holder, lease expired",
      holder: "other",
      at: t0 + 15_000,
      want: "acquire",
      transitions: 4,
      acquireTime: t0 + 15_000,
    },
    {
      name: "released (no holder), lease valid",
      holder: "",
      at: t0 + 100,
      want: "acquire",
      transitions: 4,
      acquireTime: t0 + 100,
    },
    {
      name: "us, lease valid",
      holder: me,
      at: t0 + 2_000,
      want: "renew",
      transitions: 3,
      acquireTime: t0 - 60_000,
    },
    {
      name: "us, lease expired",
      holder: me,
      at: t0 + 20_000,
      want: "renew",
      transitions: 3,
      acquireTime: t0 - 60_000,
    },
  ];
  for (const c of cases) {
    it(`${c.name} → ${c.want}`, () => {
      const obs = seen(record({ holderIdentity: c.holder }), t0);
      const d = decideAcquireOrRenew(obs, c.at, me, 15);
      expect(d.action).toBe(c.want);
      if (d.action === "wait") {
        expect(d.holder).toBe(c.holder);
        return;
      }
      expect(d.record).toEqual({
        holderIdentity: me,
        leaseDurationSeconds: 15,
        acquireTime: c.acquireTime,
        renewTime: c.at,
        leaderTransitions: c.transitions,
      });
    });
  }

  it("writes our own leaseDurationSeconds, not the observed one", () => {
    const obs = seen(record({ holderIdentity: "", leaseDurationSeconds: 1 }), t0);
    const d = decideAcquireOrRenew(obs, t0, me, 15);
    expect(d.action === "acquire" && d.record.leaseDurationSeconds).toBe(15);
  });
});

describe("canRenewOptimistically", () => {
  it("only for the holder, only within its lease", () => {
    const mine = seen(record({ holderIdentity: "me" }), t0);
    expect(canRenewOptimistically(mine, t0 + 14_000, "me")).toBe(true);
    expect(canRenewOptimistically(mine, t0 + 15_000, "me")).toBe(false);
    expect(canRenewOptimistically(mine, t0, "other")).toBe(false);
  });
});

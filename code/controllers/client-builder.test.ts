import { describe, expect, it } from "vitest";
import { FakeClock } from "../client/util/clock.ts";
import { CachedTokenSource, type ExpiringToken, tokenExpiry } from "./client-builder.ts";

const minute = 60_000;

describe("a controller token's expiry (tokenSourceImpl.Token)", () => {
  it("leaves 20 % of the token's life unused", () => {
    expect(tokenExpiry(0, 60 * minute)).toBe(48 * minute);
    expect(tokenExpiry(1000, 1000 + 24 * 60 * minute)).toBe(1000 + Math.floor(0.8 * 24 * 60 * minute));
  });

  it("takes a life under 10 minutes (clock skew) as 10", () => {
    expect(tokenExpiry(0, 5 * minute)).toBe(8 * minute);
    expect(tokenExpiry(0, -minute)).toBe(8 * minute);
  });
});

describe("CachedTokenSource (cachingTokenSource)", () => {
  /** A base that hands out token-1, token-2, … each valid for an hour from the clock's now. */
  function issuer(clock: FakeClock) {
    let n = 0;
    let fail = false;
    const base = async (): Promise<ExpiringToken> => {
      if (fail) throw new Error("TokenRequest refused");
      n++;
      return { token: `token-${n}`, expiry: tokenExpiry(clock.now(), clock.now() + 60 * minute) };
    };
    return { base, issued: () => n, setFail: (f: boolean) => (fail = f) };
  }

  it("reuses a token until 10 s before its expiry, then asks for a new one", async () => {
    const clock = new FakeClock(1_000_000);
    const i = issuer(clock);
    const ts = new CachedTokenSource(i.base, clock);
    expect(await ts.token()).toBe("token-1");
    clock.step(48 * minute - 10_001);
    expect(await ts.token()).toBe("token-1");
    clock.step(1);
    expect(await ts.token()).toBe("token-2");
    expect(i.issued()).toBe(2);
    // The new token's life counts from its own issue.
    clock.step(47 * minute);
    expect(await ts.token()).toBe("token-2");
  });

  it("asks once for the requests that find the token stale together", async () => {
    const clock = new FakeClock(0);
    const i = issuer(clock);
    const ts = new CachedTokenSource(i.base, clock);
    expect(await Promise.all([ts.token(), ts.token(), ts.token()])).toEqual([
      "token-1",
      "token-1",
      "token-1",
    ]);
    expect(i.issued()).toBe(1);
  });

  it("keeps the old token when a renewal fails, fails without one, and renews once it can", async () => {
    const clock = new FakeClock(0);
    const i = issuer(clock);
    const ts = new CachedTokenSource(i.base, clock);
    i.setFail(true);
    await expect(ts.token()).rejects.toThrow("TokenRequest refused");
    i.setFail(false);
    expect(await ts.token()).toBe("token-1");
    clock.step(50 * minute);
    i.setFail(true);
    expect(await ts.token()).toBe("token-1");
    i.setFail(false);
    expect(await ts.token()).toBe("token-2");
  });
});

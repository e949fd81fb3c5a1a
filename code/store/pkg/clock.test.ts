import { describe, expect, it } from "vitest";
import { FakeClock } from "./clock.ts";

describe("FakeClock", () => {
  it("fires due timers in order, at their due time, including ones set while advancing", () => {
    const clock = new FakeClock(1000);
    const seen: string[] = [];
    clock.setTimer(30, () => seen.push(`b@${clock.now()}`));
    clock.setTimer(10, () => {
      seen.push(`a@${clock.now()}`);
      clock.setTimer(5, () => seen.push(`c@${clock.now()}`));
    });
    clock.setTimer(100, () => seen.push("late"));
    clock.advance(50);
    expect(seen).toEqual(["a@1010", "c@1015", "b@1030"]);
    expect(clock.now()).toBe(1050);
    expect(clock.pendingTimers()).toBe(1);
  });

  it("never fires a cancelled timer; ties fire in the order they were set", () => {
    const clock = new FakeClock();
    const seen: number[] = [];
    const t = clock.setTimer(0, () => seen.push(0));
    clock.setTimer(0, () => seen.push(1));
    clock.setTimer(0, () => seen.push(2));
    t.cancel();
    clock.advance(0);
    expect(seen).toEqual([1, 2]);
  });
});

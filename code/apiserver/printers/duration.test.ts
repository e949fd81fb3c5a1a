import { describe, expect, it } from "vitest";
import { humanDuration } from "./duration.ts";

// The cases of upstream's duration_test.go (TestHumanDuration).
const s = 1000;
const m = 60 * s;
const h = 60 * m;
const d = 24 * h;

describe("humanDuration", () => {
  it.each([
    [1 * s, "1s"],
    [70 * s, "70s"],
    [190 * s, "3m10s"],
    [70 * m, "70m"],
    [47 * h, "47h"],
    [49 * h, "2d1h"],
    [(8 * 24 + 2) * h, "8d"],
    [367 * d, "367d"],
    [365 * 2 * d + 25 * d, "2y25d"],
    [365 * 8 * d + 100 * d, "8y"],
  ])("%d ms is %s", (ms, want) => {
    expect(humanDuration(ms)).toBe(want);
  });

  it("keeps two units where upstream does, and drops a zero second unit", () => {
    expect(humanDuration(119.9 * s)).toBe("119s");
    expect(humanDuration(2 * m)).toBe("2m");
    expect(humanDuration(9 * m + 59 * s)).toBe("9m59s");
    expect(humanDuration(10 * m + 59 * s)).toBe("10m");
    expect(humanDuration(3 * h + 5 * m)).toBe("3h5m");
    expect(humanDuration(5 * h)).toBe("5h");
    expect(humanDuration(8 * h + 30 * m)).toBe("8h");
    expect(humanDuration(3 * d)).toBe("3d");
    expect(humanDuration(3 * 365 * d)).toBe("3y");
  });

  it("tolerates up to two seconds of clock skew", () => {
    expect(humanDuration(-1500)).toBe("0s");
    expect(humanDuration(-2000)).toBe("<invalid>");
  });
});

import { describe, expect, it } from "vitest";
import { DurationError, formatDuration, parseDuration } from "./duration.ts";

describe("parseDuration", () => {
  it("reads what Go's time.ParseDuration reads, in milliseconds", () => {
    const cases: [string, number][] = [
      ["0", 0],
      ["-0", 0],
      ["5m0s", 300_000],
      ["5m", 300_000],
      ["1h30m", 5_400_000],
      ["90s", 90_000],
      ["1.5s", 1500],
      [".5s", 500],
      ["5.s", 5000],
      ["500ms", 500],
      ["1500us", 2], // 1.5 ms, rounded
      ["2000µs", 2],
      ["2000μs", 2],
      ["3000000ns", 3],
      ["+1s", 1000],
      ["-1m", -60_000],
      ["1h1m1s1ms", 3_661_001],
    ];
    for (const [text, ms] of cases) expect(parseDuration(text), text).toBe(ms);
  });

  it("refuses anything else with Go's message", () => {
    const message = (text: string) => {
      const r = parseDuration(text);
      return r instanceof DurationError ? r.message : `no error: ${r}`;
    };
    expect(message("")).toBe('time: invalid duration ""');
    expect(message("5 minutes")).toBe('time: unknown unit " minutes" in duration "5 minutes"');
    expect(message("5")).toBe('time: missing unit in duration "5"');
    expect(message("1d")).toBe('time: unknown unit "d" in duration "1d"');
    expect(message(".s")).toBe('time: invalid duration ".s"');
    expect(message("s")).toBe('time: invalid duration "s"');
    expect(message("-")).toBe('time: invalid duration "-"');
    expect(message("1.5.5s")).toBe('time: missing unit in duration "1.5.5s"');
  });
});

describe("formatDuration", () => {
  it("prints as Go's Duration.String", () => {
    const cases: [number, string][] = [
      [0, "0s"],
      [300_000, "5m0s"],
      [90_000, "1m30s"],
      [3_600_000, "1h0m0s"],
      [5_400_500, "1h30m0.5s"],
      [1500, "1.5s"],
      [500, "500ms"],
      [-60_000, "-1m0s"],
    ];
    for (const [ms, text] of cases) expect(formatDuration(ms), String(ms)).toBe(text);
  });

  it("prints what parseDuration reads back", () => {
    for (const ms of [0, 1, 999, 1000, 61_001, 7_322_500]) expect(parseDuration(formatDuration(ms))).toBe(ms);
  });
});

import { afterEach, describe, expect, it, vi } from "vitest";
import { run } from "./chaos.ts";

describe("npm run cluster -- chaos (flags)", () => {
  afterEach(() => vi.restoreAllMocks());

  it("refuses a bad seed or duration with exit 2, before connecting to anything", async () => {
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((s: string) => void errors.push(s));
    const connect = vi.fn();
    expect(await run(["--seed", "x"], connect)).toBe(2);
    expect(await run(["--duration", "5 minutes"], connect)).toBe(2);
    expect(connect).not.toHaveBeenCalled();
    expect(errors[0]).toMatch(/--seed/);
    expect(errors[1]).toMatch(/--duration/);
  });

  it("prints its flags for --help", async () => {
    const out: string[] = [];
    vi.spyOn(console, "log").mockImplementation((s: string) => void out.push(s));
    expect(await run(["--help"], vi.fn())).toBe(0);
    expect(out.join("\n")).toMatch(/--seed[\s\S]*--duration[\s\S]*--concurrent-control-plane/);
  });

  it("says how to start a cluster when none runs, exit 1", async () => {
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((s: string) => void errors.push(s));
    expect(await run(["--seed", "1", "--dir", "/nonexistent/cluster"])).toBe(1);
    expect(errors).toEqual([
      "no cluster is running: /nonexistent/cluster/cluster.json not found (start one with npm run cluster)",
    ]);
  });
});

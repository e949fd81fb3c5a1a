import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it, vi } from "vitest";
import { processStartToken } from "../../kubelet/runtime/process-state.ts";
import { run } from "./chaos.ts";

describe("npm run cluster -- chaos (flags and its directory)", () => {
  const dirs: string[] = [];
  const tempDir = () => {
    const d = mkdtempSync(join(tmpdir(), "chaos-cli-"));
    dirs.push(d);
    return d;
  };
  afterEach(() => {
    vi.restoreAllMocks();
    for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
  });

  it("refuses a bad seed or duration with exit 2, before starting anything", async () => {
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((s: string) => void errors.push(s));
    const connect = vi.fn();
    expect(await run(["--seed", "x"], connect)).toBe(2);
    expect(await run(["--duration", "5 minutes"], connect)).toBe(2);
    expect(await run(["--nodes", "0"], connect)).toBe(2);
    expect(connect).not.toHaveBeenCalled();
    expect(errors[0]).toMatch(/--seed/);
    expect(errors[1]).toMatch(/--duration/);
    expect(errors[2]).toMatch(/--nodes/);
  });

  it("prints its flags for --help", async () => {
    const out: string[] = [];
    vi.spyOn(console, "log").mockImplementation((s: string) => void out.push(s));
    expect(await run(["--help"], vi.fn())).toBe(0);
    expect(out.join("\n")).toMatch(/--seed[\s\S]*--duration[\s\S]*--concurrent-control-plane[\s\S]*--nodes/);
  });

  it("never touches a cluster it did not make: a directory with another cluster's files, exit 1", async () => {
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((s: string) => void errors.push(s));
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const dir = tempDir();
    writeFileSync(join(dir, "cluster.json"), "{}");
    expect(await run(["--seed", "1", "--dir", dir])).toBe(1);
    expect(errors.join("\n")).toContain(`${dir} holds a cluster chaos did not make`);
    expect(readdirSync(dir)).toEqual(["cluster.json"]);
  });

  it("refuses its own directory while another supervisor holds it, exit 1", async () => {
    const errors: string[] = [];
    vi.spyOn(console, "error").mockImplementation((s: string) => void errors.push(s));
    vi.spyOn(process.stdout, "write").mockImplementation(() => true);
    const dir = tempDir();
    writeFileSync(join(dir, "chaos-cluster"), "");
    // A live supervisor: this very process, recorded with its start token.
    const state = {
      version: 1,
      supervisorPid: process.pid,
      supervisorStartToken: processStartToken(process.pid),
      startedAt: new Date().toISOString(),
      dir,
      server: "",
      kubeconfig: "",
      components: [],
      kubeletRootDirs: [],
    };
    writeFileSync(join(dir, "cluster.json"), JSON.stringify(state));
    expect(await run(["--seed", "1", "--dir", dir])).toBe(1);
    expect(errors.join("\n")).toContain(
      `a cluster is already running in ${dir} (supervisor pid ${process.pid})`,
    );
    expect(readdirSync(dir).sort()).toEqual(["chaos-cluster", "cluster.json"]);
  });
});

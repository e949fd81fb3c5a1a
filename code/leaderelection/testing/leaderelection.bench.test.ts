// The leader-election benchmark in its quick size (2 failovers at 2 s / 1 s / 0.2 s): it runs end
// to end — an API server child, candidate processes, kill -9 of each leader — prints its tables
// with the bound beside the figures, and `--json` one object in which every failover completed
// (a new leader, not the killed one, acted after the kill) and the idle rates were counted.
// Timing is not checked (performance is measured by `npm run bench -- leaderelection`). The
// derivation of the bound is checked on its own, against figures worked out by hand.
import { type ChildProcess, spawn } from "node:child_process";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { repoRoot } from "../../testing/child-process.ts";
import { failoverBound } from "./failover-bound.ts";

const bench = join(repoRoot, "code", "leaderelection", "testing", "leaderelection.bench.ts");
const running: ChildProcess[] = [];

/** Runs the benchmark to its end; a test that fails first SIGTERMs it, and it stops its children. */
function run(args: string[]): Promise<{ code: number | null; stdout: string; stderr: string }> {
  const tsx = join(repoRoot, "node_modules", "tsx", "dist", "cli.mjs");
  const child = spawn(process.execPath, [tsx, bench, ...args], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  running.push(child);
  let stdout = "";
  let stderr = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    stdout += c;
  });
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    stderr += c;
  });
  return new Promise((resolve) => child.on("exit", (code) => resolve({ code, stdout, stderr })));
}

afterEach(() => {
  for (const child of running.splice(0))
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGTERM");
});

interface Failover {
  killed: string;
  newLeader: string;
  acquiredMs: number;
  failoverMs: number;
}

describe("failoverBound", () => {
  it("at the defaults: 15 s + 2 × 2 s × 2.2 above, 15 s − 2 s below", () => {
    const b = failoverBound({ leaseDuration: 15_000, renewDeadline: 10_000, retryPeriod: 2_000 });
    expect(b).toMatchObject({ leaseDurationSeconds: 15_000, followerGap: 4_400, unchangedBytes: 2_000 });
    expect(b.upper).toBeCloseTo(23_800);
    expect(b.lower).toBe(13_000);
    expect(b.liveLeaderSafe).toBe(true);
  });

  it("below a 1 s retry period the bytes change once a second, and a 1 s lease is too short", () => {
    const b = failoverBound({ leaseDuration: 1_000, renewDeadline: 500, retryPeriod: 200 });
    expect(b.unchangedBytes).toBe(1_200);
    expect(b.lower).toBe(0);
    expect(b.upper).toBeCloseTo(1_880);
    expect(b.liveLeaderSafe).toBe(false);
    expect(
      failoverBound({ leaseDuration: 2_000, renewDeadline: 1_000, retryPeriod: 200 }).liveLeaderSafe,
    ).toBe(true);
  });

  it("the Lease carries whole seconds: 1.5 s waits as 1 s", () => {
    expect(
      failoverBound({ leaseDuration: 1_500, renewDeadline: 1_000, retryPeriod: 200 }).leaseDurationSeconds,
    ).toBe(1_000);
  });
});

describe("leaderelection.bench.ts in quick mode", () => {
  it("completes every failover, prints the figures beside the bound, and --json one object", async () => {
    const [text, json] = await Promise.all([
      run(["--quick", "--seed", "1"]),
      run(["--quick", "--seed", "2", "--candidates", "2", "--failovers", "1", "--json"]),
    ]);

    expect(text.code, text.stderr).toBe(0);
    expect(text.stderr).toContain("… seed 1; starting kube-apiserver");
    expect(text.stderr).toMatch(
      /failover 1\/2: candidate-\d+ killed [\d.]+ × retryPeriod after a renewal → candidate-\d+ acted after/,
    );
    expect(text.stderr).toMatch(/failover 2\/2: /);
    expect(text.stdout).toContain(
      "3 candidates (processes), 2 failovers (kill -9 of the leader) per set; seed 1",
    );
    const bound = failoverBound({ leaseDuration: 2000, renewDeadline: 1000, retryPeriod: 200 });
    const range = `${(bound.lower / 1000).toFixed(2)} … ${(bound.upper / 1000).toFixed(2)}`;
    expect(text.stdout).toMatch(
      new RegExp(
        `2 s / 1 s / 0\\.2 s\\s+2\\s+[\\d.]+\\s+[\\d.]+\\s+[\\d.]+\\s+[\\d.]+\\s+${range}\\s+\\d/2\\s+\\d+`,
      ),
    );
    expect(text.stdout).toMatch(
      /2 s \/ 1 s \/ 0\.2 s\s+[\d.]+\s+[\d.]+\s+5\.000\s+[\d.]+\s+[\d.]+\s+3\.125\s+[\d.]+/,
    );
    expect(text.stdout).toContain("So failover ≤ leaseDurationSeconds");

    expect(json.code, json.stderr).toBe(0);
    const out = JSON.parse(json.stdout) as {
      options: { failovers: number; candidates: number; seed: number };
      sets: {
        failovers: Failover[];
        p50Ms: number;
        p99Ms: number;
        bound: { lower: number; upper: number };
        idle: { leader: { writesPerSec: number }; follower: { readsPerSec: number }; followers: number };
      }[];
      loadAverage: { before: number; after: number };
    };
    expect(out.options).toMatchObject({ failovers: 1, candidates: 2, seed: 2 });
    expect(out.sets).toHaveLength(1);
    const [set] = out.sets;
    expect(set.failovers).toHaveLength(1);
    for (const f of set.failovers) {
      expect(f.newLeader).not.toBe(f.killed);
      // Causality, not speed: the new leader took the Lease, then acted, both after the kill.
      expect(f.acquiredMs).toBeGreaterThan(0);
      expect(f.failoverMs).toBeGreaterThanOrEqual(f.acquiredMs);
    }
    expect(set.p50Ms).toBe(set.failovers[0].failoverMs);
    expect(set.p99Ms).toBe(set.failovers[0].failoverMs);
    expect(set.bound).toMatchObject({ lower: bound.lower, upper: bound.upper });
    // An idle election: the leader renews (writes), the one follower only reads.
    expect(set.idle.followers).toBe(1);
    expect(set.idle.leader.writesPerSec).toBeGreaterThan(0);
    expect(set.idle.follower.readsPerSec).toBeGreaterThan(0);
    expect(Number.isFinite(out.loadAverage.before)).toBe(true);
  }, 180_000);
});

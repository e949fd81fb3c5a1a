// Chapter 6's demo, run as a learner runs it: the story's facts, not its timings — one leader at
// a time, each takeover by a different process, the released Lease on SIGTERM, the woken leader
// that loses, and no process left behind (also when the demo is stopped with Ctrl-C halfway).
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { lineOf, runDemoToEnd, startDemo } from "../demo-process.ts";

/** Whether a process with this pid still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** The pids the demo printed for its schedulers (`A  pid 1234 …`, `D (pid 1234) started …`). */
function schedulerPids(stdout: string): Map<string, number> {
  const pids = new Map<string, number>();
  for (const m of stdout.matchAll(/^ {3}([A-D]) {2}pid (\d+)/gm)) pids.set(m[1], Number(m[2]));
  for (const m of stdout.matchAll(/^ {3}([A-D]) \(pid (\d+)\) started/gm)) pids.set(m[1], Number(m[2]));
  return pids;
}

describe("npm run chapter -- 6", () => {
  let out: { code: number | null; stdout: string; stderr: string };
  let lines: string[];
  const lineAt = (re: RegExp, from = 0) => {
    const i = lineOf(lines, re, from);
    expect(i, `no line matching ${re}`).toBeGreaterThanOrEqual(0);
    return i;
  };
  const leaderIn = (heading: RegExp) => /\(([A-D])\)/.exec(lines[lineAt(heading)])?.[1];

  beforeAll(async () => {
    out = await runDemoToEnd("06-leader-election", [], {}, 170_000);
    lines = out.stdout.split("\n");
  }, 180_000);

  it("runs every step and exits 0", () => {
    expect(out.code, out.stderr + out.stdout.slice(-3000)).toBe(0);
    for (const n of [1, 2, 3, 4, 5, 6]) expect(out.stdout).toMatch(new RegExp(`^${n}\\. `, "m"));
  });

  it("shows one holder in the Lease, and only that process binds", () => {
    const s2 = lineAt(/^2\. Who leads/);
    const holder = /holder = ([A-C]);/.exec(lines.slice(s2).join("\n"))?.[1];
    expect(holder).toBeDefined();
    expect(lines[lineAt(/^ +NAME +HOLDER +AGE$/, s2) + 1]).toMatch(/^ +kube-scheduler +\S+_\S+ +\d+s$/);
    for (const name of ["A", "B", "C"]) {
      const count = name === holder ? 3 : 0;
      expect(lines[lineAt(new RegExp(`^ +${name} +scheduled \\d+ `), s2)]).toMatch(
        new RegExp(`scheduled ${count} +leader_election_master_status ${count / 3}$`),
      );
    }
    for (const name of ["A", "B", "C"].filter((n) => n !== holder)) {
      expect(out.stdout).toContain(`${name}: lock is held by ${holder} and has not yet expired`);
    }
    // kill -9 is aimed at that holder.
    expect(leaderIn(/^3\. kill -9 the leader/)).toBe(holder);
  });

  it("kill -9: another process takes over, and the Lease counts the transition", () => {
    const killed = leaderIn(/^3\. kill -9 the leader/);
    const s3 = lineAt(/^3\. /);
    const next = /^ +([A-D]) leads [\d.]+ s after the kill/.exec(
      lines[lineAt(/leads .* after the kill/, s3)],
    )?.[1];
    expect(next).toBeDefined();
    expect(next).not.toBe(killed);
    expect(lines[lineAt(/^ +holder = /, s3)]).toContain(`holder = ${next};`);
    expect(out.stdout).toMatch(/leaseTransitions 0 → 1/);
    expect(leaderIn(/^4\. SIGTERM the leader/)).toBe(next);
  });

  it("SIGTERM: the leader releases the Lease, exits 0, and a different process leads", () => {
    const termed = leaderIn(/^4\. SIGTERM the leader/);
    const s4 = lineAt(/^4\. /);
    expect(lines[lineAt(/Requested to terminate, exiting/, s4)]).toContain(
      `${termed}: I "Requested to terminate, exiting"`,
    );
    expect(lines[lineAt(/exited \d+\.$/, s4)]).toBe(`   ${termed} exited 0.`);
    const next = /^ +([A-D]) leads [\d.]+ s after the SIGTERM/.exec(
      lines[lineAt(/after the SIGTERM/, s4)],
    )?.[1];
    expect(next).toBeDefined();
    expect(next).not.toBe(termed);
    expect(leaderIn(/^5\. SIGSTOP the leader/)).toBe(next);
  });

  it("SIGSTOP past the lease: a follower takes over; the woken leader sees it, loses and exits 1", () => {
    const frozen = leaderIn(/^5\. SIGSTOP the leader/);
    const s5 = lineAt(/^5\. /);
    const next = /^ +[A-D] frozen \(SIGSTOP\)\. ([A-D]) leads/.exec(
      lines[lineAt(/frozen \(SIGSTOP\)/, s5)],
    )?.[1];
    expect(next).toBeDefined();
    expect(next).not.toBe(frozen);
    const saw = lineAt(/I "lock is held by [A-D]'s identity and has not yet expired"/, s5);
    expect(lines[saw]).toContain(`lock is held by ${next}'s identity`);
    const gaveUp = lineAt(
      /I "failed to renew lease kube-system\/kube-scheduler: context deadline exceeded"/,
      saw,
    );
    lineAt(/E "Leaderelection lost"/, gaveUp);
    expect(lines[lineAt(/still led until its renew deadline ran out/, s5)]).toMatch(
      /exited 1 at [\d.]+ s\.$/,
    );
    expect(lines[lineAt(/^ +Pods it bound in that window: \d of 4/, s5)]).toBeDefined();
  });

  it("leaves no scheduler process behind", () => {
    const pids = schedulerPids(out.stdout);
    expect([...pids.keys()].sort()).toEqual(["A", "B", "C", "D"]);
    for (const pid of pids.values()) expect(alive(pid), `pid ${pid}`).toBe(false);
    expect(out.stdout).toMatch(/Stopped: the API server and every scheduler process \(pids [\d, ]+\)\./);
  });
});

describe("Ctrl-C halfway through npm run chapter -- 6", () => {
  let demo: ReturnType<typeof startDemo> | undefined;
  afterAll(() => demo?.kill());

  it("stops every scheduler it started", async () => {
    demo = startDemo("06-leader-election", []);
    await demo.waitForStdout("2. Who leads?", 90_000);
    const pids = schedulerPids(demo.stdout());
    expect(pids.size).toBe(3);
    demo.child.kill("SIGINT");
    expect(await demo.waitForExit(30_000)).toBe(0);
    for (const pid of pids.values()) expect(alive(pid), `pid ${pid}`).toBe(false);
  }, 180_000);
});

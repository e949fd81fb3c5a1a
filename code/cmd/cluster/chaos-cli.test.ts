/**
 * Chapter 8: `npm run cluster -- chaos --seed <n> --duration 30s --nodes 1` as a learner runs it —
 * one process, which starts its own cluster (etcd, the API server, two schedulers and two
 * controller-managers with leader election, a kubelet, each through a fault proxy), fires its
 * seeded faults while the workload runs, prints the invariants and stops everything. The printed
 * schedule must be the one the seed gives for the printed components, every invariant PASS, the
 * exit code 0, and no process it printed (restarts included) or any container left afterwards.
 * `CHAOS_SEED` replays another seed. Whatever happens, the `finally` kills what the run recorded.
 */
import { mkdtempSync, readdirSync, readFileSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { waitFor } from "../../testing/wait-for.ts";
import { startCommand } from "../testing/command-process.ts";
import { describeFault, generateSchedule } from "./chaos/schedule.ts";
import { isAlive } from "./chaos/target.ts";
import { repoRoot } from "./flags.ts";
import { containerProcesses, killRecorded, readState } from "./state.ts";

const seed = Number(process.env.CHAOS_SEED ?? 8);
const durationMs = 30_000;

/** `kube-scheduler-2` → kube-scheduler, `kubelet-node-1` → kubelet: the kinds the launcher gives. */
const kindOf = (name: string) => (name.startsWith("kubelet-") ? "kubelet" : name.replace(/-\d+$/, ""));

function ofThisRun(pid: number, dir: string): boolean {
  try {
    return readFileSync(`/proc/${pid}/cmdline`, "utf8").includes(dir);
  } catch {
    return false;
  }
}

describe("npm run cluster -- chaos (the command, as a process)", () => {
  it(`seed ${seed}: prints its schedule, every invariant PASS, exit 0, nothing left running`, async () => {
    const dir = mkdtempSync(join(tmpdir(), "chaos-cli-"));
    const kubeletRoots = () => {
      try {
        return readdirSync(join(dir, "kubelets")).map((n) => join(dir, "kubelets", n));
      } catch {
        return [];
      }
    };
    const p = startCommand(join(repoRoot, "scripts", "cluster.ts"), [
      "chaos",
      "--seed",
      String(seed),
      "--duration",
      "30s",
      "--nodes",
      "1",
      "--dir",
      dir,
    ]);
    const printedPids = () => [...p.stdout().matchAll(/ pid (\d+) /g)].map((m) => Number(m[1]));
    try {
      const code = await p.waitForExit(840_000);
      const out = p.stdout();
      expect(code, `${out}\n${p.stderr()}`).toBe(0);

      // The components as first started (before the first fault), and the schedule printed for them.
      const startLines = out.slice(0, out.indexOf("schedule (seed"));
      const components = [...startLines.matchAll(/^(\S+)\s+pid \d+ /gm)].map((m) => ({
        name: m[1],
        kind: kindOf(m[1]),
      }));
      expect(components.map((c) => c.name)).toEqual([
        "etcd",
        "kube-apiserver",
        "kube-controller-manager-1",
        "kube-controller-manager-2",
        "kube-scheduler-1",
        "kube-scheduler-2",
        "kubelet-node-1",
      ]);
      const schedule = generateSchedule({ seed, durationMs, components });
      expect(schedule.length).toBeGreaterThan(0);
      const planned = [...out.matchAll(/^ {2}plan (.*)$/gm)].map((m) => m[1]);
      expect(planned).toEqual(schedule.map((f) => describeFault(f)));
      // Each planned fault fired, in order, with its action.
      const verbs = { kill: "kill -9", pause: "SIGSTOP", partition: "partition", restart: "restart" };
      const fired = [...out.matchAll(/^\+[\d.]+s (kill -9|SIGSTOP|partition|restart) .*$/gm)]
        .filter((m) => !m[0].endsWith("(exited)"))
        .map((m) => m[1]);
      expect(fired).toEqual(schedule.map((f) => verbs[f.action]));
      expect(out).toContain(`replay: npm run cluster -- chaos --seed ${seed} --duration 30s --nodes 1`);

      const verdicts = [...out.matchAll(/^(PASS|FAIL) (.*)$/gm)].map(
        (m) => `${m[1]} ${m[2].replace(/ \(.*$/, "")}`,
      );
      expect(verdicts).toEqual([
        "PASS every Deployment converges to its desired replicas",
        "PASS no pod ever ran on two nodes",
        "PASS never two leaders acting",
        "PASS no acknowledged write lost",
        "PASS every informer cache equals a fresh list",
        "PASS no orphan process",
      ]);

      // Nothing outlives the command: every pid it printed (restarts included), every container.
      const left = () => [
        ...printedPids().filter(isAlive),
        ...containerProcesses(kubeletRoots()).map((c) => c.pid),
      ];
      await waitFor("every process of the run to be gone", async () => left().length === 0, 10_000).catch(
        () => {},
      );
      expect(left()).toEqual([]);
      expect(printedPids().length).toBeGreaterThanOrEqual(7);
      expect(readState(dir), "cluster.json removed at the end").toBeUndefined();
    } finally {
      p.kill();
      // A run that failed half-way: whatever it recorded, then whatever it printed.
      const state = readState(dir);
      if (state) killRecorded(state);
      // Only a process whose command line names this run's directory (a pid may have been reused).
      for (const pid of printedPids()) if (ofThisRun(pid, dir)) process.kill(pid, "SIGKILL");
      for (const c of containerProcesses(kubeletRoots())) process.kill(-c.pid, "SIGKILL");
      rmSync(dir, { recursive: true, force: true });
    }
  }, 900_000);
});

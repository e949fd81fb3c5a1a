/**
 * Chapter 8: one short seeded chaos run against a real cluster of processes — etcd, the API
 * server (its objects in etcd, so it can be killed), two schedulers and a controller-manager with
 * leader election, two kubelets, every connection through a fault proxy — while one Deployment
 * scales and rolls. Every invariant must pass, and the run's schedule must be the one its seed
 * gives. `CHAOS_SEED` replays another seed. One cluster for the file; afterAll kills every
 * process, the test before it checks that nothing is left.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { waitFor } from "../../../testing/wait-for.ts";
import { LocalCluster } from "../../testing/local-cluster.ts";
import { noOrphanProcess } from "./invariants.ts";
import { chaosAuditPolicy, localClusterTarget } from "./local-target.ts";
import { type ChaosReport, runChaos } from "./runner.ts";
import { generateSchedule } from "./schedule.ts";
import { type ChaosTarget, isAlive } from "./target.ts";

const seed = Number(process.env.CHAOS_SEED ?? 8);
const durationMs = 45_000;
// Loaded-machine durations: a 6 s renew deadline survives the pauses a load of 20 makes.
const leaderElection = { lease: 8000, renew: 6000, retry: 2000 };
const timing = {
  gapMs: [3000, 7000] as [number, number],
  holdMs: [3000, 6000] as [number, number],
  settleMs: 3000,
};

describe("chaos (a short seeded run)", () => {
  let cluster: LocalCluster | undefined;
  let target: ChaosTarget;
  let report: ChaosReport;
  const lines: string[] = [];

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      nodes: ["node-1", "node-2"],
      etcdProcess: true,
      faultProxies: true,
      schedulers: 2,
      controllerManagers: 1,
      // As kubeadm runs it: each controller writes as its own ServiceAccount.
      controllerManagerArgs: ["--use-service-account-credentials"],
      leaderElection,
      auditPolicy: chaosAuditPolicy,
      processTokens: true,
    });
    target = localClusterTarget(cluster);
  }, 300_000);

  afterAll(async () => {
    await cluster?.close();
  }, 120_000);

  it(`seed ${seed}: every invariant holds after ${durationMs / 1000}s of faults`, async () => {
    report = await runChaos(target, {
      seed,
      durationMs,
      ...timing,
      convergeTimeoutMs: 240_000,
      staleBoundMs: leaderElection.renew + leaderElection.retry + leaderElection.renew / 2 + 5000,
      workload: { deployments: 1, maxReplicas: 2, gapMs: [2000, 5000] },
      log: (line) => {
        lines.push(line);
        console.log(line);
      },
    });
    expect(report.schedule.length).toBeGreaterThan(3);
    expect(report.workloadSteps).toBeGreaterThan(0);
    for (const r of report.results) expect(r.evidence, `${r.name} (${report.replay})`).toEqual([]);
    expect(report.ok).toBe(true);
  }, 600_000);

  it("the run followed the schedule its seed gives, and the same seed gives it again", () => {
    const again = generateSchedule({ seed, durationMs, components: target.components(), ...timing });
    expect(report.schedule).toEqual(again);
    // Each planned fault was fired (and printed), in order, with its action.
    const verbs = { kill: "kill -9", pause: "SIGSTOP", partition: "partition", restart: "restart" };
    const firedFaults = report.fired.filter(
      (l) => /^\+[\d.]+s (kill -9|SIGSTOP|partition|restart) /.test(l) && !/\((exited)\)$/.test(l),
    );
    expect(firedFaults.map((l) => /^\+[\d.]+s (kill -9|SIGSTOP|partition|restart)/.exec(l)?.[1])).toEqual(
      report.schedule.map((f) => verbs[f.action]),
    );
    expect(lines[0]).toContain(`replay: npm run cluster -- chaos --seed ${seed} --duration 45s`);
  });

  it("no component or container process is left once the cluster is stopped", async () => {
    const c = cluster!;
    const components = target.components();
    const containers = c.containerPids();
    await c.close();
    const left = () => [
      ...components.filter((p) => isAlive(p.pid)),
      ...containers.filter(isAlive).map((pid) => ({ name: "container", pid })),
    ];
    // SIGKILL is delivered at once, but a process is gone only once the kernel has torn it down.
    await waitFor("every process to be gone", async () => left().length === 0, 10_000).catch(() => {});
    const r = noOrphanProcess({ containers: [], pods: new Map(), componentsAfterStop: left() });
    expect(r.evidence).toEqual([]);
  }, 120_000);
});

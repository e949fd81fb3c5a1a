/**
 * runChaos — one chaos run against a ChaosTarget: the seeded fault schedule fired on time while
 * the workload scales and rolls and the observers watch; then every fault healed, the cluster
 * given a bounded time to converge, and the six invariants judged and printed.
 * No upstream counterpart in-tree: upstream's chaosmonkey (test/e2e/chaosmonkey/chaosmonkey.go)
 * runs one disruption while tests run, and its restart test (test/e2e/cloud/gcp/restart.go)
 * restarts every node once and checks they and the kube-system pods come back; a seeded,
 * randomized schedule over every component, judged by invariants, is what tools outside the tree
 * (Jepsen and the like) do.
 *
 * Solves:
 * - faults fire at their planned offsets, each printed as it fires with the process it hit
 *   (`+12.3s kill -9 kube-scheduler-2 (leader), restart after 4.0s`); a control-plane fault waits
 *   for the previous one to be fully over (its restart done) unless `concurrentControlPlane`;
 * - a component that exits on its own (a scheduler that lost its lease exits, as upstream's does)
 *   is started again within two seconds, as systemd's Restart=always or the kubelet's static pods
 *   would: the run reports it (`restart X (exited)`), it is not a fault the schedule made;
 * - the end is bounded: after the faults, everything is healed (SIGCONT, partitions lifted, dead
 *   components restarted) and the convergent invariants are polled until they pass or
 *   `convergeTimeoutMs` runs out; then all six are judged once, and a failure names the seed and
 *   the replay command. The bound must outlast client-go's reflector backoff: every failed
 *   list-and-watch during the faults doubles it (800 ms up to 30 s, jitter 1.0: up to 60 s, reset
 *   after 2 min of health), so an informer may stay behind a fresh LIST for a minute after the
 *   API server is back — in runs here "every informer cache equals a fresh list" is the last to
 *   hold (the default, 3 min, is the backoff's cap twice over plus a relist).
 *
 * Invariants: the schedule a run prints is `generateSchedule` of its seed, duration and the
 * target's components — the run adds only the resolved leader and the actual times.
 *
 * @upstream none — test tooling (kubernetes/kubernetes test/e2e/chaosmonkey/chaosmonkey.go: Do, the disruption/test choreography; test/e2e/cloud/gcp/restart.go)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/tools/cache/reflector.go (NewReflectorWithOptions: the backoffManager the convergence bound must outlast)
 * @chapter 08-cluster
 */
import type { Clientset } from "../../../client/kubernetes/clientset.ts";
import {
  cachesMatchFreshList,
  deploymentsConverged,
  formatResults,
  type InvariantResult,
  neverTwoLeadersActing,
  noAcknowledgedWriteLost,
  noOrphanProcess,
  noPodOnTwoNodes,
} from "./invariants.ts";
import { Observers } from "./observers.ts";
import { describeFault, type Fault, generateSchedule, replayCommand } from "./schedule.ts";
import { type ChaosTarget, controlPlaneKinds, isAlive } from "./target.ts";
import { Workload, type WorkloadOptions } from "./workload.ts";

export interface ChaosOptions {
  seed: number;
  durationMs: number;
  concurrentControlPlane?: boolean;
  /** How long the cluster gets to converge after the faults stop (default 3 min). */
  convergeTimeoutMs?: number;
  /** How long a woken stale leader may still act (default 15 s: renewDeadline 10 s + retryPeriod 2 s + slack). */
  staleBoundMs?: number;
  gapMs?: [number, number];
  holdMs?: [number, number];
  settleMs?: number;
  workload?: Omit<WorkloadOptions, "seed" | "log">;
  /** Where lines go (default console.log). */
  log?: (line: string) => void;
  /** Extra flags for the printed replay command. */
  replayFlags?: string[];
}

export interface ChaosReport {
  seed: number;
  durationMs: number;
  schedule: Fault[];
  /** The lines printed while the faults ran. */
  fired: string[];
  results: InvariantResult[];
  ok: boolean;
  replay: string;
  /** From the end of the faults until the convergent invariants held (undefined: they never did). */
  convergedMs?: number;
  faultsPerMinute: number;
  workloadSteps: number;
}

const leaseNames = ["kube-scheduler", "kube-controller-manager"];
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

/** The process holding `kind`'s Lease, by the identity each candidate elects with; `holder` as the Lease names it. */
async function leaderOf(target: ChaosTarget, kind: string): Promise<{ name?: string; holder: string }> {
  const lease = await target.admin.coordinationV1
    .leases("kube-system")
    .get(kind, { signal: AbortSignal.timeout(5000) })
    .catch(() => undefined);
  const holder = lease?.spec?.holderIdentity ?? "";
  if (!holder) return { holder };
  const name = target
    .components()
    .find((c) => c.kind === kind && target.leaderIdentity?.(c.name) === holder)?.name;
  return { name, holder };
}

// #region run-chaos
export async function runChaos(target: ChaosTarget, o: ChaosOptions): Promise<ChaosReport> {
  const log = o.log ?? ((line: string) => console.log(line));
  const replay = replayCommand(o.seed, o.durationMs, o.replayFlags);
  const schedule = generateSchedule({
    seed: o.seed,
    durationMs: o.durationMs,
    components: target.components(),
    concurrentControlPlane: o.concurrentControlPlane,
    gapMs: o.gapMs,
    holdMs: o.holdMs,
    settleMs: o.settleMs,
  });
  log(
    `chaos: seed ${o.seed}, ${schedule.length} faults over ${(o.durationMs / 1000).toFixed(0)}s; replay: ${replay}`,
  );

  const workload = new Workload(target.admin, { ...o.workload, seed: o.seed, log: () => {} });
  const observerClient: Clientset = target.newClient?.() ?? target.admin;
  const observers = new Observers(observerClient, {
    namespace: workload.namespace,
    leases: leaseNames,
    kubelets: () => target.kubeletRootDirs?.() ?? [],
  });
  const fired: string[] = [];
  const wakes: number[] = [];
  /** Components a fault holds down (killed, waiting for its restart): the supervisor leaves them. */
  const heldDown = new Set<string>();
  const paused = new Set<string>();
  const partitioned = new Set<string>();
  const restarting = new Set<string>();
  let t0 = Date.now();
  const say = (line: string) => {
    fired.push(line);
    log(line);
  };

  const restart = async (name: string, why: string) => {
    if (restarting.has(name)) return;
    restarting.add(name);
    try {
      if (why) say(`+${((Date.now() - t0) / 1000).toFixed(1)}s restart ${name} (${why})`);
      await target.restart(name);
    } catch (e) {
      say(`  restart ${name} failed: ${(e as Error).message}`);
    } finally {
      restarting.delete(name);
    }
  };

  // The supervisor: what exits on its own is started again, as a service manager would.
  let supervising = true;
  const supervisor = (async () => {
    while (supervising) {
      await sleep(2000);
      for (const c of target.components())
        if (!heldDown.has(c.name) && !restarting.has(c.name) && !isAlive(c.pid))
          await restart(c.name, "exited");
    }
  })();

  // Whatever happens from here, nothing of the run may outlive it: no supervisor restarting
  // components of a cluster being torn down, no informer, no workload step.
  try {
    await observers.start();
    await workload.setup();
    workload.start();

    // #region fire
    const fire = async (f: Fault): Promise<void> => {
      let name = f.target;
      let resolved: string | undefined;
      if (f.target.startsWith("leader:")) {
        // Mid-election (the holder a process that is gone), ask again for a few seconds.
        let holder = "";
        for (let i = 0; i < 10 && resolved === undefined; i++) {
          ({ name: resolved, holder } = await leaderOf(target, f.kind));
          if (resolved === undefined) await sleep(500);
        }
        if (resolved === undefined)
          log(
            `  (the ${f.kind} Lease names ${holder || "no one"}; candidates: ${target
              .components()
              .filter((c) => c.kind === f.kind)
              .map((c) => `${c.name}=${target.leaderIdentity?.(c.name) ?? "?"}`)
              .join(", ")})`,
          );
        // No known holder (mid-election, or a target that cannot map identities): any candidate.
        name = resolved ?? target.components().find((c) => c.kind === f.kind)?.name ?? f.kind;
      }
      // `name?` when the holder could not be told (mid-election): the fault hit a candidate.
      say(describeFault({ ...f, at: Date.now() - t0 }, resolved ?? `${name}?`));
      try {
        switch (f.action) {
          case "kill":
            heldDown.add(name);
            await target.kill(name);
            await sleep(f.holdMs);
            heldDown.delete(name);
            await restart(name, "");
            break;
          case "pause":
            paused.add(name);
            await target.pause(name);
            await sleep(f.holdMs);
            await target.resume(name);
            paused.delete(name);
            wakes.push(Date.now());
            break;
          case "partition":
            partitioned.add(name);
            await target.partition(name, true);
            await sleep(f.holdMs);
            await target.partition(name, false);
            partitioned.delete(name);
            wakes.push(Date.now());
            break;
          case "restart":
            await restart(name, "");
            break;
        }
      } catch (e) {
        say(`  ${f.action} ${name} failed: ${(e as Error).message}`);
        heldDown.delete(name);
      }
    };

    t0 = Date.now();
    const running: Promise<void>[] = [];
    let controlPlane: Promise<void> = Promise.resolve();
    for (const f of schedule) {
      await sleep(Math.max(0, t0 + f.at - Date.now()));
      if (controlPlaneKinds.has(f.kind) && !o.concurrentControlPlane) {
        // One control-plane fault at a time: this one starts when the last is fully over (its
        // restart included), which may be after its planned time on a slow machine.
        controlPlane = controlPlane.then(() => fire(f));
        running.push(controlPlane);
      } else running.push(fire(f));
    }
    await sleep(Math.max(0, t0 + o.durationMs - Date.now()));
    await Promise.all(running);
    // #endregion fire

    // Heal whatever is still broken, then stop the workload (its last step finishes).
    for (const name of paused) await target.resume(name).catch(() => {});
    for (const name of partitioned) await target.partition(name, false).catch(() => {});
    if (paused.size + partitioned.size > 0) wakes.push(Date.now());
    const faultsEnded = Date.now();
    say(`+${((faultsEnded - t0) / 1000).toFixed(1)}s faults stopped; waiting for the cluster to converge`);
    await workload.stop();

    // #region converge
    const desired = workload.desired();
    const convergent = async (): Promise<InvariantResult[]> => {
      // Containers first, pods second: a pod created between the two reads has no container yet.
      const containers = observers.liveContainers();
      const pods = await target.admin.coreV1.pods("").list({ signal: AbortSignal.timeout(10_000) });
      return [
        deploymentsConverged(await workload.deployments(), desired),
        cachesMatchFreshList(await observers.compareCaches(target.admin)),
        noOrphanProcess({
          containers,
          pods: new Map(
            pods.items.map((p) => [p.metadata.uid ?? "", { deleting: !!p.metadata.deletionTimestamp }]),
          ),
        }),
      ];
    };
    const deadline = Date.now() + (o.convergeTimeoutMs ?? 180_000);
    const notJudged = (name: string, why: string): InvariantResult => ({ name, ok: false, evidence: [why] });
    let last: InvariantResult[] = [
      notJudged("every Deployment converges to its desired replicas", "never judged"),
      notJudged("every informer cache equals a fresh list", "never judged"),
      notJudged("no orphan process", "never judged"),
    ];
    let convergedMs: number | undefined;
    let lastProgress = Date.now();
    for (;;) {
      const now = await convergent().catch((e: Error) => e);
      if (now instanceof Error)
        last = last.map((r) =>
          r.ok ? r : notJudged(r.name, `the API server did not answer: ${now.message}`),
        );
      else last = now;
      if (last.every((r) => r.ok)) {
        convergedMs = Date.now() - faultsEnded;
        break;
      }
      if (Date.now() > deadline) break;
      if (Date.now() - lastProgress > 20_000) {
        lastProgress = Date.now();
        const waiting = last.filter((r) => !r.ok).map((r) => `${r.name}: ${r.evidence[0]}`);
        say(`+${((Date.now() - t0) / 1000).toFixed(1)}s still converging — ${waiting.join("; ")}`);
      }
      await sleep(1000);
    }
    // #endregion converge
    supervising = false;
    await supervisor;

    const results: InvariantResult[] = [
      last[0],
      noPodOnTwoNodes(observers.sightings),
      neverTwoLeadersActing({
        leases: leaseNames,
        audit: target.audit?.(),
        observations: observers.leaseObservations,
        wakes,
        staleBoundMs: o.staleBoundMs ?? 15_000,
      }),
      noAcknowledgedWriteLost(workload.writes, await workload.finals()),
      ...last.slice(1),
    ];
    await observers.stop();
    const ok = results.every((r) => r.ok);
    log(formatResults(results));
    log(
      convergedMs === undefined
        ? `did not converge within ${((o.convergeTimeoutMs ?? 180_000) / 1000).toFixed(0)}s`
        : `converged ${(convergedMs / 1000).toFixed(1)}s after the faults stopped`,
    );
    if (!ok) log(`chaos: seed ${o.seed} FAILED; replay with: ${replay}`);
    return {
      seed: o.seed,
      durationMs: o.durationMs,
      schedule,
      fired,
      results,
      ok,
      replay,
      convergedMs,
      faultsPerMinute: schedule.length / (o.durationMs / 60_000),
      workloadSteps: workload.steps,
    };
  } finally {
    supervising = false;
    workload.abort();
    await observers.stop().catch(() => {});
  }
}
// #endregion run-chaos

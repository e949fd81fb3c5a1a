/**
 * Chapter 6's demo — three kube-scheduler processes, one Lease: who leads, what a `kill -9` of
 * the leader costs, what a SIGTERM costs, and what a leader frozen past its lease does when it
 * wakes up.
 *
 * Solves: a learner who has read tryAcquireOrRenew and renew should *see* the durations at work,
 * with the real binary (code/cmd/kube-scheduler.ts) in real processes and real signals:
 * - only the holder of `kube-system/kube-scheduler` binds pods; the others are warm and idle;
 * - `kill -9` releases nothing: a follower takes over once the lease it last saw changing is a
 *   leaseDuration old (measured, printed beside the bound);
 * - SIGTERM releases the Lease (ReleaseOnCancel): a follower takes it at its next retry;
 * - SIGSTOP past the lease, then SIGCONT: the woken leader reads the Lease, sees another holder,
 *   and still leads until its renew deadline runs out — the stale-leader window, measured.
 *
 * The API server runs in this process (`startAPIServer`, plain HTTP, no authentication); the
 * schedulers are child processes with short durations (lease 2 s, renew deadline 1.5 s, retry
 * 0.5 s) so the tour takes about twenty seconds. Every child is stopped when the demo ends —
 * normally, on an error (an exit hook SIGKILLs what is left) or on Ctrl-C.
 *
 * Usage: npm run chapter -- 6
 *
 * @upstream none — course demo
 * @chapter 06-leader-election
 */
import { request } from "node:https";
import type { Lease } from "../../code/api/coordination.ts";
import { type APIServer, startAPIServer } from "../../code/apiserver/server.ts";
import { type Clientset, newForConfig } from "../../code/client/kubernetes/clientset.ts";
import { type CommandProcess, startCommand } from "../../code/cmd/testing/command-process.ts";
import { cleanupSync, repoRoot, track } from "../../code/testing/child-process.ts";
import { freePort } from "../../code/testing/ports.ts";
import {
  bold,
  cyan,
  demoFlags,
  dim,
  green,
  heading,
  note,
  red,
  runDemo,
  say,
  sleep,
  step,
  stopOnInterrupt,
  within,
  yellow,
} from "../demo.ts";

// #region durations
/** Short durations, so the tour is quick; upstream's defaults are 15 s / 10 s / 2 s. */
const durations = { lease: 2_000, renew: 1_500, retry: 500 };
const electionFlags = [
  "--leader-elect-lease-duration=2s",
  "--leader-elect-renew-deadline=1.5s",
  "--leader-elect-retry-period=500ms",
];
/** The acquire loop's wait is retryPeriod × [1, 1 + JitterFactor): at most 1.1 s here. */
const maxJitteredRetry = durations.retry * 2.2;
// #endregion durations

const binary = `${repoRoot}code/cmd/kube-scheduler.ts`;

interface Scheduler {
  name: string;
  process: CommandProcess;
  pid: number;
  identity: string;
  port: number;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;

/** GET over HTTPS, trusting the scheduler's self-signed certificate. */
function httpsGet(url: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false, timeout: 5_000 }, (res) => {
      let body = "";
      res.on("data", (d) => {
        body += d;
      });
      res.on("end", () => resolve(body));
    });
    req.on("timeout", () => req.destroy(new Error("timed out")));
    req.on("error", reject);
    req.end();
  });
}

/** One series of `s`'s /metrics (0 when absent); undefined once the process no longer answers. */
async function metric(s: Scheduler, series: RegExp): Promise<number | undefined> {
  try {
    const m = series.exec(await httpsGet(`https://127.0.0.1:${s.port}/metrics`));
    return m ? Number(m[1]) : 0;
  } catch {
    return undefined;
  }
}

/** How many pods `s` has bound. */
const scheduledBy = (s: Scheduler) =>
  metric(s, /scheduler_schedule_attempts_total\{result="scheduled",profile="default-scheduler"\} (\d+)/);

/** leader_election_master_status: 1 while `s` believes it leads. */
const masterStatus = (s: Scheduler) =>
  metric(s, /leader_election_master_status\{name="kube-scheduler"\} (\d+)/);

/** Polls `check` every 20 ms until it gives a value; throws after `ms`. */
async function until<T>(what: string, check: () => Promise<T | undefined> | T | undefined, ms = 30_000) {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check();
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms} ms waiting for ${what}`);
    await sleep(20);
  }
}

/** The time `text` first appears in `s`'s stderr after character `from`. */
function stderrAfter(s: Scheduler, text: string, from: number, ms = 30_000): Promise<number> {
  return until(
    `${s.name} to log ${JSON.stringify(text)}`,
    () => (s.process.stderr().indexOf(text, from) >= 0 ? Date.now() : undefined),
    ms,
  );
}

async function main(): Promise<number> {
  demoFlags("npm run chapter -- 6", {});
  heading("Leader election — three kube-schedulers, one Lease");

  const schedulers: Scheduler[] = [];
  /** The schedulers this demo has killed or stopped for good. */
  const gone = new Set<Scheduler>();
  let server: APIServer | undefined;
  let client: Clientset | undefined;
  // Whatever way the demo ends, no scheduler outlives it: the exit hook SIGKILLs every tracked child.
  process.on("exit", cleanupSync);
  let stopped = false;
  const shutdown = async () => {
    if (stopped) return;
    stopped = true;
    for (const s of schedulers) s.process.kill(); // SIGKILL ends a stopped (SIGSTOP) process too
    await Promise.all(schedulers.map((s) => s.process.exit));
    client?.closeIdleConnections();
    await server?.close();
  };
  stopOnInterrupt(shutdown);

  try {
    // #region start
    step("An API server and three kube-scheduler processes");
    server = await startAPIServer({ insecurePort: 0 });
    const api = newForConfig({ host: server.url });
    client = api;
    await api.coreV1.nodes().create({
      apiVersion: "v1",
      kind: "Node",
      metadata: { name: "n1", labels: { "kubernetes.io/hostname": "n1" } },
      status: {
        capacity: { cpu: "64", memory: "64Gi", pods: "110" },
        allocatable: { cpu: "64", memory: "64Gi", pods: "110" },
      },
    });
    say(`API server on ${server.url}, one node (n1). Each scheduler is started as:`);
    say(
      cyan(`node --import tsx code/cmd/kube-scheduler.ts --master=${server.url} ${electionFlags.join(" ")}`),
    );
    const start = async (name: string): Promise<Scheduler> => {
      const port = await freePort();
      const proc = startCommand(binary, [
        `--master=${server?.url}`,
        `--secure-port=${port}`,
        "--bind-address=127.0.0.1",
        ...electionFlags,
      ]);
      track(proc.child);
      const s: Scheduler = { name, process: proc, pid: proc.child.pid ?? 0, identity: "", port };
      schedulers.push(s);
      await proc.waitForStderr('"Caches are synced"', 60_000);
      const m = /"Leader election candidate" identity="([^"]+)"/.exec(proc.stderr());
      s.identity = m?.[1] ?? "";
      return s;
    };
    const [a, b, c] = await Promise.all([start("A"), start("B"), start("C")]);
    for (const s of [a, b, c]) say(`${bold(s.name)}  pid ${String(s.pid).padEnd(7)} identity ${s.identity}`);
    note(
      "Each synced its informers first (warm followers), then joined the election for kube-system/kube-scheduler.",
    );
    // #endregion start

    const byIdentity = (id: string | undefined) => schedulers.find((s) => s.identity === id);
    const lease = () => api.coordinationV1.leases("kube-system").get("kube-scheduler");
    const holderOf = (l: Lease) => l.spec?.holderIdentity ?? "";
    const showLease = (l: Lease) => {
      const age = Math.max(
        0,
        Math.round((Date.now() - Date.parse(l.metadata.creationTimestamp ?? "")) / 1000),
      );
      const holder = holderOf(l);
      const w = Math.max(holder.length, 6);
      say(dim("$ kubectl get lease -n kube-system kube-scheduler"));
      say(`NAME             ${"HOLDER".padEnd(w)}   AGE`);
      say(`kube-scheduler   ${holder.padEnd(w)}   ${age}s`);
      const who = byIdentity(holder);
      note(
        `holder = ${who ? who.name : "nobody"}; leaseDurationSeconds ${l.spec?.leaseDurationSeconds}, ` +
          `leaseTransitions ${l.spec?.leaseTransitions ?? 0}, renewTime ${l.spec?.renewTime}`,
      );
    };

    // #region who-leads
    step("Who leads? The Lease says");
    const first = await until("a scheduler to hold the Lease", async () => {
      const l = await lease().catch(() => undefined);
      return l && byIdentity(holderOf(l)) ? l : undefined;
    });
    showLease(first);
    const leader1 = byIdentity(holderOf(first)) as Scheduler;
    for (const s of [a, b, c].filter((x) => x !== leader1)) {
      await stderrAfter(s, "lock is held by", 0, 10_000);
      const race = /error initially creating leader election record: ([^"]*)/.exec(s.process.stderr());
      if (race) say(`${s.name}: ${dim(`lost the race to create it: ${race[1]}`)}`);
      say(`${s.name}: ${dim(`lock is held by ${leader1.name} and has not yet expired`)} (every retry)`);
    }
    for (const p of ["p1", "p2", "p3"]) {
      await api.coreV1.pods("default").create({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: p },
        spec: { containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }] },
      });
    }
    await until("p1, p2, p3 to be bound", async () => {
      const pods = await api.coreV1.pods("default").list();
      return pods.items.every((p) => p.spec.nodeName) && pods.items.length === 3 ? true : undefined;
    });
    say("Three pods created and bound. From each process's own /metrics:");
    for (const s of [a, b, c])
      say(
        `  ${s.name}  scheduled ${await scheduledBy(s)}   leader_election_master_status ${await masterStatus(s)}`,
      );
    note("Only the holder runs scheduling cycles; the followers' queues fill, but nothing pops them.");
    // #endregion who-leads

    // #region kill-9
    step(`kill -9 the leader (${leader1.name})`);
    const before = await lease();
    const killedAt = Date.now();
    leader1.process.child.kill("SIGKILL");
    gone.add(leader1);
    // The kubelet would restart a static pod; we start D now, so there is a follower for later.
    const dStarting = start("D");
    const afterKill = await until("a new holder", async () => {
      const l = await lease().catch(() => undefined);
      const h = l && holderOf(l);
      return h && h !== leader1.identity ? l : undefined;
    });
    const killTakeover = Date.now() - killedAt;
    const leader2 = byIdentity(holderOf(afterKill)) as Scheduler;
    say(
      `${green(`${leader2.name} leads ${seconds(killTakeover)} after the kill`)} — bound: leaseDuration (${seconds(durations.lease)}) ` +
        `after the last renewal ${leader2.name} saw (up to ${seconds(durations.retry)} before the kill), plus its next try (≤ ${seconds(maxJitteredRetry)})`,
    );
    showLease(afterKill);
    note(
      `leaseTransitions ${before.spec?.leaseTransitions ?? 0} → ${afterKill.spec?.leaseTransitions}: a new holder counts one. Nothing was released —`,
    );
    note(
      "the followers could only wait until the Lease stopped changing for a whole leaseDuration on their own clocks.",
    );
    // #endregion kill-9

    // #region sigterm
    const d = await dStarting;
    say(
      `${d.name} (pid ${d.pid}) started in ${leader1.name}'s place (as the kubelet restarts a static pod) and follows.`,
    );
    step(`SIGTERM the leader (${leader2.name}): ReleaseOnCancel`);
    const termFrom = leader2.process.stderr().length;
    const termedAt = Date.now();
    leader2.process.child.kill("SIGTERM");
    let released: Lease | undefined;
    const afterTerm = await until("a holder after the release", async () => {
      const l = await lease().catch(() => undefined);
      if (!l) return undefined;
      const h = holderOf(l);
      if (h === "") released = l;
      return h !== "" && h !== leader2.identity ? l : undefined;
    });
    const termTakeover = Date.now() - termedAt;
    const code = await leader2.process.waitForExit(30_000);
    gone.add(leader2);
    const leader3 = byIdentity(holderOf(afterTerm)) as Scheduler;
    for (const line of leader2.process.stderr().slice(termFrom).split("\n")) {
      if (/Received SIGTERM|Requested to terminate/.test(line)) say(`${leader2.name}: ${dim(line)}`);
    }
    say(`${leader2.name} exited ${code}.`);
    if (released)
      say(
        `The Lease in between: holder "" and leaseDurationSeconds ${released.spec?.leaseDurationSeconds} — written by ${leader2.name} on its way out.`,
      );
    say(
      `${green(`${leader3.name} leads ${seconds(termTakeover)} after the SIGTERM`)} — bound: the release, then a follower's next try (≤ ${seconds(maxJitteredRetry)})`,
    );
    note("An empty holder is free to take whatever its lease says: nobody waits out the 2 s.");
    // #endregion sigterm

    // #region stale-leader
    const followers = schedulers.filter((s) => !gone.has(s) && s !== leader3);
    step(`SIGSTOP the leader (${leader3.name}) past its lease, then SIGCONT: the stale leader`);
    const stopFrom = leader3.process.stderr().length;
    const stoppedAt = Date.now();
    leader3.process.child.kill("SIGSTOP");
    const afterStop = await until("a follower to take over", async () => {
      const l = await lease().catch(() => undefined);
      return l && followers.some((f) => f.identity === holderOf(l)) ? l : undefined;
    });
    const follower = byIdentity(holderOf(afterStop)) as Scheduler;
    const stopTakeover = Date.now() - stoppedAt;
    say(
      `${leader3.name} frozen (SIGSTOP). ${green(`${follower.name} leads ${seconds(stopTakeover)} later`)}; ${leader3.name} does not know.`,
    );
    showLease(afterStop);
    await sleep(300);
    const resumedAt = Date.now();
    const followerBefore = (await scheduledBy(follower)) ?? 0;
    leader3.process.child.kill("SIGCONT");
    // Watch the woken process from the moment it wakes: what it logs, and when it exits.
    const sawOtherP = stderrAfter(leader3, `lock is held by ${follower.identity}`, stopFrom);
    const gaveUpP = stderrAfter(leader3, "failed to renew lease", stopFrom);
    const exitP = leader3.process.exit.then((code) => ({ code, at: Date.now() }));
    // Work for whoever believes it leads: both may now run scheduling cycles.
    const stalePods = ["s1", "s2", "s3", "s4"];
    for (const p of stalePods) {
      await api.coreV1.pods("default").create({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: p },
        spec: { containers: [{ name: "c", image: "registry.k8s.io/pause:3.10" }] },
      });
    }
    const [sawOther, gaveUp, exit] = await Promise.all([
      sawOtherP,
      gaveUpP,
      within(30_000, exitP, "the exit"),
    ]);
    gone.add(leader3);
    await until("s1 … s4 to be bound", async () => {
      const pods = await Promise.all(stalePods.map((p) => api.coreV1.pods("default").get(p)));
      return pods.every((p) => p.spec.nodeName) ? true : undefined;
    });
    // Each pod is bound exactly once (a second binding gets 409), so what the new leader did not
    // bind, the woken one did; the new leader's own /metrics says how many it bound.
    const byFollower = ((await scheduledBy(follower)) ?? followerBefore) - followerBefore;
    const byStale = stalePods.length - byFollower;
    const staleLines = leader3.process.stderr().slice(stopFrom).split("\n");
    say(`After SIGCONT, ${leader3.name} said:`);
    for (const line of staleLines) {
      if (/lock is held by|failed to renew|Leaderelection lost|already assigned/.test(line)) {
        say(`  ${dim(line.replace(follower.identity, `${follower.name}'s identity`))}`);
      }
    }
    say(
      `${leader3.name} read the Lease and saw ${follower.name} hold it ${seconds(sawOther - resumedAt)} after waking,`,
    );
    say(
      `${red(`yet it still led until its renew deadline ran out: ${seconds(gaveUp - resumedAt)}`)} (renewDeadline ${seconds(durations.renew)}), and exited ${exit.code} at ${seconds(exit.at - resumedAt)}.`,
    );
    say(
      `Pods it bound in that window: ${byStale} of ${stalePods.length} (${follower.name} bound ${byFollower}; a pod bound twice gets 409 "already assigned").`,
    );
    note("That is the stale-leader window: the Lease is not a fence. The API server's checks on each write");
    note(
      "(a binding only onto a pod with no node, a resourceVersion on every update) are what keep it harmless.",
    );
    // #endregion stale-leader

    // #region summary
    step("What was measured");
    const rows: [string, number, string][] = [
      [
        "kill -9 → new leader",
        killTakeover,
        "leaseDuration from the last renewal seen + the next try (1.5 … 3.1 s)",
      ],
      ["SIGTERM → new leader", termTakeover, "the release + the next try (≤ 1.1 s)"],
      ["SIGSTOP → new leader", stopTakeover, "as kill -9: a follower cannot tell the two apart"],
      ["SIGCONT → old leader gives up", gaveUp - resumedAt, "renewDeadline (1.5 s): the stale-leader window"],
    ];
    for (const [what, ms, bound] of rows) say(`${what.padEnd(30)} ${seconds(ms).padStart(7)}   ≈ ${bound}`);
    note(
      "They vary from run to run with where the signal falls between two renewals; a loaded machine adds to each.",
    );
    // #endregion summary
  } finally {
    const pids = schedulers.map((s) => s.pid);
    await shutdown();
    const left = pids.filter((pid) => {
      try {
        process.kill(pid, 0);
        return true;
      } catch {
        return false;
      }
    });
    console.log("");
    say(
      left.length === 0
        ? `Stopped: the API server and every scheduler process (pids ${pids.join(", ")}).`
        : yellow(`still running: ${left.join(", ")}`),
    );
  }
  return 0;
}

runDemo(main);

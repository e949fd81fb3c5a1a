/**
 * Leader-election benchmark (issue 15) — failover time after `kill -9` of the leader, p50 and
 * p99 over `--failovers` (20) seeded failovers per duration set, printed beside the theoretical
 * bound (failover-bound.ts); and what an idle election costs the API server: reads and writes
 * per second of the leader and of each follower.
 *
 * @upstream kubernetes/client-go tools/leaderelection/leaderelection.go (the elector measured)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/apis/audit/v1/types.go (Event: the audit log the requests are counted from)
 *
 * How, and why so:
 * - One API server, a child process (code/cmd/kube-apiserver.ts, plain HTTP) with auditing on at
 *   Metadata level and its log on standard output: every request it served is one JSON line with
 *   its verb, resource, User-Agent, status code and timestamps (microseconds), read here as it
 *   comes. That log is the count of API reads and writes — taken at the server, not at clients.
 * - `--candidates` (3) candidates, each its own process (candidate.ts: the real LeaderElector,
 *   LeaseLock and clientset), whose only work as leader is one write — a merge patch of a
 *   ConfigMap — and whose User-Agent names it, so the audit log says who sent what.
 * - Per duration set, a fresh Lease and ConfigMap. First the idle window: `--idle-periods` (30)
 *   retry periods of a settled election, every Lease request counted as the leader's or a
 *   follower's (its sender's role when it was served). Then the failovers, each: wait until the
 *   election is settled (the leader has renewed, every follower has read the Lease since the
 *   leader took it); the seed picks how many more renewals to let pass (1–2) and at what
 *   fraction of retryPeriod after the last one to strike; then SIGKILL of the leader's process.
 *   Failover = the audit time of the new leader's first action (its ConfigMap patch,
 *   ResponseComplete) − the kill time (this process's clock; one machine). The killed candidate
 *   is replaced by a new process (a new identity, as a restarted pod has).
 * - The seed also seeds every candidate's jitter (mulberry32). The operating system's scheduling
 *   is not seeded, so a replay repeats the choices, not every millisecond.
 * - Leader changes that no kill caused are counted: with a lease too short for its retry period
 *   (see failover-bound.ts), followers take over live leaders, and the benchmark says so.
 *
 * The duration sets (leaseDuration / renewDeadline / retryPeriod). Upstream validates
 * leaseDuration > renewDeadline > JitterFactor (1.2) × retryPeriod, and the Lease carries
 * int(leaseDuration / 1 s), which Lease validation requires to be > 0 — so no lease is shorter
 * than 1 s, and issue 15's "1 s / 0.5 s / 0.2 s" fits as one valid triple. The default list:
 *   15 s / 10 s / 2 s   kube-scheduler's and kube-controller-manager's defaults;
 *    8 s /  5 s / 1 s   } retry periods 1 s, 0.5 s, 0.2 s with the defaults' ratios
 *    4 s / 2.5 s / 0.5 s } (renewDeadline = 5 × retryPeriod, leaseDuration = 7.5 × retryPeriod
 *    2 s /  1 s / 0.2 s  } rounded up to whole seconds, which the Lease carries);
 *    1 s / 0.5 s / 0.2 s the shortest valid lease — which followers now and then find expired
 *                        under a live leader (renewTime is compared at whole seconds): counted.
 * Flags: --failovers N (20), --candidates N (3), --idle-periods N (30), --seed N (random, printed),
 * --durations "15/10/2,1/0.5/0.2" (seconds), --quick (2 failovers, 2 s / 1 s / 0.2 s only,
 * 10 idle periods), --json (one JSON object on stdout; progress always goes to stderr).
 *
 * @chapter 06-leader-election
 */
import type { ChildProcess } from "node:child_process";
import { mkdtempSync, writeFileSync } from "node:fs";
import { loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { isAlreadyExists } from "../../client/errors.ts";
import { newForConfig } from "../../client/kubernetes/clientset.ts";
import { quickMode, sizeFlag } from "../../testing/bench-flags.ts";
import {
  progress,
  repoRoot,
  runBenchmark,
  spawnScript,
  startInsecureAPIServerChild,
  stopChild,
  trackTempDir,
} from "../../testing/child-process.ts";
import { percentile } from "../../testing/percentile.ts";
import { mulberry32 } from "../../testing/random.ts";
import { validateLeaderElectionConfig } from "../leader-elector.ts";
import type { Interface } from "../resourcelock/interface.ts";
import { AuditLog, agentPrefix, type Call, wallNow } from "./audit-log-reader.ts";
import { type Durations, expectedIdleRates, type FailoverBound, failoverBound } from "./failover-bound.ts";

const quick = quickMode();
const json = process.argv.includes("--json");
const opts = {
  failovers: sizeFlag("failovers", 20, 2),
  candidates: sizeFlag("candidates", 3, 3),
  idlePeriods: sizeFlag("idle-periods", 30, 10),
  seed: seedFlag(),
};
const sets = durationsFlag();
const namespace = "bench-leaderelection";

function seedFlag(): number {
  const i = process.argv.indexOf("--seed");
  if (i < 0) return Math.floor(Math.random() * 2 ** 31);
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--seed needs a non-negative integer, got "${process.argv[i + 1] ?? ""}"`);
    process.exit(2);
  }
  return n;
}

/**
 * `--durations 15/10/2,1/0.5/0.2` (seconds). Each triple must pass newLeaderElector's checks
 * (the duration ones come first; a stand-in lock and callbacks satisfy the rest) and give the
 * Lease at least 1 s, or the API server refuses it: "spec.leaseDurationSeconds … must be greater than 0".
 */
function durationsFlag(): Durations[] {
  const i = process.argv.indexOf("--durations");
  const text =
    i >= 0 ? (process.argv[i + 1] ?? "") : quick ? "2/1/0.2" : "15/10/2,8/5/1,4/2.5/0.5,2/1/0.2,1/0.5/0.2";
  const standIns = {
    lock: { identity: () => "flag-check" } as Interface,
    callbacks: { onStartedLeading: () => {}, onStoppedLeading: () => {} },
  };
  return text.split(",").map((triple) => {
    const [leaseDuration, renewDeadline, retryPeriod] = triple.split("/").map((s) => Number(s) * 1000);
    const d = { leaseDuration, renewDeadline, retryPeriod };
    const why = [leaseDuration, renewDeadline, retryPeriod].some((n) => !Number.isFinite(n))
      ? "needs leaseDuration/renewDeadline/retryPeriod in seconds"
      : (validateLeaderElectionConfig({ ...d, ...standIns })?.message ??
        (leaseDuration < 1000
          ? "leaseDuration must be at least 1 s (the Lease holds whole seconds, > 0)"
          : ""));
    if (why) {
      console.error(`--durations: "${triple}": ${why}`);
      process.exit(2);
    }
    return d;
  });
}

const seconds = (ms: number) => `${+(ms / 1000).toFixed(3)} s`;
const label = (d: Durations) =>
  `${seconds(d.leaseDuration)} / ${seconds(d.renewDeadline)} / ${seconds(d.retryPeriod)}`;

const ok = (c: Call) => c.code >= 200 && c.code < 300;
const isLeaseWrite = (lease: string) => (c: Call) =>
  c.resource === "leases" && c.name === lease && (c.verb === "update" || c.verb === "create") && ok(c);
const isFirstAction = (cm: string) => (c: Call) =>
  c.resource === "configmaps" && c.name === cm && c.verb === "patch" && ok(c);

// ---- the candidates ----

class Candidates {
  readonly live = new Map<string, ChildProcess>();
  private started = 0;

  constructor(
    private readonly server: string,
    private readonly d: Durations,
    private readonly lease: string,
    private readonly configMap: string,
    private readonly random: () => number,
  ) {}

  start(): string {
    const id = `candidate-${++this.started}`;
    const script = join(repoRoot, "code", "leaderelection", "testing", "candidate.ts");
    const { child } = spawnScript(script, [
      ...["--server", this.server, "--id", id, "--lease-lock-namespace", namespace],
      ...["--lease-lock-name", this.lease, "--configmap", this.configMap],
      ...["--lease-duration", String(this.d.leaseDuration), "--renew-deadline", String(this.d.renewDeadline)],
      ...[
        "--retry-period",
        String(this.d.retryPeriod),
        "--seed",
        String(Math.floor(this.random() * 2 ** 32)),
      ],
    ]);
    this.live.set(id, child);
    return id;
  }

  /** kill -9; returns the kill time (wall clock, ms, as the audit log's). */
  kill(id: string): number {
    const child = this.live.get(id);
    if (!child) throw new Error(`no live candidate ${id}`);
    this.live.delete(id);
    const at = wallNow();
    child.kill("SIGKILL");
    return at;
  }

  async stopAll(): Promise<void> {
    await Promise.all([...this.live.values()].map((c) => stopChild(c, 2000)));
    this.live.clear();
  }
}

// ---- one duration set ----

interface Failover {
  killed: string;
  newLeader: string;
  /** How many renewals were let pass after the election settled, and at what fraction of retryPeriod after the last the kill came. */
  renewalsWaited: number;
  phase: number;
  /** The new leader's successful Lease write, ms after the kill. */
  acquiredMs: number;
  /** The new leader's first action (its ConfigMap patch), ms after the kill: the failover time. */
  failoverMs: number;
}

interface Idle {
  windowMs: number;
  leader: { readsPerSec: number; writesPerSec: number };
  /** Per follower: the followers' requests / their number. */
  follower: { readsPerSec: number; writesPerSec: number };
  followers: number;
  expected: { leaderWritesPerSec: number; followerReadsPerSec: number };
}

interface SetResult {
  durations: Durations;
  bound: FailoverBound;
  idle: Idle;
  failovers: Failover[];
  p50Ms: number;
  p99Ms: number;
  minMs: number;
  maxMs: number;
  withinBound: number;
  /** Changes of the Lease's holder that no kill caused. */
  leaderChangesWithoutKill: number;
}

/** Nearest rank: the smallest value with at least p of the values at or below it. */
async function runSet(
  server: string,
  audit: AuditLog,
  d: Durations,
  index: number,
  random: () => number,
): Promise<SetResult> {
  const lease = `lease-${index}`;
  const configMap = `work-${index}`;
  const bound = failoverBound(d);
  const driver = newForConfig({ host: server, qps: -1, userAgent: `${agentPrefix}driver` });
  await driver.coreV1.configMaps(namespace).create({
    apiVersion: "v1",
    kind: "ConfigMap",
    metadata: { name: configMap, namespace },
    data: { leader: "" },
  });
  driver.closeIdleConnections();
  const candidates = new Candidates(server, d, lease, configMap, random);
  // Generous: processes start slowly on a loaded machine; the bound itself is far shorter.
  const patience = bound.upper + 60_000;
  const tag = label(d);
  try {
    const auditStart = audit.calls.length;
    for (let i = 0; i < opts.candidates; i++) candidates.start();
    progress(`${tag}: ${opts.candidates} candidates starting`);

    /** The holder by the last successful Lease write, and that write's index. */
    const holder = () => {
      for (let i = audit.calls.length - 1; i >= auditStart; i--)
        if (isLeaseWrite(lease)(audit.calls[i])) return { id: audit.calls[i].who, index: i };
      return undefined;
    };
    /**
     * Settled: a live holder has renewed since it took the lease, and every other live candidate
     * has read the Lease since then (so each follower's clock runs from this leader's writes).
     */
    const settled = () =>
      audit.until(
        `the election of ${lease} to settle`,
        () => {
          const h = holder();
          if (!h || !candidates.live.has(h.id)) return undefined;
          let took = h.index; // the first write of this holder's run of writes
          for (let j = took - 1; j >= auditStart; j--) {
            if (!isLeaseWrite(lease)(audit.calls[j])) continue;
            if (audit.calls[j].who !== h.id) break;
            took = j;
          }
          const renewed = audit.find(took + 1, (c) => isLeaseWrite(lease)(c) && c.who === h.id);
          if (!renewed) return undefined;
          for (const id of candidates.live.keys())
            if (
              id !== h.id &&
              !audit.find(
                took + 1,
                (c) => c.resource === "leases" && c.name === lease && c.who === id && c.verb === "get",
              )
            )
              return undefined;
          return h.id;
        },
        patience,
      );

    const leader0 = await settled();
    progress(`${tag}: ${leader0} leads; counting API requests for ${opts.idlePeriods} retry periods`);

    // The idle window: every Lease request in it, per candidate.
    const t0 = wallNow();
    await new Promise((r) => setTimeout(r, opts.idlePeriods * d.retryPeriod));
    const t1 = wallNow();
    const idle = idleRates(audit, auditStart, lease, t0, t1, candidates.live.size, d);

    const failovers: Failover[] = [];
    for (let f = 1; f <= opts.failovers; f++) {
      const leader = await settled();
      const renewalsWaited = 1 + Math.floor(random() * 2);
      const phase = random();
      let from = audit.calls.length;
      for (let r = 0; r < renewalsWaited; r++) {
        const next = await audit.until(
          `a renewal by ${leader}`,
          () => audit.find(from, (c) => isLeaseWrite(lease)(c) && c.who === leader),
          patience,
        );
        from = next.index + 1;
      }
      await new Promise((r) => setTimeout(r, phase * d.retryPeriod));
      const killAt = candidates.kill(leader);
      const afterKill = (c: Call) => c.at > killAt && c.who !== leader;
      const action = await audit.until(
        `a new leader's first action after ${leader} was killed`,
        () => audit.find(auditStart, (c) => isFirstAction(configMap)(c) && afterKill(c)),
        patience,
      );
      const acquired = audit.find(auditStart, (c) => isLeaseWrite(lease)(c) && afterKill(c));
      const fo: Failover = {
        killed: leader,
        newLeader: action.call.who,
        renewalsWaited,
        phase,
        acquiredMs: (acquired?.call.at ?? Number.NaN) - killAt,
        failoverMs: action.call.at - killAt,
      };
      failovers.push(fo);
      progress(
        `${tag}: failover ${f}/${opts.failovers}: ${leader} killed ${phase.toFixed(2)} × retryPeriod after a renewal → ${fo.newLeader} acted after ${seconds(fo.failoverMs)}`,
      );
      candidates.start();
    }

    // Holder changes in the Lease's write history, less the ones the kills caused.
    let changes = 0;
    let last = "";
    for (let i = auditStart; i < audit.calls.length; i++) {
      const c = audit.calls[i];
      if (!isLeaseWrite(lease)(c)) continue;
      if (last !== "" && c.who !== last) changes++;
      last = c.who;
    }
    const sorted = failovers.map((f) => f.failoverMs).sort((a, b) => a - b);
    return {
      durations: d,
      bound,
      idle,
      failovers,
      p50Ms: percentile(sorted, 50),
      p99Ms: percentile(sorted, 99),
      minMs: sorted[0],
      maxMs: sorted[sorted.length - 1],
      withinBound: sorted.filter((ms) => ms <= bound.upper).length,
      leaderChangesWithoutKill: Math.max(0, changes - failovers.length),
    };
  } finally {
    await candidates.stopAll();
  }
}

/**
 * Lease requests in [t0, t1), each put down to the role its sender had when it was served: the
 * holder's (by the last successful Lease write before it) or a follower's. A follower that takes
 * over mid-window is a follower until its write lands, the leader after — so a takeover without a
 * kill shows as follower writes, and the rates stay per role, not per process.
 */
function idleRates(
  audit: AuditLog,
  from: number,
  lease: string,
  t0: number,
  t1: number,
  candidates: number,
  d: Durations,
): Idle {
  const leader = { reads: 0, writes: 0 };
  const follower = { reads: 0, writes: 0 };
  let holder = "";
  for (let i = from; i < audit.calls.length; i++) {
    const c = audit.calls[i];
    if (c.resource !== "leases" || c.name !== lease) continue;
    if (c.at >= t0 && c.at < t1) {
      const role = c.who === holder ? leader : follower;
      if (c.verb === "get") role.reads++;
      else role.writes++; // update or create, answered 2xx or not: each is a write request
    }
    if (isLeaseWrite(lease)(c)) holder = c.who;
  }
  const secs = (t1 - t0) / 1000;
  const followers = candidates - 1;
  return {
    windowMs: t1 - t0,
    leader: { readsPerSec: leader.reads / secs, writesPerSec: leader.writes / secs },
    follower: {
      readsPerSec: follower.reads / secs / followers,
      writesPerSec: follower.writes / secs / followers,
    },
    followers,
    expected: expectedIdleRates(d),
  };
}

// ---- main and the report ----

async function main(): Promise<void> {
  const load0 = loadavg()[0];
  const random = mulberry32(opts.seed);
  progress(`seed ${opts.seed}; starting kube-apiserver (child process, audit log on stdout)`);
  const dir = trackTempDir(mkdtempSync(join(tmpdir(), "leaderelection-bench-")));
  const policy = join(dir, "audit-policy.yaml");
  writeFileSync(
    policy,
    "apiVersion: audit.k8s.io/v1\nkind: Policy\nomitStages: [RequestReceived]\nrules:\n- level: Metadata\n",
  );
  const server = await startInsecureAPIServerChild(["--audit-policy-file", policy, "--audit-log-path", "-"]);
  const audit = new AuditLog(server.child);
  try {
    const driver = newForConfig({ host: server.url, qps: -1, userAgent: `${agentPrefix}driver` });
    try {
      await driver.coreV1
        .namespaces()
        .create({ apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } });
    } catch (err) {
      if (!isAlreadyExists(err)) throw err;
    }
    driver.closeIdleConnections();
    const results: SetResult[] = [];
    for (const [i, d] of sets.entries()) results.push(await runSet(server.url, audit, d, i, random));
    report(results, { before: load0, after: loadavg()[0] });
  } catch (err) {
    // What the server saw last says which candidate stopped doing what.
    const last = audit.calls.slice(-20).map((c) => JSON.stringify(c));
    throw new Error(
      `${err instanceof Error ? err.message : err}\nthe last requests served:\n${last.join("\n")}`,
    );
  } finally {
    await stopChild(server.child);
  }
}

const fmt = (ms: number) => (Number.isFinite(ms) ? (ms / 1000).toFixed(2) : "—");
const rate = (n: number) => n.toFixed(3);

function report(results: SetResult[], load: { before: number; after: number }): void {
  if (json) {
    console.log(JSON.stringify({ options: { ...opts, quick }, sets: results, loadAverage: load }));
    return;
  }
  const table = (rows: string[][]) => {
    const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
    for (const [i, r] of rows.entries()) {
      console.log(
        r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  "),
      );
      if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
    }
  };
  console.log(
    `\nLeader-election benchmark — ${opts.candidates} candidates (processes), ${opts.failovers} failovers (kill -9 of the leader) per set; seed ${opts.seed}${quick ? " (quick mode)" : ""}\n`,
  );
  console.log(
    "Failover: kill -9 → the new leader's first write, seconds (audit time at the API server − kill time)\n",
  );
  table([
    [
      "lease / renew / retry",
      "lease s",
      "p50",
      "p99",
      "min",
      "max",
      "bound: lower … upper",
      "≤ upper",
      "takeovers w/o kill",
    ],
    ...results.map((r) => [
      label(r.durations),
      String(r.bound.leaseDurationSeconds / 1000),
      fmt(r.p50Ms),
      fmt(r.p99Ms),
      fmt(r.minMs),
      fmt(r.maxMs),
      `${fmt(r.bound.lower)} … ${fmt(r.bound.upper)}`,
      `${r.withinBound}/${r.failovers.length}`,
      `${r.leaderChangesWithoutKill}${r.bound.liveLeaderSafe ? "" : " (possible here)"}`,
    ]),
  ]);
  console.log(
    "\nIdle election: Lease requests per second at the API server (from its audit log), the leader's and per follower\n",
  );
  table([
    [
      "lease / renew / retry",
      "window s",
      "leader writes/s",
      "expected",
      "leader reads/s",
      "follower reads/s",
      "expected",
      "follower writes/s",
    ],
    ...results.map((r) => [
      label(r.durations),
      (r.idle.windowMs / 1000).toFixed(1),
      rate(r.idle.leader.writesPerSec),
      rate(r.idle.expected.leaderWritesPerSec),
      rate(r.idle.leader.readsPerSec),
      rate(r.idle.follower.readsPerSec),
      rate(r.idle.expected.followerReadsPerSec),
      rate(r.idle.follower.writesPerSec),
    ]),
  ]);
  console.log(`
The bound (failover-bound.ts, client-go v0.32): a follower's lease clock restarts when it reads
changed bytes, up to g = retryPeriod × (1 + JitterFactor 1.2) after they change; it takes over at
its first try once leaseDurationSeconds have passed, up to g later. So failover ≤ leaseDurationSeconds
+ 2g. The bytes hold renewTime at whole seconds: below a 1 s retry period only one renewal a second
changes them, so the last change may be up to 1 s + retryPeriod before the kill: failover >
leaseDurationSeconds − (retryPeriod, or 1 s + retryPeriod below 1 s). Plus a few requests' time.
A lease no longer than that unchanged spell + g lets a follower take over a live leader ("possible
here"); how often depends on how renewals fall against the second boundaries, so it may be rare.
p99 of ${opts.failovers} failovers is nearest-rank: with fewer than 100 it is the slowest one.
Durations: 15/10/2 s are the defaults; 8/5/1, 4/2.5/0.5 and 2/1/0.2 keep their ratios at retry periods
1, 0.5 and 0.2 s (the Lease holds whole seconds, so leaseDuration is rounded up); 1/0.5/0.2 s is issue 15's
triple, the shortest valid lease. Load average (1 min): ${load.before.toFixed(2)} before, ${load.after.toFixed(2)} after.`);
}

runBenchmark("leaderelection", main);

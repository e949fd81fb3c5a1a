/**
 * Scheduler benchmark — scheduler_perf's workloads through the real API server: `npm run bench --
 * scheduler`. For each workload (scheduler-perf-workloads.ts) a fresh API server, its nodes and
 * initial pods, the real scheduler (newScheduler: its own informers and client over HTTP), then
 * the measured pods from another client, sampled as upstream's SchedulingThroughput: pods bound
 * per 1 s window → average, p50, p90, p99. Each row is printed beside upstream's threshold, with
 * the ratio against the aim (2×); then the API server's create + bind ceiling, measured in the
 * same run by the bind benchmark, so a reader sees which of the two limits.
 *
 * @upstream kubernetes/kubernetes test/integration/scheduler_perf/scheduler_perf.go (runWorkload, createPods, waitUntilPodsScheduled, compareMetricWithThreshold)
 * @upstream kubernetes/kubernetes test/integration/scheduler_perf/util.go (mustSetupCluster: client QPS 5000 / burst 5000; throughputCollector: 1 s windows, Perc50 = sorted[ceil(n·50/100) − 1])
 * @chapter 05-scheduler
 *
 * How, and why so:
 * - three processes per workload: the API server (code/apiserver/testing/bind.bench.ts `--serve`:
 *   startAPIServer with the watch cache, answering "stats" with the cacher's terminated-watcher
 *   count — code/scheduler/ may not import code/apiserver/, so the server is a child, as in
 *   bind.bench.ts); the pod writer (this file with `--create`, 32 concurrent clients, no rate
 *   limit); and this process, which runs only the scheduler and the sampler. Upstream runs all
 *   three in one Go process; on Node one thread would make the scheduler share a core with the
 *   server it waits on;
 * - the scheduler's client is limited to QPS 5000 / burst 5000 as scheduler_perf sets it (the
 *   component's default is 50 / 100, kube-scheduler.ts);
 * - the scheduler's informer factory wraps each ListerWatcher to count lists and watches: a
 *   relist (any list after an informer's first) or a watch closed by the server (the cacher's
 *   terminatedWatchers, upstream's apiserver_terminated_watchers_total) must stay 0;
 * - the sampler counts measured pods bound as the scheduler's pod informer sees them (upstream
 *   reads the same informer's lister each second); a window starts once the first measured pod
 *   is bound; the last, partial window counts when it is at least 0.2 s long (or is the only
 *   one), its rate scaled to per second;
 * - a phase that binds nothing for 60 s stops the workload: its row says how many were bound.
 * - CPU per pod: each process's CPU time over the measured phase divided by the measured pods
 *   bound — the figure that survives a shared machine, where pods/s moves with the load;
 * - `--cpu-prof DIR` profiles the measured phase alone, in the scheduler (this process, the
 *   inspector's Profiler) and in the API server (bind.bench.ts's profile-start / profile-stop
 *   lines), and writes `DIR/<workload>.scheduler.cpuprofile` and `….apiserver.cpuprofile`
 *   (open them in Chrome DevTools, or summarize with code/apiserver/testing/cpu-profile.ts).
 * Flags: --workloads a,b (names or their prefix: `SchedulingBasic/500Nodes`, `PreemptionBasic`),
 * --scale F (every count × F, e.g. 0.1), --quick (scale 0.02, the ceiling at 100 pods),
 * --clients N (32, the writer's), --ceiling-pods N (the largest measured count), --no-ceiling,
 * --cpu-prof DIR, --json (one object on stdout; progress on stderr).
 */
import { spawn } from "node:child_process";
import { setMaxListeners } from "node:events";
import { mkdirSync, writeFileSync } from "node:fs";
import { Agent } from "node:http";
import { Session } from "node:inspector/promises";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import type { Pod } from "../../api/core.ts";
import { Resources } from "../../client/informers/factory.ts";
import { newForConfig } from "../../client/kubernetes/clientset.ts";
import { SharedInformerFactory } from "../../client/tools/cache/informer-factory.ts";
import {
  type ListerWatcher,
  newFilteredListWatchFromClient,
  type Watch,
} from "../../client/tools/cache/listwatch.ts";
import { cpuSeconds, progress, repoRoot, runBenchmark, track } from "../../testing/child-process.ts";
import { newScheduler, nonTerminalPodsSelector } from "../scheduler.ts";
import {
  nodeDefault,
  podTemplates,
  scaled,
  type TemplateName,
  throughputSummary,
  type Workload,
  workloads,
} from "./scheduler-perf-workloads.ts";

// The scheduler hangs one abort listener per informer and loop on one signal: more than Node's 10.
setMaxListeners(64);
// #region idle-sockets
// The insecure listener closes a keep-alive connection idle for 5 s (Node's default; the secure
// one waits 90 s as upstream), and code/client/rest does not send a request again when the
// socket it was written on had just been closed (Go's transport does, when nothing was read).
// Under load a pooled socket idles past 5 s and the next bind on it fails with ECONNRESET:
// here free sockets are dropped after 2 s, well before the server drops them (reported, issue 14).
const IDLE_MS = 2000;
const keepSocketAlive = Agent.prototype.keepSocketAlive;
Agent.prototype.keepSocketAlive = function (this: Agent, socket) {
  const kept = keepSocketAlive.call(this, socket);
  (socket as import("node:net").Socket).setTimeout(IDLE_MS);
  return kept;
};
// #endregion idle-sockets
const argv = process.argv;
const json = argv.includes("--json");
const quick = argv.includes("--quick");
/** `--name value` or `--name=value`. */
function option(name: string): string | undefined {
  const eq = argv.find((a) => a.startsWith(`--${name}=`));
  if (eq) return eq.slice(name.length + 3);
  const i = argv.indexOf(`--${name}`);
  return i >= 0 ? argv[i + 1] : undefined;
}
function positive(name: string, fallback: number): number {
  const v = option(name);
  if (v === undefined) return fallback;
  const n = Number(v);
  if (!(n > 0)) {
    console.error(`--${name} needs a positive number, got "${v}"`);
    process.exit(2);
  }
  return n;
}
const self = fileURLToPath(import.meta.url);
const bindBench = join(repoRoot, "code", "apiserver", "testing", "bind.bench.ts");
const cpuProfDir = option("cpu-prof");
const round = (x: number) => Math.round(x * 10) / 10;
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

// ---- the writer child: `--create <url> <namespace> <template> <count> <clients>` ----

async function writer(): Promise<void> {
  const i = argv.indexOf("--create");
  const [url, ns, template, count, clients] = argv.slice(i + 1, i + 6);
  const client = newForConfig({ host: url, qps: -1 });
  const make = podTemplates[template as TemplateName];
  // Loaded and ready: wait for "go" on stdin, so that starting this process (seconds on a busy
  // machine) is not a pause between two phases of the workload.
  process.stdout.write("ready\n");
  await new Promise<void>((resolve) => {
    process.stdin.setEncoding("utf8").on("data", (c: string) => c.includes("go") && resolve());
    process.stdin.on("end", () => process.exit(0));
  });
  let next = 0;
  await Promise.all(
    Array.from({ length: Number(clients) }, async () => {
      while (next < Number(count)) {
        const n = next++;
        await client.coreV1.pods(ns).create(make(`${template}-${n}`, ns));
      }
    }),
  );
  client.closeIdleConnections();
  process.exit(0);
}

// ---- the API server child (bind.bench.ts --serve): {url} first, "stats" → {stats} ----

function startServer() {
  const child = track(
    spawn(process.execPath, ["--import", "tsx", bindBench, "--serve"], {
      cwd: repoRoot,
      stdio: ["pipe", "pipe", "pipe"],
    }),
  );
  let err = "";
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    err = (err + c).slice(-4000);
  });
  const waiting: ((s: { terminatedWatchers: number }) => void)[] = [];
  const answers: ((msg: Record<string, unknown>) => void)[] = [];
  const url = new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (!line.startsWith("{")) continue;
        const msg = JSON.parse(line);
        if (msg.url) resolve(msg.url);
        if (msg.stats) waiting.shift()?.(msg.stats);
        if ("profiling" in msg || "profiled" in msg) answers.shift()?.(msg);
      }
    });
    child.once("exit", (code) => reject(new Error(`API server exited with ${code}: ${err}`)));
  });
  return {
    child,
    url,
    stats: () =>
      new Promise<{ terminatedWatchers: number }>((resolve) => {
        waiting.push(resolve);
        child.stdin.write("stats\n");
      }),
    /** bind.bench.ts's phase profile: "profile-start", then "profile-stop <path>". */
    ask: (line: string) =>
      new Promise<Record<string, unknown>>((resolve) => {
        answers.push(resolve);
        child.stdin.write(`${line}\n`);
      }),
    async stop(): Promise<void> {
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((r) => child.once("exit", r));
      child.stdin.end();
      await Promise.race([exited, sleep(5000)]);
      if (child.exitCode === null) child.kill("SIGKILL");
    },
  };
}

// ---- the scheduler's informers, counting their lists and watches ----

interface ListWatchCounts {
  lists: number;
  relists: number;
  watches: number;
  watchErrors: number;
}

function counting(lw: ListerWatcher, c: ListWatchCounts): ListerWatcher {
  let listed = false;
  return {
    list: (opts) => {
      c.lists++;
      if (listed) c.relists++;
      listed = true;
      return lw.list(opts);
    },
    watch: async (opts) => {
      c.watches++;
      const w = await lw.watch(opts);
      const counted: Watch = {
        stop: () => w.stop(),
        async *[Symbol.asyncIterator]() {
          for await (const ev of w) {
            if (ev.type === "ERROR") c.watchErrors++;
            yield ev;
          }
        },
      };
      return counted;
    },
  };
}

/** newSchedulerInformerFactory's informers (pods: non-terminal only), each ListerWatcher counted. */
function countingFactory(client: ReturnType<typeof newForConfig>, c: ListWatchCounts): SharedInformerFactory {
  return new SharedInformerFactory((gvr, namespace, tweak) => {
    const lw = newFilteredListWatchFromClient(client.restClientFor(gvr), gvr.resource, namespace, (o) => {
      const copy = { ...o };
      tweak?.(copy);
      if (gvr.group === "" && gvr.resource === "pods")
        copy.fieldSelector = copy.fieldSelector
          ? `${copy.fieldSelector},${nonTerminalPodsSelector}`
          : nonTerminalPodsSelector;
      return copy;
    });
    return counting(lw, c);
  }, 0);
}

// ---- progress: one line rewritten on a terminal, a line every 5 s otherwise ----

let lastLine = 0;
function status(line: string, force = false): void {
  if (process.stderr.isTTY) process.stderr.write(`\r\x1b[K… ${line}`);
  else if (force || performance.now() - lastLine > 5000) {
    lastLine = performance.now();
    progress(line);
  }
}
function endStatus(): void {
  if (process.stderr.isTTY) process.stderr.write("\n");
}

/** Resolves once `done()`; rejects when `count()` has not moved for 60 s. */
async function until(done: () => boolean, count: () => number, what: () => string): Promise<void> {
  let last = count();
  let moved = performance.now();
  // Every phase announces itself, however soon after the last line it starts (the 5 s rule
  // below would otherwise swallow a short phase whole).
  status(what(), true);
  while (!done()) {
    await sleep(100);
    status(what());
    if (count() !== last) {
      last = count();
      moved = performance.now();
    } else if (performance.now() - moved > 60_000) throw new Error(`stalled: ${what()}`);
  }
}

async function parallel(n: number, clients: number, work: (i: number) => Promise<unknown>): Promise<void> {
  let next = 0;
  await Promise.all(
    Array.from({ length: Math.min(n, clients) }, async () => {
      while (next < n) await work(next++);
    }),
  );
}

/**
 * The writer child for one createPods step, started ahead: `ready` once it is loaded; `go()`
 * starts the creates and resolves when it has made them all.
 */
function podWriter(url: string, step: Workload["init"], clients: number) {
  const args = ["--create", url, step.namespace, step.template, String(step.count), String(clients)];
  const child = track(
    spawn(process.execPath, ["--import", "tsx", self, ...args], {
      cwd: repoRoot,
      stdio: ["pipe", "pipe", "pipe"],
    }),
  );
  let out = "";
  const keep = (c: string) => {
    out = (out + c).slice(-4000);
  };
  child.stderr.setEncoding("utf8").on("data", keep);
  const exited = new Promise<void>((resolve, reject) =>
    child.once("exit", (code) =>
      code === 0 ? resolve() : reject(new Error(`pod writer exited with ${code}: ${out}`)),
    ),
  );
  exited.catch(() => {});
  const ready = new Promise<void>((resolve, reject) => {
    child.stdout.setEncoding("utf8").on("data", (c: string) => {
      keep(c);
      if (out.includes("ready")) resolve();
    });
    exited.then(() => reject(new Error("pod writer exited before it was ready")), reject);
  });
  return {
    ready,
    go(): Promise<void> {
      child.stdin.write("go\n");
      return exited;
    },
  };
}

// ---- one workload ----

export interface WorkloadResult {
  name: string;
  nodes: number;
  initPods: number;
  measuredPods: number;
  throughput: { average: number; p50: number; p90: number; p99: number; windows: number };
  threshold: number | null;
  thresholdNote: string;
  /** average / threshold; the aim is ≥ 2. */
  ratio: number | null;
  measuredBound: number;
  allBound: boolean;
  /** Initial pods deleted while the measured ones were scheduled (PreemptionBasic's victims). */
  victimsDeleted: number;
  watchesClosedByServer: number;
  informerRelists: number;
  informerWatchErrors: number;
  schedulerErrors: number;
  /** Up to three distinct messages. */
  firstSchedulerErrors: string[];
  measuredSecs: number;
  /** CPU used during the measured phase, in cores (1 = one core busy all the time). */
  cpuCores: { scheduler: number; apiserver: number };
  /** CPU ms per measured pod bound, over the measured phase. */
  cpuMsPerPod: { scheduler: number; apiserver: number };
  /** With --cpu-prof: the two profiles written. */
  profiles?: string[];
  error?: string;
}

async function runWorkload(w: Workload, clients: number): Promise<WorkloadResult> {
  const server = startServer();
  const url = await server.url;
  const admin = newForConfig({ host: url, qps: -1 });
  const counts: ListWatchCounts = { lists: 0, relists: 0, watches: 0, watchErrors: 0 };
  const errors: string[] = [];
  const bound = new Map<string, number>();
  let victims = 0;
  const samples: number[] = [];
  let t0 = 0;
  let t1 = 0;
  let failure: string | undefined;
  const cpu = { scheduler: 0, apiserver: 0 };
  const client = newForConfig({ host: url, qps: 5000, burst: 5000, userAgent: "kube-scheduler" });
  const factory = countingFactory(client, counts);
  const sched = newScheduler({
    client,
    informerFactory: factory,
    onError: (e) => errors.push(e.message),
    log: process.env.SCHED_PERF_LOG ? (l) => process.stderr.write(`${l}\n`) : undefined,
  });
  const firstErrors = () => [...new Set(errors)].slice(0, 3);
  try {
    for (const ns of new Set([w.init.namespace, w.measure.namespace]))
      await admin.coreV1.namespaces().create({ apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    await parallel(w.nodes, clients, (i) => {
      const labels = w.nodeLabel
        ? { [w.nodeLabel.key]: w.nodeLabel.values[i % w.nodeLabel.values.length] }
        : {};
      return admin.coreV1.nodes().create(nodeDefault(`scheduler-perf-${i}`, labels));
    });
    const isBound = (p: Pod | undefined) => !!p?.spec?.nodeName;
    const inc = (p: Pod) =>
      bound.set(p.metadata.namespace ?? "", (bound.get(p.metadata.namespace ?? "") ?? 0) + 1);
    factory.informerFor(Resources.pods).addEventHandler({
      onAdd: (o) => {
        if (isBound(o as Pod)) inc(o as Pod);
      },
      onUpdate: (old, cur) => {
        if (!isBound(old as Pod) && isBound(cur as Pod)) inc(cur as Pod);
      },
      onDelete: (o) => {
        const p = ("obj" in o ? o.obj : o) as Pod | undefined;
        if (p?.metadata?.namespace === w.init.namespace) victims++;
      },
    });
    const writers = { init: podWriter(url, w.init, clients), measure: podWriter(url, w.measure, clients) };
    await Promise.all([writers.init.ready, writers.measure.ready]);
    const closed0 = (await server.stats()).terminatedWatchers;
    if (!(await sched.start())) throw new Error("the scheduler's informers did not sync");
    const boundIn = (ns: string) => bound.get(ns) ?? 0;

    // The initial pods, all scheduled before the measurement starts (upstream waits likewise).
    const writingInit = writers.init.go();
    await until(
      () => boundIn(w.init.namespace) >= w.init.count,
      () => boundIn(w.init.namespace),
      () => `${w.name}: ${boundIn(w.init.namespace)}/${w.init.count} initial pods scheduled`,
    );
    await writingInit;
    victims = 0;

    // The measured pods, sampled every second from the first one bound.
    const m = w.measure;
    const profiler = cpuProfDir ? await startProfiles(server) : undefined;
    const cpuSched0 = process.cpuUsage();
    const cpuServer0 = cpuSeconds(server.child.pid) ?? Number.NaN;
    const wall0 = performance.now();
    let last = 0;
    let lastT = wall0;
    const sampler = setInterval(() => {
      const n = boundIn(m.namespace);
      const now = performance.now();
      // As upstream: no sample until a measured pod is bound; the first window is the one it was bound in.
      if (n > 0) {
        if (t0 === 0) t0 = lastT;
        samples.push(((n - last) * 1000) / (now - lastT));
      }
      [last, lastT] = [n, now];
    }, 1000);
    const writing = writers.measure.go();
    try {
      await until(
        () => boundIn(m.namespace) >= m.count,
        () => boundIn(m.namespace),
        () =>
          `${w.name}: ${boundIn(m.namespace)}/${m.count} measured pods scheduled` +
          (samples.length ? `, last window ${samples[samples.length - 1].toFixed(0)} pods/s` : ""),
      );
    } catch (e) {
      failure = (e as Error).message;
    } finally {
      clearInterval(sampler);
    }
    const end = performance.now();
    t1 = end;
    // The last, partial window (see the header).
    if (boundIn(m.namespace) > last && (end - lastT >= 200 || samples.length === 0)) {
      if (t0 === 0) t0 = lastT;
      samples.push(((boundIn(m.namespace) - last) * 1000) / (end - lastT));
    }
    if (t0 === 0) t0 = wall0;
    const wallSecs = (end - wall0) / 1000;
    const u = process.cpuUsage(cpuSched0);
    const cpuSecs = {
      scheduler: (u.user + u.system) / 1e6,
      apiserver: (cpuSeconds(server.child.pid) ?? Number.NaN) - cpuServer0,
    };
    cpu.scheduler = cpuSecs.scheduler / wallSecs;
    cpu.apiserver = cpuSecs.apiserver / wallSecs;
    const perPod = (secs: number) => Math.round((secs * 1e5) / Math.max(boundIn(m.namespace), 1)) / 100;
    const profiles = profiler ? await profiler.stop(w.name) : undefined;
    await writing.catch((e) => {
      failure ??= (e as Error).message;
    });
    const closed = (await server.stats()).terminatedWatchers - closed0;
    const s = throughputSummary(samples);
    endStatus();
    return {
      name: w.name,
      nodes: w.nodes,
      initPods: w.init.count,
      measuredPods: m.count,
      throughput: {
        average: round(s.average),
        p50: round(s.p50),
        p90: round(s.p90),
        p99: round(s.p99),
        windows: samples.length,
      },
      threshold: w.threshold ?? null,
      thresholdNote: w.thresholdNote,
      ratio: w.threshold ? Math.round((s.average / w.threshold) * 100) / 100 : null,
      measuredBound: boundIn(m.namespace),
      allBound: boundIn(m.namespace) >= m.count,
      victimsDeleted: victims,
      watchesClosedByServer: closed,
      informerRelists: counts.relists,
      informerWatchErrors: counts.watchErrors,
      schedulerErrors: errors.length,
      firstSchedulerErrors: firstErrors(),
      measuredSecs: round((t1 - t0) / 1000),
      cpuCores: {
        scheduler: Math.round(cpu.scheduler * 100) / 100,
        apiserver: Math.round(cpu.apiserver * 100) / 100,
      },
      cpuMsPerPod: { scheduler: perPod(cpuSecs.scheduler), apiserver: perPod(cpuSecs.apiserver) },
      ...(profiles ? { profiles } : {}),
      ...(failure ? { error: failure } : {}),
    };
  } finally {
    endStatus();
    await sched.stop();
    client.closeIdleConnections();
    admin.closeIdleConnections();
    await server.stop();
  }
}

// ---- --cpu-prof: the measured phase's profiles, this process's and the API server's ----

async function startProfiles(server: ReturnType<typeof startServer>) {
  const session = new Session();
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
  await server.ask("profile-start");
  return {
    async stop(name: string): Promise<string[]> {
      const dir = cpuProfDir as string;
      mkdirSync(dir, { recursive: true });
      const base = join(dir, name.replaceAll("/", "_"));
      const { profile } = await session.post("Profiler.stop");
      session.disconnect();
      writeFileSync(`${base}.scheduler.cpuprofile`, JSON.stringify(profile));
      const answer = await server.ask(`profile-stop ${base}.apiserver.cpuprofile`);
      return [`${base}.scheduler.cpuprofile`, ...(answer.profiled ? [String(answer.profiled)] : [])];
    },
  };
}

// ---- the ceiling: bind.bench.ts, in this run, on this machine ----

async function ceiling(pods: number, clients: number): Promise<Record<string, unknown> | null> {
  status(`API server ceiling: create + bind of ${pods} pods (bind.bench.ts)`, true);
  const args = [
    "--json",
    "--pods",
    String(pods),
    "--creates",
    String(Math.min(pods, 1000)),
    "--clients",
    String(clients),
    "--informers",
    "1",
  ];
  const child = track(
    spawn(process.execPath, ["--import", "tsx", bindBench, ...args], {
      cwd: repoRoot,
      stdio: ["ignore", "pipe", "pipe"],
    }),
  );
  let out = "";
  let err = "";
  child.stdout.setEncoding("utf8").on("data", (c: string) => {
    out += c;
  });
  child.stderr.setEncoding("utf8").on("data", (c: string) => {
    err = (err + c).slice(-4000);
  });
  const code = await new Promise<number | null>((r) => child.once("exit", r));
  endStatus();
  if (code !== 0) throw new Error(`bind benchmark exited with ${code}: ${err}`);
  return JSON.parse(out.trim().split("\n").pop() ?? "null");
}

// ---- main ----

async function main(): Promise<void> {
  const scale = quick ? positive("scale", 0.02) : positive("scale", 1);
  const clients = positive("clients", 32);
  const wanted = option("workloads")?.split(",").filter(Boolean);
  const chosen = workloads.filter(
    (w) => !wanted || wanted.some((n) => w.name === n || w.name.startsWith(`${n}/`)),
  );
  const unknown = wanted?.filter((n) => !workloads.some((w) => w.name === n || w.name.startsWith(`${n}/`)));
  if (unknown?.length || chosen.length === 0) {
    console.error(
      `unknown workload ${unknown?.join(", ")}; workloads: ${workloads.map((w) => w.name).join(", ")}`,
    );
    process.exit(2);
  }
  const load0 = loadavg()[0];
  const results: WorkloadResult[] = [];
  for (const w of chosen.map((x) => scaled(x, scale))) {
    status(`${w.name}: ${w.nodes} nodes, ${w.init.count} initial pods, ${w.measure.count} measured`, true);
    results.push(await runWorkload(w, clients));
  }
  const maxMeasured = Math.max(...chosen.map((w) => scaled(w, scale).measure.count));
  const ceilingPods = positive("ceiling-pods", quick ? 100 : Math.min(maxMeasured, 10000));
  const bind = argv.includes("--no-ceiling") ? null : await ceiling(ceilingPods, clients);
  const result = {
    scale,
    loadAverage: { before: round(load0), after: round(loadavg()[0]) },
    aim: "average ≥ 2 × upstream's threshold",
    workloads: results,
    ceiling: bind
      ? {
          podsPerSec: bind.ceilingPodsPerSec,
          pods: ceilingPods,
          clients,
          watchesClosedByServer: bind.watchesClosedByServer,
          loadAverage: bind.loadAverage,
        }
      : null,
  };
  if (json) {
    process.stdout.write(`${JSON.stringify(result)}\n`);
    return;
  }
  printTable(result);
}

function printTable(r: {
  scale: number;
  loadAverage: { before: number; after: number };
  workloads: WorkloadResult[];
  ceiling: { podsPerSec: unknown; pods: number; clients: number } | null;
}): void {
  const pad = (s: unknown, n: number) => String(s).padStart(n);
  console.log(
    `scheduler_perf workloads through the API server${r.scale !== 1 ? ` (counts × ${r.scale})` : ""} — load average ${r.loadAverage.before} before, ${r.loadAverage.after} after`,
  );
  console.log(
    `${"workload".padEnd(38)}${pad("nodes", 6)}${pad("init", 6)}${pad("meas.", 7)}${pad("avg", 8)}${pad("p50", 7)}${pad("p90", 7)}${pad("p99", 7)}${pad("upstream", 10)}${pad("ratio", 7)}  aim 2×${pad("closed", 8)}${pad("relists", 9)}${pad("CPU s/a", 11)}${pad("ms/pod s/a", 13)}`,
  );
  for (const w of r.workloads) {
    const t = w.throughput;
    const aim = w.ratio === null ? "  —   " : w.ratio >= 2 ? "  PASS" : "  FAIL";
    console.log(
      `${w.name.padEnd(38)}${pad(w.nodes, 6)}${pad(w.initPods, 6)}${pad(w.measuredPods, 7)}${pad(t.average, 8)}${pad(t.p50, 7)}${pad(t.p90, 7)}${pad(t.p99, 7)}${pad(w.threshold ?? "—", 10)}${pad(w.ratio === null ? "—" : `${w.ratio}×`, 7)}${aim}${pad(w.watchesClosedByServer, 8)}${pad(w.informerRelists, 9)}${pad(`${w.cpuCores.scheduler}/${w.cpuCores.apiserver}`, 11)}${pad(`${w.cpuMsPerPod.scheduler}/${w.cpuMsPerPod.apiserver}`, 13)}`,
    );
    const notes = [
      w.allBound ? `all ${w.measuredPods} bound` : `ONLY ${w.measuredBound}/${w.measuredPods} bound`,
      `${t.windows} windows over ${w.measuredSecs} s`,
      ...(w.victimsDeleted ? [`${w.victimsDeleted} victims deleted`] : []),
      ...(w.schedulerErrors
        ? [`${w.schedulerErrors} scheduler errors (${w.firstSchedulerErrors.join(" | ").slice(0, 300)})`]
        : []),
      ...(w.error ? [w.error] : []),
      ...(w.profiles ? [`profiles: ${w.profiles.join(", ")}`] : []),
      ...(w.threshold ? [`threshold: ${w.thresholdNote}`] : []),
    ];
    console.log(`${"".padEnd(4)}${notes.join("; ")}`);
  }
  console.log(
    "  pods/s over 1 s windows (upstream's SchedulingThroughput; its threshold is on the average);",
  );
  console.log(
    "  closed: watches the API server closed; relists: the scheduler's informers; CPU s/a: cores used by scheduler / API server while measuring; ms/pod s/a: their CPU ms per measured pod",
  );
  if (r.ceiling)
    console.log(
      `API server create + bind ceiling (bind.bench.ts, ${r.ceiling.clients} clients, ${r.ceiling.pods} pods, no scheduler): ${r.ceiling.podsPerSec} pods/s`,
    );
}

if (argv.includes("--create")) {
  writer().catch((e) => {
    console.error(e);
    process.exit(1);
  });
} else {
  runBenchmark("scheduler", main);
}

/**
 * Bind benchmark — the API server's share of scheduling a pod: `--clients` (32) clients each
 * create a pod and bind it (`POST …/pods/<name>/binding`, as the scheduler's DefaultBinder does),
 * while `--informers` (3) informers of code/client watch every pod — the load a scheduler puts
 * on the API server, without the scheduler. Its figure is the ceiling a scheduler benchmark
 * through this API server cannot exceed (`--json` prints it as `ceilingPodsPerSec`).
 *
 * Prints: creates/s alone (the reference), then pods/s of create + bind with the informers
 * watching, p50/p99 of each call, the watches the server closed (the cacher's terminated
 * watchers, upstream's apiserver_terminated_watchers_total), and what the informers saw:
 * lists after their first (relists), watches opened, watches that ended with an ERROR (410s
 * among them), and whether each informer saw every pod bound. The aim (issue 14): no watch of
 * a keeping-up client closed, no relist.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/pod/storage/storage.go (BindingREST: the bind measured)
 * @upstream kubernetes/kubernetes test/integration/scheduler_perf/scheduler_perf.go (the throughput this ceiling bounds)
 * @chapter 05-scheduler
 *
 * How, and why so:
 * - three processes: the API server (this file with `--serve`, startAPIServer with the watch
 *   cache on), the informers (code/client/testing/pod-watchers.ts — a child, since code/apiserver
 *   may not import the client library), and this one, the load generator. Each has its own
 *   thread, so a slow load generator or informer does not pass for a slow server;
 * - the phases run one after the other on one server: creates alone (`--creates` pods, no
 *   informers yet), then the informers start and sync, then `--pods` pods created and bound;
 * - the server's counters come over its stdin/stdout ("stats"), the informers' likewise;
 * - `--cpu-prof-dir DIR` makes the server profile the create + bind phase alone (the inspector's
 *   Profiler, started and stopped over the same line protocol, so start-up, the creates alone and
 *   the informers' sync stay out of it), write it to DIR, and the benchmark print where that
 *   phase's CPU went by cost (`costRules`: socket writes, the in-process etcd, the body's decode…)
 *   and its top functions (cpu-profile.ts).
 * Flags: --pods N (5000), --creates N (3000), --clients N (32), --informers N (3), --quick,
 * --json (one JSON object on stdout; progress on stderr).
 */
import { type ChildProcess, spawn } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import { Agent, request } from "node:http";
import { Session } from "node:inspector";
import { loadavg } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { startAPIServer } from "../server.ts";
import { cacherMetrics } from "../storage/cacher.ts";
import { type CostRule, type CPUProfile, categorizeProfile, summarizeProfile } from "./cpu-profile.ts";

const quick = process.argv.includes("--quick");
const json = process.argv.includes("--json");
function flag(name: string, normal: number, small: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return quick ? small : normal;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n <= 0) {
    console.error(`--${name} needs a positive integer, got "${process.argv[i + 1] ?? ""}"`);
    process.exit(2);
  }
  return n;
}
const opts = {
  pods: flag("pods", 5000, 200),
  creates: flag("creates", 3000, 100),
  clients: flag("clients", 32, 8),
  informers: flag("informers", 3, 2),
};
const cpuProfDir = process.argv.includes("--cpu-prof-dir")
  ? process.argv[process.argv.indexOf("--cpu-prof-dir") + 1]
  : undefined;
const ns = "bench-bind";
const root = fileURLToPath(new URL("../../..", import.meta.url));

function progress(line: string): void {
  console.error(`… ${line}`);
}

// ---- the server child ----

async function serveChild(): Promise<void> {
  const server = await startAPIServer({ insecurePort: 0, watchCache: true });
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  const stop = () => void server.close().finally(() => process.exit(0));
  const answer = (msg: unknown) => process.stdout.write(`${JSON.stringify(msg)}\n`);
  // The phase profile (--cpu-prof-dir): the inspector's Profiler in this process.
  const session = new Session();
  const command = (line: string) => {
    if (line === "stats") answer({ stats: { ...cacherMetrics } });
    else if (line === "profile-start") {
      session.connect();
      session.post("Profiler.enable", () =>
        session.post("Profiler.start", () => answer({ profiling: true })),
      );
    } else if (line.startsWith("profile-stop ")) {
      const path = line.slice("profile-stop ".length);
      session.post("Profiler.stop", (err, result) => {
        if (!err) writeFileSync(path, JSON.stringify(result.profile));
        session.disconnect();
        answer({ profiled: err ? "" : path });
      });
    }
  };
  let input = "";
  process.stdin
    .setEncoding("utf8")
    .on("data", (chunk: string) => {
      input += chunk;
      for (let nl = input.indexOf("\n"); nl >= 0; nl = input.indexOf("\n")) {
        command(input.slice(0, nl));
        input = input.slice(nl + 1);
      }
    })
    .on("end", stop)
    .on("close", stop);
  process.on("SIGTERM", stop);
}

// ---- children: a line protocol over stdin/stdout, killed on every exit path ----

const children: ChildProcess[] = [];
function cleanupSync(): void {
  for (const c of children) if (c.exitCode === null && c.signalCode === null) c.kill("SIGKILL");
}
async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.stdin?.end();
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

interface Child {
  child: ChildProcess;
  /** The first line with this key. */
  first: Promise<Record<string, unknown>>;
  /** Sends "stats", resolves to the answer's `stats`. */
  stats<T>(): Promise<T>;
  /** Sends a line, resolves to the next answer's `key`. */
  ask<T>(line: string, key: string): Promise<T>;
}

function startChild(args: string[], firstKey: string): Child {
  const child = spawn(process.execPath, ["--import", "tsx", ...args], {
    cwd: root,
    stdio: ["pipe", "pipe", "pipe"],
  });
  children.push(child);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (c: string) => {
    stderr = (stderr + c).slice(-4000);
  });
  const waiting = new Map<string, ((s: unknown) => void)[]>();
  const ask = <T>(line: string, key: string) =>
    new Promise<T>((resolve) => {
      waiting.set(key, [...(waiting.get(key) ?? []), resolve as (s: unknown) => void]);
      child.stdin?.write(`${line}\n`);
    });
  const first = new Promise<Record<string, unknown>>((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (!line.startsWith("{")) continue;
        const msg = JSON.parse(line) as Record<string, unknown>;
        if (firstKey in msg) resolve(msg);
        for (const key of Object.keys(msg)) waiting.get(key)?.shift()?.(msg[key]);
      }
    });
    child.once("exit", (code) => reject(new Error(`${args[0]} exited with ${code}: ${stderr}`)));
  });
  return {
    child,
    first,
    stats: <T>() => ask<T>("stats", "stats"),
    ask,
  };
}

// ---- HTTP ----

const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function call(
  method: string,
  url: string,
  body: unknown,
  retried = false,
): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const payload = JSON.stringify(body);
    const req = request(
      url,
      {
        method,
        agent,
        headers: { "Content-Type": "application/json", "Content-Length": Buffer.byteLength(payload) },
      },
      (res) => {
        const chunks: Buffer[] = [];
        res.on("data", (c: Buffer) => chunks.push(c));
        res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
        res.on("error", reject);
      },
    );
    req.on("error", (err: NodeJS.ErrnoException) => {
      // The server closes a keep-alive connection idle for 5 s (the informers' sync can take
      // that long); a request sent on it just then is reset unread. Send it again, once.
      if (req.reusedSocket && err.code === "ECONNRESET" && !retried)
        call(method, url, body, true).then(resolve, reject);
      else reject(err);
    });
    req.end(payload);
  });
}

async function must(want: number, method: string, url: string, body: unknown): Promise<number> {
  const t0 = performance.now();
  const r = await call(method, url, body);
  if (r.status !== want) throw new Error(`${method} ${url}: ${r.status} ${r.body.slice(0, 300)}`);
  return performance.now() - t0;
}

const pod = (name: string) => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: ns, labels: { app: "bench-bind" } },
  spec: {
    containers: [
      { name: "c", image: "registry.k8s.io/pause:3.10", resources: { requests: { cpu: "100m" } } },
    ],
  },
});

const binding = (name: string, node: string) => ({
  apiVersion: "v1",
  kind: "Binding",
  metadata: { name, namespace: ns },
  target: { apiVersion: "v1", kind: "Node", name: node },
});

interface Latency {
  p50Ms: number;
  p99Ms: number;
}
function latency(samples: number[]): Latency {
  const s = Float64Array.from(samples).sort();
  const at = (p: number) => s[Math.min(s.length - 1, Math.floor(p * s.length))] ?? Number.NaN;
  return { p50Ms: round(at(0.5)), p99Ms: round(at(0.99)) };
}
const round = (x: number) => Math.round(x * 10) / 10;

/** CPU seconds (user + system) of a process, from /proc/<pid>/stat (Linux; NaN elsewhere). */
function cpuSeconds(pid: number | undefined): number {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    const fields = stat.slice(stat.lastIndexOf(")") + 2).split(" ");
    return (Number(fields[11]) + Number(fields[12])) / 100;
  } catch {
    return Number.NaN;
  }
}

/** `clients` workers take items 0 … n−1 in turn; returns the wall time in seconds. */
async function workers(n: number, clients: number, work: (i: number) => Promise<void>): Promise<number> {
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: clients }, async () => {
      while (next < n) await work(next++);
    }),
  );
  return (performance.now() - t0) / 1000;
}

interface ServerStats {
  terminatedWatchers: number;
}
interface WatcherStats {
  events: number;
  bound: number[];
  lists: number;
  relists: number;
  watches: number;
  watchErrors: number;
  expired: number;
}

async function main(): Promise<void> {
  const self = fileURLToPath(import.meta.url);
  const server = startChild([self, "--serve"], "url");
  let profiled: string | undefined;
  try {
    const url = (await server.first).url as string;
    const load0 = loadavg()[0];
    progress(`API server at ${url}; sizes: ${JSON.stringify(opts)}`);
    await must(201, "POST", `${url}/api/v1/namespaces`, {
      apiVersion: "v1",
      kind: "Namespace",
      metadata: { name: ns },
    });
    const base = `${url}/api/v1/namespaces/${ns}/pods`;

    // Creates alone: the reference (no watchers but the cacher's own).
    const createMs: number[] = [];
    const cpu0 = cpuSeconds(server.child.pid);
    const createSecs = await workers(opts.creates, opts.clients, async (i) => {
      createMs.push(await must(201, "POST", base, pod(`ref-${i}`)));
    });
    const createsPerSec = opts.creates / createSecs;
    const createCpuMs = ((cpuSeconds(server.child.pid) - cpu0) * 1000) / opts.creates;
    progress(`creates alone: ${createsPerSec.toFixed(0)}/s`);

    // The informers start and sync (they list the reference pods too).
    const watchers = startChild(
      [join(root, "code/client/testing/pod-watchers.ts"), url, ns, String(opts.informers)],
      "ready",
    );
    await watchers.first;
    const before = await watchers.stats<WatcherStats>();
    const server0 = await server.stats<ServerStats>();
    progress(`${opts.informers} informers synced; create + bind of ${opts.pods} pods…`);

    const podCreateMs: number[] = [];
    const bindMs: number[] = [];
    let done = 0;
    const ticker = setInterval(() => progress(`${done}/${opts.pods} pods bound`), 2000);
    let bindSecs: number;
    if (cpuProfDir) await server.ask("profile-start", "profiling");
    const cpu1 = cpuSeconds(server.child.pid);
    try {
      bindSecs = await workers(opts.pods, opts.clients, async (i) => {
        const name = `pod-${i}`;
        podCreateMs.push(await must(201, "POST", base, pod(name)));
        bindMs.push(await must(201, "POST", `${base}/${name}/binding`, binding(name, `node-${i % 500}`)));
        done++;
      });
    } finally {
      clearInterval(ticker);
    }
    const bindPerSec = opts.pods / bindSecs;
    const bindCpuMs = ((cpuSeconds(server.child.pid) - cpu1) * 1000) / opts.pods;
    if (cpuProfDir)
      profiled =
        (await server.ask<string>(
          "profile-stop " + join(cpuProfDir, `create-bind.${server.child.pid}.cpuprofile`),
          "profiled",
        )) || undefined;
    const load1 = loadavg()[0];

    // Every informer must see every pod bound; wait for the stragglers a little.
    let after = await watchers.stats<WatcherStats>();
    const deadline = performance.now() + 30_000;
    while (after.bound.some((b) => b < opts.pods) && performance.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      after = await watchers.stats<WatcherStats>();
    }
    const deliveredSecs = (performance.now() - (deadline - 30_000)) / 1000;
    const server1 = await server.stats<ServerStats>();
    await stopChild(watchers.child);

    const result = {
      sizes: opts,
      loadAverage: { before: round(load0), after: round(load1) },
      createsAlone: {
        podsPerSec: round(createsPerSec),
        serverCpuMsPerPod: round(createCpuMs),
        ...latency(createMs),
      },
      createBind: {
        podsPerSec: round(bindPerSec),
        requestsPerSec: round((2 * opts.pods) / bindSecs),
        serverCpuMsPerPod: round(bindCpuMs),
        create: latency(podCreateMs),
        bind: latency(bindMs),
      },
      ceilingPodsPerSec: round(bindPerSec),
      watchesClosedByServer: server1.terminatedWatchers - server0.terminatedWatchers,
      informers: {
        relists: after.relists - before.relists,
        watchesOpened: after.watches - before.watches,
        watchErrors: after.watchErrors - before.watchErrors,
        expired: after.expired - before.expired,
        sawEveryPodBound: after.bound.every((b) => b >= opts.pods),
        catchUpSecs: round(deliveredSecs),
      },
    };
    if (json) {
      process.stdout.write(`${JSON.stringify(result)}\n`);
      return;
    }
    const c = result.createBind;
    console.log(`bind benchmark (${opts.clients} clients, ${opts.informers} informers watching pods)`);
    console.log(`  load average: ${result.loadAverage.before} before, ${result.loadAverage.after} after`);
    console.log(
      `  creates alone:   ${result.createsAlone.podsPerSec} pods/s   p50 ${result.createsAlone.p50Ms} ms  p99 ${result.createsAlone.p99Ms} ms   server CPU ${result.createsAlone.serverCpuMsPerPod} ms/pod`,
    );
    console.log(
      `  create + bind:   ${c.podsPerSec} pods/s (${c.requestsPerSec} requests/s), server CPU ${c.serverCpuMsPerPod} ms/pod — the ceiling of a scheduler through this server`,
    );
    console.log(
      `    create p50 ${c.create.p50Ms} ms  p99 ${c.create.p99Ms} ms;  bind p50 ${c.bind.p50Ms} ms  p99 ${c.bind.p99Ms} ms`,
    );
    const i = result.informers;
    console.log(
      `  watches closed by the server: ${result.watchesClosedByServer}   informer relists: ${i.relists}   re-watches: ${i.watchesOpened}   ERROR events: ${i.watchErrors} (410: ${i.expired})`,
    );
    console.log(
      `  every informer saw every pod bound: ${i.sawEveryPodBound ? "yes" : "NO"} (${i.catchUpSecs} s after the last bind)`,
    );
    const pass = result.watchesClosedByServer === 0 && i.relists === 0 && i.sawEveryPodBound;
    console.log(`  aim (no keeping-up watch closed, no relist): ${pass ? "PASS" : "FAIL"}`);
  } finally {
    await stopChild(server.child);
    agent.destroy();
  }
  // Where the create + bind phase's CPU went, by cost and by function.
  if (profiled) {
    const p = JSON.parse(readFileSync(profiled, "utf8")) as CPUProfile;
    const s = summarizeProfile(p, 12);
    const line = (e: { name: string; share: number }) => `    ${e.share.toFixed(1).padStart(5)} %  ${e.name}`;
    const out = json ? console.error : console.log;
    out(`  server CPU profile of create + bind (${s.busyMs} ms busy, ${profiled}), by cost:`);
    for (const e of categorizeProfile(p, costRules)) out(line(e));
    out("  by self time:");
    for (const e of s.self) out(line(e));
    out("  by inclusive time:");
    for (const e of s.inclusive) out(line(e));
  }
}

// #region cost-rules
/**
 * The costs of one pod on the server, in the order that settles overlaps (cpu-profile.ts's
 * categorizeProfile): native leaves first (a socket write inside a handler is the write's), then
 * the in-process etcd and the cacher's watch (whoever called them), then the handlers' stages.
 */
const inCode = (dir: string) => (_f: string, url: string) => url.includes(`/code/${dir}`);
const named =
  (...names: string[]) =>
  (f: string) =>
    names.includes(f);
const costRules: CostRule[] = [
  // Profiler.stop serialises the profile inside the window it measures: not the server's cost.
  { name: "the profiler itself (Profiler.stop)", test: (_f, url) => url === "node:inspector" },
  { name: "garbage collection", leaf: true, test: named("(garbage collector)") },
  {
    name: "socket writes (kernel: writev)",
    leaf: true,
    test: named("writev", "writeBuffer", "writeUtf8String"),
  },
  { name: "in-process etcd (code/store)", test: inCode("store/") },
  {
    name: "the cacher's watch and fan-out (decode, freeze, dispatch, watch handlers)",
    test: (_f, url) =>
      /storage\/(cacher|watch-cache|cache-watcher|etcd3-watcher|caching-object|time-budget)\.ts|handlers\/watch\.ts/.test(
        url,
      ),
  },
  { name: "create: the body's decode", test: named("decodeRequestObject") },
  { name: "create: managed fields", test: named("trackManagedFields") },
  { name: "create: admission", test: named("admitCreate") },
  { name: "binding (BindingREST)", test: named("createBindingResource") },
  { name: "create: registry (defaults, validation) and storage", test: named("createResource") },
  { name: "response encoding and writing (JSON, Node's http)", test: named("writeJSON") },
  // After an `await` a stack starts at the microtask, not at the handler that awaited: the
  // storage and registry code that resumed there is named by its file.
  {
    name: "storage and registry, after an await (encode, decode, resourceVersion)",
    test: (_f, url) => /\/code\/apiserver\/(storage|registry)\//.test(url),
  },
  { name: "routing, request info and the gates", test: inCode("apiserver/") },
  {
    name: "Node's HTTP parser and streams",
    test: (_f, url) => /node:(_http|net|internal\/stream|events)|streams\//.test(url),
  },
];
// #endregion cost-rules

if (process.argv.includes("--serve")) {
  void serveChild();
} else {
  process.on("exit", cleanupSync);
  for (const sig of ["SIGINT", "SIGTERM"] as const)
    process.on(sig, () => {
      cleanupSync();
      process.exit(130);
    });
  main().catch((e) => {
    console.error(e);
    cleanupSync();
    process.exit(1);
  });
}

/**
 * Store benchmark — our store against a real etcd, same machine, same run, same client code.
 *
 * Measures, over gRPC with the `etcd3` npm client, against our store (the `etcd` command of
 * code/cmd/etcd.ts, durable on a temporary data dir, so every put waits for an fsync) and, when
 * `/usr/bin/etcd` exists, a real single-member etcd started here on loopback with its own
 * temporary data dir. Both servers run as their own process, so neither shares its thread with
 * the load generator (this process); `--in-process` runs ours inside this process instead
 * (`startEtcd`), as the first version of this benchmark did — then the client's gRPC work and the
 * server's share one JavaScript thread, which the real etcd never has to.
 * - puts/s and p50/p99 put latency with 1 and with 64 concurrent clients (256-byte values,
 *   distinct keys, fixed operation counts);
 * - watch fan-out: 100 watchers on one prefix, each receiving every event of N puts — events
 *   delivered per second.
 * Each figure comes with the ratio ours/etcd. `--json` prints one JSON object instead of the table.
 * The report says which `:authority` mode ours ran in (v3rpc/h2-authority.ts): the server's
 * default unless `--mend-authority on|off` says otherwise, and `--mend-authority ab` runs ours
 * twice, mending off and on, side by side in the same rounds, adding the ratio on/off.
 *
 * Flags: --puts1 N (2000), --puts64 N (10000), --clients N (64), --watchers N (100),
 * --watch-puts N (2000), --value-size N (256), --rounds N (3), --warmup N (2000), --in-process, --json,
 * --mend-authority on|off|ab (the server's default),
 * --cpu-prof DIR (our server process writes a V8 CPU profile into DIR when it stops: open it in
 * Chrome DevTools' Performance panel to see where a put's time goes).
 *
 * The machine may be shared, and its load changes by the second: so the servers run side by
 * side and the measurements alternate between them — each measurement is split into `rounds`
 * parts, and each round runs its part on every server, ours first in odd rounds and etcd first in
 * even ones. The figures add the rounds up; the per-round ratios show how much the load moved.
 *
 * Before the first round, each server gets the same unmeasured warm-up (`--warmup N` puts from 64
 * clients, default 2,000, and a short watch): our server is JavaScript, which V8 compiles to
 * optimised code only once a function has run often, while etcd is compiled ahead of time —
 * without it, round 1 measures our compiler as much as our store (in one run without it, round 1
 * of the 64-client puts ran at 0.49× and rounds 2–5 at 0.78–0.99×). `--warmup 0` leaves it out.
 *
 * @upstream none — benchmark (etcd's own is tools/benchmark)
 * @chapter 01-etcd-watch
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync } from "node:fs";
import { cpus, loadavg, tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Etcd3 } from "etcd3";
import {
  cpuSeconds,
  progress,
  runBenchmark,
  stopChild,
  track,
  trackTempDir,
} from "../../testing/child-process.ts";
import { percentile } from "../../testing/percentile.ts";
import { freePort } from "../../testing/ports.ts";
import { type Etcd, startEtcd } from "../embed/etcd.ts";
import { defaultMendAuthority } from "../v3rpc/grpc.ts";

const etcdBinary = "/usr/bin/etcd";

function flag(name: string, fallback: number, least = 1): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return fallback;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < least) {
    console.error(`--${name} needs an integer ≥ ${least}, got "${process.argv[i + 1] ?? ""}"`);
    process.exit(2);
  }
  return n;
}

const opts = {
  puts1: flag("puts1", 2000),
  putsMany: flag("puts64", 10000),
  clients: flag("clients", 64),
  watchers: flag("watchers", 100),
  watchPuts: flag("watch-puts", 2000),
  valueSize: flag("value-size", 256),
  rounds: flag("rounds", 3),
  warmup: flag("warmup", 2000, 0),
};
/**
 * `--mend-authority on|off|ab`: run ours with the HTTP/2 `:authority` mending on or off
 * (h2-authority.ts), or `ab`: both, as two servers side by side in the same rounds. Default: the
 * server's default.
 */
const mendModes: boolean[] = (() => {
  const i = process.argv.indexOf("--mend-authority");
  if (i < 0) return [defaultMendAuthority];
  const v = process.argv[i + 1];
  if (v === "on") return [true];
  if (v === "off") return [false];
  if (v === "ab") return [false, true];
  console.error(`--mend-authority needs on, off or ab, got "${v ?? ""}"`);
  process.exit(2);
})();
const json = process.argv.includes("--json");
const inProcess = process.argv.includes("--in-process");
const cpuProfDir = (() => {
  const i = process.argv.indexOf("--cpu-prof");
  return i < 0 ? undefined : (process.argv[i + 1] ?? ".");
})();

// Temp dirs and the etcd child go away on every exit, errors included (code/testing/child-process.ts).

function tempDir(what: string): string {
  return trackTempDir(mkdtempSync(join(tmpdir(), `store-bench-${what}-`)));
}

// ---- the two targets ----

interface Target {
  /** "etcd", or "ours" — "ours-mend-on" / "ours-mend-off" when both modes run. */
  name: string;
  /** Ours only: whether its listener mends the `:authority` (h2-authority.ts). */
  mendAuthority?: boolean;
  endpoint: string;
  /** The server's process id, when it runs in its own process: its CPU time is read from /proc. */
  pid?: number;
  close(): Promise<void>;
}

/** CPU time (user + system, ms) a process has used so far; undefined where /proc is missing. */
function cpuMs(pid: number | undefined): number | undefined {
  const s = cpuSeconds(pid);
  return s === undefined ? undefined : s * 1000;
}

const etcdCommand = fileURLToPath(new URL("../../cmd/etcd.ts", import.meta.url));

/** Our `etcd` command in a child process (node with tsx as a loader), on a free port. */
async function startOurs(mendAuthority: boolean, name: string): Promise<Target> {
  if (inProcess) return startOursInProcess(mendAuthority, name);
  const dataDir = tempDir("ours");
  const child = spawn(
    process.execPath,
    [
      ...(cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${cpuProfDir}`] : []),
      "--import",
      "tsx",
      etcdCommand,
      `--data-dir=${dataDir}`,
      "--listen-client-urls=http://127.0.0.1:0",
      "--advertise-client-urls=http://127.0.0.1:0",
      `--mend-authority=${mendAuthority}`,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  track(child);
  let stderr = "";
  const address = await new Promise<string>((resolve, reject) => {
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
      const bound = /"address":"([^"]+)"/.exec(stderr);
      if (bound) resolve(bound[1]);
    });
    child.once("exit", () => reject(new Error(`our etcd exited before serving: ${stderr}`)));
  });
  return {
    name,
    mendAuthority,
    endpoint: address,
    pid: child.pid,
    close: () => stopChild(child),
  };
}

async function startOursInProcess(mendAuthority: boolean, name: string): Promise<Target> {
  const dataDir = tempDir("ours");
  const started = await startEtcd({
    mendAuthority,
    name: "bench",
    dataDir,
    inMemory: false,
    listenClientURLs: ["http://127.0.0.1:0"],
    advertiseClientURLs: ["http://127.0.0.1:0"],
  });
  if (started instanceof Error) throw started;
  const etcd: Etcd = started;
  return { name, mendAuthority, endpoint: etcd.clientAddresses[0], close: () => etcd.close() };
}

async function startRealEtcd(): Promise<Target> {
  const dataDir = tempDir("etcd");
  const [client, peer] = [await freePort(), await freePort()];
  const clientURL = `http://127.0.0.1:${client}`;
  const peerURL = `http://127.0.0.1:${peer}`;
  const child = spawn(
    etcdBinary,
    [
      "--name",
      "bench",
      "--data-dir",
      dataDir,
      "--listen-client-urls",
      clientURL,
      "--advertise-client-urls",
      clientURL,
      "--listen-peer-urls",
      peerURL,
      "--initial-advertise-peer-urls",
      peerURL,
      "--initial-cluster",
      `bench=${peerURL}`,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  track(child);
  let stderrTail = "";
  child.stderr?.on("data", (chunk: Buffer) => {
    stderrTail = (stderrTail + chunk.toString()).slice(-2000);
  });

  // Wait until it answers a request (or gives up / exits).
  const probe = new Etcd3({ hosts: `127.0.0.1:${client}`, dialTimeout: 500 });
  const deadline = Date.now() + 15_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`etcd exited with ${child.exitCode}: ${stderrTail}`);
      try {
        await probe.get("bench/probe").string();
        break;
      } catch (err) {
        if (Date.now() > deadline) throw new Error(`etcd did not answer in 15s: ${(err as Error).message}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } finally {
    probe.close();
  }
  return {
    name: "etcd",
    endpoint: `127.0.0.1:${client}`,
    pid: child.pid,
    close: () => stopChild(child),
  };
}

// ---- the measurements ----

interface PutResult {
  /** Every latency measured, in ms (merged over the rounds; not printed). */
  latencies: number[];
  clients: number;
  puts: number;
  seconds: number;
  putsPerSec: number;
  p50Ms: number;
  p99Ms: number;
  /** Server CPU time per put in µs (user + system, all its threads); undefined in-process. */
  serverCpuUsPerPut?: number;
}

/** `total` puts of distinct keys, spread over `clients` concurrent clients (one Etcd3 each). */
async function benchPuts(target: Target, clients: number, total: number, run: string): Promise<PutResult> {
  const value = Buffer.alloc(opts.valueSize, "v");
  const conns = Array.from({ length: clients }, () => new Etcd3({ hosts: target.endpoint }));
  try {
    // Warm up: connect every client before the clock starts.
    await Promise.all(conns.map((c, i) => c.put(`bench/warm/${run}/${i}`).value(value)));
    const latencies: number[] = [];
    let next = 0;
    const start = performance.now();
    await Promise.all(
      conns.map(async (c) => {
        for (let i = next++; i < total; i = next++) {
          const t0 = performance.now();
          await c.put(`bench/${run}/${String(i).padStart(8, "0")}`).value(value);
          latencies.push(performance.now() - t0);
        }
      }),
    );
    const seconds = (performance.now() - start) / 1000;
    latencies.sort((a, b) => a - b);
    return {
      latencies,
      clients,
      puts: total,
      seconds,
      putsPerSec: total / seconds,
      p50Ms: percentile(latencies, 50),
      p99Ms: percentile(latencies, 99),
    };
  } finally {
    for (const c of conns) c.close();
  }
}

interface WatchResult {
  watchers: number;
  puts: number;
  events: number;
  seconds: number;
  eventsPerSec: number;
  /** Server CPU time per delivered event in µs; undefined in-process. */
  serverCpuUsPerEvent?: number;
}

/** `watchers` watches on one prefix; time from the first put until every watcher saw every put. */
async function benchWatch(target: Target, puts: number, run: string): Promise<WatchResult> {
  const { watchers: count } = opts;
  const value = Buffer.alloc(opts.valueSize, "w");
  const prefix = `bench/watch/${run}/`;
  const watchClient = new Etcd3({ hosts: target.endpoint });
  const putClients = Array.from({ length: 16 }, () => new Etcd3({ hosts: target.endpoint }));
  const expected = count * puts;
  let delivered = 0;
  let done: () => void = () => {};
  const allDelivered = new Promise<void>((resolve) => {
    done = resolve;
  });
  try {
    const watchers = await Promise.all(
      Array.from({ length: count }, () => watchClient.watch().prefix(prefix).create()),
    );
    for (const w of watchers) {
      w.on("put", () => {
        if (++delivered === expected) done();
      });
    }
    await Promise.all(putClients.map((c, i) => c.put(`bench/watch-warm/${i}`).value(value)));
    const start = performance.now();
    let next = 0;
    await Promise.all(
      putClients.map(async (c) => {
        for (let i = next++; i < puts; i = next++) {
          await c.put(`${prefix}${String(i).padStart(8, "0")}`).value(value);
        }
      }),
    );
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(
        () => reject(new Error(`watch: only ${delivered} of ${expected} events after 60s`)),
        60_000,
      );
    });
    await Promise.race([allDelivered, timeout]).finally(() => clearTimeout(timer));
    const seconds = (performance.now() - start) / 1000;
    await Promise.all(watchers.map((w) => w.cancel()));
    return { watchers: count, puts, events: delivered, seconds, eventsPerSec: delivered / seconds };
  } finally {
    watchClient.close();
    for (const c of putClients) c.close();
  }
}

interface TargetResult {
  puts1: PutResult;
  putsMany: PutResult;
  watch: WatchResult;
}

/** Adds up the rounds of one put measurement. */
function mergePuts(parts: PutResult[]): PutResult {
  const latencies = parts.flatMap((p) => p.latencies).sort((a, b) => a - b);
  const puts = parts.reduce((n, p) => n + p.puts, 0);
  const seconds = parts.reduce((n, p) => n + p.seconds, 0);
  return {
    latencies,
    clients: parts[0].clients,
    puts,
    seconds,
    putsPerSec: puts / seconds,
    p50Ms: percentile(latencies, 50),
    p99Ms: percentile(latencies, 99),
    serverCpuUsPerPut: perUnit(parts.map((p) => [p.serverCpuUsPerPut, p.puts])),
  };
}

/** The weighted mean of per-unit figures, or undefined if any part lacks one. */
function perUnit(parts: [number | undefined, number][]): number | undefined {
  if (parts.some(([v]) => v === undefined)) return undefined;
  const units = parts.reduce((n, [, u]) => n + u, 0);
  return parts.reduce((n, [v, u]) => n + (v as number) * u, 0) / units;
}

function mergeWatch(parts: WatchResult[]): WatchResult {
  const events = parts.reduce((n, p) => n + p.events, 0);
  const seconds = parts.reduce((n, p) => n + p.seconds, 0);
  const puts = parts.reduce((n, p) => n + p.puts, 0);
  const serverCpuUsPerEvent = perUnit(parts.map((p) => [p.serverCpuUsPerEvent, p.events]));
  return {
    watchers: parts[0].watchers,
    puts,
    events,
    seconds,
    eventsPerSec: events / seconds,
    serverCpuUsPerEvent,
  };
}

type Measure = "puts1" | "putsMany" | "watch";

/** One round's part of one measurement on one target; returns its throughput too. */
async function measure(target: Target, what: Measure, round: number): Promise<PutResult | WatchResult> {
  const part = (total: number) => Math.max(1, Math.round(total / opts.rounds));
  const run = `r${round}`;
  const before = cpuMs(target.pid);
  const result =
    what === "puts1"
      ? await benchPuts(target, 1, part(opts.puts1), `c1-${run}`)
      : what === "putsMany"
        ? await benchPuts(target, opts.clients, part(opts.putsMany), `c${opts.clients}-${run}`)
        : await benchWatch(target, part(opts.watchPuts), run);
  const after = cpuMs(target.pid);
  // Includes the warm-up puts and connection set-up: a few ms, against seconds of work.
  if (before !== undefined && after !== undefined) {
    if ("putsPerSec" in result) result.serverCpuUsPerPut = ((after - before) * 1000) / result.puts;
    else result.serverCpuUsPerEvent = ((after - before) * 1000) / result.events;
  }
  return result;
}

function rate(r: PutResult | WatchResult): number {
  return "putsPerSec" in r ? r.putsPerSec : r.eventsPerSec;
}

/** Runs every measurement on every target, alternating as the header describes. */
async function benchAll(
  targets: Target[],
): Promise<{ results: TargetResult[]; roundRates: Record<Measure, number[][]> }> {
  const parts = targets.map(() => ({
    puts1: [] as PutResult[],
    putsMany: [] as PutResult[],
    watch: [] as WatchResult[],
  }));
  /** Per measurement, per round: each target's throughput (for the per-round ratios). */
  const roundRates: Record<Measure, number[][]> = { puts1: [], putsMany: [], watch: [] };
  if (opts.warmup > 0) {
    for (const target of targets) {
      progress(`warm-up: ${target.name}: ${opts.warmup} puts from ${opts.clients} clients, a short watch`);
      await benchPuts(target, opts.clients, opts.warmup, "warmup");
      await benchWatch(target, Math.max(1, Math.round(opts.warmup / 10)), "warmup");
    }
  }
  for (let round = 1; round <= opts.rounds; round++) {
    for (const what of ["puts1", "putsMany", "watch"] as const) {
      const order = round % 2 === 1 ? targets.map((_, i) => i) : targets.map((_, i) => i).reverse();
      const rates: number[] = [];
      for (const i of order) {
        progress(`round ${round}/${opts.rounds}: ${targets[i].name}: ${what}`);
        const r = await measure(targets[i], what, round);
        if (what === "watch") parts[i].watch.push(r as WatchResult);
        else parts[i][what].push(r as PutResult);
        rates[i] = rate(r);
      }
      roundRates[what].push(rates);
    }
  }
  const results = parts.map((p) => ({
    puts1: mergePuts(p.puts1),
    putsMany: mergePuts(p.putsMany),
    watch: mergeWatch(p.watch),
  }));
  return { results, roundRates };
}

// ---- report ----

function fmt(n: number, digits = 0): string {
  return n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

async function main(): Promise<void> {
  const haveEtcd = existsSync(etcdBinary);
  const targets: Target[] = [];
  try {
    for (const mend of mendModes) {
      const name = mendModes.length > 1 ? `ours-mend-${mend ? "on" : "off"}` : "ours";
      progress(
        `starting ${name} (durable, temp data dir, ${inProcess ? "in this process" : "own process"}, ` +
          `:authority mending ${mend ? "on" : "off"})`,
      );
      targets.push(await startOurs(mend, name));
    }
    if (haveEtcd) {
      progress(`starting real etcd (${etcdBinary}, temp data dir)`);
      targets.push(await startRealEtcd());
    } else {
      console.error("real etcd not found (install: sudo apt-get install -y etcd-server) — ours only");
    }
    const loadBefore = loadavg()[0];
    const { results, roundRates } = await benchAll(targets);
    report(targets, results, roundRates, [loadBefore, loadavg()[0]]);
  } finally {
    for (const t of targets) await t.close();
  }
}

/** The throughput ratios the report prints: each of ours against etcd, and mending on against off. */
function ratioPairs(targets: Target[]): { label: string; a: number; b: number }[] {
  const etcd = targets.findIndex((t) => t.name === "etcd");
  const ours = targets.map((t, i) => ({ t, i })).filter(({ t }) => t.name !== "etcd");
  const pairs = etcd < 0 ? [] : ours.map(({ t, i }) => ({ label: `${t.name}/etcd`, a: i, b: etcd }));
  const on = ours.find(({ t }) => t.mendAuthority === true);
  const off = ours.find(({ t }) => t.mendAuthority === false);
  if (on && off) pairs.push({ label: "mend on/off", a: on.i, b: off.i });
  return pairs;
}

function mendLabel(t: Target): string {
  return t.mendAuthority ? "on" : "off";
}

/** `load` is the 1-minute load average before and after the rounds: how busy the machine was. */
function report(
  targets: Target[],
  results: TargetResult[],
  roundRates: Record<Measure, number[][]>,
  load: [number, number],
): void {
  const pairs = ratioPairs(targets);
  const throughput = (r: TargetResult, m: Measure) =>
    m === "watch" ? r.watch.eventsPerSec : m === "puts1" ? r.puts1.putsPerSec : r.putsMany.putsPerSec;
  const mendNote = targets
    .filter((t) => t.name !== "etcd")
    .map((t) => `${t.name}: :authority mending ${mendLabel(t)}`)
    .join("; ");
  const defaultNote = `the server's default is ${defaultMendAuthority ? "on" : "off"}`;

  if (json) {
    const strip = (r: TargetResult) => ({
      ...r,
      puts1: { ...r.puts1, latencies: undefined },
      putsMany: { ...r.putsMany, latencies: undefined },
    });
    const measures: Measure[] = ["puts1", "putsMany", "watch"];
    console.log(
      JSON.stringify({
        options: { ...opts, inProcess, mendAuthority: mendModes, defaultMendAuthority },
        loadAverage: { before: load[0], after: load[1], cpus: cpus().length },
        targets: targets.map((t, i) => ({
          name: t.name,
          mendAuthority: t.mendAuthority,
          ...strip(results[i]),
        })),
        ratios: Object.fromEntries(
          pairs.map((p) => [
            p.label,
            Object.fromEntries(
              measures.map((m) => [m, throughput(results[p.a], m) / throughput(results[p.b], m)]),
            ),
          ]),
        ),
        roundRatios: Object.fromEntries(
          pairs.map((p) => [
            p.label,
            Object.fromEntries(
              measures.map((m) => [m, roundRates[m].map((rates) => rates[p.a] / rates[p.b])]),
            ),
          ]),
        ),
      }),
    );
    return;
  }

  const rows: string[][] = [["measure", ...targets.map((t) => t.name), ...pairs.map((p) => p.label)]];
  const ratio = (p: { a: number; b: number }, get: (r: TargetResult) => number | undefined) => {
    const a = get(results[p.a]);
    const b = get(results[p.b]);
    return a !== undefined && b ? fmt(a / b, 2) : "-";
  };
  const row = (label: string, get: (r: TargetResult) => number | undefined, digits = 0) => {
    if (get(results[0]) === undefined) return;
    rows.push([
      label,
      ...results.map((r) => {
        const v = get(r);
        return v === undefined ? "-" : fmt(v, digits);
      }),
      ...pairs.map((p) => ratio(p, get)),
    ]);
  };
  const putRows = (label: string, pick: (r: TargetResult) => PutResult) => {
    row(`${label} puts/s`, (r) => pick(r).putsPerSec);
    row(`${label} p50 ms`, (r) => pick(r).p50Ms, 2);
    row(`${label} p99 ms`, (r) => pick(r).p99Ms, 2);
    row(`${label} server CPU µs/put`, (r) => pick(r).serverCpuUsPerPut);
  };
  putRows(`1 client, ${opts.puts1}`, (r) => r.puts1);
  putRows(`${opts.clients} clients, ${opts.putsMany}`, (r) => r.putsMany);
  row(`watch ${opts.watchers}×${opts.watchPuts} events/s`, (r) => r.watch.eventsPerSec);
  row("watch server CPU µs/event", (r) => r.watch.serverCpuUsPerEvent);
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  console.log(
    `\nstore benchmark — ${opts.valueSize}-byte values, distinct keys, etcd3 npm client over gRPC, fsync on, ours ${inProcess ? "in the client's process" : "in its own process"}`,
  );
  console.log(`${mendNote} (${defaultNote}; --mend-authority on|off|ab)`);
  console.log(
    `load average (1 min) ${fmt(load[0], 2)} before the rounds, ${fmt(load[1], 2)} after, on ${cpus().length} CPUs\n`,
  );
  for (const [i, r] of rows.entries()) {
    console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  "));
    if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
  }
  console.log(
    "\n(latency and CPU ratios: above 1 means the first is slower or costlier; throughput ratios: below 1 means it is slower)",
  );
  const list = (xs: number[]) => xs.map((x) => fmt(x, 2)).join(", ");
  for (const p of pairs) {
    const per = (m: Measure) => list(roundRates[m].map((rates) => rates[p.a] / rates[p.b]));
    console.log(
      `${p.label} throughput in each round — 1 client: ${per("puts1")}; ${opts.clients} clients: ` +
        `${per("putsMany")}; watch: ${per("watch")}`,
    );
  }
}

runBenchmark("store", main);

/**
 * API server benchmark — lists, creates and watch fan-out over HTTP, against the upstream
 * scalability SLOs, with the watch cache on and off in the same run.
 *
 * Measures, with plain HTTP/1.1 JSON requests from this process against API servers that each
 * run in their own child process (so the load generator does not share the server's thread):
 * - creates: pods/s and p50/p99 latency with 1 client and with `--clients` (32) concurrent
 *   clients — the same creates fill the store with `--pods` pods spread over `--namespaces`
 *   namespaces;
 * - lists of all those pods (JSON): `resourceVersion` unset (a consistent read, from etcd),
 *   `resourceVersion=0` (any recent state: from the watch cache when it is on), and one
 *   namespace's list; p50/p99 over `--lists` repetitions; and GET of single pods;
 * - watch fan-out: `--watchers` concurrent watches (chunked responses) on one namespace, each
 *   receiving every event of a churn of `--churn` writes (half creates, then merge-patch updates
 *   of the same pods) from `--writers` clients. Each write carries its send time in an
 *   annotation; each event's delivery latency is measured from the write's response (and from
 *   the send time) to the watcher's receipt. Every watcher must see every event: any loss,
 *   duplicate or early end of a watch is reported.
 * Targets: the embedded in-memory store with the watch cache on (upstream's default) and off
 * (`watchCache: false`, the reference: the ratio is what the cacher buys), and, when
 * `/usr/bin/etcd` exists, a real etcd behind the API server (creates and lists only).
 * Then pass/fail per upstream SLO (p99 per cluster-day: mutating calls ≤ 1 s; non-streaming
 * reads ≤ 1 s for one object, ≤ 5 s for a namespace, ≤ 30 s for the cluster). Upstream measures
 * inside the API server, from receiving the request to its last byte; we measure at the client,
 * which adds the client's own queueing — a pessimistic reading.
 *
 * Flags: --pods N (3000), --namespaces N (10), --creates1 N (200 of the pods, by one client),
 * --clients N (32), --lists N (8), --gets N (200), --watchers N (100), --churn N (1000),
 * --writers N (16), --quick (a few seconds: tiny sizes), --no-etcd, --json, --cpu-prof-dir DIR
 * (each API server writes V8 CPU profiles to `DIR/<target>/`, to find the bottleneck: the
 * largest is the server's main thread).
 * Upstream's scale for these figures is 10,000 pods and 1,000 watchers; on a shared 2-core
 * machine that takes far longer than a few minutes, so the defaults are smaller — the sizes used
 * are printed with the figures, and `--pods 10000 --watchers 1000 --churn 10000` asks for the
 * full size.
 *
 * The machine may be shared: the list repetitions alternate between the targets, so a change of
 * load hits all of them alike.
 *
 * @upstream kubernetes/community sig-scalability/slos/api_call_latency.md (the API call latency SLOs)
 * @upstream kubernetes/community sig-scalability/slos/watch_latency.md (watch latency: from the write to the watcher)
 * @chapter 02-apiserver
 */
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync, mkdtempSync, rmSync } from "node:fs";
import { Agent, type IncomingMessage, request } from "node:http";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { type APIServerOptions, startAPIServer } from "./server.ts";

const etcdBinary = "/usr/bin/etcd";
const quick = process.argv.includes("--quick");

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
  pods: flag("pods", 3000, 120),
  namespaces: flag("namespaces", 10, 2),
  creates1: flag("creates1", 200, 20),
  clients: flag("clients", 32, 8),
  lists: flag("lists", 8, 3),
  gets: flag("gets", 200, 20),
  watchers: flag("watchers", 100, 5),
  churn: flag("churn", 1000, 40),
  writers: flag("writers", 16, 4),
};
opts.creates1 = Math.min(opts.creates1, opts.pods);
const json = process.argv.includes("--json");
const useEtcd = !process.argv.includes("--no-etcd") && existsSync(etcdBinary);
/** `--cpu-prof-dir DIR`: each API server child writes a V8 CPU profile there when it stops. */
const cpuProfDir = process.argv.includes("--cpu-prof-dir")
  ? process.argv[process.argv.indexOf("--cpu-prof-dir") + 1]
  : undefined;

/** Progress goes to stderr, so `--json` leaves stdout with exactly one JSON object. */
function progress(line: string): void {
  console.error(`… ${line}`);
}

// ---- the child: one API server per process ----

/** `apiserver.bench.ts --serve '<options JSON>'`: start, print the URL, stop when stdin closes. */
async function serveChild(options: APIServerOptions): Promise<void> {
  const server = await startAPIServer({ ...options, insecurePort: 0 });
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  const stop = () => {
    void server.close().finally(() => process.exit(0));
  };
  process.stdin.on("end", stop).on("close", stop).resume();
  process.on("SIGTERM", stop);
}

// ---- cleanup: children and temp dirs go away on every exit, errors included ----

const children: ChildProcess[] = [];
const tempDirs: string[] = [];

function cleanupSync(): void {
  for (const child of children)
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  for (const dir of tempDirs.splice(0)) rmSync(dir, { recursive: true, force: true });
}

async function stopChild(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null || child.signalCode !== null) return;
  const exited = new Promise<void>((resolve) => child.once("exit", () => resolve()));
  child.kill("SIGTERM");
  await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
  if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
}

// ---- the targets ----

interface Target {
  name: string;
  url: string;
  /** Whether the watch fan-out runs on it. */
  watch: boolean;
  close(): Promise<void>;
}

async function startTarget(name: string, options: APIServerOptions, watch: boolean): Promise<Target> {
  const self = fileURLToPath(import.meta.url);
  const profile = cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${join(cpuProfDir, name)}`] : [];
  const child = spawn(
    process.execPath,
    [...profile, "--import", "tsx", self, "--serve", JSON.stringify(options)],
    {
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  children.push(child);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      const line = /^(\{.*\})\n/m.exec(out);
      if (line) resolve((JSON.parse(line[1]) as { url: string }).url);
    });
    child.once("exit", (code) => reject(new Error(`API server (${name}) exited with ${code}: ${stderr}`)));
  });
  let stopping = false;
  child.once("exit", (code, signal) => {
    if (!stopping) console.error(`API server (${name}) died (${signal ?? code}): ${stderr.trim()}`);
  });
  return {
    name,
    url,
    watch,
    close: () => {
      stopping = true;
      return stopChild(child);
    },
  };
}

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

/** A real single-member etcd on loopback, temp data dir; resolves once it serves clients. */
async function startRealEtcd(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "apiserver-bench-etcd-"));
  tempDirs.push(dataDir);
  const [client, peer] = [await freePort(), await freePort()];
  const clientURL = `http://127.0.0.1:${client}`;
  const peerURL = `http://127.0.0.1:${peer}`;
  const child = spawn(
    etcdBinary,
    [
      ...["--name", "bench", "--data-dir", dataDir],
      ...["--listen-client-urls", clientURL, "--advertise-client-urls", clientURL],
      ...["--listen-peer-urls", peerURL, "--initial-advertise-peer-urls", peerURL],
      ...["--initial-cluster", `bench=${peerURL}`],
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  children.push(child);
  let stderr = "";
  await new Promise<void>((resolve, reject) => {
    child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
      stderr = (stderr + chunk).slice(-4000);
      if (stderr.includes("ready to serve client requests")) resolve();
    });
    child.once("exit", (code) => reject(new Error(`etcd exited with ${code}: ${stderr}`)));
    setTimeout(() => reject(new Error(`etcd did not start in 15s: ${stderr}`)), 15_000).unref();
  });
  return { endpoint: clientURL, close: () => stopChild(child) };
}

// ---- HTTP ----

interface Reply {
  status: number;
  body: string;
}

/** Keep-alive connections; at most `clients` (or `writers`) requests are ever in flight at once. */
const agent = new Agent({ keepAlive: true, maxSockets: 256 });

function call(
  method: string,
  url: string,
  body?: unknown,
  contentType = "application/json",
  retried = false,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers = payload ? { "Content-Type": contentType } : {};
    const req = request(url, { method, agent, headers }, (res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
    });
    req.on("error", (err: NodeJS.ErrnoException) => {
      // The server closes a keep-alive connection idle for 5 s; a request sent on it just then
      // is reset before the server read it. Node's documented remedy: send it again, once.
      if (req.reusedSocket && err.code === "ECONNRESET" && !retried)
        call(method, url, body, contentType, true).then(resolve, reject);
      else reject(err);
    });
    req.end(payload);
  });
}

/** A call that must answer `want`; anything else stops the benchmark with the server's Status. */
async function must(
  want: number,
  method: string,
  url: string,
  body?: unknown,
  type?: string,
): Promise<Reply> {
  const r = await call(method, url, body, type);
  if (r.status !== want) throw new Error(`${method} ${url}: ${r.status} ${r.body.slice(0, 300)}`);
  return r;
}

// ---- figures ----

function percentile(sorted: ArrayLike<number>, p: number): number {
  if (sorted.length === 0) return Number.NaN;
  return sorted[Math.min(sorted.length - 1, Math.floor((p / 100) * sorted.length))];
}

interface Latency {
  count: number;
  p50Ms: number;
  p99Ms: number;
}

function latency(samples: number[] | Float32Array): Latency {
  // A typed array sorts numerically, and fast: the watch fan-out has watchers × churn samples.
  const sorted = Float64Array.from(samples).sort();
  return { count: sorted.length, p50Ms: percentile(sorted, 50), p99Ms: percentile(sorted, 99) };
}

const now = () => performance.timeOrigin + performance.now();

function pod(namespace: string, name: string, seq: number): object {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: {
      name,
      namespace,
      labels: { app: "bench" },
      annotations: { "bench/seq": String(seq), "bench/sent": String(now()) },
    },
    spec: { containers: [{ name: "app", image: "registry.k8s.io/pause:3.10" }] },
  };
}

/** Runs `total` jobs over `clients` concurrent loops; returns each job's latency and the wall time. */
async function concurrently(
  clients: number,
  total: number,
  job: (i: number) => Promise<void>,
  label?: string,
): Promise<{ samples: number[]; seconds: number }> {
  const samples: number[] = [];
  let next = 0;
  const start = performance.now();
  const ticker = label
    ? setInterval(() => progress(`${label}: ${samples.length}/${total}`), 5000).unref()
    : undefined;
  await Promise.all(
    Array.from({ length: Math.min(clients, total) }, async () => {
      for (let i = next++; i < total; i = next++) {
        const t0 = performance.now();
        await job(i);
        samples.push(performance.now() - t0);
      }
    }),
  ).finally(() => clearInterval(ticker));
  return { samples, seconds: (performance.now() - start) / 1000 };
}

// ---- creates: they also fill the store for the lists ----

interface CreateResult extends Latency {
  clients: number;
  podsPerSec: number;
}

const nsName = (i: number) => `bench-${i}`;

async function populate(t: Target): Promise<{ one: CreateResult; many: CreateResult }> {
  for (let i = 0; i < opts.namespaces; i++)
    await must(201, "POST", `${t.url}/api/v1/namespaces`, { metadata: { name: nsName(i) } });
  await must(201, "POST", `${t.url}/api/v1/namespaces`, { metadata: { name: "bench-watch" } });
  const create = async (i: number) => {
    const ns = nsName(i % opts.namespaces);
    await must(201, "POST", `${t.url}/api/v1/namespaces/${ns}/pods`, pod(ns, `pod-${i}`, i));
  };
  const result = (clients: number, r: { samples: number[]; seconds: number }): CreateResult => ({
    clients,
    podsPerSec: r.samples.length / r.seconds,
    ...latency(r.samples),
  });
  progress(`${t.name}: creating ${opts.creates1} pods with 1 client`);
  const one = result(1, await concurrently(1, opts.creates1, create, `${t.name}: created`));
  const rest = opts.pods - opts.creates1;
  progress(`${t.name}: creating ${rest} pods with ${opts.clients} clients`);
  const many = result(opts.clients, await concurrently(opts.clients, rest, (i) => create(opts.creates1 + i)));
  return { one, many };
}

// ---- lists and gets ----

type ListKind = "clusterEtcd" | "clusterCache" | "namespace";

const listURL: Record<ListKind, (t: Target) => string> = {
  clusterEtcd: (t) => `${t.url}/api/v1/pods`,
  clusterCache: (t) => `${t.url}/api/v1/pods?resourceVersion=0`,
  namespace: (t) => `${t.url}/api/v1/namespaces/${nsName(0)}/pods`,
};

/** Pods in namespace bench-0: pod-i went to namespace i mod namespaces. */
const namespacePods = () => Math.ceil(opts.pods / opts.namespaces);

async function timedList(t: Target, kind: ListKind): Promise<number> {
  const t0 = performance.now();
  const r = await must(200, "GET", listURL[kind](t));
  const ms = performance.now() - t0;
  const items = (JSON.parse(r.body) as { items: unknown[] }).items.length;
  const want = kind === "namespace" ? namespacePods() : opts.pods;
  if (items !== want) throw new Error(`${t.name}: ${kind} list returned ${items} pods, want ${want}`);
  return ms;
}

// ---- watch fan-out ----

interface WatchResult {
  watchers: number;
  churn: number;
  expected: number;
  delivered: number;
  lost: number;
  duplicates: number;
  /** Watches that ended, or sent an ERROR event, before every event had arrived. */
  endedEarly: number;
  seconds: number;
  eventsPerSec: number;
  writes: Latency & { perSec: number };
  /** From the write's response to the watcher's receipt (0 when the event came first). */
  fromResponse: Latency;
  /** Events that reached a watcher before their write's response reached the writer. */
  beforeResponse: number;
  /** From the send time in the object's annotation to the watcher's receipt. */
  fromSend: Latency;
}

async function watchFanOut(t: Target): Promise<WatchResult> {
  const { watchers: count, churn } = opts;
  const creates = Math.ceil(churn / 2);
  const base = `${t.url}/api/v1/namespaces/bench-watch/pods`;
  const start = JSON.parse((await must(200, "GET", `${base}?limit=1`)).body) as {
    metadata: { resourceVersion: string };
  };
  const respAt = new Float64Array(churn); // 0: no response yet
  /** Per watcher and write: 0 not received, 1 received, 2 received before the write's response. */
  const seen = new Uint8Array(count * churn);
  const fromResponse = new Float32Array(count * churn);
  const fromSend = new Float32Array(count * churn);
  let delivered = 0;
  let duplicates = 0;
  let beforeResponse = 0;
  let endedEarly = 0;
  let lastReceipt = 0;
  /** Set before the benchmark closes the watches itself, so that is not counted as an early end. */
  let finished = false;
  let allDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    allDone = resolve;
  });
  const expected = count * churn;

  const origin = now();
  const onEvent = (w: number, line: string) => {
    const at = now();
    const event = JSON.parse(line) as {
      type: string;
      object: { metadata?: { annotations?: Record<string, string> } };
    };
    if (event.type === "BOOKMARK") return;
    if (event.type === "ERROR") {
      endedEarly++;
      return;
    }
    const a = event.object.metadata?.annotations ?? {};
    const seq = Number(a["bench/seq"]);
    const slot = w * churn + seq;
    if (seen[slot]) {
      duplicates++;
      return;
    }
    fromSend[slot] = at - Number(a["bench/sent"]);
    if (respAt[seq] > 0) {
      seen[slot] = 1;
      fromResponse[slot] = at - respAt[seq];
    } else {
      // The event beat its write's response: keep the receipt time (from `origin`, which a
      // float32 holds to the microsecond) and settle once the response has arrived.
      seen[slot] = 2;
      fromResponse[slot] = at - origin;
    }
    lastReceipt = at;
    if (++delivered === expected) allDone();
  };

  // Each watch: a chunked response read line by line. Headers arrive once the storage watch is
  // registered, so after they all arrived no event can be missed.
  const watchAgent = new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const responses: IncomingMessage[] = [];
  const url = `${base}?watch=true&resourceVersion=${start.metadata.resourceVersion}&allowWatchBookmarks=false`;
  const open = (w: number) =>
    new Promise<void>((resolve, reject) => {
      const req = request(url, { agent: watchAgent }, (res) => {
        if (res.statusCode !== 200) return reject(new Error(`watch ${w}: ${res.statusCode}`));
        responses.push(res);
        let buffered = "";
        res.setEncoding("utf8");
        res.on("data", (chunk: string) => {
          const lines = (buffered + chunk).split("\n");
          buffered = lines.pop() ?? ""; // an event cut in two by the chunking waits for its end
          for (const line of lines) if (line) onEvent(w, line);
        });
        res.on("end", () => {
          if (!finished) endedEarly++;
        });
        res.on("error", () => {});
        resolve();
      });
      req.on("error", (e) => (responses.length < count ? reject(e) : undefined));
      req.end();
    });
  progress(`${t.name}: opening ${count} watches`);
  for (let i = 0; i < count; i += 50)
    await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, k) => open(i + k)));

  progress(
    `${t.name}: churn of ${churn} writes (${creates} creates, ${churn - creates} updates) to ${count} watchers`,
  );
  const t0 = now();
  const ticker = setInterval(
    () => progress(`${t.name}: ${delivered}/${expected} events delivered`),
    5000,
  ).unref();
  // Creates first, then the updates: an update sent while its create is still in flight would 404.
  const createPhase = await concurrently(opts.writers, creates, async (seq) => {
    await must(201, "POST", base, pod("bench-watch", `churn-${seq}`, seq));
    respAt[seq] = now();
  });
  const updatePhase = await concurrently(opts.writers, churn - creates, async (j) => {
    const seq = creates + j;
    const patch = { metadata: { annotations: { "bench/seq": String(seq), "bench/sent": String(now()) } } };
    await must(200, "PATCH", `${base}/churn-${j}`, patch, "application/merge-patch+json");
    respAt[seq] = now();
  });
  const writes = {
    samples: [...createPhase.samples, ...updatePhase.samples],
    seconds: createPhase.seconds + updatePhase.seconds,
  };

  // Wait for the last events; give up after 10 s without progress.
  let before = -1;
  while (delivered < expected && delivered !== before) {
    before = delivered;
    await Promise.race([done, new Promise((r) => setTimeout(r, 10_000))]);
  }
  clearInterval(ticker);
  finished = true;
  allDone();
  for (const res of responses) res.destroy();
  watchAgent.destroy();

  for (let slot = 0; slot < seen.length; slot++) {
    if (seen[slot] !== 2) continue;
    beforeResponse++;
    fromResponse[slot] = Math.max(0, origin + fromResponse[slot] - respAt[slot % churn]);
  }
  const received = (arr: Float32Array) => arr.filter((_, i) => seen[i] !== 0);
  const seconds = ((lastReceipt || now()) - t0) / 1000;
  return {
    watchers: count,
    churn,
    expected,
    delivered,
    lost: expected - delivered,
    duplicates,
    endedEarly,
    seconds,
    eventsPerSec: delivered / seconds,
    writes: { ...latency(writes.samples), perSec: churn / writes.seconds },
    fromResponse: latency(received(fromResponse)),
    beforeResponse,
    fromSend: latency(received(fromSend)),
  };
}

// ---- the run ----

interface TargetResult {
  creates: { one: CreateResult; many: CreateResult };
  lists: Record<ListKind, Latency>;
  get: Latency;
  watch?: WatchResult;
}

async function main(): Promise<void> {
  const targets: Target[] = [];
  let etcd: { endpoint: string; close(): Promise<void> } | undefined;
  try {
    progress("starting API servers (embedded in-memory store; watch cache on, then off)");
    targets.push(await startTarget("cache", { watchCache: true }, true));
    targets.push(await startTarget("no-cache", { watchCache: false }, true));
    if (useEtcd) {
      progress(`starting real etcd (${etcdBinary}) and an API server on it`);
      etcd = await startRealEtcd();
      targets.push(await startTarget("etcd", { etcdServers: [etcd.endpoint], watchCache: true }, false));
    } else if (!process.argv.includes("--no-etcd")) {
      progress(`real etcd not found (${etcdBinary}) — embedded store only`);
    }

    const results = new Map<string, TargetResult>();
    const partial = new Map<string, Partial<TargetResult>>();
    for (const t of targets) partial.set(t.name, { creates: await populate(t) });

    const listSamples = new Map(
      targets.map((t) => [
        t.name,
        { clusterEtcd: [], clusterCache: [], namespace: [] } as Record<ListKind, number[]>,
      ]),
    );
    for (let round = 1; round <= opts.lists; round++) {
      progress(`lists, round ${round}/${opts.lists}`);
      const order = round % 2 === 1 ? targets : [...targets].reverse();
      for (const t of order)
        for (const kind of ["clusterEtcd", "clusterCache", "namespace"] as const)
          listSamples.get(t.name)?.[kind].push(await timedList(t, kind));
    }
    for (const t of targets) {
      progress(`${t.name}: ${opts.gets} single-pod GETs`);
      const got = await concurrently(1, opts.gets, async (i) => {
        const n = i % opts.pods;
        await must(200, "GET", `${t.url}/api/v1/namespaces/${nsName(n % opts.namespaces)}/pods/pod-${n}`);
      });
      const s = listSamples.get(t.name) as Record<ListKind, number[]>;
      Object.assign(partial.get(t.name) as object, {
        lists: {
          clusterEtcd: latency(s.clusterEtcd),
          clusterCache: latency(s.clusterCache),
          namespace: latency(s.namespace),
        },
        get: latency(got.samples),
      });
    }
    for (const t of targets) {
      const r = partial.get(t.name) as TargetResult;
      if (t.watch) r.watch = await watchFanOut(t);
      results.set(t.name, r);
    }
    report(results);
  } finally {
    for (const t of targets) await t.close();
    await etcd?.close();
  }
}

// ---- report ----

interface SLOCheck {
  target: string;
  slo: string;
  limitMs: number;
  p99Ms: number;
  pass: boolean;
}

function sloChecks(results: Map<string, TargetResult>): SLOCheck[] {
  const checks: SLOCheck[] = [];
  for (const [target, r] of results) {
    const mutating = Math.max(r.creates.one.p99Ms, r.creates.many.p99Ms, r.watch?.writes.p99Ms ?? 0);
    const rows: [string, number, number][] = [
      ["mutating calls (POST/PATCH) p99 ≤ 1 s", 1000, mutating],
      ["read one object (GET) p99 ≤ 1 s", 1000, r.get.p99Ms],
      ["namespace list p99 ≤ 5 s", 5000, r.lists.namespace.p99Ms],
      ["cluster list p99 ≤ 30 s", 30_000, Math.max(r.lists.clusterEtcd.p99Ms, r.lists.clusterCache.p99Ms)],
    ];
    for (const [slo, limitMs, p99Ms] of rows)
      checks.push({ target, slo, limitMs, p99Ms, pass: p99Ms <= limitMs });
  }
  return checks;
}

function fmt(n: number | undefined, digits = 0): string {
  if (n === undefined || Number.isNaN(n)) return "-";
  return n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function report(results: Map<string, TargetResult>): void {
  const cache = results.get("cache") as TargetResult;
  const noCache = results.get("no-cache") as TargetResult;
  const ratio = (a: number | undefined, b: number | undefined) => (a && b ? a / b : undefined);
  /** What the cacher buys: how many times faster (or more) with it than without. */
  const cacherBuys = {
    listRV0P50: ratio(noCache.lists.clusterCache.p50Ms, cache.lists.clusterCache.p50Ms),
    listRV0P99: ratio(noCache.lists.clusterCache.p99Ms, cache.lists.clusterCache.p99Ms),
    listUnsetP50: ratio(noCache.lists.clusterEtcd.p50Ms, cache.lists.clusterEtcd.p50Ms),
    watchEventsPerSec: ratio(cache.watch?.eventsPerSec, noCache.watch?.eventsPerSec),
    watchLatencyP50: ratio(noCache.watch?.fromResponse.p50Ms, cache.watch?.fromResponse.p50Ms),
    watchLatencyP99: ratio(noCache.watch?.fromResponse.p99Ms, cache.watch?.fromResponse.p99Ms),
  };
  const checks = sloChecks(results);
  const losses = [...results].filter(([, r]) => r.watch && (r.watch.lost > 0 || r.watch.duplicates > 0));

  if (json) {
    console.log(
      JSON.stringify({
        options: { ...opts, quick, etcd: useEtcd },
        results: Object.fromEntries(results),
        cacherBuys,
        slo: checks,
      }),
    );
    return;
  }

  const names = [...results.keys()];
  const rows: string[][] = [["measure", ...names]];
  const row = (label: string, pick: (r: TargetResult) => number | undefined, digits = 0) =>
    rows.push([label, ...names.map((n) => fmt(pick(results.get(n) as TargetResult), digits))]);
  row(`create, 1 client, ${opts.creates1} pods: pods/s`, (r) => r.creates.one.podsPerSec);
  row("  p50 / p99 ms", (r) => r.creates.one.p50Ms, 1);
  rows[rows.length - 1] = [rows[rows.length - 1][0], ...names.map((n) => pair(results.get(n)?.creates.one))];
  row(
    `create, ${opts.clients} clients, ${opts.pods - opts.creates1} pods: pods/s`,
    (r) => r.creates.many.podsPerSec,
  );
  rows.push(["  p50 / p99 ms", ...names.map((n) => pair(results.get(n)?.creates.many))]);
  rows.push([
    `list all ${opts.pods} pods, RV unset: p50 / p99 ms`,
    ...names.map((n) => pair(results.get(n)?.lists.clusterEtcd)),
  ]);
  rows.push([
    `list all ${opts.pods} pods, RV=0: p50 / p99 ms`,
    ...names.map((n) => pair(results.get(n)?.lists.clusterCache)),
  ]);
  rows.push([
    `list one namespace (${namespacePods()} pods): p50 / p99 ms`,
    ...names.map((n) => pair(results.get(n)?.lists.namespace)),
  ]);
  rows.push([`get one pod: p50 / p99 ms`, ...names.map((n) => pair(results.get(n)?.get))]);
  row(`watch ${opts.watchers}×${opts.churn}: events/s delivered`, (r) => r.watch?.eventsPerSec);
  rows.push([
    "  latency from write response: p50 / p99 ms",
    ...names.map((n) => pair(results.get(n)?.watch?.fromResponse)),
  ]);
  rows.push([
    "  latency from send: p50 / p99 ms",
    ...names.map((n) => pair(results.get(n)?.watch?.fromSend)),
  ]);
  row("  events before the write's response", (r) => r.watch?.beforeResponse);
  row("  churn writes/s", (r) => r.watch?.writes.perSec);
  row("  lost / duplicate events", (r) => r.watch?.lost);
  rows[rows.length - 1] = [
    rows[rows.length - 1][0],
    ...names.map((n) => {
      const w = results.get(n)?.watch;
      return w ? `${fmt(w.lost)} / ${fmt(w.duplicates)}` : "-";
    }),
  ];
  row("  watches ended early", (r) => r.watch?.endedEarly);

  console.log(
    `\nAPI server benchmark — ${opts.pods} pods in ${opts.namespaces} namespaces, ${opts.watchers} watchers × ${opts.churn} writes (${opts.writers} writers), ${opts.lists} lists, ${opts.gets} gets${quick ? " (quick mode)" : ""}`,
  );
  console.log(
    "targets: cache = embedded in-memory store, watch cache on; no-cache = same, watch cache off" +
      (useEtcd ? "; etcd = real etcd, watch cache on (no watch fan-out)" : "") +
      "\n",
  );
  table(rows);

  const x = (n: number | undefined) => (n === undefined ? "-" : `${fmt(n, 2)}×`);
  console.log("\nwhat the watch cache buys (no-cache / cache for latency, cache / no-cache for throughput):");
  console.log(
    `  list RV=0 p50 ${x(cacherBuys.listRV0P50)}, p99 ${x(cacherBuys.listRV0P99)}; list RV unset p50 ${x(cacherBuys.listUnsetP50)}; ` +
      `watch events/s ${x(cacherBuys.watchEventsPerSec)}; watch latency p50 ${x(cacherBuys.watchLatencyP50)}, p99 ${x(cacherBuys.watchLatencyP99)}`,
  );

  console.log(
    "\nupstream SLOs (kubernetes/community sig-scalability/slos; measured here at the client; mutating = the worst of the creates and the writes during the watch churn):",
  );
  const sloRows = [["SLO", ...names]];
  for (const slo of [...new Set(checks.map((c) => c.slo))]) {
    sloRows.push([
      slo,
      ...names.map((n) => {
        const c = checks.find((k) => k.slo === slo && k.target === n) as SLOCheck;
        return `${c.pass ? "PASS" : "FAIL"} (${fmt(c.p99Ms, 0)} ms)`;
      }),
    ]);
  }
  table(sloRows);
  if (losses.length > 0)
    console.log(
      `\nWATCH LOSS: ${losses.map(([n, r]) => `${n}: ${r.watch?.lost} lost, ${r.watch?.duplicates} duplicated`).join("; ")}`,
    );
  else console.log("\nevery watcher received every event, once");
}

function pair(l: Latency | undefined): string {
  return l ? `${fmt(l.p50Ms, 1)} / ${fmt(l.p99Ms, 1)}` : "-";
}

function table(rows: string[][]): void {
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const [i, r] of rows.entries()) {
    console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  "));
    if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
  }
}

if (process.argv[2] === "--serve") {
  await serveChild(JSON.parse(process.argv[3] ?? "{}") as APIServerOptions);
} else {
  process.on("exit", cleanupSync);
  for (const signal of ["SIGINT", "SIGTERM"] as const)
    process.on(signal, () => {
      cleanupSync();
      process.exit(130);
    });
  const t0 = performance.now();
  main()
    .then(() => {
      progress(`done in ${fmt((performance.now() - t0) / 1000, 1)} s`);
      cleanupSync();
      process.exit(0);
    })
    .catch((err: unknown) => {
      console.error(`API server benchmark failed: ${err instanceof Error ? err.message : String(err)}`);
      cleanupSync();
      process.exit(1);
    });
}

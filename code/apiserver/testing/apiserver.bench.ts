/**
 * API server benchmark — lists, creates and watch fan-out over HTTP, against the upstream
 * scalability SLOs (kubernetes/community sig-scalability/slos, listed at the end of this
 * header), with the watch cache on and off in the same run.
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
 *   the send time) to the watcher's receipt. Every watcher must see every event: any loss or
 *   duplicate is reported; a watch the server closes (a watcher too far behind) is counted and
 *   opened again from its last resourceVersion, as a reflector does. The churn is paced: a write
 *   waits until every watcher has the event of the write `--lag` (50) before it — one process
 *   reads all the watches, and unpaced it would fall ever further behind the writers. The
 *   server's and this process's CPU time per 1,000 events delivered are printed too: on a
 *   shared machine they vary far less than the rates.
 * Targets: the embedded in-memory store with the watch cache on (upstream's default) and off
 * (`watchCache: false`, the reference: the ratio is what the cacher buys; its fan-out uses at
 * most `--ref-watchers` (100) watchers, each an etcd watch of its own), and, when
 * `/usr/bin/etcd` exists, a real etcd behind the API server (creates and lists only); and
 * (chapter 3) "secured": the "cache" target over HTTPS only, with x509 client certificates, RBAC
 * (`--authorization-mode=Node,RBAC`) holding `--rolebindings` (1,000) RoleBindings spread over
 * the namespaces beside the bootstrap policy, and the default admission plugins. Its workload runs
 * as a tenant-like user (`bench-loadgen`, not system:masters) through keep-alive TLS agents, as a
 * real client; the ratios secured / cache are printed against the aim of 0.8×, with the cost of
 * each gate (authn, authz, admission) measured inside the server (stage-timing.ts) per request.
 * Then pass/fail per upstream SLO (p99 per cluster-day: mutating calls ≤ 1 s; non-streaming
 * reads ≤ 1 s for one object, ≤ 5 s for a namespace, ≤ 30 s for the cluster). Upstream measures
 * inside the API server, from receiving the request to its last byte; we measure at the client,
 * which adds the client's own queueing — a pessimistic reading.
 *
 * Flags: --pods N (10000), --namespaces N (10), --creates1 N (200 of the pods, by one client),
 * --clients N (32), --lists N (8), --gets N (200), --watchers N (1000), --churn N (10000),
 * --writers N (16), --lag N (50), --ref-watchers N (100), --rolebindings N (1000),
 * --targets cache,no-cache,etcd,secured (all),
 * --quick (a few seconds: tiny sizes), --no-etcd, --json, --cpu-prof-dir DIR (each API server
 * writes V8 CPU profiles to `DIR/<target>/`, to find the bottleneck: the largest is the
 * server's main thread).
 * The defaults are upstream's scale for these figures — 10,000 pods, 1,000 watchers, a churn of
 * 10,000 writes: ten million deliveries, 30,000 creates and 48 lists of all 10,000 pods — which
 * takes about 3 minutes on a quiet 2-core machine, 6 to 10 when it is shared. `--pods 3000
 * --churn 1000` (ten times fewer events) takes under 2 minutes; `--quick` a few seconds. The
 * sizes used are printed with the figures.
 *
 * The machine may be shared: the creates (in rounds) and the list repetitions alternate between
 * the targets, so a change of load hits all of them alike; the server's CPU time per pod created
 * and per event delivered is printed beside the rates, as the steadier figure.
 *
 * @upstream kubernetes/community sig-scalability/slos/api_call_latency.md (the API call latency SLOs)
 * @upstream kubernetes/community sig-scalability/slos/watch_latency.md (watch latency: from the write to the watcher)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/config.go (DefaultBuildHandlerChain: the secured target's gates)
 * @chapter 02-apiserver
 */
import { spawn } from "node:child_process";
import { existsSync, mkdtempSync, writeFileSync } from "node:fs";
import { Agent, request as httpRequest, type IncomingMessage } from "node:http";
import { request as httpsRequest, Agent as TLSAgent } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import {
  encodeCertPEM,
  encodePrivateKeyPEM,
  newCertificateAuthority,
  newPrivateKey,
  newSignedCert,
} from "../../pki/pki-helpers.ts";
import { quickMode, sizeFlag } from "../../testing/bench-flags.ts";
import {
  cpuSeconds,
  progress,
  runBenchmark,
  stopChild,
  track,
  trackTempDir,
} from "../../testing/child-process.ts";
import { freePort } from "../../testing/ports.ts";
import { type APIServerOptions, startAPIServer } from "../server.ts";
import { enableStageTiming, type Stage, type StageTotals, stageTotals } from "./stage-timing.ts";

const etcdBinary = "/usr/bin/etcd";
const quick = quickMode();

const opts = {
  pods: sizeFlag("pods", 10000, 120),
  namespaces: sizeFlag("namespaces", 10, 2),
  creates1: sizeFlag("creates1", 200, 20),
  clients: sizeFlag("clients", 32, 8),
  lists: sizeFlag("lists", 8, 3),
  gets: sizeFlag("gets", 200, 20),
  watchers: sizeFlag("watchers", 1000, 5),
  churn: sizeFlag("churn", 10000, 40),
  writers: sizeFlag("writers", 16, 4),
  lag: sizeFlag("lag", 50, 10),
  refWatchers: sizeFlag("ref-watchers", 100, 5),
  roleBindings: sizeFlag("rolebindings", 1000, 40),
};
opts.creates1 = Math.min(opts.creates1, opts.pods);
const json = process.argv.includes("--json");
const useEtcd = !process.argv.includes("--no-etcd") && existsSync(etcdBinary);
/** `--targets cache,no-cache`: measure only these API servers (default: all). */
const onlyTargets = process.argv.includes("--targets")
  ? new Set((process.argv[process.argv.indexOf("--targets") + 1] ?? "").split(","))
  : undefined;
const wanted = (name: string) => !onlyTargets || onlyTargets.has(name);
/** `--cpu-prof-dir DIR`: each API server child writes a V8 CPU profile there when it stops. */
const cpuProfDir = process.argv.includes("--cpu-prof-dir")
  ? process.argv[process.argv.indexOf("--cpu-prof-dir") + 1]
  : undefined;

// ---- the child: one API server per process ----

/** `apiserver.bench.ts --serve '<options JSON>'`: start, print the URL, stop when stdin closes. */
async function serveChild(options: APIServerOptions & { stageTiming?: boolean }): Promise<void> {
  const { stageTiming, ...serverOptions } = options;
  if (stageTiming) enableStageTiming();
  // The secured target serves HTTPS only; the others plain HTTP on a free port.
  const server = await startAPIServer(
    serverOptions.securePort === undefined ? { ...serverOptions, insecurePort: 0 } : serverOptions,
  );
  process.stdout.write(`${JSON.stringify({ url: server.url })}\n`);
  const stop = () => {
    void server.close().finally(() => process.exit(0));
  };
  // Each line "stats" on stdin is answered with one line: the stage counters (stage-timing.ts) and
  // the process's own CPU time. The CPU time is read here, by the same getrusage clock as the
  // stages (µs), not from /proc (10 ms ticks: a quick phase of nine requests reads as 0 there).
  let input = "";
  process.stdin
    .setEncoding("utf8")
    .on("data", (chunk: string) => {
      input += chunk;
      for (let nl = input.indexOf("\n"); nl >= 0; nl = input.indexOf("\n")) {
        if (input.slice(0, nl) === "stats")
          process.stdout.write(`${JSON.stringify({ stages: stageTotals(), cpuUs: cpuUsNow() })}\n`);
        input = input.slice(nl + 1);
      }
    })
    .on("end", stop)
    .on("close", stop);
  process.on("SIGTERM", stop);
}

// Children and temp dirs go away on every exit, errors included (code/testing/child-process.ts).

// ---- the targets ----

interface Target {
  name: string;
  url: string;
  /** The API server's process id, to read its CPU time. */
  pid?: number;
  /** Whether the watch fan-out runs on it. */
  watch: boolean;
  /** The secured target: the workload's identity, and the admin's for the setup. */
  tls?: { client: Creds; admin: Creds };
  /** The child's stage counters and its CPU µs now (the secured target only). */
  stats?: () => Promise<ChildStats>;
  close(): Promise<void>;
}

async function startTarget(
  name: string,
  options: APIServerOptions & { stageTiming?: boolean },
  watch: boolean,
  tls?: { client: Creds; admin: Creds },
): Promise<Target> {
  const self = fileURLToPath(import.meta.url);
  const profile = cpuProfDir ? ["--cpu-prof", `--cpu-prof-dir=${join(cpuProfDir, name)}`] : [];
  const child = spawn(
    process.execPath,
    [...profile, "--import", "tsx", self, "--serve", JSON.stringify(options)],
    {
      stdio: ["pipe", "pipe", "pipe"],
    },
  );
  track(child);
  let stderr = "";
  child.stderr?.setEncoding("utf8").on("data", (chunk: string) => {
    stderr = (stderr + chunk).slice(-4000);
  });
  /** Waiting for the child's answers to "stats", in order. */
  const statsWaiting: ((s: ChildStats) => void)[] = [];
  const url = await new Promise<string>((resolve, reject) => {
    let out = "";
    child.stdout?.setEncoding("utf8").on("data", (chunk: string) => {
      out += chunk;
      for (let nl = out.indexOf("\n"); nl >= 0; nl = out.indexOf("\n")) {
        const line = out.slice(0, nl);
        out = out.slice(nl + 1);
        if (!line.startsWith("{")) continue;
        const msg = JSON.parse(line) as { url?: string; stages?: StageTotals; cpuUs?: number };
        if (msg.url) resolve(msg.url);
        if (msg.stages) statsWaiting.shift()?.({ stages: msg.stages, cpuUs: msg.cpuUs ?? Number.NaN });
      }
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
    pid: child.pid,
    watch,
    tls,
    stats: options.stageTiming
      ? () =>
          new Promise<ChildStats>((resolve) => {
            statsWaiting.push(resolve);
            child.stdin?.write("stats\n");
          })
      : undefined,
    close: () => {
      stopping = true;
      return stopChild(child);
    },
  };
}

/** A real single-member etcd on loopback, temp data dir; resolves once it serves clients. */
async function startRealEtcd(): Promise<{ endpoint: string; close(): Promise<void> }> {
  const dataDir = mkdtempSync(join(tmpdir(), "apiserver-bench-etcd-"));
  trackTempDir(dataDir);
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
  track(child);
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

/** A client's TLS credentials: the cluster CA, its certificate and key. */
interface Creds {
  ca: string;
  cert: string;
  key: string;
}

/** Keep-alive connections; at most `clients` (or `writers`) requests are ever in flight at once. */
const agent = new Agent({ keepAlive: true, maxSockets: 256 });
/**
 * The secured target's keep-alive agents, one per identity, by URL origin: as a real client
 * (client-go's transport), each connection's TLS handshake is made once and then reused.
 */
const tlsAgents = new Map<string, TLSAgent>();

function tlsAgent(creds: Creds, keepAlive = true): TLSAgent {
  return new TLSAgent({
    keepAlive,
    maxSockets: keepAlive ? 256 : Number.POSITIVE_INFINITY,
    ca: creds.ca,
    cert: creds.cert,
    key: creds.key,
  });
}

/** `https://…` through the workload identity's agent (or `as`), `http://…` through the plain one. */
function send(url: string, options: { method?: string; headers?: Record<string, string>; agent?: Agent }) {
  if (!url.startsWith("https:"))
    return (cb: (res: IncomingMessage) => void) => httpRequest(url, { agent, ...options }, cb);
  const tls = options.agent ?? tlsAgents.get(url.slice(0, url.indexOf("/", 8)));
  return (cb: (res: IncomingMessage) => void) => httpsRequest(url, { ...options, agent: tls }, cb);
}

function call(
  method: string,
  url: string,
  body?: unknown,
  contentType = "application/json",
  as?: Agent,
  retried = false,
): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const payload = body === undefined ? undefined : JSON.stringify(body);
    const headers: Record<string, string> = payload ? { "Content-Type": contentType } : {};
    const req = send(url, { method, headers, agent: as })((res) => {
      const chunks: Buffer[] = [];
      res.on("data", (c: Buffer) => chunks.push(c));
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString() }));
      res.on("error", reject);
    });
    req.on("error", (err: NodeJS.ErrnoException) => {
      // The server closes a keep-alive connection idle for 5 s; a request sent on it just then
      // is reset before the server read it. Node's documented remedy: send it again, once.
      if (req.reusedSocket && err.code === "ECONNRESET" && !retried)
        call(method, url, body, contentType, as, true).then(resolve, reject);
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
  as?: Agent,
): Promise<Reply> {
  const r = await call(method, url, body, type, as);
  if (r.status !== want) throw new Error(`${method} ${url}: ${r.status} ${r.body.slice(0, 300)}`);
  return r;
}

// ---- figures ----

const typePrefix = '{"type":"';
const seqMarker = '"bench/seq":"';
const sentMarker = '"bench/sent":"';
const rvMarker = '"resourceVersion":"';

/** The JSON string value that follows `marker` in `line` ("" when absent). */
function field(line: string, marker: string): string {
  const i = line.indexOf(marker);
  if (i < 0) return "";
  const from = i + marker.length;
  return line.slice(from, line.indexOf('"', from));
}

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
  /** The API server's CPU time per pod created (µs): steadier than the rate on a shared machine. */
  serverCpuUsPerPod: number;
}

const nsName = (i: number) => `bench-${i}`;
const benchNamespaces = () => [
  ...Array.from({ length: opts.namespaces }, (_, i) => nsName(i)),
  "bench-watch",
];

type Creates = { one: CreateResult; many: CreateResult; stages?: StageCosts };

/**
 * The namespaces (and the secured target's bindings), then the creates: first `--creates1` by
 * one client, then the rest by `--clients`. Each phase runs in rounds that alternate between the
 * targets, as the lists do, so that a change of the machine's load hits them all alike.
 */
async function populate(targets: Target[]): Promise<Map<string, Creates>> {
  for (const t of targets) {
    if (t.tls) await secureSetup(t);
    else
      for (const ns of benchNamespaces())
        await must(201, "POST", `${t.url}/api/v1/namespaces`, { metadata: { name: ns } });
  }
  const create = (t: Target) => async (i: number) => {
    const ns = nsName(i % opts.namespaces);
    await must(201, "POST", `${t.url}/api/v1/namespaces/${ns}/pods`, pod(ns, `pod-${i}`, i));
  };
  const phase = async (clients: number, first: number, count: number) => {
    progress(
      `creating ${count} pods per target with ${clients} client(s), in rounds alternating between the targets`,
    );
    const rounds = Math.min(8, count);
    const acc = new Map(targets.map((t) => [t.name, { samples: [] as number[], seconds: 0 }]));
    const cpu0 = new Map(targets.map((t) => [t.name, cpuSeconds(t.pid) ?? Number.NaN]));
    for (let r = 0; r < rounds; r++) {
      const from = first + Math.floor((count * r) / rounds);
      const to = first + Math.floor((count * (r + 1)) / rounds);
      for (const t of r % 2 === 0 ? targets : [...targets].reverse()) {
        const done = await concurrently(clients, to - from, (i) => create(t)(from + i));
        const a = acc.get(t.name) as { samples: number[]; seconds: number };
        a.samples.push(...done.samples);
        a.seconds += done.seconds;
      }
    }
    return new Map(
      targets.map((t) => {
        const a = acc.get(t.name) as { samples: number[]; seconds: number };
        const cpu = (cpuSeconds(t.pid) ?? Number.NaN) - (cpu0.get(t.name) as number);
        const result: CreateResult = {
          clients,
          podsPerSec: a.samples.length / a.seconds,
          serverCpuUsPerPod: (cpu * 1e6) / a.samples.length,
          ...latency(a.samples),
        };
        return [t.name, result];
      }),
    );
  };
  const one = await phase(1, 0, opts.creates1);
  const before = new Map(
    await Promise.all(targets.map(async (t) => [t.name, await stageSnapshot(t)] as const)),
  );
  const many = await phase(opts.clients, opts.creates1, opts.pods - opts.creates1);
  const out = new Map<string, Creates>();
  for (const t of targets)
    out.set(t.name, {
      one: one.get(t.name) as CreateResult,
      many: many.get(t.name) as CreateResult,
      stages: await stageCosts(t, before.get(t.name)),
    });
  return out;
}

// ---- the secured target: PKI, RBAC bindings, stage costs ----

/** The workload's identity on the secured target: a tenant-like user, not system:masters. */
const loadgenUser = "bench-loadgen";
const loadgenGroup = "bench:loadgen";

/**
 * The secured target's PKI, made in this process (code/pki, as `npm run pki`): a CA, the
 * serving certificate, the admin (O=system:masters, for the setup only) and the workload's
 * client certificate. RSA-2048, kubeadm's default.
 */
async function makePKI(dir: string): Promise<{ files: Record<string, string>; client: Creds; admin: Creds }> {
  const now = new Date();
  const ca = await newCertificateAuthority("kubernetes", "RSA-2048", now);
  const issue = async (commonName: string, organization: string[], server: boolean) => {
    const key = await newPrivateKey("RSA-2048");
    const cert = await newSignedCert(
      {
        commonName,
        organization,
        altNames: server ? { dnsNames: ["localhost"], ips: ["127.0.0.1", "::1"] } : { dnsNames: [], ips: [] },
        usages: [server ? "serverAuth" : "clientAuth"],
      },
      key,
      ca,
      now,
    );
    return { cert: encodeCertPEM(cert), key: encodePrivateKeyPEM(key) };
  };
  const caPEM = encodeCertPEM(ca.cert);
  const serving = await issue("kube-apiserver", [], true);
  const admin = await issue("kubernetes-admin", ["system:masters"], false);
  const client = await issue(loadgenUser, [loadgenGroup], false);
  const files = {
    ca: join(dir, "ca.crt"),
    servingCert: join(dir, "apiserver.crt"),
    servingKey: join(dir, "apiserver.key"),
  };
  writeFileSync(files.ca, caPEM);
  writeFileSync(files.servingCert, serving.cert);
  writeFileSync(files.servingKey, serving.key, { mode: 0o600 });
  return { files, client: { ca: caPEM, ...client }, admin: { ca: caPEM, ...admin } };
}

/**
 * As the admin: the namespaces, and `--rolebindings` RoleBindings spread over them. One per
 * namespace grants the workload `edit` there — its writes are authorized by those; the rest
 * grant `edit`, `view` or `admin` to other (tenant) users and are never the workload's. Its
 * cluster-wide reads (lists of all pods, the watches) need a ClusterRoleBinding: `view` to its
 * group, as a monitoring or CI identity holds. Then waits until the RBAC index has them all.
 */
async function secureSetup(t: Target): Promise<void> {
  const admin = tlsAgent((t.tls as { admin: Creds }).admin);
  const namespaces = benchNamespaces();
  for (const ns of namespaces)
    await must(201, "POST", `${t.url}/api/v1/namespaces`, { metadata: { name: ns } }, undefined, admin);
  const rbac = `${t.url}/apis/rbac.authorization.k8s.io/v1`;
  await must(
    201,
    "POST",
    `${rbac}/clusterrolebindings`,
    {
      metadata: { name: "bench-loadgen-view" },
      roleRef: { apiGroup: "rbac.authorization.k8s.io", kind: "ClusterRole", name: "view" },
      subjects: [{ apiGroup: "rbac.authorization.k8s.io", kind: "Group", name: loadgenGroup }],
    },
    undefined,
    admin,
  );
  const total = Math.max(opts.roleBindings, namespaces.length);
  progress(`${t.name}: ${total} RoleBindings over ${namespaces.length} namespaces`);
  const roles = ["edit", "view", "admin"];
  await concurrently(opts.clients, total, async (i) => {
    const ns = namespaces[i % namespaces.length];
    const mine = i < namespaces.length;
    await must(
      201,
      "POST",
      `${rbac}/namespaces/${ns}/rolebindings`,
      {
        metadata: { name: mine ? "bench-loadgen-edit" : `tenant-${i}` },
        roleRef: {
          apiGroup: "rbac.authorization.k8s.io",
          kind: "ClusterRole",
          name: mine ? "edit" : roles[i % roles.length],
        },
        subjects: [
          { apiGroup: "rbac.authorization.k8s.io", kind: "User", name: mine ? loadgenUser : `tenant-${i}` },
        ],
      },
      undefined,
      admin,
    );
  });
  // The bindings reach the authorizer through its informer; and ServiceAccount admission refuses
  // a pod until its namespace's `default` service account exists. Wait for both.
  for (const ns of namespaces)
    for (let tries = 0; ; tries++) {
      const review = await call("POST", `${t.url}/apis/authorization.k8s.io/v1/selfsubjectaccessreviews`, {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SelfSubjectAccessReview",
        spec: { resourceAttributes: { namespace: ns, verb: "create", resource: "pods" } },
      });
      const sa = await call(
        "GET",
        `${t.url}/api/v1/namespaces/${ns}/serviceaccounts/default`,
        undefined,
        undefined,
        admin,
      );
      const allowed =
        review.status === 201 &&
        (JSON.parse(review.body) as { status?: { allowed?: boolean } }).status?.allowed;
      if (allowed && sa.status === 200) break;
      if (tries > 100)
        throw new Error(
          `${t.name}: ${loadgenUser} still cannot create pods in ${ns}: ${review.body.slice(0, 300)}`,
        );
      await new Promise((r) => setTimeout(r, 50));
    }
  admin.destroy();
}

/** What the child answers to "stats": its stage counters, and its CPU time (user + system, µs). */
interface ChildStats {
  stages: StageTotals;
  cpuUs: number;
}

/** This process's CPU time so far, user + system, in µs. */
function cpuUsNow(): number {
  const { user, system } = process.cpuUsage();
  return user + system;
}

/** One stage's cost over a phase: per request, and its share of the server's CPU per request. */
interface StageCosts {
  /** Requests that passed authentication in the phase (every request on the secure port). */
  requests: number;
  /** The server process's CPU time per request (µs). */
  serverCpuUsPerRequest: number;
  /** CPU µs in the stage per request, its share of the server's CPU per request, and wall µs. */
  perStage: Record<Stage, { usPerRequest: number; share: number; wallUsPerRequest: number }>;
}

async function stageSnapshot(t: Target): Promise<ChildStats | undefined> {
  return t.stats?.();
}

async function stageCosts(t: Target, before: ChildStats | undefined): Promise<StageCosts | undefined> {
  const after = await stageSnapshot(t);
  if (!before || !after) return undefined;
  const requests = after.stages.authn.calls - before.stages.authn.calls;
  const cpuUs = (after.cpuUs - before.cpuUs) / requests;
  const perStage = {} as StageCosts["perStage"];
  for (const stage of ["authn", "authz", "admission"] as const) {
    const us = (after.stages[stage].cpuUs - before.stages[stage].cpuUs) / requests;
    const wall = (after.stages[stage].ns - before.stages[stage].ns) / 1000 / requests;
    perStage[stage] = { usPerRequest: us, share: us / cpuUs, wallUsPerRequest: wall };
  }
  return { requests, serverCpuUsPerRequest: cpuUs, perStage };
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

/** Per target: a listed pod's size in bytes (JSON) — admission's defaults make a pod larger. */
const bytesPerPod = new Map<string, number>();

async function timedList(t: Target, kind: ListKind): Promise<number> {
  const t0 = performance.now();
  const r = await must(200, "GET", listURL[kind](t));
  const ms = performance.now() - t0;
  const items = (JSON.parse(r.body) as { items: unknown[] }).items.length;
  bytesPerPod.set(t.name, Buffer.byteLength(r.body) / items);
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
  /** Watches the server closed before the end (too far behind); each was re-watched. */
  closed: number;
  /** ERROR events: a re-watch the watch cache could no longer serve (410 Gone, reason Expired). */
  errors: number;
  /** The API server's CPU time during the churn, per 1,000 events delivered (ms). */
  serverCpuMsPer1000: number;
  /** This process's (the watchers' and writers') CPU time, per 1,000 events delivered (ms). */
  clientCpuMsPer1000: number;
  seconds: number;
  eventsPerSec: number;
  writes: Latency & { perSec: number };
  /** From the write's response to the watcher's receipt (0 when the event came first). */
  fromResponse: Latency;
  /** Events that reached a watcher before their write's response reached the writer. */
  beforeResponse: number;
  /** From the send time in the object's annotation to the watcher's receipt. */
  fromSend: Latency;
  /** The secured target: what its gates cost during the churn (writes; watches were opened before). */
  stages?: StageCosts;
}

async function watchFanOut(t: Target): Promise<WatchResult> {
  const { churn } = opts;
  const count = t.name === "no-cache" ? Math.min(opts.watchers, opts.refWatchers) : opts.watchers;
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
  let lastReceipt = 0;
  /** Set before the benchmark closes the watches itself, so that is not counted as an early end. */
  let finished = false;
  let allDone: () => void = () => {};
  const done = new Promise<void>((resolve) => {
    allDone = resolve;
  });
  const expected = count * churn;

  /** Per watcher: the resourceVersion of the last event it received, where a re-watch starts. */
  const lastRv: string[] = new Array(count).fill(start.metadata.resourceVersion);
  let closed = 0;
  let errors = 0;
  /** Watchers that got an ERROR (410): their watch cannot be resumed. */
  const gone = new Uint8Array(count);

  // Pacing: one client process reads all the watches, and on two shared cores it cannot read
  // 1,000 sockets as fast as 16 writers can write; unpaced, it falls further behind with every
  // write until the server closes its watches (rightly: a real watcher that far behind is
  // stuck). So the churn is paced to the slowest watcher: write N is sent only once every watcher
  // has received write N − lag. The figures are then those of the rate the fan-out sustains.
  /** Per write: how many watchers have received its event. */
  const receivedBy = new Uint32Array(churn);
  const pacedOn = new Map<number, () => void>();
  const paced = (seq: number): Promise<void> | undefined => {
    const behind = seq - opts.lag;
    if (behind < 0 || receivedBy[behind] >= count - errors) return undefined;
    // A lost event would hold the writers for ever: after 10 s they go on, and the loss shows.
    return new Promise<void>((resolve) => {
      pacedOn.set(behind, resolve);
      setTimeout(resolve, 10_000).unref();
    });
  };
  const releasePaced = () => {
    if (pacedOn.size === 0) return;
    for (const [behind, resolve] of pacedOn)
      if (receivedBy[behind] >= count - errors) {
        pacedOn.delete(behind);
        resolve();
      }
  };

  const origin = now();
  const onEvent = (w: number, buf: Buffer, start: number, end: number) => {
    const at = now();
    // A line is `{"type":"…","object":{…}}`; ten million of them are read here, so only the
    // fields the benchmark needs are cut out — no JSON.parse.
    // Latin-1 keeps one byte per character: the markers and digits read the same as in UTF-8.
    const line = buf.toString("latin1", start, end);
    if (!line.startsWith(typePrefix)) throw new Error(`watch ${w}: not a watch event: ${line.slice(0, 200)}`);
    const type = field(line, typePrefix);
    if (type === "BOOKMARK") return;
    if (type === "ERROR") {
      errors++; // a re-watch too old for the watch cache (410): this watcher's later events are lost
      gone[w] = 1;
      releasePaced(); // and the pacing no longer waits for it
      return;
    }
    const seq = Number(field(line, seqMarker));
    const sent = Number(field(line, sentMarker));
    lastRv[w] = field(line, rvMarker);
    const slot = w * churn + seq;
    if (seen[slot]) {
      duplicates++;
      return;
    }
    fromSend[slot] = at - sent;
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
    if (++receivedBy[seq] >= count - errors) releasePaced();
    if (++delivered === expected) allDone();
  };

  // Each watch: a chunked response read line by line. Headers arrive once the storage watch is
  // registered, so after they all arrived no event can be missed. A watch the server ends early
  // (a watcher too far behind is closed) is opened again from its last resourceVersion, as a
  // reflector does.
  const watchAgent = t.tls
    ? tlsAgent(t.tls.client, false)
    : new Agent({ keepAlive: false, maxSockets: Number.POSITIVE_INFINITY });
  const responses: IncomingMessage[] = [];
  const open = (w: number) =>
    new Promise<void>((resolve, reject) => {
      const url = `${base}?watch=true&resourceVersion=${lastRv[w]}&allowWatchBookmarks=false`;
      const req = send(url, { agent: watchAgent })((res) => {
        if (res.statusCode !== 200) return reject(new Error(`watch ${w}: ${res.statusCode}`));
        responses.push(res);
        let rest: Buffer | undefined; // an event cut in two by the chunking waits for its end
        res.on("data", (chunk: Buffer) => {
          const buf = rest ? Buffer.concat([rest, chunk]) : chunk;
          let start = 0;
          for (let nl = buf.indexOf(10); nl >= 0; nl = buf.indexOf(10, start)) {
            if (nl > start) onEvent(w, buf, start, nl);
            start = nl + 1;
          }
          rest = start < buf.length ? buf.subarray(start) : undefined;
        });
        res.on("end", () => {
          if (finished || gone[w]) return;
          closed++;
          progress(
            `${t.name}: watch ${w} closed by the server at resourceVersion ${lastRv[w]}; watching again`,
          );
          open(w).catch((e: Error) => progress(`${t.name}: watch ${w} could not resume: ${e.message}`));
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
  const stages0 = await stageSnapshot(t);
  const serverCpu0 = cpuSeconds(t.pid);
  const clientCpu0 = process.cpuUsage();
  const ticker = setInterval(
    () => progress(`${t.name}: ${delivered}/${expected} events delivered`),
    5000,
  ).unref();
  // Creates first, then the updates: an update sent while its create is still in flight would 404.
  // Each write waits until every watcher has the event of the write `--lag` before it.
  const writeSamples: number[] = [];
  const timed = async (write: () => Promise<unknown>) => {
    const t = performance.now();
    await write();
    writeSamples.push(performance.now() - t);
  };
  const createPhase = await concurrently(opts.writers, creates, async (seq) => {
    await paced(seq);
    await timed(() => must(201, "POST", base, pod("bench-watch", `churn-${seq}`, seq)));
    respAt[seq] = now();
  });
  const updatePhase = await concurrently(opts.writers, churn - creates, async (j) => {
    const seq = creates + j;
    await paced(seq);
    const patch = { metadata: { annotations: { "bench/seq": String(seq), "bench/sent": String(now()) } } };
    await timed(() => must(200, "PATCH", `${base}/churn-${j}`, patch, "application/merge-patch+json"));
    respAt[seq] = now();
  });
  const writes = { samples: writeSamples, seconds: createPhase.seconds + updatePhase.seconds };

  // Wait for the last events; give up after 10 s without progress.
  let before = -1;
  while (delivered < expected && delivered !== before) {
    before = delivered;
    await Promise.race([done, new Promise((r) => setTimeout(r, 10_000))]);
  }
  clearInterval(ticker);
  const serverCpu = (cpuSeconds(t.pid) ?? Number.NaN) - (serverCpu0 ?? Number.NaN);
  const clientCpu = process.cpuUsage(clientCpu0);
  const stages = await stageCosts(t, stages0);
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
    closed,
    errors,
    seconds,
    serverCpuMsPer1000: (serverCpu * 1e6) / delivered,
    clientCpuMsPer1000: ((clientCpu.user + clientCpu.system) / 1000 / delivered) * 1000,
    eventsPerSec: delivered / seconds,
    writes: { ...latency(writes.samples), perSec: churn / writes.seconds },
    fromResponse: latency(received(fromResponse)),
    beforeResponse,
    fromSend: latency(received(fromSend)),
    stages,
  };
}

// ---- the run ----

/**
 * The secured target: HTTPS only (`--secure-port`), x509 client certificates
 * (`--client-ca-file`), `--authorization-mode=Node,RBAC` and the default admission plugins,
 * with the watch cache on — the "cache" target behind the gates a real cluster has.
 */
async function startSecured(): Promise<Target> {
  const dir = mkdtempSync(join(tmpdir(), "apiserver-bench-pki-"));
  trackTempDir(dir);
  progress("secured: making its PKI (CA, serving, admin and workload certificates)");
  const pki = await makePKI(dir);
  const options: APIServerOptions & { stageTiming: boolean } = {
    watchCache: true,
    securePort: 0,
    secureServing: { tlsCertFile: pki.files.servingCert, tlsPrivateKeyFile: pki.files.servingKey },
    authentication: { clientCAFile: pki.files.ca },
    authorizationModes: ["Node", "RBAC"],
    admission: {},
    stageTiming: true,
  };
  const t = await startTarget("secured", options, true, { client: pki.client, admin: pki.admin });
  tlsAgents.set(t.url, tlsAgent(pki.client));
  return t;
}

interface TargetResult {
  creates: { one: CreateResult; many: CreateResult; stages?: StageCosts };
  /** A pod's size in the lists (JSON bytes). */
  bytesPerPod?: number;
  /** The secured target: what its gates cost during the lists and gets. */
  readStages?: StageCosts;
  lists: Record<ListKind, Latency>;
  get: Latency;
  watch?: WatchResult;
}

async function main(): Promise<void> {
  const targets: Target[] = [];
  let etcd: { endpoint: string; close(): Promise<void> } | undefined;
  try {
    progress("starting API servers (embedded in-memory store; watch cache on, then off)");
    if (wanted("cache")) targets.push(await startTarget("cache", { watchCache: true }, true));
    // The secured target next to the one it is compared with: their watch fan-outs run one after the other.
    if (wanted("secured")) targets.push(await startSecured());
    if (wanted("no-cache")) targets.push(await startTarget("no-cache", { watchCache: false }, true));
    if (useEtcd && wanted("etcd")) {
      progress(`starting real etcd (${etcdBinary}) and an API server on it`);
      etcd = await startRealEtcd();
      targets.push(await startTarget("etcd", { etcdServers: [etcd.endpoint], watchCache: true }, false));
    } else if (!process.argv.includes("--no-etcd")) {
      progress(`real etcd not found (${etcdBinary}) — embedded store only`);
    }

    const results = new Map<string, TargetResult>();
    const partial = new Map<string, Partial<TargetResult>>();
    const creates = await populate(targets);
    for (const t of targets) partial.set(t.name, { creates: creates.get(t.name) as Creates });

    const reads0 = new Map(
      await Promise.all(targets.map(async (t) => [t.name, await stageSnapshot(t)] as const)),
    );
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
        readStages: await stageCosts(t, reads0.get(t.name)),
        bytesPerPod: bytesPerPod.get(t.name),
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
  const cache = results.get("cache");
  const noCache = results.get("no-cache");
  const ratio = (a: number | undefined, b: number | undefined) => (a && b ? a / b : undefined);
  const sameWatchers = cache?.watch?.watchers === noCache?.watch?.watchers;
  /** What the cacher buys: how many times faster (or more) with it than without. */
  const cacherBuys = {
    listRV0P50: ratio(noCache?.lists.clusterCache.p50Ms, cache?.lists.clusterCache.p50Ms),
    listRV0P99: ratio(noCache?.lists.clusterCache.p99Ms, cache?.lists.clusterCache.p99Ms),
    listUnsetP50: ratio(noCache?.lists.clusterEtcd.p50Ms, cache?.lists.clusterEtcd.p50Ms),
    watchCpuPerEvent: ratio(noCache?.watch?.serverCpuMsPer1000, cache?.watch?.serverCpuMsPer1000),
    // Latencies compare only at the same number of watchers (`--ref-watchers` may cap no-cache's).
    watchLatencyP50: sameWatchers
      ? ratio(noCache?.watch?.fromResponse.p50Ms, cache?.watch?.fromResponse.p50Ms)
      : undefined,
    watchLatencyP99: sameWatchers
      ? ratio(noCache?.watch?.fromResponse.p99Ms, cache?.watch?.fromResponse.p99Ms)
      : undefined,
  };
  const checks = sloChecks(results);
  const secured = securedVsInsecure(results, checks);
  const losses = [...results].filter(([, r]) => r.watch && (r.watch.lost > 0 || r.watch.duplicates > 0));

  if (json) {
    console.log(
      JSON.stringify({
        options: { ...opts, quick, etcd: useEtcd },
        results: Object.fromEntries(results),
        cacherBuys,
        slo: checks,
        secured,
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
  row("  server CPU µs per pod", (r) => r.creates.many.serverCpuUsPerPod);
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
  row("  bytes per pod in a list (JSON)", (r) => r.bytesPerPod);
  rows.push([`get one pod: p50 / p99 ms`, ...names.map((n) => pair(results.get(n)?.get))]);
  row(`watch fan-out, ${opts.churn} writes: watchers`, (r) => r.watch?.watchers);
  row("  events/s delivered", (r) => r.watch?.eventsPerSec);
  rows.push([
    "  latency from write response: p50 / p99 ms",
    ...names.map((n) => pair(results.get(n)?.watch?.fromResponse)),
  ]);
  rows.push([
    "  latency from send: p50 / p99 ms",
    ...names.map((n) => pair(results.get(n)?.watch?.fromSend)),
  ]);
  row("  server CPU ms per 1,000 events delivered", (r) => r.watch?.serverCpuMsPer1000, 1);
  row("  client CPU ms per 1,000 events delivered", (r) => r.watch?.clientCpuMsPer1000, 1);
  row("  events before the write's response", (r) => r.watch?.beforeResponse);
  row("  churn writes/s", (r) => r.watch?.writes.perSec);
  rows.push(["  churn writes: p50 / p99 ms", ...names.map((n) => pair(results.get(n)?.watch?.writes))]);
  row("  lost / duplicate events", (r) => r.watch?.lost);
  rows[rows.length - 1] = [
    rows[rows.length - 1][0],
    ...names.map((n) => {
      const w = results.get(n)?.watch;
      return w ? `${fmt(w.lost)} / ${fmt(w.duplicates)}` : "-";
    }),
  ];
  row("  watches closed by the server (re-watched)", (r) => r.watch?.closed);
  row("  ERROR events (410 on a re-watch)", (r) => r.watch?.errors);

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
  console.log("\nwhat the watch cache buys (no-cache / cache, for latency and for server CPU per event):");
  console.log(
    `  list RV=0 p50 ${x(cacherBuys.listRV0P50)}, p99 ${x(cacherBuys.listRV0P99)}; list RV unset p50 ${x(cacherBuys.listUnsetP50)}; ` +
      `watch server CPU per event ${x(cacherBuys.watchCpuPerEvent)}; watch latency p50 ${x(cacherBuys.watchLatencyP50)}, p99 ${x(cacherBuys.watchLatencyP99)}`,
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
  if (secured) printSecured(secured);
}

/** The aim of issue 12: the secured run at ≥ 0.8× the insecure run's throughput, mutating p99 ≤ 1 s. */
const aim = 0.8;

interface SecuredComparison {
  identity: string;
  ratios: { measure: string; ratio: number | undefined; pass: boolean }[];
  mutatingP99Ms: number;
  mutatingSLOPass: boolean;
  stages: { phase: string; costs: StageCosts }[];
}

function securedVsInsecure(
  results: Map<string, TargetResult>,
  checks: SLOCheck[],
): SecuredComparison | undefined {
  const s = results.get("secured");
  const c = results.get("cache");
  if (!s) return undefined;
  const r = (a: number | undefined, b: number | undefined) => (a && b ? a / b : undefined);
  // Throughput ratios: rates divide directly; for lists and gets (one at a time), 1 / latency.
  const rows: [string, number | undefined][] = [
    ["create, 1 client: pods/s", r(s.creates.one.podsPerSec, c?.creates.one.podsPerSec)],
    [`create, ${opts.clients} clients: pods/s`, r(s.creates.many.podsPerSec, c?.creates.many.podsPerSec)],
    [
      `create, ${opts.clients} clients: server pods per CPU second`,
      r(c?.creates.many.serverCpuUsPerPod, s.creates.many.serverCpuUsPerPod),
    ],
    ["list all pods, RV unset: lists/s (1 / p50)", r(c?.lists.clusterEtcd.p50Ms, s.lists.clusterEtcd.p50Ms)],
    ["list all pods, RV=0: lists/s (1 / p50)", r(c?.lists.clusterCache.p50Ms, s.lists.clusterCache.p50Ms)],
    ["list one namespace: lists/s (1 / p50)", r(c?.lists.namespace.p50Ms, s.lists.namespace.p50Ms)],
    ["get one pod: gets/s (1 / p50)", r(c?.get.p50Ms, s.get.p50Ms)],
    ["watch fan-out: events/s delivered", r(s.watch?.eventsPerSec, c?.watch?.eventsPerSec)],
    ["watch fan-out: churn writes/s", r(s.watch?.writes.perSec, c?.watch?.writes.perSec)],
    // The fan-out's rate is paced by this one client process reading every watch; the server's
    // own capacity is the inverse of its CPU time per event delivered.
    [
      "watch fan-out: server events per CPU second",
      r(c?.watch?.serverCpuMsPer1000, s.watch?.serverCpuMsPer1000),
    ],
  ];
  const mutating = checks.find((k) => k.target === "secured" && k.slo.startsWith("mutating")) as SLOCheck;
  const stages: { phase: string; costs: StageCosts }[] = [];
  if (s.creates.stages) stages.push({ phase: `create (${opts.clients} clients)`, costs: s.creates.stages });
  if (s.readStages) stages.push({ phase: "lists and gets", costs: s.readStages });
  if (s.watch?.stages) stages.push({ phase: "watch churn (writes)", costs: s.watch.stages });
  return {
    identity:
      `User "${loadgenUser}" (groups ${loadgenGroup}, system:authenticated) from its client certificate: ` +
      `its writes allowed by the RoleBinding bench-loadgen-edit (ClusterRole edit) in each bench namespace — ` +
      `one of the ${Math.max(opts.roleBindings, opts.namespaces + 1)} RoleBindings — and its cluster-wide lists and watches ` +
      `by the ClusterRoleBinding bench-loadgen-view (ClusterRole view, to its group), as a tenant with ` +
      `cluster-wide read holds; not system:masters, whose ClusterRoleBinding would allow at the first rule`,
    ratios: rows.map(([measure, ratio]) => ({ measure, ratio, pass: ratio !== undefined && ratio >= aim })),
    mutatingP99Ms: mutating.p99Ms,
    mutatingSLOPass: mutating.pass,
    stages,
  };
}

function printSecured(sc: SecuredComparison): void {
  console.log(
    `\nsecured = HTTPS, x509 client certificates, --authorization-mode=Node,RBAC with ${Math.max(opts.roleBindings, opts.namespaces + 1)} RoleBindings over ${opts.namespaces + 1} namespaces (plus the bootstrap policy), the default admission plugins; keep-alive TLS clients`,
  );
  console.log(`identity: ${sc.identity}`);
  console.log(`\nsecured / insecure (cache, AlwaysAllow) — throughput, aim ≥ ${aim}×:`);
  const rows = [["measure", "secured / cache", "verdict"]];
  for (const r of sc.ratios)
    rows.push([
      r.measure,
      r.ratio === undefined ? "-" : `${fmt(r.ratio, 2)}×`,
      r.ratio === undefined ? "-" : r.pass ? "PASS" : "FAIL",
    ]);
  rows.push([
    "secured mutating p99 ≤ 1 s (SLO)",
    `${fmt(sc.mutatingP99Ms, 0)} ms`,
    sc.mutatingSLOPass ? "PASS" : "FAIL",
  ]);
  table(rows);
  console.log(
    "\nsecured: cost of each stage inside the server (CPU time in the stage per request, and its share of the server's CPU time per request):",
  );
  const stageRows = [
    ["phase", "requests", "authn µs/req", "authz µs/req", "admission µs/req", "server CPU µs/req"],
  ];
  for (const { phase, costs } of sc.stages) {
    const cell = (st: Stage) =>
      `${fmt(costs.perStage[st].usPerRequest, 1)} (${fmt(costs.perStage[st].share * 100, 1)}%)`;
    stageRows.push([
      phase,
      fmt(costs.requests),
      cell("authn"),
      cell("authz"),
      cell("admission"),
      fmt(costs.serverCpuUsPerRequest, 0),
    ]);
  }
  table(stageRows);
  for (const { phase, costs } of sc.stages)
    for (const st of ["authn", "authz", "admission"] as const)
      console.log(
        `stage ${st} (${phase}): ${fmt(costs.perStage[st].usPerRequest, 1)} µs/request, ${fmt(costs.perStage[st].share * 100, 1)}% of server CPU per request`,
      );
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
  runBenchmark("API server", main);
}

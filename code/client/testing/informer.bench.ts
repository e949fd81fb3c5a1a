/**
 * Informer benchmark — the course's SharedIndexInformer (newSharedInformerFactory over the
 * clientset, three handlers) beside @kubernetes/client-node's makeInformer (three listeners per
 * event type), on one API server in one run: time to sync a list of `--pods` (10,000) pods,
 * events/s processed over `--changes` (10,000) creates/updates/deletes after the sync, and heap
 * bytes per cached object. The aim (issue 13): ours ≥ 1.0× client-node's events/s, PASS/FAIL.
 *
 * @upstream kubernetes/client-go tools/cache/shared_informer.go (sharedIndexInformer: the informer measured)
 * @upstream kubernetes-client/javascript src/informer.ts (makeInformer: the reference)
 *
 * How, and why so:
 * - The API server is a child process running code/cmd/kube-apiserver.ts (`--insecure-port 0`,
 *   plain HTTP, AlwaysAllow, no admission, `--v 0`), so the informers in this process never share
 *   its thread; code/client/ may not import code/apiserver/, and does not.
 * - All writes come from a second child (this file with `--write`): first the fill of `--pods`
 *   pods, before either informer starts; then the `--changes` changes — a third each of creates
 *   of new pods, merge-patches of a label, and deletes — from `--writers` (8) concurrent clients.
 * - Sync is measured one informer after the other (ours, then theirs, each alone on an idle
 *   server), so each sync time and each heap delta (after a forced GC; `--expose-gc` is switched on
 *   at start-up through v8.setFlagsFromString) belongs to one informer only.
 * - The changes are then seen by both informers at the same time, on the same stream: each has
 *   its own watch on the one server, both live in this process, so machine noise hits both alike.
 *   The changes are written while this process's event loop is blocked (spawnSync of the writer
 *   child), so neither informer reads during the writes; then both drain the same queued events,
 *   interleaved on one thread. This is what makes events/s the informer's rate and not the
 *   writer's (a few hundred writes/s here): for that the server runs with `--watch-cache=false`,
 *   whose store-backed watch holds a stalled watcher's events (the watch cache, 100 events by
 *   default, would close it and answer its re-watch with 410, and both would relist). `--live`
 *   writes while both watch instead, with the watch cache on: then both rates are the writer's.
 *   Each handler counts its events and stamps the first and the last (events are counted, so
 *   the writes may come from elsewhere); events/s = (events − 1) / (last − first).
 * Flags: --pods N (10000), --changes N (10000), --writers N (8), --live, --quick (a few seconds:
 * 60 pods, 60 changes), --json (one JSON object on stdout; progress always goes to stderr).
 * `npm run bench -- informer` runs the benchmark's second half right after this one: the
 * ReplicaSet controller (code/controllers/testing/replica-set.bench.ts; scripts/bench.ts `halves`).
 *
 * @chapter 04-informers
 */
import { spawn, spawnSync } from "node:child_process";
import { Agent, request } from "node:http";
import { fileURLToPath } from "node:url";
import { setFlagsFromString } from "node:v8";
import { runInNewContext } from "node:vm";
import { CoreV1Api, KubeConfig, makeInformer, type V1Pod } from "@kubernetes/client-node";
import type { Pod } from "../../api/core.ts";
import { quickMode, sizeFlag } from "../../testing/bench-flags.ts";
import {
  progress,
  repoRoot as root,
  runBenchmark,
  startInsecureAPIServerChild,
  stopChild,
  track,
} from "../../testing/child-process.ts";
import { newSharedInformerFactory, Resources } from "../informers/factory.ts";
import { newForConfig } from "../kubernetes/clientset.ts";

const quick = quickMode();
const json = process.argv.includes("--json");
/** `--live`: the changes arrive as they are written (writer-paced), not as one burst. */
const live = process.argv.includes("--live");

const opts = {
  pods: sizeFlag("pods", 10000, 60),
  changes: sizeFlag("changes", 10000, 60),
  writers: sizeFlag("writers", 8, 4),
};
const ns = "bench-informer";

// ---- the changes: a third creates, a third label patches, a third deletes ----

type Change = { op: "create" | "patch" | "delete"; name: string; v: number };

/** Change i: deletes take pod-0, pod-1, …; patches the pods above the deleted ones; creates new names. */
function changes(pods: number, n: number): Change[] {
  const out: Change[] = [];
  const deletes = Math.floor(n / 3);
  let d = 0;
  for (let i = 0; i < n; i++) {
    if (i % 3 === 0) out.push({ op: "create", name: `new-${i}`, v: i });
    else if (i % 3 === 1) out.push({ op: "patch", name: `pod-${deletes + (i % (pods - deletes))}`, v: i });
    else out.push({ op: "delete", name: `pod-${d++}`, v: i });
  }
  return out;
}

const pod = (name: string, v: number): Pod =>
  ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns, labels: { app: "bench", v: String(v) } },
    spec: { containers: [{ name: "c", image: "nginx:1.27" }] },
  }) as Pod;

// ---- the writer child: `--write <url> fill|churn` ----

async function writer(url: string, phase: string): Promise<void> {
  const agent = new Agent({ keepAlive: true, maxSockets: opts.writers });
  const call = (method: string, path: string, body: unknown, type = "application/json") =>
    new Promise<{ status: number; body: string }>((resolve, reject) => {
      const payload = body === undefined ? undefined : JSON.stringify(body);
      const req = request(
        `${url}${path}`,
        {
          method,
          agent,
          headers: payload ? { "Content-Type": type, "Content-Length": Buffer.byteLength(payload) } : {},
        },
        (res) => {
          let text = "";
          res.setEncoding("utf8").on("data", (c: string) => {
            text += c;
          });
          res.on("end", () => resolve({ status: res.statusCode ?? 0, body: text }));
        },
      );
      req.on("error", reject);
      req.end(payload);
    });
  const base = `/api/v1/namespaces/${ns}/pods`;
  const work: (() => Promise<{ status: number; body: string }>)[] = [];
  if (phase === "fill") {
    await call("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name: ns } });
    for (let i = 0; i < opts.pods; i++) work.push(() => call("POST", base, pod(`pod-${i}`, 0)));
  } else {
    for (const c of changes(opts.pods, opts.changes))
      work.push(() =>
        c.op === "create"
          ? call("POST", base, pod(c.name, c.v))
          : c.op === "patch"
            ? call(
                "PATCH",
                `${base}/${c.name}`,
                { metadata: { labels: { v: String(c.v) } } },
                "application/merge-patch+json",
              )
            : call("DELETE", `${base}/${c.name}`, { gracePeriodSeconds: 0 }),
      );
  }
  const t0 = performance.now();
  let next = 0;
  await Promise.all(
    Array.from({ length: opts.writers }, async () => {
      while (next < work.length) {
        const { status, body } = await work[next++]();
        if (status >= 300) throw new Error(`${phase}: HTTP ${status}: ${body.slice(0, 300)}`);
      }
    }),
  );
  const secs = (performance.now() - t0) / 1000;
  process.stdout.write(`${JSON.stringify({ writes: work.length, perSec: work.length / secs })}\n`);
  agent.destroy();
}

// ---- the API server child (code/testing/child-process.ts kills it on every exit path) ----

/** Burst mode serves watches from the store (no watch cache), which holds a stalled watcher's
 * events until it reads them; the watch cache would close it and answer its re-watch with 410. */
const startAPIServerChild = () => startInsecureAPIServerChild(live ? [] : ["--watch-cache=false"]);

async function runWriter(url: string, phase: string): Promise<{ writes: number; perSec: number }> {
  const self = fileURLToPath(import.meta.url);
  const args = ["--import", "tsx", self, "--write", url, phase, ...process.argv.slice(2)];
  const child = track(spawn(process.execPath, args, { cwd: root, stdio: ["ignore", "pipe", "pipe"] }));
  let out = "";
  let err = "";
  child.stdout?.setEncoding("utf8").on("data", (c: string) => {
    out += c;
  });
  child.stderr?.setEncoding("utf8").on("data", (c: string) => {
    err = (err + c).slice(-4000);
  });
  const code = await new Promise<number | null>((resolve) => child.once("exit", resolve));
  if (code !== 0) throw new Error(`writer (${phase}) exited with ${code}: ${err}`);
  return JSON.parse(out.trim()) as { writes: number; perSec: number };
}

/**
 * The churn while this process's event loop is blocked (spawnSync): neither informer reads during
 * the writes, so both then meet the same 10,000 events queued on their watches, and events/s is
 * how fast each drains them — the informer's own rate, not the writer's.
 */
function runWriterBlocking(url: string): { writes: number; perSec: number } {
  const self = fileURLToPath(import.meta.url);
  const args = ["--import", "tsx", self, "--write", url, "churn", ...process.argv.slice(2)];
  const r = spawnSync(process.execPath, args, { cwd: root, encoding: "utf8", maxBuffer: 1 << 24 });
  if (r.status !== 0) throw new Error(`writer (churn) exited with ${r.status}: ${r.stderr.slice(-4000)}`);
  return JSON.parse(r.stdout.trim()) as { writes: number; perSec: number };
}

// ---- measuring ----

setFlagsFromString("--expose-gc");
const gc = runInNewContext("gc") as () => void;
function heapAfterGC(): number {
  gc();
  gc();
  return process.memoryUsage().heapUsed;
}

/** One handler's view of the changes: how many events, when the first and the last arrived. */
class Counter {
  events = 0;
  first = 0;
  last = 0;
  counting = false;
  hit(): void {
    if (!this.counting) return;
    const now = performance.now();
    if (this.events++ === 0) this.first = now;
    this.last = now;
  }
  perSec(): number {
    return this.events > 1 ? (this.events - 1) / ((this.last - this.first) / 1000) : 0;
  }
}

async function until(what: string, ok: () => boolean, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!ok()) {
    if (Date.now() > end) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

interface Side {
  syncMs: number;
  cached: number;
  bytesPerObject: number;
  handlers: { events: number; perSec: number }[];
  /** All three handlers: events / (the last event of any − the first event of any). */
  perSec: number;
}

async function main(): Promise<void> {
  if (opts.changes / 3 >= opts.pods)
    throw new Error("--changes must be under 3 × --pods (a third are deletes)");
  progress("starting kube-apiserver (child process)");
  const server = await startAPIServerChild();
  const stop = new AbortController();
  // biome-ignore lint/suspicious/noExplicitAny: client-node's informer type is generic over its list call
  let theirs: any;
  const client = newForConfig({ host: server.url, qps: -1 });
  try {
    progress(`filling ${opts.pods} pods (writer child)`);
    await runWriter(server.url, "fill");

    // Ours: sync alone, heap delta after GC.
    const oursCounters = [new Counter(), new Counter(), new Counter()];
    const h0 = heapAfterGC();
    progress("ours: syncing");
    let t = performance.now();
    const factory = newSharedInformerFactory(client, 0, { namespace: ns });
    const informer = factory.informerFor(Resources.pods);
    for (const c of oursCounters)
      informer.addEventHandler({ onAdd: () => c.hit(), onUpdate: () => c.hit(), onDelete: () => c.hit() });
    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal);
    await until("ours to cache every pod", () => informer.getIndexer().list().length >= opts.pods, 120_000);
    const oursSyncMs = performance.now() - t;
    const oursBytes = (heapAfterGC() - h0) / opts.pods;

    // Theirs: the same, alone.
    const theirsCounters = [new Counter(), new Counter(), new Counter()];
    const h1 = heapAfterGC();
    progress("client-node: syncing");
    t = performance.now();
    const kc = new KubeConfig();
    kc.loadFromOptions({
      clusters: [{ name: "c", server: server.url, skipTLSVerify: true }],
      users: [{ name: "u" }],
      contexts: [{ name: "x", cluster: "c", user: "u" }],
      currentContext: "x",
    });
    const core = kc.makeApiClient(CoreV1Api);
    theirs = makeInformer(kc, `/api/v1/namespaces/${ns}/pods`, () =>
      core.listNamespacedPod({ namespace: ns }),
    );
    for (const c of theirsCounters)
      for (const ev of ["add", "update", "delete"]) theirs.on(ev, (_o: V1Pod) => c.hit());
    await theirs.start();
    await until(
      "client-node to cache every pod",
      () => (theirs.list(ns) as V1Pod[]).length >= opts.pods,
      120_000,
    );
    const theirsSyncMs = performance.now() - t;
    const theirsBytes = (heapAfterGC() - h1) / opts.pods;

    // The changes, seen by both at once.
    for (const c of [...oursCounters, ...theirsCounters]) c.counting = true;
    progress(`${opts.changes} changes (writer child, ${opts.writers} clients); both informers watching`);
    const written = live ? await runWriter(server.url, "churn") : runWriterBlocking(server.url);
    await until(
      "every handler to see every change",
      () => [...oursCounters, ...theirsCounters].every((c) => c.events >= opts.changes),
      120_000,
    );
    const side = (counters: Counter[], syncMs: number, cached: number, bytes: number): Side => {
      const first = Math.min(...counters.map((c) => c.first));
      const last = Math.max(...counters.map((c) => c.last));
      const events = counters.reduce((n, c) => n + c.events, 0);
      return {
        syncMs,
        cached,
        bytesPerObject: bytes,
        handlers: counters.map((c) => ({ events: c.events, perSec: c.perSec() })),
        perSec: (events - counters.length) / ((last - first) / 1000),
      };
    };
    const ours = side(oursCounters, oursSyncMs, informer.getIndexer().list().length, oursBytes);
    const them = side(theirsCounters, theirsSyncMs, (theirs.list(ns) as V1Pod[]).length, theirsBytes);
    report(ours, them, written.perSec);
  } finally {
    stop.abort();
    await theirs?.stop?.();
    client.closeIdleConnections();
    await stopChild(server.child);
  }
}

function fmt(n: number, digits = 0): string {
  return n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
}

function report(ours: Side, theirs: Side, writesPerSec: number): void {
  const ratio = ours.perSec / theirs.perSec;
  const pass = ratio >= 1.0;
  if (json) {
    console.log(JSON.stringify({ options: { ...opts, quick }, ours, theirs, writesPerSec, ratio, pass }));
    return;
  }
  const rows: string[][] = [["measure", "ours", "client-node", "ours / theirs (as a rate)"]];
  rows.push([
    `sync ${opts.pods} pods: ms`,
    fmt(ours.syncMs),
    fmt(theirs.syncMs),
    `${fmt(theirs.syncMs / ours.syncMs, 2)}×`,
  ]);
  rows.push(["heap bytes per cached pod", fmt(ours.bytesPerObject), fmt(theirs.bytesPerObject), ""]);
  for (let i = 0; i < 3; i++)
    rows.push([
      `handler ${i + 1}: events/s`,
      fmt(ours.handlers[i].perSec),
      fmt(theirs.handlers[i].perSec),
      `${fmt(ours.handlers[i].perSec / theirs.handlers[i].perSec, 2)}×`,
    ]);
  rows.push(["all three handlers: events/s", fmt(ours.perSec), fmt(theirs.perSec), `${fmt(ratio, 2)}×`]);
  console.log(
    `\nInformer benchmark — ${opts.pods} pods, then ${opts.changes} changes (creates / patches / deletes) from ${opts.writers} writers; three handlers each${quick ? " (quick mode)" : ""}\n`,
  );
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const [i, r] of rows.entries()) {
    console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  "));
    if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
  }
  console.log(
    `\nwriter: ${fmt(writesPerSec)} changes/s ${live ? "(--live: when both rates are near it, the writer was the limit)" : "(written while neither informer read; then drained as a burst)"}`,
  );
  console.log(`events/s ours / client-node ≥ 1.0×: ${pass ? "PASS" : "FAIL"} (${fmt(ratio, 2)}×)`);
}

if (process.argv[2] === "--write") {
  await writer(process.argv[3], process.argv[4]);
} else {
  runBenchmark("informer", main);
}

/**
 * ReplicaSet controller benchmark — the second half of `npm run bench -- informer` (issue 13):
 * `--replicasets` (100) ReplicaSets of `--replicas` (10) each, from the first create to every
 * pod created, and to every ReplicaSet's `status.replicas` at its spec, with the
 * controller-manager at its default client rate limit (`--kube-api-qps 20 --kube-api-burst 30`)
 * and with the limit raised; printed beside the floor that limit puts on the run.
 *
 * @upstream kubernetes/kubernetes pkg/controller/replicaset/replica_set.go (ReplicaSetController: the controller measured)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/controller-manager/options/generic.go (--kube-api-qps 20, --kube-api-burst 30)
 * @upstream kubernetes/kubernetes test/integration/replicaset/replicaset_test.go (a ReplicaSet against a real API server, in-process)
 *
 * How, and why so:
 * - Two child processes per run: code/cmd/kube-apiserver.ts (plain HTTP, watch cache on) and
 *   code/cmd/kube-controller-manager.ts `--controllers replicaset-controller` with the run's
 *   `--kube-api-qps` / `--kube-api-burst`: the real command, so its one client — pod creates,
 *   Events, status writes and its informers' lists and watches — sits on one token bucket, as
 *   in the real component. This process only creates the ReplicaSets (unlimited client) and
 *   watches, with its own informers, what the controller made.
 * - Before the clock starts, one ReplicaSet of one replica in another namespace proves the
 *   controller's caches synced; then this process waits until the bucket is full again
 *   (burst / qps seconds), so every run starts with `--kube-api-burst` tokens.
 * - The clock starts at the first ReplicaSet create; "all pods" is when this process's pod
 *   informer has seen the last of replicasets × replicas pods; "all status" when every
 *   ReplicaSet it caches has `status.replicas` = `spec.replicas`.
 * - The floor: every request the controller makes takes a token, so n requests cannot finish
 *   before (n − burst) / qps seconds. The controller makes at least one create per pod and one
 *   status write per ReplicaSet (the *minimum* floor); it also writes one Event per pod
 *   (SuccessfulCreate) and a status write per sync that changed the count — counted here (the
 *   status writes as ReplicaSet updates seen, the Events listed at the end) for the *counted* floor.
 * Flags: --replicasets N (100), --replicas N (10), --qps N (20), --burst N (30), --raised-qps N
 * (10000; burst the same), --quick (a few seconds: 6 × 5), --json (one JSON object on stdout;
 * progress always goes to stderr).
 *
 * @chapter 04-informers
 */
import { loadavg } from "node:os";
import { join } from "node:path";
import type { ReplicaSet } from "../../api/apps.ts";
import type { Event, Pod } from "../../api/core.ts";
import { newSharedInformerFactory, Resources } from "../../client/informers/factory.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { quickMode, sizeFlag } from "../../testing/bench-flags.ts";
import {
  cpuSeconds,
  progress,
  repoRoot,
  runBenchmark,
  spawnScript,
  startInsecureAPIServerChild,
  stopChild,
  waitForOutput,
} from "../../testing/child-process.ts";

const quick = quickMode();
const json = process.argv.includes("--json");

const opts = {
  replicaSets: sizeFlag("replicasets", 100, 6),
  replicas: sizeFlag("replicas", 10, 5),
  qps: sizeFlag("qps", 20, 20),
  burst: sizeFlag("burst", 30, 30),
  raisedQPS: sizeFlag("raised-qps", 10000, 10000),
};
const ns = "bench-rs";
const warmupNs = "bench-rs-warmup";
const fmt = (n: number, digits = 0) =>
  n.toLocaleString("en-US", { minimumFractionDigits: digits, maximumFractionDigits: digits });
const sleep = (ms: number) => new Promise((r) => setTimeout(r, ms));

const replicaSet = (namespace: string, name: string, replicas: number): ReplicaSet =>
  ({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name, namespace },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "c", image: "nginx:1.27" }] },
      },
    },
  }) as ReplicaSet;

async function until(what: string, ok: () => boolean | Promise<boolean>, ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (!(await ok())) {
    if (Date.now() > end) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
    await sleep(10);
  }
}

// #region run
interface Run {
  label: string;
  qps: number;
  burst: number;
  /** From the first ReplicaSet create to the last pod seen by this process's informer. */
  podsMs: number;
  /** … to every ReplicaSet's status.replicas at its spec.replicas. */
  statusMs: number;
  podsPerSec: number;
  /** What the controller wrote during the run (status writes: ReplicaSet updates seen). */
  requests: { podCreates: number; statusWrites: number; events: number };
  /** (pods + one status write per ReplicaSet − burst) / qps: no controller can do better. */
  minimumFloorMs: number;
  /** (the requests counted − burst) / qps. */
  countedFloorMs: number;
  /** CPU seconds of the two children over the measured span. */
  cpu: { apiserver?: number; controllerManager?: number };
}

async function measure(label: string, qps: number, burst: number): Promise<Run> {
  const total = opts.replicaSets * opts.replicas;
  progress(`${label}: starting kube-apiserver and kube-controller-manager (child processes)`);
  const server = await startInsecureAPIServerChild();
  const client: Clientset = newForConfig({ host: server.url, qps: -1 });
  const stop = new AbortController();
  const manager = spawnScript(join(repoRoot, "code", "cmd", "kube-controller-manager.ts"), [
    `--master=${server.url}`,
    "--controllers=replicaset-controller",
    `--kube-api-qps=${qps}`,
    `--kube-api-burst=${burst}`,
    "--leader-elect=false",
    // No /healthz: a fixed 10257 would collide with another manager on this machine.
    "--secure-port=0",
  ]);
  try {
    await waitForOutput(manager, /Started 1 controller\(s\)/, "kube-controller-manager");
    for (const name of [ns, warmupNs])
      await client.coreV1.namespaces().create({ apiVersion: "v1", kind: "Namespace", metadata: { name } });

    // This process's view: pods seen, ReplicaSets at their count, status writes seen.
    const factory = newSharedInformerFactory(client, 0, { namespace: ns });
    const pods = factory.informerFor(Resources.pods);
    const sets = factory.informerFor(Resources.replicaSets);
    let t0 = 0;
    let podsAt = 0;
    let statusAt = 0;
    let statusWrites = 0;
    const atSpec = new Set<string>();
    const look = (rs: ReplicaSet) => {
      const name = rs.metadata.name ?? "";
      if ((rs.status?.replicas ?? 0) === rs.spec.replicas) atSpec.add(name);
      else atSpec.delete(name);
      if (!statusAt && atSpec.size === opts.replicaSets) statusAt = performance.now();
    };
    pods.addEventHandler({
      onAdd: () => {
        if (!podsAt && pods.getIndexer().list().length >= total) podsAt = performance.now();
      },
    });
    sets.addEventHandler({
      onAdd: (o) => look(o as ReplicaSet),
      onUpdate: (old, cur) => {
        if (old.metadata.resourceVersion !== cur.metadata.resourceVersion) statusWrites++;
        look(cur as ReplicaSet);
      },
    });
    factory.start(stop.signal);
    await factory.waitForCacheSync(stop.signal);

    // Warm-up: the controller's caches have synced once it made this pod; then a full bucket.
    await client.appsV1.replicaSets(warmupNs).create(replicaSet(warmupNs, "warmup", 1));
    await until(
      "the warm-up pod (is the controller running?)",
      async () => (await client.coreV1.pods(warmupNs).list()).items.length === 1,
      60_000,
    );
    await sleep(Math.ceil((burst / qps) * 1000) + 500);

    const cpu0 = [cpuSeconds(server.child.pid), cpuSeconds(manager.child.pid)];
    progress(`${label}: ${opts.replicaSets} ReplicaSets × ${opts.replicas} replicas`);
    const ticker = setInterval(() => {
      const secs = (performance.now() - t0) / 1000;
      progress(
        `${label}: ${fmt(pods.getIndexer().list().length)}/${fmt(total)} pods, ${atSpec.size}/${opts.replicaSets} ReplicaSets at ${opts.replicas}, ${fmt(secs, 1)} s`,
      );
    }, 5000);
    try {
      t0 = performance.now();
      let next = 0;
      await Promise.all(
        Array.from({ length: 8 }, async () => {
          while (next < opts.replicaSets) {
            const i = next++;
            await client.appsV1.replicaSets(ns).create(replicaSet(ns, `rs-${i}`, opts.replicas));
          }
        }),
      );
      const limit = Math.max(120_000, ((2 * total + opts.replicaSets) / qps) * 2000);
      await until(`all ${total} pods`, () => podsAt > 0, limit);
      await until(`every ReplicaSet at ${opts.replicas}`, () => statusAt > 0, limit);
    } finally {
      clearInterval(ticker);
    }
    const cpu1 = [cpuSeconds(server.child.pid), cpuSeconds(manager.child.pid)];
    // The Events trail the creates on the same bucket: count them once no more arrive.
    let events = -1;
    for (let quiet = 0, seen = 0; quiet < 3; ) {
      await sleep(Math.max(500, 1000 / qps + 100));
      events = (await client.coreV1.events(ns).list()).items.filter(
        (e: Event) => e.reason === "SuccessfulCreate",
      ).length;
      quiet = events === seen ? quiet + 1 : 0;
      seen = events;
    }
    const podCreates = (await client.coreV1.pods(ns).list()).items.filter((p: Pod) =>
      p.metadata.ownerReferences?.some((r) => r.kind === "ReplicaSet"),
    ).length;
    const podsMs = podsAt - t0;
    const floor = (n: number) => (Math.max(0, n - burst) / qps) * 1000;
    const diff = (i: number) =>
      cpu0[i] !== undefined && cpu1[i] !== undefined ? (cpu1[i] as number) - (cpu0[i] as number) : undefined;
    return {
      label,
      qps,
      burst,
      podsMs,
      statusMs: statusAt - t0,
      podsPerSec: total / (podsMs / 1000),
      requests: { podCreates, statusWrites, events },
      minimumFloorMs: floor(total + opts.replicaSets),
      countedFloorMs: floor(podCreates + statusWrites + events),
      cpu: { apiserver: diff(0), controllerManager: diff(1) },
    };
  } finally {
    stop.abort();
    client.closeIdleConnections();
    await stopChild(manager.child);
    await stopChild(server.child);
  }
}
// #endregion run

function report(runs: Run[], load: { start: number; end: number }): void {
  if (json) {
    console.log(JSON.stringify({ options: { ...opts, quick }, runs, loadAverage: load }));
    return;
  }
  const total = opts.replicaSets * opts.replicas;
  const s = (ms: number) => fmt(ms / 1000, 1);
  const rows: string[][] = [["measure", ...runs.map((r) => r.label)]];
  rows.push([`all ${fmt(total)} pods created: s`, ...runs.map((r) => s(r.podsMs))]);
  rows.push(["pods/s", ...runs.map((r) => fmt(r.podsPerSec, 1))]);
  rows.push([`every status.replicas = ${opts.replicas}: s`, ...runs.map((r) => s(r.statusMs))]);
  rows.push([
    `QPS floor, minimum (${fmt(total)} creates + ${opts.replicaSets} status writes): s`,
    ...runs.map((r) => s(r.minimumFloorMs)),
  ]);
  rows.push([
    "QPS floor, counted (creates + status writes + Events): s",
    ...runs.map((r) => s(r.countedFloorMs)),
  ]);
  rows.push([
    "requests counted: creates / status writes / Events",
    ...runs.map((r) => `${r.requests.podCreates} / ${r.requests.statusWrites} / ${r.requests.events}`),
  ]);
  rows.push([
    "CPU s: kube-apiserver / kube-controller-manager",
    ...runs.map(
      (r) => `${fmt(r.cpu.apiserver ?? Number.NaN, 1)} / ${fmt(r.cpu.controllerManager ?? Number.NaN, 1)}`,
    ),
  ]);
  console.log(
    `\nReplicaSet controller benchmark — ${opts.replicaSets} ReplicaSets × ${opts.replicas} replicas, from the first create${quick ? " (quick mode)" : ""}\n`,
  );
  const widths = rows[0].map((_, c) => Math.max(...rows.map((r) => r[c].length)));
  for (const [i, r] of rows.entries()) {
    console.log(r.map((cell, c) => (c === 0 ? cell.padEnd(widths[c]) : cell.padStart(widths[c]))).join("  "));
    if (i === 0) console.log(widths.map((w) => "-".repeat(w)).join("  "));
  }
  const limited = runs[0];
  console.log(
    `\nAt ${limited.qps} qps (burst ${limited.burst}) every request waits for a token: ${fmt(total)} creates + ${opts.replicaSets} status writes cannot finish under ${s(limited.minimumFloorMs)} s, and with the Events and status writes counted under ${s(limited.countedFloorMs)} s; the run took ${s(limited.statusMs)} s (${fmt((100 * limited.countedFloorMs) / limited.statusMs)}% of it the limiter's floor).`,
  );
  console.log(`load average (1 min): ${fmt(load.start, 2)} at the start, ${fmt(load.end, 2)} at the end`);
}

async function main(): Promise<void> {
  const start = loadavg()[0];
  const runs = [
    await measure(`qps ${opts.qps} / burst ${opts.burst}`, opts.qps, opts.burst),
    await measure(`raised: qps ${opts.raisedQPS} / burst ${opts.raisedQPS}`, opts.raisedQPS, opts.raisedQPS),
  ];
  report(runs, { start, end: loadavg()[0] });
}

runBenchmark("ReplicaSet controller", main);

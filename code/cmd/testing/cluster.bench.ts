/**
 * Cluster benchmark — the whole path through separate processes (etcd, kube-apiserver,
 * kube-controller-manager, kube-scheduler, and kubemark hosting the hollow nodes), beside
 * upstream's figures: `npm run bench -- cluster`.
 * Mirrors kubernetes/perf-tests clusterloader2 (testing/density: pod startup latency at 30 pods a
 * node on kubemark hollow nodes; the resource usage of the control plane's components).
 *
 * How, and why so:
 * - the cluster is LocalCluster's (code/cmd/testing/local-cluster.ts) with `etcdProcess`:
 *   code/cmd/etcd.ts as its own process (with its data dir, as a cluster runs it) and the API server given `--etcd-servers`,
 *   HTTPS, Node,RBAC, NodeRestriction, the controller-manager with
 *   `--use-service-account-credentials` (as kubeadm starts it) and the scheduler; the nodes are
 *   hollow, `--nodes` (100) of them in one kubemark process (code/cmd/kubemark.ts), each with its
 *   own identity;
 * - (a) pod startup latency: `--small-pods` (100) then `--pods` (3,000) pods created at `--rate`
 *   (50/s; 0 = all at once, 32 in flight) and watched until Running. Each pod's instants are
 *   taken here, on one clock: created = just before its POST; Running = the first watch event
 *   with phase Running. Upstream's SLI starts at metadata.creationTimestamp (whole seconds) and
 *   ends when all containers are reported started and observed via watch: ours is stricter by up
 *   to a second. Images are present on hollow nodes (kubemark preloads them): no pull is in it,
 *   as the SLO excludes pulls;
 * - (b) a Deployment scaled 0 → `--replicas` (1,000): the time from the scale request to every
 *   pod Ready (seen by a watch) and to the Deployment's readyReplicas, and per pod the time from
 *   its creation (its ADDED event) to its Ready event;
 * - (c) resident memory (VmRSS, and the peak VmHWM, from /proc/<pid>/status) of each component
 *   process once `--memory-nodes` (1,000) hollow nodes run `--memory-pods` (30,000) pods —
 *   upstream's density shape, 30 pods a node — in a cluster of its own;
 * - CPU seconds per component while each part runs (/proc/<pid>/stat): where the time goes,
 *   a figure that survives a shared machine better than wall-clock time;
 * - every child is tracked (code/testing/child-process.ts: LocalCluster's through `onProcess`,
 *   kubemark's directly) and killed on any exit; the cluster's temp dir is removed.
 * Flags: --nodes N, --small-pods N, --pods N, --replicas N, --memory-nodes N, --memory-pods N,
 * --rate R, --wait-seconds N, --only latency,deployment,memory (any of them), --quick, --json.
 *
 * @upstream kubernetes/community sig-scalability/slos/pod_startup_latency.md (the SLO: p99 ≤ 5 s, image pulls excluded, observed via watch)
 * @upstream kubernetes/perf-tests clusterloader2/pkg/measurement/common/slos/pod_startup_latency.go (pod_startup: create → running observed by watch)
 * @upstream kubernetes/kubernetes test/e2e/scalability/density.go (density30AddonResourceVerifier: kubemark memory constraints at ≤ 1,000 nodes; removed from kubernetes/kubernetes since, the scalability tests moved to perf-tests)
 * @upstream kubernetes/kubernetes cmd/kubemark/app/hollow_node.go (the hollow nodes)
 * @chapter 08-cluster
 */
import type { ChildProcess } from "node:child_process";
import { readFileSync } from "node:fs";
import { loadavg } from "node:os";
import { join } from "node:path";
import type { Deployment } from "../../api/apps.ts";
import type { Pod } from "../../api/core.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { MergePatchType } from "../../client/rest/request.ts";
import { buildConfigFromFlags } from "../../client/tools/clientcmd/client-config.ts";
import { sizeFlag } from "../../testing/bench-flags.ts";
import {
  cpuSeconds,
  progress,
  repoRoot,
  runBenchmark,
  spawnScript,
  stopChild,
  track,
  trackTempDir,
  waitForOutput,
} from "../../testing/child-process.ts";
import { type Summary, summary } from "../../testing/percentile.ts";
import { qpsLoad } from "../../testing/qps-load.ts";
import { LocalCluster } from "./local-cluster.ts";

const argv = process.argv;
const json = argv.includes("--json");
const flag = (name: string): string | undefined => {
  const i = argv.indexOf(`--${name}`);
  return i < 0 ? undefined : argv[i + 1];
};

const NAMESPACE = "default";
const IMAGE = "course/sleeper:1.0";
const SLO_MS = 5000; // pod_startup_latency.md: p99 ≤ 5 s
/** density.go's kubemark constraints for ≤ 1,000 nodes (30 pods a node), in MiB. */
const UPSTREAM_MEMORY_MIB: Record<string, number> = {
  "kube-apiserver": 4000,
  "kube-controller-manager": 2000,
  "kube-scheduler": 750,
};

// #region cluster
interface BenchCluster {
  cluster: LocalCluster;
  admin: Clientset;
  kubemark: { child: ChildProcess; output: () => string };
  /** Every component process by name, for CPU and memory. */
  processes(): { name: string; pid: number | undefined }[];
  stop(): Promise<{ kubemarkExit: number | null }>;
}

/** The control plane as separate processes, and `nodes` hollow nodes in one kubemark process. */
async function startCluster(label: string, nodes: number): Promise<BenchCluster> {
  const names = Array.from({ length: nodes }, (_, i) => `hollow-node-${i}`);
  progress(`${label}: PKI for ${nodes} nodes, etcd, kube-apiserver, kube-controller-manager, kube-scheduler`);
  const cluster = await LocalCluster.start({
    nodes: [],
    spareNodes: names,
    etcdProcess: true,
    controllerManagerArgs: ["--use-service-account-credentials"],
    onProcess: (p) => track(p.child),
  });
  trackTempDir(cluster.dir);
  // The benchmark's own client: no client-side limit, so creation runs at the pace asked for.
  const admin = newForConfig({
    ...buildConfigFromFlags("", cluster.adminKubeconfig, {}),
    qps: -1,
    userAgent: "cluster-bench",
  });
  progress(`${label}: kubemark, ${nodes} hollow nodes`);
  const kubemark = spawnScript(join(repoRoot, "code", "cmd", "kubemark.ts"), [
    "--morph=kubelet",
    `--count=${nodes}`,
    "--name-prefix=hollow-node-",
    `--kubeconfig-dir=${join(cluster.dir, "pki")}`,
    `--root-dir=${join(cluster.dir, "kubemark")}`,
  ]);
  // kubemark's own progress lines, passed on.
  let partial = "";
  kubemark.child.stderr?.on("data", (chunk: string) => {
    const lines = (partial + chunk).split("\n");
    partial = lines.pop() ?? "";
    for (const l of lines) if (l.startsWith("… hollow nodes")) progress(`${label}: ${l.slice(2)}`);
  });
  await waitForOutput(kubemark, /hollow nodes started: \d+/, "kubemark");
  await waitForNodesReady(admin, nodes, label);
  // The controller-manager makes the namespace's ServiceAccount, which admission looks up.
  await waitUntil(
    `${label}: the default ServiceAccount`,
    120_000,
    async () =>
      (await admin.coreV1
        .serviceAccounts(NAMESPACE)
        .get("default")
        .catch(() => undefined)) !== undefined,
  );
  return {
    cluster,
    admin,
    kubemark,
    processes: () => [
      { name: "etcd", pid: cluster.etcd?.child.pid },
      { name: "kube-apiserver", pid: cluster.apiserver?.child.pid },
      { name: "kube-controller-manager", pid: cluster.controllerManager?.child.pid },
      { name: "kube-scheduler", pid: cluster.scheduler?.child.pid },
      { name: "kubemark", pid: kubemark.child.pid },
    ],
    async stop() {
      // kubemark first, politely: its hollow nodes stop (exit 0), then the control plane goes.
      const k = kubemark.child;
      const exited =
        k.exitCode !== null || k.signalCode !== null
          ? Promise.resolve(k.exitCode)
          : new Promise<number | null>((r) => k.once("exit", (code) => r(code)));
      await stopChild(kubemark.child, 60_000);
      const kubemarkExit = await exited;
      admin.closeIdleConnections();
      await cluster.close();
      return { kubemarkExit };
    },
  };
}

async function waitUntil(what: string, timeoutMs: number, check: () => Promise<boolean>): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check().catch(() => false))) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

async function waitForNodesReady(admin: Clientset, count: number, label: string): Promise<void> {
  let last = 0;
  await waitUntil(`${label}: ${count} nodes Ready`, 300_000 + count * 300, async () => {
    const list = await admin.coreV1.nodes().list();
    const ready = list.items.filter((n) =>
      n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
    ).length;
    if (ready !== last) progress(`${label}: nodes Ready ${ready}/${count}`);
    last = ready;
    return ready >= count;
  });
}
// #endregion cluster

// #region measure

/** CPU seconds each component (and this benchmark) used while `run` ran. */
async function cpuDuring<T>(
  c: BenchCluster,
  run: () => Promise<T>,
): Promise<T & { cpuSeconds: Record<string, number> }> {
  const sample = () => {
    const u = process.cpuUsage();
    const by: Record<string, number> = { benchmark: (u.user + u.system) / 1e6 };
    for (const p of c.processes()) by[p.name] = cpuSeconds(p.pid) ?? 0;
    return by;
  };
  const before = sample();
  const result = await run();
  const after = sample();
  const cpu: Record<string, number> = {};
  for (const k of Object.keys(after)) cpu[k] = Number((after[k] - (before[k] ?? 0)).toFixed(1));
  return { ...result, cpuSeconds: cpu };
}

/** VmRSS and VmHWM (the peak) of a process, in MiB, from /proc/<pid>/status (Linux). */
function residentMemory(pid: number | undefined): { rssMiB: number; peakMiB: number } | undefined {
  if (pid === undefined) return undefined;
  try {
    const status = readFileSync(`/proc/${pid}/status`, "utf8");
    const kb = (field: string) =>
      Number(new RegExp(`^${field}:\\s+(\\d+) kB`, "m").exec(status)?.[1] ?? Number.NaN);
    return { rssMiB: Math.round(kb("VmRSS") / 1024), peakMiB: Math.round(kb("VmHWM") / 1024) };
  } catch {
    return undefined;
  }
}

function benchPod(name: string, app: string): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: NAMESPACE, labels: { app } },
    spec: { terminationGracePeriodSeconds: 0, containers: [{ name: "sleeper", image: IMAGE }] },
  };
}

/**
 * Creates `count` pods `<app>-<i>` at `rate` per second (0: all at once, 32 in flight), open
 * loop (each sent at its due time whatever the earlier answers, at most 64 in flight), and
 * watches them until every one is Running: created → Running per pod.
 */
async function measureStartup(admin: Clientset, app: string, count: number, rate: number, label: string) {
  const created = new Map<string, number>();
  const running = new Map<string, number>();
  const watch = await admin.coreV1.pods(NAMESPACE).watch({ labelSelector: `app=${app}` });
  let allRunning: () => void = () => {};
  const done = new Promise<void>((r) => {
    allRunning = r;
  });
  const watching = (async () => {
    for await (const ev of watch) {
      if (ev.type !== "ADDED" && ev.type !== "MODIFIED") continue;
      const pod = ev.object as Pod;
      const name = pod.metadata.name ?? "";
      if (pod.status?.phase !== "Running" || running.has(name) || !created.has(name)) continue;
      running.set(name, performance.now());
      if (running.size === count) allRunning();
    }
  })();
  const ticker = setInterval(
    () => progress(`${label}: created ${created.size}/${count}, Running ${running.size}`),
    2000,
  );
  const t0 = performance.now();
  await qpsLoad(count, rate, (i) => {
    const name = `${app}-${i}`;
    created.set(name, performance.now());
    return admin.coreV1.pods(NAMESPACE).create(benchPod(name, app));
  });
  const createSeconds = (performance.now() - t0) / 1000;
  const complete = await waitOrGiveUp(done, count, label);
  clearInterval(ticker);
  watch.stop();
  await watching.catch(() => {});
  // A pod not Running when we gave up counts with the time it had waited: a lower bound.
  const end = performance.now();
  return {
    pods: count,
    rate,
    createSeconds: Number(createSeconds.toFixed(1)),
    notRunning: count - running.size,
    allRunningSeconds: complete ? Number(((Math.max(...running.values()) - t0) / 1000).toFixed(1)) : null,
    startup: summary([...created].map(([name, t]) => (running.get(name) ?? end) - t)),
  };
}

/**
 * Waits for `done`, at most `--wait-seconds` (default 120 s + 0.3 s a pod); false if it gave up:
 * on a starved machine the figures so far are reported (as lower bounds) rather than lost.
 */
async function waitOrGiveUp(done: Promise<void>, count: number, label: string): Promise<boolean> {
  const text = flag("wait-seconds");
  const ms = text === undefined ? 120_000 + count * 300 : Number(text) * 1000;
  let timer: NodeJS.Timeout | undefined;
  const complete = await Promise.race([
    done.then(() => true),
    new Promise<boolean>((r) => {
      timer = setTimeout(() => r(false), ms);
    }),
  ]);
  clearTimeout(timer);
  if (!complete)
    progress(`${label}: gave up waiting after ${Math.round(ms / 1000)} s; the figures are lower bounds`);
  return complete;
}

const isReady = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

/** A Deployment at 0 replicas scaled to `replicas`: until every pod is Ready, and the Deployment says so. */
async function measureScaleUp(admin: Clientset, replicas: number, label: string) {
  const app = "scale-up";
  const d: Deployment = {
    apiVersion: "apps/v1",
    kind: "Deployment",
    metadata: { name: app, namespace: NAMESPACE },
    spec: {
      replicas: 0,
      selector: { matchLabels: { app } },
      template: {
        metadata: { labels: { app } },
        spec: { terminationGracePeriodSeconds: 0, containers: [{ name: "sleeper", image: IMAGE }] },
      },
    },
  };
  const deployments = admin.appsV1.deployments(NAMESPACE);
  await deployments.create(d);
  // Its ReplicaSet at 0 first: the scale-up is then the only work measured.
  await waitUntil(`${label}: the Deployment observed at 0`, 120_000, async () => {
    const got = await deployments.get(app);
    return (got.status?.observedGeneration ?? 0) >= (got.metadata.generation ?? 1);
  });
  const added = new Map<string, number>();
  const ready = new Map<string, number>();
  const watch = await admin.coreV1.pods(NAMESPACE).watch({ labelSelector: `app=${app}` });
  let allReady: () => void = () => {};
  const done = new Promise<void>((r) => {
    allReady = r;
  });
  const watching = (async () => {
    for await (const ev of watch) {
      if (ev.type !== "ADDED" && ev.type !== "MODIFIED") continue;
      const pod = ev.object as Pod;
      const name = pod.metadata.name ?? "";
      const now = performance.now();
      if (!added.has(name)) added.set(name, now);
      if (isReady(pod) && !ready.has(name)) {
        ready.set(name, now);
        if (ready.size === replicas) allReady();
      }
    }
  })();
  const ticker = setInterval(
    () => progress(`${label}: pods ${added.size}/${replicas}, Ready ${ready.size}`),
    2000,
  );
  const t0 = performance.now();
  await deployments.patch(app, MergePatchType, { spec: { replicas } });
  const complete = await waitOrGiveUp(done, replicas, label);
  clearInterval(ticker);
  watch.stop();
  const end = performance.now();
  await watching.catch(() => {});
  let deploymentReady: number | null = null;
  if (complete) {
    await waitUntil(
      `${label}: the Deployment's readyReplicas`,
      120_000,
      async () => (await deployments.get(app)).status?.readyReplicas === replicas,
    );
    deploymentReady = performance.now() - t0;
  }
  return {
    replicas,
    notReady: replicas - ready.size,
    allPodsReadySeconds: complete ? Number(((Math.max(...ready.values()) - t0) / 1000).toFixed(1)) : null,
    deploymentReadySeconds: deploymentReady === null ? null : Number((deploymentReady / 1000).toFixed(1)),
    scaleToPodCreated: summary([...added.values()].map((t) => t - t0)),
    // A pod not Ready when we gave up counts with the time it had waited: a lower bound.
    podCreatedToReady: summary([...added].map(([name, t]) => (ready.get(name) ?? end) - t)),
    scaleToPodReady: summary([...added.keys()].map((name) => (ready.get(name) ?? end) - t0)),
  };
}
// #endregion measure

// #region parts
const pidsOf = (c: BenchCluster) => Object.fromEntries(c.processes().map((p) => [p.name, p.pid]));
type Startup = Awaited<ReturnType<typeof measureStartup>> & { cpuSeconds: Record<string, number> };
type ScaleUp = Awaited<ReturnType<typeof measureScaleUp>> & { cpuSeconds: Record<string, number> };
type Memory = NonNullable<ReturnType<typeof residentMemory>>;
interface LatencyResult {
  nodes: number;
  loadBefore: number[];
  loadAfter: number[];
  small?: Startup;
  large?: Startup;
  scaleUp?: ScaleUp;
  kubemarkExit: number | null;
  /** Each component's pid (gone once the benchmark ends: its test checks). */
  pids: Record<string, number | undefined>;
}
const load = () => loadavg().map((x) => Number(x.toFixed(2)));

/** (a) and (b) on one cluster of `nodes` hollow nodes. */
async function latencyParts(o: {
  nodes: number;
  smallPods: number;
  pods: number;
  replicas: number;
  rate: number;
}) {
  const c = await startCluster("latency", o.nodes);
  const out: LatencyResult = {
    nodes: o.nodes,
    loadBefore: load(),
    loadAfter: [],
    kubemarkExit: null,
    pids: pidsOf(c),
  };
  if (parts.has("latency")) {
    out.small = await cpuDuring(c, () =>
      measureStartup(c.admin, "startup-small", o.smallPods, o.rate, `${o.smallPods} pods`),
    );
    out.large = await cpuDuring(c, () =>
      measureStartup(c.admin, "startup-large", o.pods, o.rate, `${o.pods} pods`),
    );
  }
  if (parts.has("deployment"))
    out.scaleUp = await cpuDuring(c, () => measureScaleUp(c.admin, o.replicas, "scale-up"));
  out.loadAfter = load();
  Object.assign(out, await c.stop());
  return out;
}

/** (c) resident memory of every component at `nodes` hollow nodes and `pods` pods. */
async function memoryPart(o: { nodes: number; pods: number; rate: number }) {
  const c = await startCluster("memory", o.nodes);
  const loadBefore = load();
  const idle: Record<string, Memory | undefined> = {};
  for (const p of c.processes()) idle[p.name] = residentMemory(p.pid);
  const startup = await cpuDuring(c, () =>
    measureStartup(c.admin, "memory", o.pods, o.rate, `memory: ${o.pods} pods`),
  );
  // The status manager's batches and the last events go first.
  progress("memory: letting the cluster settle for 10 s");
  await new Promise((r) => setTimeout(r, 10_000));
  const loaded: Record<string, Memory | undefined> = {};
  for (const p of c.processes()) loaded[p.name] = residentMemory(p.pid);
  const loadAfter = load();
  return {
    nodes: o.nodes,
    pods: o.pods,
    loadBefore,
    loadAfter,
    withoutPods: idle,
    withPods: loaded,
    pids: pidsOf(c),
    startup,
    ...(await c.stop()),
  };
}
// #endregion parts

// #region report
function line(label: string, s: Summary, slo = false): string {
  const pad = (n: number) => String(n).padStart(7);
  const verdict = slo ? `  — ${s.p99 <= SLO_MS ? "meets" : "misses"} the SLO (p99 ≤ ${SLO_MS} ms)` : "";
  return `  ${label.padEnd(24)} p50 ${pad(s.p50)} ms  p90 ${pad(s.p90)} ms  p99 ${pad(s.p99)} ms  max ${pad(s.max)} ms  (n=${s.n})${verdict}`;
}

const cpuText = (cpu: Record<string, number>) =>
  Object.entries(cpu)
    .sort((a, b) => b[1] - a[1])
    .map(([k, v]) => `${k} ${v} s`)
    .join(", ");

type MemoryResult = Awaited<ReturnType<typeof memoryPart>>;

function printReport(r: { latency?: LatencyResult; memory?: MemoryResult }): void {
  console.log(
    "cluster benchmark: etcd, kube-apiserver, kube-controller-manager, kube-scheduler and kubemark, each its own process",
  );
  const l = r.latency;
  if (l) {
    console.log(
      `pod startup latency on ${l.nodes} hollow nodes (created → Running seen by a watch; images present) — upstream SLO p99 ≤ ${SLO_MS} ms`,
    );
    for (const s of [l.small, l.large]) {
      if (!s) continue;
      console.log(
        `  ${s.pods} pods created ${s.rate > 0 ? `at ${s.rate}/s` : "all at once"} in ${s.createSeconds} s, ${s.notRunning === 0 ? `all Running after ${s.allRunningSeconds} s` : `${s.notRunning} not Running when the benchmark gave up (figures are lower bounds)`}`,
      );
      console.log(line("created → Running", s.startup, true));
      console.log(`    CPU: ${cpuText(s.cpuSeconds)}`);
    }
    const d = l.scaleUp;
    if (d) {
      console.log(
        `Deployment scale-up 0 → ${d.replicas}: ${d.notReady === 0 ? `every pod Ready after ${d.allPodsReadySeconds} s, the Deployment's readyReplicas after ${d.deploymentReadySeconds} s` : `${d.notReady} pods not Ready when the benchmark gave up (figures are lower bounds)`}`,
      );
      console.log(line("scale → pod created", d.scaleToPodCreated));
      console.log(line("pod created → Ready", d.podCreatedToReady));
      console.log(line("scale → pod Ready", d.scaleToPodReady));
      console.log(`    CPU: ${cpuText(d.cpuSeconds)}`);
    }
    console.log(
      `  load average before ${l.loadBefore.join(" ")}, after ${l.loadAfter.join(" ")}; kubemark exited ${l.kubemarkExit} on SIGTERM`,
    );
  }
  const m = r.memory;
  if (m) {
    console.log(
      `resident memory at ${m.nodes} hollow nodes / ${m.pods} pods (VmRSS now, VmHWM peak; MiB) — upstream: density.go's kubemark limits at ≤ 1,000 nodes`,
    );
    for (const name of Object.keys(m.withPods)) {
      const w = m.withPods[name];
      const z = m.withoutPods[name];
      const ref = UPSTREAM_MEMORY_MIB[name];
      console.log(
        `  ${name.padEnd(24)} ${String(w?.rssMiB).padStart(6)} MiB (peak ${w?.peakMiB}; without pods ${z?.rssMiB})${ref ? `  upstream limit ${ref} MiB` : ""}`,
      );
    }
    console.log(line("created → Running", m.startup.startup, true));
    console.log(`  load average before ${m.loadBefore.join(" ")}, after ${m.loadAfter.join(" ")}`);
  }
}
// #endregion report

const nodes = sizeFlag("nodes", 100, 5);
const smallPods = sizeFlag("small-pods", 100, 10);
const pods = sizeFlag("pods", 3000, 40);
const replicas = sizeFlag("replicas", 1000, 20);
const memoryNodes = sizeFlag("memory-nodes", 1000, 10);
const memoryPods = sizeFlag("memory-pods", 30000, 60);
const rateText = flag("rate");
const rate = rateText === undefined ? 50 : Number(rateText);
if (!Number.isFinite(rate) || rate < 0) {
  console.error(`--rate needs a non-negative number (pods per second, 0 = all at once), got "${rateText}"`);
  process.exit(2);
}
/** `--only latency,deployment`: the parts to run, (a) latency, (b) deployment, (c) memory; absent: all. */
const onlyText = flag("only");
const parts = new Set(onlyText?.split(",") ?? ["latency", "deployment", "memory"]);
if ([...parts].some((p) => !["latency", "deployment", "memory"].includes(p))) {
  console.error(
    `--only needs latency, deployment or memory (or several, comma-separated), got "${onlyText}"`,
  );
  process.exit(2);
}

runBenchmark("cluster", async () => {
  const result: { latency?: LatencyResult; memory?: MemoryResult; [k: string]: unknown } = {
    sloP99Ms: SLO_MS,
    upstreamMemoryMiB: UPSTREAM_MEMORY_MIB,
    etcd: "ours (code/cmd/etcd.ts, in memory)",
  };
  if (parts.has("latency") || parts.has("deployment"))
    result.latency = await latencyParts({ nodes, smallPods, pods, replicas, rate });
  if (parts.has("memory")) result.memory = await memoryPart({ nodes: memoryNodes, pods: memoryPods, rate });
  if (json) console.log(JSON.stringify(result));
  else printReport(result);
});

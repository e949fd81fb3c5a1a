/**
 * InterPodAffinity benchmark — upstream's scheduler_perf workload SchedulingPodAntiAffinity run
 * in the simulator (no API server): `--nodes` nodes, two namespaces, `--init` pods created in
 * sched-0, then `--measure` pods in sched-1 whose scheduling is timed. Every pod is the
 * template pod-with-pod-anti-affinity.yaml: label color=green, a required anti-affinity term
 * on kubernetes.io/hostname selecting color=green in both namespaces, 100m CPU / 500Mi.
 *
 * Prints pods/s of the measured pods (wall clock) and CPU ms per pod (process.cpuUsage), and,
 * with `--cpu-prof`, the top self-time functions (V8 CPU profile through node:inspector).
 *
 * @upstream kubernetes/kubernetes test/integration/scheduler_perf/affinity/performance-config.yaml (SchedulingPodAntiAffinity: 500Nodes 100+400, 5000Nodes 1000+1000)
 * @upstream kubernetes/kubernetes test/integration/scheduler_perf/templates/pod-with-pod-anti-affinity.yaml
 * @chapter 05-scheduler
 *
 * How, and why so:
 * - the simulator schedules and binds in one process with the default profile, so the figure
 *   is the scheduler's own cost (the bind is a cache update), not the API server's;
 * - pods are added to the queue all at once and drained, as scheduler_perf creates them in a
 *   burst; the init pods are scheduled the same way, untimed.
 * Flags: --nodes N (500), --init N (100), --measure N (400), --cpu-prof, --json.
 */
import { Session } from "node:inspector/promises";
import type { Pod } from "../../api/core.ts";
import { newSim } from "./sim.ts";
import { makeNode } from "./wrappers.ts";

function flag(name: string, normal: number): number {
  const i = process.argv.indexOf(`--${name}`);
  if (i < 0) return normal;
  const n = Number(process.argv[i + 1]);
  if (!Number.isInteger(n) || n < 0) {
    console.error(`--${name} needs a non-negative integer, got "${process.argv[i + 1] ?? ""}"`);
    process.exit(2);
  }
  return n;
}
const nodes = flag("nodes", 500);
const init = flag("init", 100);
const measure = flag("measure", 400);
const json = process.argv.includes("--json");
const cpuProf = process.argv.includes("--cpu-prof");

/** pod-with-pod-anti-affinity.yaml, in namespace `ns`. */
function antiAffinityPod(name: string, ns: string): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: ns, uid: `${ns}/${name}`, labels: { color: "green" } },
    spec: {
      schedulerName: "default-scheduler",
      affinity: {
        podAntiAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: [
            {
              labelSelector: { matchLabels: { color: "green" } },
              topologyKey: "kubernetes.io/hostname",
              namespaces: ["sched-1", "sched-0"],
            },
          ],
        },
      },
      containers: [
        {
          name: "pause",
          image: "registry.k8s.io/pause:3.10.2",
          ports: [{ containerPort: 80 }],
          resources: {
            limits: { cpu: "100m", memory: "500Mi" },
            requests: { cpu: "100m", memory: "500Mi" },
          },
        },
      ],
    },
  };
}

// node-default.yaml: 4 CPU, 32Gi, 110 pods.
const sim = newSim({
  nodes: Array.from({ length: nodes }, (_, i) =>
    makeNode(`node-${i}`, { allocatable: { cpu: "4", memory: "32Gi", pods: "110" } }),
  ),
});
for (let i = 0; i < init; i++) sim.add(antiAffinityPod(`init-${i}`, "sched-0"));
await sim.drain();
const before = sim.bound.length;

const session = cpuProf ? new Session() : undefined;
if (session) {
  session.connect();
  await session.post("Profiler.enable");
  await session.post("Profiler.start");
}
const cpu0 = process.cpuUsage();
const t0 = performance.now();
for (let i = 0; i < measure; i++) sim.add(antiAffinityPod(`measure-${i}`, "sched-1"));
await sim.drain();
const ms = performance.now() - t0;
const cpu = process.cpuUsage(cpu0);
const scheduled = sim.bound.length - before;
const result = {
  workload: `SchedulingPodAntiAffinity/${nodes}Nodes`,
  nodes,
  initPods: init,
  measurePods: measure,
  scheduled,
  podsPerSec: Math.round((scheduled / ms) * 1000 * 10) / 10,
  cpuMsPerPod: Math.round(((cpu.user + cpu.system) / 1000 / Math.max(scheduled, 1)) * 100) / 100,
};

if (session) {
  const { profile } = await session.post("Profiler.stop");
  const self = new Map<string, number>();
  const dt = new Map<number, number>();
  const { samples = [], timeDeltas = [] } = profile;
  for (let i = 0; i < samples.length; i++)
    dt.set(samples[i], (dt.get(samples[i]) ?? 0) + (timeDeltas[i] ?? 0));
  let total = 0;
  for (const n of profile.nodes) {
    const us = dt.get(n.id) ?? 0;
    total += us;
    const f = n.callFrame;
    const key = `${f.functionName || "(anonymous)"} ${f.url.split("/").slice(-2).join("/")}:${f.lineNumber + 1}`;
    self.set(key, (self.get(key) ?? 0) + us);
  }
  const top = [...self].sort((a, b) => b[1] - a[1]).slice(0, 25);
  console.error("self time, top 25:");
  for (const [k, us] of top) console.error(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
  // Inclusive time: a function's samples plus its callees', counted once per stack.
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const incl = new Map<string, number>();
  for (const [id, us] of dt) {
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = byId.get(cur)!.callFrame;
      const key = `${f.functionName || "(anonymous)"} ${f.url.split("/").slice(-2).join("/")}`;
      if (seen.has(key)) continue;
      seen.add(key);
      incl.set(key, (incl.get(key) ?? 0) + us);
    }
  }
  // --callers NAME: who calls NAME, by the callers' share of its inclusive time.
  const ci = process.argv.indexOf("--callers");
  if (ci > 0) {
    const want = process.argv[ci + 1];
    const callers = new Map<string, number>();
    for (const [id, us] of dt) {
      for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
        const f = byId.get(cur)!.callFrame;
        if (f.functionName !== want) continue;
        const p = parent.get(cur);
        const pf = p === undefined ? undefined : byId.get(p)!.callFrame;
        const key = pf
          ? `${pf.functionName} ${pf.url.split("/").slice(-2).join("/")}:${pf.lineNumber + 1}`
          : "(none)";
        callers.set(key, (callers.get(key) ?? 0) + us);
        break;
      }
    }
    console.error(`callers of ${want}:`);
    for (const [k, us] of [...callers].sort((a, b) => b[1] - a[1]).slice(0, 10))
      console.error(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
  }
  console.error("inclusive time, top 40:");
  for (const [k, us] of [...incl].sort((a, b) => b[1] - a[1]).slice(0, 40))
    console.error(`${((us / total) * 100).toFixed(1).padStart(5)}%  ${k}`);
}

if (json) console.log(JSON.stringify(result));
else
  console.log(
    `${result.workload}: ${scheduled}/${measure} pods scheduled, ${result.podsPerSec} pods/s, ${result.cpuMsPerPod} CPU ms/pod`,
  );

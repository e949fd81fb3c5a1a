/**
 * Chapter 5's demo — the scheduler deciding, on a simulated cluster: five nodes of different
 * sizes, taints and zones, eight pods placed one at a time, each decision printed in upstream's
 * words, and the explain table for two of them ("why did the pod land there?").
 *
 * Solves: a learner who has read Filter → Score → selectHost should *see* the numbers — which
 * plugin threw a node out and why, what each Score plugin said before and after NormalizeScore
 * and its weight, and how the totals pick the node.
 *
 * Everything runs in this process, without an API server: the real Scheduler (its queue, cache,
 * snapshot and the default profile's plugins) over code/scheduler/testing/sim.ts, whose binder
 * confirms each bind as the informer would. The tie-break is seeded, so every run prints the same.
 *
 * Usage: npm run chapter -- 5
 *
 * @upstream none — course demo
 * @chapter 05-scheduler
 */
import type { Node, Pod, Taint, Toleration } from "../../code/api/core.ts";
import { formatExplainTable } from "../../code/scheduler/explain.ts";
import { newSim } from "../../code/scheduler/testing/sim.ts";
import { makeNode, makePod } from "../../code/scheduler/testing/wrappers.ts";
import { bold, cyan, dim, green, heading, note, red, runDemo, say, step } from "../demo.ts";

interface NodeSpec {
  name: string;
  cpu: string;
  memory: string;
  zone: string;
  taints?: Taint[];
  unschedulable?: boolean;
}

// #region cluster
const cluster: NodeSpec[] = [
  { name: "node-a", cpu: "4", memory: "8Gi", zone: "zone-a" },
  { name: "node-b", cpu: "2", memory: "4Gi", zone: "zone-a" },
  {
    name: "node-c",
    cpu: "8",
    memory: "16Gi",
    zone: "zone-b",
    taints: [{ key: "dedicated", value: "gpu", effect: "NoSchedule" }],
  },
  {
    name: "node-d",
    cpu: "4",
    memory: "8Gi",
    zone: "zone-b",
    taints: [{ key: "spot", value: "true", effect: "PreferNoSchedule" }],
  },
  { name: "node-e", cpu: "2", memory: "4Gi", zone: "zone-c", unschedulable: true },
];

const gpuToleration: Toleration = { key: "dedicated", operator: "Equal", value: "gpu", effect: "NoSchedule" };

/** The pods, in the order they are created; each is scheduled before the next arrives. */
const workload: { name: string; cpu: string; memory: string; tolerations?: Toleration[] }[] = [
  { name: "web-1", cpu: "500m", memory: "512Mi" },
  { name: "web-2", cpu: "500m", memory: "512Mi" },
  { name: "api", cpu: "1", memory: "2Gi" },
  { name: "batch", cpu: "2", memory: "4Gi" },
  { name: "cache", cpu: "500m", memory: "5Gi" },
  { name: "trainer", cpu: "6", memory: "12Gi", tolerations: [gpuToleration] },
  { name: "web-3", cpu: "500m", memory: "512Mi" },
  { name: "huge", cpu: "16", memory: "8Gi" },
];
// #endregion cluster

function toNode(s: NodeSpec): Node {
  const n = makeNode(s.name, { zone: s.zone, allocatable: { cpu: s.cpu, memory: s.memory, pods: "110" } });
  n.spec = { ...(s.taints ? { taints: s.taints } : {}), ...(s.unschedulable ? { unschedulable: true } : {}) };
  return n;
}

function toPod(w: (typeof workload)[number]): Pod {
  const p = makePod(w.name, { requests: [{ cpu: w.cpu, memory: w.memory }] });
  if (w.tolerations) p.spec.tolerations = w.tolerations;
  return p;
}

async function main(): Promise<number> {
  heading("The scheduler — Filter, Score, and why a pod lands where it does");

  step("A simulated cluster: 5 nodes, the default profile, explain on");
  for (const s of cluster) {
    const extra = [
      ...(s.taints ?? []).map((t) => `taint ${t.key}=${t.value}:${t.effect}`),
      ...(s.unschedulable ? ["cordoned (spec.unschedulable)"] : []),
    ];
    say(
      `${bold(s.name)}  ${s.cpu} CPU, ${s.memory.padEnd(4)}  ${s.zone}${extra.length ? `  ${extra.join(", ")}` : ""}`,
    );
  }
  note(
    "The real Scheduler (queue, cache, snapshot, plugins); the binder confirms each bind as an informer would.",
  );
  const sim = newSim({ nodes: cluster.map(toNode), seed: 1, explain: true });

  // #region schedule
  step(`Scheduling ${workload.length} pods, one at a time`);
  for (const w of workload) {
    const before = sim.events.length;
    sim.add(toPod(w));
    await sim.drain();
    for (const e of sim.events.slice(before)) {
      const line = `${e.type.padEnd(7)} ${e.reason.padEnd(16)} ${e.message}`;
      say(e.type === "Normal" ? green(line) : red(line));
    }
  }
  note(
    'The same words as upstream: "Successfully assigned …" (Scheduled), "0/5 nodes are available: …" (FailedScheduling).',
  );
  note(
    'FailedScheduling ends with " preemption: …": what DefaultPreemption (PostFilter) found after Filter failed.',
  );
  // #endregion schedule

  step("Why did api land there? The explain table");
  say(formatExplainTable(sim.explained.get("default/api")!).split("\n").join("\n   "));
  note(
    "Filter: ✓ or the first plugin's reason (the plugins after it do not run). Score: raw → normalized ×weight.",
  );
  note("TaintToleration's raw score counts untolerated PreferNoSchedule taints; NormalizeScore reverses it.");
  note("ImageLocality gives 0 everywhere: no node lists an image. The plugins skipped had nothing to check.");

  step("Why does huge fit nowhere?");
  say(formatExplainTable(sim.explained.get("default/huge")!).split("\n").join("\n   "));
  note(
    "No node passed Filter, so nothing was scored: the FailedScheduling line counts these reasons per node.",
  );
  note(
    "Preemption cannot help either: 16 CPU is more than any node has at all, so every verdict is unresolvable.",
  );

  step("Where everything went");
  for (const b of sim.bound) say(`${cyan(b.pod.metadata.name ?? "").padEnd(10)} → ${b.node}`);
  const pending = workload.filter((w) => !sim.bound.some((b) => b.pod.metadata.name === w.name));
  for (const w of pending)
    say(`${dim(w.name.padEnd(10))} → Pending (back in the queue, waiting for a cluster event)`);
  sim.queue.close();
  return 0;
}

runDemo(main);

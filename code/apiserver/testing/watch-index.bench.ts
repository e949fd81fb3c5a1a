/**
 * Watch-index benchmark — what the watch cache's index on spec.nodeName buys at 1,000 nodes:
 * pod writes through a Cacher watched by one kubelet-like watch per node
 * (`fieldSelector=spec.nodeName=node-i`), with the index (upstream's dispatch) and without it
 * (`dispatchByIndex: false`: every watcher offered every event, the course's cacher before the
 * index), in the same process, the two alternating round by round so a change of load on a
 * shared machine hits both alike.
 *
 * Each round: a fresh in-memory store and Cacher, `--nodes` (1,000) watchers, each drained as a
 * watch handler does (a batch at a time), then `--writes` (2,000) pods created by `--writers`
 * (16) concurrent clients, pod k bound to node k mod nodes — each pod event belongs to exactly
 * one watcher, which must receive it (a loss fails the run). Measured from the first write to
 * the last delivery: writes/s, and this process's CPU time per write (the store's share
 * included, the same in both runs) — the steadier figure on a shared machine. Printed: both, the
 * median over `--rounds` (3) rounds of each, and their ratio.
 * Flags: --nodes N, --writes N, --writers N, --rounds N, --quick (50 nodes, 300 writes, 1
 * round), --json (one JSON object, key `watchIndex`).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/cacher/cacher.go (indexedWatchers: what is measured)
 * @chapter 02-apiserver
 */
import { loadavg } from "node:os";
import { EtcdServer } from "../../store/etcdserver/server.ts";
import { sizeFlag } from "../../testing/bench-flags.ts";
import { progress, runBenchmark } from "../../testing/child-process.ts";
import { nodeNameTriggerFunc, podSelectableFields } from "../registry/strategies/pods.ts";
import type { CacheWatcher } from "../storage/cache-watcher.ts";
import { Cacher } from "../storage/cacher.ts";
import { InProcessEtcdClient } from "../storage/etcd-client.ts";
import { Etcd3Store } from "../storage/etcd3-store.ts";
import { newSelectionPredicate } from "../storage/selection-predicate.ts";

const json = process.argv.includes("--json");
const sizes = {
  nodes: sizeFlag("nodes", 1000, 50),
  writes: sizeFlag("writes", 2000, 300),
  writers: sizeFlag("writers", 16, 4),
  rounds: sizeFlag("rounds", 3, 1),
};
const prefix = "/registry/pods";
const gr = { group: "", resource: "pods" };

interface RoundResult {
  writesPerSec: number;
  cpuUsPerWrite: number;
}

/** One round: a fresh store and cacher, the node watchers, the writes, until every event is delivered. */
async function round(dispatchByIndex: boolean): Promise<RoundResult> {
  const server = new EtcdServer();
  const storage = new Etcd3Store({ client: new InProcessEtcdClient(server), groupResource: gr });
  const cacher = new Cacher({
    storage,
    resourcePrefix: prefix,
    groupResource: gr,
    indexedTrigger: nodeNameTriggerFunc,
    dispatchByIndex,
  });
  try {
    await cacher.waitReady();
    const received = new Array<number>(sizes.nodes).fill(0);
    let delivered = 0;
    let allDelivered!: () => void;
    const done = new Promise<void>((resolve) => {
      allDelivered = resolve;
    });
    const watchers: CacheWatcher[] = [];
    for (let i = 0; i < sizes.nodes; i++) {
      const predicate = newSelectionPredicate("", `spec.nodeName=node-${i}`, podSelectableFields);
      const w = (await cacher.watch(prefix, {
        resourceVersion: "0",
        predicate,
        recursive: true,
      })) as CacheWatcher;
      watchers.push(w);
      // The watch handler's loop: take everything buffered, "send" it, wait for more.
      void (async () => {
        for (;;) {
          const batch = await w.nextBatch();
          if (!batch) return;
          received[i] += batch.length;
          delivered += batch.length;
          if (delivered === sizes.writes) allDelivered();
        }
      })();
    }
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: sizes.writers }, async () => {
        while (next < sizes.writes) {
          const k = next++;
          const name = `pod-${k}`;
          await cacher.create(`${prefix}/default/${name}`, {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name, namespace: "default", uid: `uid-${k}` },
            spec: { nodeName: `node-${k % sizes.nodes}`, containers: [{ name: "c", image: "pause" }] },
          });
        }
      }),
    );
    const timeout = setTimeout(() => allDelivered(), 120_000);
    await done;
    clearTimeout(timeout);
    const seconds = (performance.now() - t0) / 1000;
    const cpu = process.cpuUsage(cpu0);
    for (let i = 0; i < sizes.nodes; i++) {
      const expected = Math.floor(sizes.writes / sizes.nodes) + (i < sizes.writes % sizes.nodes ? 1 : 0);
      if (received[i] !== expected)
        throw new Error(`node-${i}'s watcher received ${received[i]} events, expected ${expected}`);
    }
    if (cacher.terminatedWatchers > 0) throw new Error(`${cacher.terminatedWatchers} watchers were closed`);
    for (const w of watchers) w.stop();
    return {
      writesPerSec: sizes.writes / seconds,
      cpuUsPerWrite: (cpu.user + cpu.system) / sizes.writes,
    };
  } finally {
    await cacher.close();
    await server.close();
  }
}

function median(xs: number[]): number {
  const s = [...xs].sort((a, b) => a - b);
  const m = Math.floor(s.length / 2);
  return s.length % 2 === 1 ? s[m] : (s[m - 1] + s[m]) / 2;
}

runBenchmark("watch-index", async () => {
  const load = loadavg()[0];
  const runs: Record<"indexed" | "notIndexed", RoundResult[]> = { indexed: [], notIndexed: [] };
  for (let r = 0; r < sizes.rounds; r++) {
    for (const indexed of [true, false]) {
      progress(`round ${r + 1}/${sizes.rounds}: ${indexed ? "indexed" : "not indexed"}`);
      runs[indexed ? "indexed" : "notIndexed"].push(await round(indexed));
    }
  }
  const summary = (rs: RoundResult[]): RoundResult => ({
    writesPerSec: Math.round(median(rs.map((x) => x.writesPerSec))),
    cpuUsPerWrite: Math.round(median(rs.map((x) => x.cpuUsPerWrite))),
  });
  const indexed = summary(runs.indexed);
  const notIndexed = summary(runs.notIndexed);
  const ratio = {
    writesPerSec: Math.round((indexed.writesPerSec / notIndexed.writesPerSec) * 10) / 10,
    cpuPerWrite: Math.round((notIndexed.cpuUsPerWrite / indexed.cpuUsPerWrite) * 10) / 10,
  };
  const loadAverage = { before: load, after: loadavg()[0] };
  if (json) {
    console.log(JSON.stringify({ watchIndex: { sizes, indexed, notIndexed, ratio, loadAverage } }));
    return;
  }
  console.log(
    `watch index: ${sizes.nodes} watchers (spec.nodeName=node-i), ${sizes.writes} pod creates by ${sizes.writers} writers, median of ${sizes.rounds} round(s) each`,
  );
  const line = (label: string, x: RoundResult) =>
    `  ${label.padEnd(12)} ${String(x.writesPerSec).padStart(7)} writes/s   ${String(x.cpuUsPerWrite).padStart(6)} µs CPU per write`;
  console.log(line("indexed", indexed));
  console.log(line("not indexed", notIndexed));
  console.log(`  ratio: ${ratio.writesPerSec}× the writes/s, ${ratio.cpuPerWrite}× less CPU per write`);
  console.log(`  load average (1 min): ${loadAverage.before.toFixed(2)} → ${loadAverage.after.toFixed(2)}`);
});

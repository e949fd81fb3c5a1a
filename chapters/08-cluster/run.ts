/**
 * Chapter 8's demo — the whole cluster as processes: etcd, kube-apiserver, two controller-managers
 * and two schedulers electing leaders, two kubelets; a Deployment made with the real kubectl, one
 * of its pods' life traced across the processes, then the leading scheduler killed with `kill -9`
 * and the cluster healing: the standby takes the Lease and schedules the pod that was waiting.
 *
 * Solves: a learner who has read chapters 1–7 should *see* the pieces work as one, and fail as one:
 * - every component is its own OS process, talking HTTP(S) to the API server and nothing else;
 * - `kubectl create deployment` → ReplicaSet → pods → scheduled → started → Ready, as the spans
 *   each component exported to one collector (the same timeline `npm run cluster -- trace` prints);
 * - the leaders are ordinary Lease objects; a leader killed without a word is replaced only when
 *   its Lease expires (15 s, upstream's default), and meanwhile a new pod waits, unscheduled;
 * - each delay is measured beside where it comes from.
 *
 * The cluster is code/cmd/testing/local-cluster.ts (LocalCluster), the cluster chapter 8's tests
 * run, with upstream's leader-election defaults (15 s lease, 10 s renew deadline, 2 s retry) and
 * tracing on (code/tracing/collector.ts receives the spans). Every process it started — the
 * components and the containers, which outlive their kubelet on purpose — is stopped when the demo
 * ends: normally, on an error, or on Ctrl-C (an exit hook SIGKILLs components still starting).
 *
 * Usage: npm run chapter -- 8
 *
 * @upstream none — course demo
 * @chapter 08-cluster
 */
import { mkdtemp, readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join } from "node:path";
import type { Pod } from "../../code/api/core.ts";
import { leaderIdentityIn } from "../../code/cmd/cluster/component-wiring.ts";
import {
  formatSummary,
  formatTimeline,
  gatherPodSpans,
  milestones,
  parseSpans,
} from "../../code/cmd/cluster/trace.ts";
import type { CommandProcess } from "../../code/cmd/testing/command-process.ts";
import { LocalCluster } from "../../code/cmd/testing/local-cluster.ts";
import { cleanupSync, track, trackTempDir } from "../../code/testing/child-process.ts";
import { type Collector, startCollector } from "../../code/tracing/collector.ts";
import {
  demoFlags,
  dim,
  green,
  heading,
  note,
  runDemo,
  say,
  sleep,
  step,
  stopOnInterrupt,
  yellow,
} from "../demo.ts";

// #region leader-election
/** Upstream's defaults (component-base/config/v1alpha1/defaults.go), the demo's too. */
const leaderElection = { lease: 15_000, renew: 10_000, retry: 2_000 };
// #endregion leader-election

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const ready = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

/** Whether a process with this pid still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

/** Waits (bounded) until `check` returns a value; that value. */
async function until<T>(what: string, check: () => Promise<T | undefined>, ms = 120_000): Promise<T> {
  const deadline = Date.now() + ms;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
    await sleep(100);
  }
}

async function main(): Promise<number> {
  demoFlags("npm run chapter -- 8", {});
  heading("The whole cluster — processes, a pod's life traced, a leader killed");

  process.on("exit", cleanupSync);
  const work = trackTempDir(await mkdtemp(join(tmpdir(), "chapter-08-")));
  let cluster: LocalCluster | undefined;
  let collector: Collector | undefined;
  let stopped = false;
  const shutdown = async () => {
    if (stopped) return;
    stopped = true;
    if (!cluster) {
      await collector?.close();
      return; // still starting: the exit hook kills what was started
    }
    const c = cluster;
    const components = [...c.components.values()]
      .map((x) => [x.name, x.process.child.pid] as const)
      .filter(([, pid]) => pid !== undefined && alive(pid as number)) as [string, number][];
    const containers = c.containerProcesses().map((x) => x.pid);
    await c.close();
    await collector?.close();
    const all = [...components.map(([, pid]) => pid), ...containers];
    for (let i = 0; i < 100 && all.some(alive); i++) await sleep(50);
    const left = all.filter(alive);
    say(
      `Stopped the ${components.length} components still running (pids ${components.map(([, p]) => p).join(", ")}),`,
    );
    say(
      `then the containers they left running (pids ${containers.join(", ") || "-"}), and the span collector.`,
    );
    say(left.length === 0 ? green("No process left running.") : yellow(`still running: ${left.join(", ")}`));
  };
  stopOnInterrupt(shutdown);

  let ok = false;
  try {
    // #region start
    step("A cluster of processes: etcd, kube-apiserver, 2 controller-managers, 2 schedulers, 2 kubelets");
    const spans = join(work, "spans.jsonl");
    collector = await startCollector({ file: spans });
    say(`span collector (OTLP/HTTP) on ${collector.endpoint}, writing ${basename(spans)}`);
    const starting = Date.now();
    const since = () => dim(`+${seconds(Date.now() - starting).padStart(7)}`);
    const counts = new Map<string, number>();
    /** Each process as it starts: its name as LocalCluster names it, and its pid. */
    const started = (p: CommandProcess) => {
      track(p.child);
      const args = p.child.spawnargs;
      const command = basename(args.find((a) => a.endsWith(".ts")) ?? "?", ".ts");
      const node = args.find((a) => a.startsWith("--hostname-override="))?.split("=")[1];
      const n = (counts.get(command) ?? 0) + 1;
      counts.set(command, n);
      const name = node
        ? `kubelet ${node}`
        : command === "kube-scheduler" || command === "kube-controller-manager"
          ? `${command}-${n}`
          : command;
      const flag = (f: string) => args.find((a) => a.startsWith(`--${f}=`)) ?? "";
      const shown =
        command === "kube-apiserver"
          ? `${flag("secure-port")} ${flag("authorization-mode")} ${flag("etcd-servers")}`
          : command === "etcd"
            ? flag("listen-client-urls")
            : node
              ? flag("pod-cidr")
              : flag("leader-elect");
      say(`${since()}  ${name.padEnd(25)}  pid ${String(p.child.pid).padEnd(7)} ${dim(shown)}`);
    };
    cluster = await LocalCluster.start({
      nodes: ["node-1", "node-2"],
      etcdProcess: true,
      schedulers: 2,
      controllerManagers: 2,
      leaderElection,
      controllerManagerArgs: ["--use-service-account-credentials"],
      tracing: { endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 },
      onProcess: started,
    });
    const c = cluster;
    say(`${since()}  ${green("both nodes registered and Ready")}`);
    note(`export KUBECONFIG=${c.adminKubeconfig}   (the admin's; each component has its own identity)`);
    // #endregion start

    /** Runs kubectl and shows it as a learner would see it. */
    const kubectl = async (args: string[], timeoutMs = 120_000) => {
      const r = await c.kubectl(args, timeoutMs);
      say(`${dim("$")} kubectl ${args.join(" ")}`);
      for (const line of (r.stdout + r.stderr).split("\n").filter((l) => l.trim() !== "")) say(`  ${line}`);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${r.code}: ${r.stderr.trim()}`);
      return r;
    };
    const leases = c.admin.coordinationV1.leases("kube-system");
    /** The component process whose identity holds `lease` now. */
    const holder = async (lease: string) => {
      const l = await leases.get(lease);
      const id = l.spec?.holderIdentity ?? "";
      const who = [...c.components.values()].find(
        (x) => x.kind === lease && leaderIdentityIn(x.process.stderr()) === id,
      );
      const acquired = Date.parse(l.spec?.acquireTime ?? "");
      return { name: who?.name, id, transitions: l.spec?.leaseTransitions ?? 0, acquired };
    };

    // #region leaders
    step("Who leads: two Lease objects in kube-system");
    for (const lease of ["kube-scheduler", "kube-controller-manager"]) {
      const h = await until(`a leader for ${lease}`, async () => {
        const x = await holder(lease);
        return x.name ? x : undefined;
      });
      say(`lease ${lease.padEnd(23)} held by ${h.name} ${dim(`(holderIdentity ${h.id})`)}`);
    }
    await kubectl(["get", "leases", "-n", "kube-system"]);
    note("The other replica of each is a candidate: it reads the Lease every retry period (2 s)");
    note("and takes it only once it has not changed for leaseDurationSeconds (15 s).");
    // #endregion leaders

    // #region deployment
    step("kubectl create deployment: from the request to Ready pods");
    const created = Date.now();
    await kubectl(["create", "deployment", "web", "--image=course/web:1.0", "--replicas=2", "--port=8080"]);
    await kubectl(["rollout", "status", "deployment/web", "--timeout=180s"], 200_000);
    const rolledOut = Date.now();
    await kubectl(["get", "pods", "-l", "app=web", "-o", "wide"]);
    say(
      green(
        `2 pods Ready ${seconds(rolledOut - created)} after kubectl create (kubectl's own waits included).`,
      ),
    );
    // #endregion deployment

    // #region trace
    step("One pod's life, as the components traced it");
    const pods = await c.admin.coreV1.pods("default").list({ labelSelector: "app=web" });
    const first = [...pods.items].sort((a, b) =>
      (a.metadata.name ?? "").localeCompare(b.metadata.name ?? ""),
    )[0] as Pod;
    const uid = first.metadata.uid ?? "";
    // Each component's batch processor exports about a second after a span ends.
    const mine = await until("the pod's spans through Ready", async () => {
      const got = gatherPodSpans(parseSpans(await readFile(spans, "utf8")), uid);
      const m = milestones(got);
      return m.created && m.scheduled && m.running && m.ready ? got : undefined;
    });
    say(
      `pod default/${first.metadata.name}: ${mine.length} spans from ${new Set(mine.map((s) => s.service)).size} components`,
    );
    for (const line of formatTimeline(mine)) say(dim(line));
    say(green(formatSummary(milestones(mine))));
    note("The same timeline, for any pod of a running `npm run cluster`: npm run cluster -- trace <pod>.");
    // #endregion trace

    // #region kill-leader
    step("kill -9 the leading scheduler, then ask for a third replica");
    const before = await holder("kube-scheduler");
    const victim = c.components.get(before.name ?? "");
    if (!victim) throw new Error(`no scheduler holds the lease (holder ${before.id})`);
    const killedAt = Date.now();
    const at = () => dim(`+${seconds(Date.now() - killedAt).padStart(7)}`);
    await c.killComponent(victim.name);
    say(`${at()}  kill -9 ${victim.name} (pid ${victim.process.child.pid}): it cannot release its Lease`);
    await kubectl(["scale", "deployment/web", "--replicas=3"]);
    const known = new Set(pods.items.map((p) => p.metadata.uid));
    const fresh = await until("the third pod", async () => {
      const list = await c.admin.coreV1.pods("default").list({ labelSelector: "app=web" });
      return list.items.find((p) => !known.has(p.metadata.uid));
    });
    const freshAt = Date.now();
    say(`${at()}  pod ${fresh.metadata.name} created by the ReplicaSet controller: Pending, no node`);
    // One loop watches the three things that follow, so each is timed when first seen (±0.1 s).
    const name = fresh.metadata.name ?? "";
    let takeover: { name?: string; id: string; transitions: number; at: number } | undefined;
    let scheduled: { node: string; at: number } | undefined;
    let readyAt: number | undefined;
    let pendingShown = false;
    await until(
      "another scheduler to take the Lease and the pod to be Ready",
      async () => {
        // The pod first, then the Lease: a pod seen bound was bound by a leader, so a Lease read
        // after it names that leader. (Read together, the new leader could take the Lease and bind
        // the pod between the two reads, and the pod would look bound by nobody.)
        const p = await c.admin.coreV1.pods("default").get(name);
        const h = await holder("kube-scheduler");
        const now = Date.now();
        if (!takeover && h.name && h.name !== victim.name) {
          // Timed by the Lease's own acquireTime (MicroTime, same machine's clock), not by our poll.
          takeover = { ...h, at: Number.isNaN(h.acquired) ? now : Math.min(h.acquired, now) };
          say(`${at()}  ${h.name} acquired lease kube-scheduler (leaseTransitions ${h.transitions})`);
        }
        if (!scheduled && p.spec.nodeName) {
          scheduled = { node: p.spec.nodeName, at: now };
          say(`${at()}  pod ${name} bound to ${p.spec.nodeName} by ${takeover?.name ?? "?"}`);
        }
        if (!scheduled && !pendingShown && now - freshAt > 5000) {
          pendingShown = true;
          say(`${at()}  still ${p.status?.phase}, spec.nodeName empty: no scheduler is leading`);
        }
        if (scheduled && !readyAt && ready(p)) readyAt = now;
        return readyAt;
      },
      120_000,
    );
    if (!takeover || !scheduled || !readyAt) throw new Error("unreachable: the loop waited for all three");
    say(`${at()}  pod ${fresh.metadata.name} Ready`);
    await kubectl(["get", "deployment", "web"]);
    await kubectl(["get", "lease", "kube-scheduler", "-n", "kube-system"]);
    // #endregion kill-leader

    // #region measured
    step("What was measured, and where each figure comes from");
    const rows: [string, number, string][] = [
      [
        "kill -9 → the standby holds the Lease",
        takeover.at - killedAt,
        `leaseDuration ${leaderElection.lease / 1000} s after the last renewal it saw, at its next try (every ${leaderElection.retry / 1000} s)`,
      ],
      [
        "Lease taken → the pod bound",
        scheduled.at - takeover.at,
        "its informers synced while it stood by: one scheduling cycle",
      ],
      [
        "pod bound → Ready",
        readyAt - scheduled.at,
        "the kubelet's watch, a container start, the next PLEG relist",
      ],
      [
        "kubectl create → 2 pods Ready",
        rolledOut - created,
        "Deployment → ReplicaSet → pods → scheduler → kubelets",
      ],
    ];
    for (const [what, ms, from] of rows) say(`${what.padEnd(38)} ${seconds(ms).padStart(8)}   ${dim(from)}`);
    note("A scheduler stopped with Ctrl-C releases its Lease (kube-scheduler sets ReleaseOnCancel; the");
    note("controller-manager does not) and the standby takes over at its next try; kill -9 gives no such");
    note("chance, so the cluster waits for the Lease to expire.");
    note("The running pods never noticed: only new work waits for a leader.");
    // #endregion measured
    ok = true;
  } finally {
    if (ok) step("Cleanup");
    await shutdown();
  }
  return 0;
}

runDemo(main);

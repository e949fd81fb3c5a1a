/**
 * Chapter 7's demo — an API server, a controller-manager, a scheduler and two kubelets, each its
 * own process; one `course/web` pod with all three probes, its readiness and its liveness toggled
 * from inside the container, and what each toggle does to the pod, its Service and its restarts.
 *
 * Solves: a learner who has read the sync loop and the prober should *see* them at work, with
 * real requests, real processes and the real kubectl:
 * - the kubelet is told nothing: it lists and watches pods with `fieldSelector=spec.nodeName=…`
 *   (the requests as the API server's audit log recorded them), and writes back `pods/status`;
 * - a pod from created to Ready: the startup probe holding the others off, then readiness;
 * - readiness failing takes the pod out of its Service's endpoints (and nothing restarts);
 * - liveness failing kills and restarts the container: the events, RESTARTS, `logs --previous`;
 * - each delay measured beside where it comes from (period × threshold).
 *
 * The cluster is code/cmd/testing/local-cluster.ts (LocalCluster), the same one chapter 7's proofs
 * run: the chapter-3 PKI, Node and RBAC authorization, each component started as a learner starts
 * it. Probe periods are 1 s so the tour takes about half a minute. Every process it started — the
 * components and the containers, which outlive their kubelet on purpose — is stopped when the demo
 * ends: normally, on an error, or on Ctrl-C (an exit hook SIGKILLs components still starting).
 *
 * Usage: npm run chapter -- 7
 *
 * @upstream none — course demo
 * @chapter 07-kubelet
 */
import { readFileSync, statSync } from "node:fs";
import { mkdtemp, readFile, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { basename, join, relative } from "node:path";
import { fileURLToPath } from "node:url";
import { parseAllDocuments } from "yaml";
import type { Endpoints, Event, Pod, Probe } from "../../code/api/core.ts";
import type { KubeObject } from "../../code/api/meta.ts";
import type { Watch } from "../../code/client/tools/cache/listwatch.ts";
import type { CommandProcess } from "../../code/cmd/testing/command-process.ts";
import { LocalCluster } from "../../code/cmd/testing/local-cluster.ts";
import { cleanupSync, track, trackTempDir } from "../../code/testing/child-process.ts";
import {
  cyan,
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

// #region manifest
/** The pod and its Service (chapters/07-kubelet/web.yaml): a learner can apply it as it is. */
const manifestFile = fileURLToPath(new URL("./web.yaml", import.meta.url));
const manifest = readFileSync(manifestFile, "utf8");

/** The probes' settings as the manifest sets them, with upstream's defaults for what it leaves out. */
function probeSettings(text: string) {
  const pod = parseAllDocuments(text)
    .map((d) => d.toJS() as Pod)
    .find((o) => o.kind === "Pod") as Pod;
  const c = pod.spec.containers[0];
  const of = (p: Probe | undefined) => ({
    period: p?.periodSeconds ?? 10,
    failureThreshold: p?.failureThreshold ?? 3,
    successThreshold: p?.successThreshold ?? 1,
  });
  const delay = c.args?.find((a) => a.startsWith("--start-delay="))?.split("=")[1];
  return {
    startup: of(c.startupProbe),
    liveness: of(c.livenessProbe),
    readiness: of(c.readinessProbe),
    startDelay: Number(delay ?? 0),
  };
}
const probes = probeSettings(manifest);
// #endregion manifest

/** What the API server records: the kubelets' pod reads and status writes, and the binding. */
const auditPolicy = `apiVersion: audit.k8s.io/v1
kind: Policy
omitStages: ["RequestReceived"]
rules:
- level: Metadata
  userGroups: ["system:nodes"]
  verbs: ["list", "watch", "patch"]
  resources: [{group: "", resources: ["pods", "pods/status"]}]
- level: Metadata
  users: ["system:kube-scheduler"]
  verbs: ["create"]
  resources: [{group: "", resources: ["pods/binding"]}]
`;

interface AuditEvent {
  auditID: string;
  verb: string;
  requestURI: string;
  user: { username?: string };
  objectRef?: { name?: string; subresource?: string };
}

/** One thing the demo's watches saw, when it arrived. */
type Seen =
  | { at: number; kind: "pod"; pod: Pod }
  | { at: number; kind: "endpoints"; ep: Endpoints }
  | { at: number; kind: "event"; event: Event };

/** The pod and its Endpoints as the watches had them right after one entry. */
interface State {
  pod?: Pod;
  ep?: Endpoints;
  s: Seen;
}

const seconds = (ms: number) => `${(ms / 1000).toFixed(2)} s`;
const cond = (p: Pod | undefined, type: string) =>
  p?.status?.conditions?.find((c) => c.type === type)?.status ?? "-";
const container = (p: Pod | undefined) => p?.status?.containerStatuses?.[0];

/** A pod as one line: phase, node, the container's state, started/ready, restarts, Ready. */
function podLine(p: Pod): string {
  const cs = container(p);
  const state = cs?.state?.running
    ? "running"
    : cs?.state?.waiting
      ? `waiting: ${cs.state.waiting.reason}`
      : cs?.state?.terminated
        ? `terminated: ${cs.state.terminated.reason}`
        : "-";
  return [
    (p.status?.phase ?? "-").padEnd(7),
    (p.spec.nodeName ?? "-").padEnd(6),
    state.padEnd(26),
    `started=${cs?.started ?? "-"}`.padEnd(13),
    `ready=${cs?.ready ?? "-"}`.padEnd(11),
    `restarts=${cs?.restartCount ?? "-"}`.padEnd(10),
    `Ready=${cond(p, "Ready")}`,
  ].join(" ");
}

/** Where the pod `ip` stands in Endpoints `ep`: ready, notReady, or absent. */
function endpointsOf(ep: Endpoints | undefined, ip: string): "ready" | "notReady" | "absent" {
  const s = ep?.subsets ?? [];
  if (s.some((x) => x.addresses?.some((a) => a.ip === ip))) return "ready";
  if (s.some((x) => x.notReadyAddresses?.some((a) => a.ip === ip))) return "notReady";
  return "absent";
}

/** An entry as a narration line: what changed, in the pod, its Endpoints or its events. */
function seenLine(s: Seen): string {
  if (s.kind === "pod") return `pod    ${podLine(s.pod)}`;
  if (s.kind === "endpoints") {
    const list = (k: "addresses" | "notReadyAddresses") =>
      (s.ep.subsets ?? []).flatMap((x) => (x[k] ?? []).map((a) => a.ip)).join(",") || "-";
    return `endpoints web  addresses=${list("addresses")}  notReadyAddresses=${list("notReadyAddresses")}`;
  }
  const e = s.event;
  const count = (e.count ?? 1) > 1 ? dim(` (x${e.count})`) : "";
  return `event  ${(e.type ?? "").padEnd(7)} ${(e.reason ?? "").padEnd(9)} ${e.message}${count}`;
}

/**
 * What the demo watches, as any client can: the pod `web`, its Service's Endpoints and its events,
 * each entry stamped with its arrival. Waits read the entries; the narration prints them as they
 * come — held while a kubectl command runs, so its output is not cut in two.
 */
class Watching {
  readonly seen: Seen[] = [];
  private readonly watches: Watch<KubeObject>[] = [];
  private narrating = false;
  private t0 = 0;
  private holds = 0;
  private readonly held: { s: Seen; line: string }[] = [];
  private readonly lastLine = new Map<string, string>();

  static async start(c: LocalCluster): Promise<Watching> {
    const w = new Watching();
    await w.follow(c.admin.coreV1.pods("default").watch({ fieldSelector: "metadata.name=web" }), (pod, at) =>
      w.record({ at, kind: "pod", pod }),
    );
    const endpoints = c.admin.resource<Endpoints>(
      { group: "", version: "v1", resource: "endpoints" },
      "default",
    );
    await w.follow(endpoints.watch({ fieldSelector: "metadata.name=web" }), (ep, at) =>
      w.record({ at, kind: "endpoints", ep }),
    );
    await w.follow(c.admin.coreV1.events("default").watch(), (event, at) => {
      if (event.involvedObject.kind === "Pod" && event.involvedObject.name === "web")
        w.record({ at, kind: "event", event });
    });
    return w;
  }

  private async follow<T extends KubeObject>(watch: Promise<Watch<T>>, add: (o: T, at: number) => void) {
    const w = await watch;
    this.watches.push(w as unknown as Watch<KubeObject>);
    void (async () => {
      for await (const ev of w)
        if (ev.type !== "ERROR" && ev.type !== "BOOKMARK") add(ev.object as T, Date.now());
    })().catch(() => {});
  }

  private record(s: Seen): void {
    this.seen.push(s);
    // An entry that shows the same as the one before it of its kind (a status write that changed
    // nothing shown here) is kept for the waits but not printed.
    const line = seenLine(s);
    if (this.lastLine.get(s.kind) === line) return;
    this.lastLine.set(s.kind, line);
    if (this.holds > 0) this.held.push({ s, line });
    else this.print(s, line);
  }

  private print(s: Seen, line: string): void {
    if (this.narrating && s.at >= this.t0) say(`${dim(`+${seconds(s.at - this.t0).padStart(7)}`)}  ${line}`);
  }

  /** Prints entries from now on, timed from `t0` (settable later, while held). */
  narrate(t0 = Date.now()): void {
    this.narrating = true;
    this.t0 = t0;
  }

  from(t0: number): void {
    this.t0 = t0;
  }

  quiet(): void {
    this.narrating = false;
  }

  hold(): void {
    this.holds++;
  }

  release(): void {
    if (--this.holds > 0) return;
    for (const { s, line } of this.held.splice(0)) this.print(s, line);
  }

  lastPod(): Pod | undefined {
    return (this.seen.findLast((s) => s.kind === "pod") as { pod: Pod } | undefined)?.pod;
  }

  /** The first entry at or after `from` after which `check` holds, or undefined. */
  first(from: number, check: (st: State) => boolean): Seen | undefined {
    let pod: Pod | undefined;
    let ep: Endpoints | undefined;
    for (const s of this.seen) {
      if (s.kind === "pod") pod = s.pod;
      if (s.kind === "endpoints") ep = s.ep;
      if (s.at >= from && check({ pod, ep, s })) return s;
    }
    return undefined;
  }

  /** Waits (bounded) for such an entry; its arrival time. */
  async until(what: string, from: number, check: (st: State) => boolean, ms = 60_000): Promise<number> {
    const deadline = Date.now() + ms;
    for (;;) {
      const s = this.first(from, check);
      if (s) return s.at;
      if (Date.now() > deadline) throw new Error(`timed out after ${ms / 1000} s waiting for ${what}`);
      await sleep(20);
    }
  }

  stop(): void {
    for (const w of this.watches) w.stop();
  }
}

/** Whether a process with this pid still exists. */
function alive(pid: number): boolean {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
}

async function main(): Promise<number> {
  demoFlags("npm run chapter -- 7", {});
  heading("The kubelet — pods from a watch, probes, restarts and endpoints");

  // Whatever way the demo ends, no component outlives it: the exit hook SIGKILLs each one still
  // running (LocalCluster.close() below also kills the containers, and is the normal way out).
  process.on("exit", cleanupSync);
  const work = trackTempDir(await mkdtemp(join(tmpdir(), "chapter-07-")));
  let cluster: LocalCluster | undefined;
  let watching: Watching | undefined;
  let stopped = false;
  const shutdown = async () => {
    if (stopped) return;
    stopped = true;
    watching?.stop();
    if (!cluster) return; // still starting: the exit hook kills what was started
    const c = cluster;
    const components: [string, number][] = [];
    for (const [name, p] of [
      ["kube-apiserver", c.apiserver],
      ["kube-controller-manager", c.controllerManager],
      ["kube-scheduler", c.scheduler],
      ...[...c.kubelets.values()].map((k) => [`kubelet ${k.name}`, k.process] as const),
    ] as const)
      if (p?.child.pid) components.push([name, p.child.pid]);
    const containers = c.containerProcesses().map((x) => x.pid);
    await c.close();
    // A killed container is no child of ours (its kubelet started it): wait for it to be gone.
    const all = [...components.map(([, pid]) => pid), ...containers];
    for (let i = 0; i < 100 && all.some(alive); i++) await sleep(50);
    const left = all.filter(alive);
    say(`Stopped the ${components.length} components (pids ${components.map(([, pid]) => pid).join(", ")}),`);
    const pids = containers.length === 1 ? "pid" : "pids";
    say(
      `then the containers they left running (${pids} ${containers.join(", ") || "-"}): containers outlive their kubelet.`,
    );
    say(left.length === 0 ? green("No process left running.") : yellow(`still running: ${left.join(", ")}`));
  };
  stopOnInterrupt(shutdown);

  let ok = false;
  try {
    // #region start
    step("A cluster of processes: kube-apiserver, kube-controller-manager, kube-scheduler, two kubelets");
    await writeFile(join(work, "audit-policy.yaml"), auditPolicy);
    const auditLog = join(work, "audit.log");
    const starting = Date.now();
    const since = () => dim(`+${seconds(Date.now() - starting).padStart(7)}`);
    /** Each process as it starts: its command, pid and the flags that tell it apart. */
    const started = (p: CommandProcess) => {
      track(p.child);
      const args = p.child.spawnargs;
      const command = basename(args.find((a) => a.endsWith(".ts")) ?? "?", ".ts");
      const flag = (name: string) => args.find((a) => a.startsWith(`--${name}=`));
      const node = flag("hostname-override")?.split("=")[1];
      const name = node ? `kubelet ${node}` : command;
      const shown = (
        node
          ? [flag("pod-cidr"), flag("runtime")]
          : command === "kube-apiserver"
            ? [flag("secure-port"), flag("authorization-mode")]
            : []
      ).join(" ");
      say(`${since()}  ${name.padEnd(23)}  pid ${String(p.child.pid).padEnd(7)} ${dim(shown)}`);
    };
    cluster = await LocalCluster.start({
      nodes: ["node-1", "node-2"],
      apiServerArgs: [
        `--audit-policy-file=${join(work, "audit-policy.yaml")}`,
        `--audit-log-path=${auditLog}`,
      ],
      controllerManagerArgs: ["--use-service-account-credentials"],
      onProcess: started,
    });
    const c = cluster;
    say(`${since()}  ${green("both nodes registered and Ready")}`);
    note("Each authenticates with its own certificate (chapter 3); kubectl below runs as the cluster admin.");
    note(
      "The kubelets start only once the API server serves; a node is Ready after its kubelet's first status.",
    );
    // #endregion start

    const w = await Watching.start(c);
    watching = w;
    /** Runs kubectl and shows it as a learner would see it; the narration waits until it is shown. */
    const kubectl = async (args: string[], show = (out: string) => out.split("\n"), after?: () => void) => {
      w.hold();
      try {
        const r = await c.kubectl(args);
        say(`${dim("$")} kubectl ${args.join(" ")}`);
        for (const line of show(r.stdout + r.stderr).filter((l) => l !== "")) say(`  ${line}`);
        if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${r.code}: ${r.stderr.trim()}`);
        after?.();
        return r;
      } finally {
        w.release();
      }
    };
    const audit = async (): Promise<AuditEvent[]> => {
      const text = await readFile(auditLog, "utf8");
      const ids = new Set<string>();
      const out: AuditEvent[] = [];
      for (const line of text.split("\n").filter((l) => l !== "")) {
        const ev = JSON.parse(line) as AuditEvent;
        if (ids.has(ev.auditID)) continue; // a watch logs ResponseStarted, later ResponseComplete
        ids.add(ev.auditID);
        out.push(ev);
      }
      return out;
    };
    /**
     * When `kubectl exec web -- touch|rm <file>` changed the file: the container's "/" is a folder
     * on the host (the process runtime's rootfs), so the file's modification time — once removed,
     * its folder's — says when, to the millisecond; kubectl exec's own round trip stays out.
     */
    const changedAt = (file: string, fallback: number) => {
      const p = w.lastPod();
      const id = container(p)?.containerID?.replace(/^[a-z]+:\/\//, "");
      const k = p?.spec.nodeName ? c.kubelets.get(p.spec.nodeName) : undefined;
      if (!id || !k) return fallback;
      const root = join(k.rootDir, "runtime", "containers", id, "rootfs");
      for (const f of [file, join(file, "..")]) {
        try {
          return statSync(join(root, f)).mtimeMs;
        } catch {
          // removed: its folder's time
        }
      }
      return fallback;
    };
    /** `kubectl exec web -- <command>`, the narration timed from the moment it changed `file`. */
    const execIn = async (command: string[], file: string) => {
      const from = Date.now();
      w.narrate(from);
      let at = from;
      await kubectl(["exec", "web", "--", ...command], undefined, () => {
        at = changedAt(file, from);
        w.from(at);
      });
      return { from, at };
    };

    // #region watch
    step("How a kubelet hears of its pods: it asks, with a field selector");
    const reads = (await audit()).filter(
      (e) => e.user.username?.startsWith("system:node:") && (e.verb === "list" || e.verb === "watch"),
    );
    say("Every list and watch of pods by a kubelet so far, from the API server's audit log:");
    for (const e of reads) say(`  ${e.user.username?.padEnd(19)} ${e.verb.padEnd(5)} ${cyan(e.requestURI)}`);
    note(`(kube-apiserver --audit-log-path=${auditLog}, a policy that records only these, the`);
    note("binding and the status writes; the folder is removed when the demo ends)");
    note(
      "A list (resourceVersion=0: served from the watch cache), then a watch from that list's resourceVersion.",
    );
    note("fieldSelector=spec.nodeName%3Dnode-1 is spec.nodeName=node-1: only the pods bound to that node.");
    note(
      "Nothing else reaches a kubelet, no call, no push: a bound pod arrives on this watch as ADDED (it did",
    );
    note("not match the selector before its binding: its spec.nodeName was empty).");
    // #endregion watch

    // #region to-ready
    step("course/web with three probes: from created to Ready");
    for (const line of manifest.split("\n").filter((l) => l !== "" && !l.startsWith("#"))) say(dim(line));
    w.narrate();
    await kubectl(["apply", "-f", relative(process.cwd(), manifestFile)], undefined, () => {
      const added = w.first(0, ({ s }) => s.kind === "pod");
      if (added) w.from(added.at);
    });
    const created = await w.until("web to be created", 0, ({ s }) => s.kind === "pod");
    const startedEvent = await w.until(
      "the Started event",
      created,
      ({ s }) => s.kind === "event" && s.event.reason === "Started",
    );
    const runningAt = await w.until("web running", created, ({ pod }) => !!container(pod)?.state?.running);
    const startedAt = await w.until("web started", created, ({ pod }) => !!container(pod)?.started);
    const readyAt = await w.until("web to be Ready", created, ({ pod }) => cond(pod, "Ready") === "True");
    w.quiet();
    const web = w.lastPod() as Pod;
    const node = web.spec.nodeName ?? "";
    const ip = web.status?.podIP ?? "";
    say(green(`Ready ${seconds(readyAt - created)} after it was created, on ${node}, podIP ${ip}.`));
    await kubectl(["get", "pod", "web", "-o", "wide"]);
    await kubectl(["describe", "pod", "web"], (out) => {
      const lines = out.split("\n");
      const at = (re: RegExp) => lines.findIndex((l) => re.test(l));
      const probeLines = lines.filter((l) => /^\s+(Liveness|Readiness|Startup):/.test(l));
      const c0 = at(/^Conditions:/);
      const c1 = at(/^Volumes:|^QoS Class:/);
      const conditions = c0 >= 0 ? lines.slice(c0, c1 > c0 ? c1 : c0 + 7) : [];
      return [dim("… (its probes and conditions)"), ...probeLines, ...conditions];
    });
    say("The requests that moved it, from the audit log:");
    const counted = new Map<string, number>();
    for (const e of (await audit()).filter((x) => x.objectRef?.name === "web")) {
      const key = `${e.user.username?.padEnd(21)} ${e.verb.toUpperCase().padEnd(6)} ${e.requestURI}`;
      counted.set(key, (counted.get(key) ?? 0) + 1);
    }
    for (const [key, n] of counted) say(`  ${cyan(key)}${n > 1 ? `   × ${n}` : ""}`);
    note(
      `The scheduler binds; ${node}'s watch brings the pod; its kubelet starts the container and reports each`,
    );
    note("change as a PATCH of pods/status — the only way the rest of the cluster learns what happened.");
    // #endregion to-ready

    // #region readiness
    step("Readiness fails: out of the Service's endpoints (and nothing restarts)");
    await w.until(`${ip} in web's endpoints`, created, ({ ep }) => endpointsOf(ep, ip) === "ready");
    await kubectl(["get", "endpoints", "web"]);
    const unready = await execIn(["touch", "/tmp/unready"], "/tmp/unready");
    const notReadyAt = await w.until(
      "web not Ready",
      unready.from,
      ({ pod }) => cond(pod, "Ready") === "False",
    );
    const leftAt = await w.until(
      "web out of its endpoints",
      notReadyAt,
      ({ ep }) => endpointsOf(ep, ip) === "notReady",
    );
    w.quiet();
    await kubectl(["get", "endpoints", "web"]);
    await kubectl(["get", "pod", "web"]);
    note(
      "Not ready is not dead: the process runs on, 0 restarts; only the Service stops sending it traffic.",
    );
    const readyAgain = await execIn(["rm", "/tmp/unready"], "/tmp/unready");
    const readyAgainAt = await w.until(
      "web Ready again",
      readyAgain.from,
      ({ pod }) => cond(pod, "Ready") === "True",
    );
    const backAt = await w.until(
      "web back in its endpoints",
      readyAgainAt,
      ({ ep }) => endpointsOf(ep, ip) === "ready",
    );
    w.quiet();
    await kubectl(["get", "endpoints", "web"]);
    // #endregion readiness

    // #region liveness
    step("Liveness fails: the kubelet kills the container and starts a new one");
    const oldPids = c.containerProcesses().map((x) => x.pid);
    const unhealthy = await execIn(["touch", "/tmp/unhealthy"], "/tmp/unhealthy");
    const killingAt = await w.until(
      "the Killing event",
      unhealthy.from,
      ({ s }) => s.kind === "event" && s.event.reason === "Killing",
    );
    const restartedAt = await w.until(
      "the new container's Started event",
      killingAt,
      ({ s }) => s.kind === "event" && s.event.reason === "Started",
    );
    const readyAfterRestartAt = await w.until(
      "web Ready and in its endpoints after the restart",
      restartedAt,
      ({ pod, ep }) =>
        (container(pod)?.restartCount ?? 0) >= 1 &&
        cond(pod, "Ready") === "True" &&
        endpointsOf(ep, ip) === "ready",
    );
    w.quiet();
    const newPids = c.containerProcesses().map((x) => x.pid);
    say(
      `The container's process: pid ${oldPids.join(",")} (${oldPids.some(alive) ? "still running" : "gone"}) → pid ${newPids.join(",")}.`,
    );
    await kubectl(["get", "pods"]);
    await kubectl(["logs", "web", "--previous", "--tail=4"]);
    const last = container(w.lastPod());
    const term = last?.lastState?.terminated;
    say(
      `lastState.terminated: exitCode ${term?.exitCode}, reason ${term?.reason}, restartCount ${last?.restartCount}`,
    );
    note("course/web exits 0 on SIGTERM, hence Completed: the reason says how the process ended, not why.");
    note(
      "The new container has a fresh /tmp, so it is healthy; its startup probe gated the others again, so it",
    );
    note(
      "left the endpoints while it started. Another failure now would wait 10 s first (CrashLoopBackOff).",
    );
    // #endregion liveness

    // #region measured
    step("What was measured (when this process's watches saw each change)");
    const r = probes.readiness;
    const l = probes.liveness;
    const rows: [string, number, string][] = [
      [
        "created → Started event",
        startedEvent - created,
        "binding, the kubelet's watch, the image 'pull', the process start",
      ],
      [
        "Started event → status running",
        runningAt - startedEvent,
        "the PLEG's next relist (every 1 s) syncs the pod again",
      ],
      [
        "Started event → started=true",
        startedAt - startedEvent,
        `--start-delay ${probes.startDelay} s, then the startup probe's next tick (≤ period ${probes.startup.period} s)`,
      ],
      [
        "started=true → Ready",
        readyAt - startedAt,
        `readiness skipped its ticks until started: its next one (≤ ${r.period} s)`,
      ],
      [
        "touch /tmp/unready → Ready=False",
        notReadyAt - unready.at,
        `failureThreshold ${r.failureThreshold} × period ${r.period} s: ${r.failureThreshold - 1}–${r.failureThreshold} s after the change`,
      ],
      [
        "Ready=False → out of endpoints",
        leftAt - notReadyAt,
        "the endpoints controller, on the pod's watch event",
      ],
      [
        "rm /tmp/unready → Ready=True",
        readyAgainAt - readyAgain.at,
        `successThreshold ${r.successThreshold} × period ${r.period} s: ≤ ${r.period} s`,
      ],
      ["Ready=True → back in endpoints", backAt - readyAgainAt, "the endpoints controller again"],
      [
        "touch /tmp/unhealthy → Killing",
        killingAt - unhealthy.at,
        `failureThreshold ${l.failureThreshold} × period ${l.period} s: ${l.failureThreshold - 1}–${l.failureThreshold} s after the change`,
      ],
      [
        "Killing → Started again",
        restartedAt - killingAt,
        "SIGTERM, its exit, and a restart with no back-off (the first)",
      ],
      [
        "Started again → Ready, in endpoints",
        readyAfterRestartAt - restartedAt,
        `startup again (--start-delay ${probes.startDelay} s), then readiness`,
      ],
    ];
    for (const [what, ms, from] of rows) say(`${what.padEnd(36)} ${seconds(ms).padStart(7)}   ${dim(from)}`);
    note("A change lands somewhere between two probe ticks: n failures in a row take n − 1 to n periods.");
    note("A loaded machine adds to every figure. Upstream's defaults: periodSeconds 10, failureThreshold 3.");
    // #endregion measured
    ok = true;
  } finally {
    if (ok) step("Cleanup");
    await shutdown();
  }
  return 0;
}

runDemo(main);

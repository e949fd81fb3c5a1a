/**
 * `npm run cluster` as a learner runs it, every subcommand its own process: `start` (with `--ha`:
 * two schedulers and two controller-managers electing leaders) prints the KUBECONFIG line and a
 * line per component and waits for the node; the real kubectl works with that KUBECONFIG; a
 * second terminal's `status` sees it all, a second `start` is refused; a pod's life is traced
 * across the processes — the span file holds the API server's, the scheduler's and the kubelet's
 * spans of it in the order of its life, the binding's traceparent crossing from the scheduler to
 * the API server — and `trace <pod>` prints it; a pod's container runs; `stop` from a third
 * process leaves no process behind (containers included). A second cluster (`--tracing=false`):
 * a component killed is reported, SIGINT on the supervisor stops everything, `down` removes the
 * directory.
 * The ClusterLauncher as chaos drives it, on a control plane without nodes: SIGSTOP/SIGCONT,
 * kill -9 reported, restart with the same command line (same port, same data: etcd and the API
 * server restarted, an object written before is still there), stop leaving nothing.
 * Process-heavy: two clusters and one node-less control plane, one after the other; each
 * `afterAll` kills what its cluster started, even when a test failed.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import { runKubectl } from "../apiserver/testing/kubectl-env.ts";
import { newForConfig } from "../client/kubernetes/clientset.ts";
import { buildConfigFromFlags } from "../client/tools/clientcmd/client-config.ts";
import { type ContainerRecord, isSameProcess, readRecords } from "../kubelet/runtime/process-state.ts";
import { waitFor } from "../testing/wait-for.ts";
import type { SpanRecord } from "../tracing/collector.ts";
import { ClusterLauncher } from "./cluster/launcher.ts";
import { type ClusterState, type ComponentState, killRecorded, readState } from "./cluster/state.ts";
import { formatTimeline, gatherPodSpans, milestones, parseSpans } from "./cluster/trace.ts";
import { type CommandProcess, startCommand } from "./testing/command-process.ts";
import { startSleeperPod } from "./testing/sleeper-pod.ts";

const clusterFile = new URL("./cluster.ts", import.meta.url).pathname;
/** `--fake-nodes` is tested once kubemark (chapter 8, another branch) is in the checkout. */
const hasKubemark = existsSync(new URL("./kubemark.ts", import.meta.url).pathname);
const hookTimeout = 300_000;

const kubectl = (kubeconfig: string, args: string[]) =>
  runKubectl({ ...process.env, KUBECONFIG: kubeconfig }, args, { timeoutMs: 60_000 });

/** Every process the cluster recorded (components, and containers by their runtime records), with its start token. */
function recorded(state: ClusterState): { what: string; pid: number; token?: string }[] {
  const out = state.components.map((c) => ({ what: c.name, pid: c.pid, token: c.startToken }));
  for (const root of state.kubeletRootDirs)
    for (const r of readRecords<ContainerRecord>(join(root, "runtime", "containers")))
      if (r.pid !== undefined)
        out.push({ what: `container ${r.status.id}`, pid: r.pid, token: r.startToken });
  return out;
}

const stillRunning = (procs: { what: string; pid: number; token?: string }[]) =>
  procs.filter((p) => isSameProcess(p.pid, p.token)).map((p) => `${p.what} (pid ${p.pid})`);

/** A subcommand run to its end in its own process. */
async function subcommand(args: string[], timeoutMs = 120_000) {
  const p = startCommand(clusterFile, args);
  try {
    const code = await p.waitForExit(timeoutMs);
    return { code, stdout: p.stdout(), stderr: p.stderr() };
  } finally {
    p.kill();
  }
}

/** Kills the supervisor and, from its state file, everything it recorded; removes the dir. */
function cleanup(supervisor: CommandProcess | undefined, dir: string, seen: ClusterState | undefined): void {
  supervisor?.kill();
  const state = readState(dir) ?? seen;
  if (state) killRecorded(state);
  rmSync(dir, { recursive: true, force: true });
}

describeWithTools("npm run cluster, every component its own process", ["kubectl"], () => {
  const dir = mkdtempSync(join(tmpdir(), "cluster-cmd-"));
  let supervisor: CommandProcess | undefined;
  let state: ClusterState | undefined;

  beforeAll(async () => {
    supervisor = startCommand(clusterFile, ["--dir", dir, "--nodes", "1", "--ha"]);
    try {
      await supervisor.waitForStdout("cluster ready", hookTimeout - 10_000);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${supervisor.stdout()}\n${supervisor.stderr()}`);
    }
    state = readState(dir);
  }, hookTimeout);

  afterAll(() => cleanup(supervisor, dir, state), 60_000);

  it("prints the KUBECONFIG to export and a line per component with its pid, port and log", () => {
    const out = supervisor!.stdout();
    const kubeconfig = join(dir, "pki", "admin.kubeconfig");
    expect(out).toContain(`export KUBECONFIG=${kubeconfig}\n`);
    expect(state?.kubeconfig).toBe(kubeconfig);
    const names = state!.components.map((c) => c.name);
    expect(names).toEqual([
      "etcd",
      "kube-apiserver",
      "kube-controller-manager-1",
      "kube-controller-manager-2",
      "kube-scheduler-1",
      "kube-scheduler-2",
      "kubelet-node-1",
    ]);
    for (const c of state!.components) {
      expect(out).toMatch(new RegExp(`^${c.name} +pid ${c.pid} +port ${c.port} +logs/${c.name}\\.log$`, "m"));
      expect(existsSync(c.log)).toBe(true);
    }
    // The span collector runs in the supervisor, and cluster.json says where its spans go.
    expect(state?.traces).toBe(join(dir, "traces.jsonl"));
    expect(out).toMatch(
      new RegExp(`^span collector +pid ${state?.supervisorPid} +port \\d+ +traces\\.jsonl$`, "m"),
    );
    expect(out).toMatch(/^waiting for nodes: [01]\/1 Ready \(\d+ s\)$/m);
    expect(out).toMatch(/^cluster ready in \d+ s: 1 node Ready/m);
    expect(state?.supervisorPid).toBe(supervisor!.child.pid);
  });

  it("is driven by the real kubectl with that KUBECONFIG", async () => {
    const r = await kubectl(state!.kubeconfig, ["get", "nodes", "--no-headers"]);
    expect(r.err).toBe("");
    expect(r.out).toMatch(/^node-1\s+Ready\s/);
  });

  it("elects one leader of each pair (--ha)", async () => {
    const leases = await waitFor(
      "both Leases held",
      async () => {
        const r = await kubectl(state!.kubeconfig, [
          "get",
          "leases",
          "-n",
          "kube-system",
          "-o",
          'jsonpath={range .items[*]}{.metadata.name}={.spec.holderIdentity}{"\\n"}{end}',
        ]);
        const held = Object.fromEntries(
          r.out
            .trim()
            .split("\n")
            .map((l) => l.split("=")),
        );
        return held["kube-scheduler"] && held["kube-controller-manager"] ? held : undefined;
      },
      120_000,
    );
    // Each replica is its own candidate (hostname_<uuid>); the holder is one of the pair.
    const identities = (kind: string) =>
      state!.components
        .filter((c) => c.kind === kind)
        .map((c) => /"Leader election candidate" identity="([^"]+)"/.exec(readFileSync(c.log, "utf8"))?.[1]);
    for (const kind of ["kube-scheduler", "kube-controller-manager"]) {
      const ids = identities(kind);
      expect(new Set(ids).size).toBe(2);
      expect(ids).toContain(leases[kind]);
    }
  });

  it("answers status from a second process: every component running, the node Ready", async () => {
    const r = await subcommand(["status", "--dir", dir]);
    expect(r.code).toBe(0);
    for (const c of state!.components)
      expect(r.stdout).toMatch(new RegExp(`^${c.name} +running +${c.pid} `, "m"));
    expect(r.stdout).toMatch(/^node-1 +True$/m);
    expect(r.stdout).toContain(
      `traces ${join(dir, "traces.jsonl")}   (a pod's life: npm run cluster -- trace <pod>)\n`,
    );
  });

  it("refuses a second start on the same directory, in one line that says how to stop the first", async () => {
    const r = await subcommand(["--dir", dir, "--nodes", "1"]);
    expect(r.code).toBe(1);
    expect(r.stderr).toBe(
      `a cluster is already running in ${dir} (supervisor pid ${state!.supervisorPid}, since ${state!.startedAt}): stop it with \`npm run cluster -- stop\`\n`,
    );
    expect(readState(dir)?.supervisorPid).toBe(state!.supervisorPid);
  });

  it("traces a pod's life across the API server, the scheduler and the kubelet, and `trace <pod>` prints it", async () => {
    const admin = newForConfig(buildConfigFromFlags("", state!.kubeconfig, {}));
    let uid = "";
    try {
      const created = await admin.coreV1.pods("default").create({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "traced" },
        spec: {
          containers: [
            {
              name: "web",
              image: "course/web:1.0",
              ports: [{ containerPort: 8080 }],
              readinessProbe: { httpGet: { path: "/readyz", port: 8080 }, periodSeconds: 1 },
            },
          ],
        },
      });
      uid = created.metadata.uid ?? "";
      await waitFor(
        "pod traced Ready",
        async () =>
          (await admin.coreV1.pods("default").get("traced")).status?.conditions?.some(
            (c) => c.type === "Ready" && c.status === "True",
          ) ?? false,
        180_000,
      );
    } finally {
      admin.closeIdleConnections();
    }
    // Spans reach the file a second or so after they end (each component's batch processor).
    const mine = await waitFor(
      "the pod's spans from every component, through Ready",
      async () => {
        const got = gatherPodSpans(parseSpans(await readFile(state!.traces!, "utf8").catch(() => "")), uid);
        const m = milestones(got);
        const started = got.some((s) => s.name === "runtime.v1.RuntimeService/StartContainer");
        return m.created && m.scheduled && m.ready && started ? got : undefined;
      },
      120_000,
    );
    const attr = (s: SpanRecord, k: string) => s.attributes[k];
    expect([...new Set(mine.map((s) => s.service))]).toEqual(
      expect.arrayContaining(["apiserver", "kube-scheduler", "kubelet"]),
    );
    for (const s of mine.filter((x) => attr(x, "k8s.pod.uid") !== undefined))
      expect(attr(s, "k8s.pod.uid")).toBe(uid);
    const first = (pred: (s: SpanRecord) => boolean, what: string) => {
      const found = mine.find(pred);
      if (!found) throw new Error(`no ${what} span among:\n${formatTimeline(mine).join("\n")}`);
      return found;
    };
    const create = first((s) => s.name === "Create etcd3", "storage create");
    const schedule = first((s) => s.name === "scheduleOne", "scheduleOne");
    const bindingCycle = first((s) => s.name === "bindingCycle", "bindingCycle");
    const bindRequest = first((s) => attr(s, "k8s.subresource") === "binding", "binding request");
    const sync = first((s) => s.name === "syncPod" && s.service === "kubelet", "kubelet syncPod");
    const start = first((s) => s.name === "runtime.v1.RuntimeService/StartContainer", "StartContainer");
    const readySpan = first(
      (s) => s.name === "statusManager.syncPod" && attr(s, "k8s.pod.ready") === true,
      "Ready status",
    );
    // The binding request is the API server's span, child of the scheduler's: one trace, two processes.
    expect(bindRequest.service).toBe("apiserver");
    expect(bindRequest.traceId).toBe(bindingCycle.traceId);
    expect(bindRequest.parentSpanId).toBe(bindingCycle.spanId);
    // The container was started from inside the kubelet's sync.
    expect(start.traceId).toBe(sync.traceId);
    // The life, in order (clocks of one machine). Cause before effect, span START against start:
    // the watch can deliver a write before the writer's span has ended (the API server still
    // answering its client), so a quick scheduler may begin before the create span ends.
    expect(create.startMs).toBeLessThanOrEqual(schedule.startMs);
    expect(schedule.startMs).toBeLessThanOrEqual(bindRequest.startMs);
    expect(bindRequest.startMs).toBeLessThanOrEqual(sync.startMs);
    expect(sync.startMs).toBeLessThanOrEqual(start.startMs);
    expect(start.endMs).toBeLessThanOrEqual(readySpan.startMs);
    // The watch delivered the pod to the scheduler and to the kubelet of its node.
    const watchers = new Set(
      mine.filter((s) => s.name.startsWith("watch ")).map((s) => attr(s, "k8s.watcher")),
    );
    expect(watchers).toContain("system:kube-scheduler");
    expect(watchers).toContain("system:node:node-1");

    // What a learner types: the timeline from cluster.json's `traces`, every component on it.
    const r = await subcommand(["trace", "traced", "--dir", dir]);
    expect(r.code).toBe(0);
    expect(r.stdout).toMatch(
      new RegExp(`^pod default/traced \\(uid ${uid}\\): \\d+ spans from [3-9] components`, "m"),
    );
    for (const service of ["apiserver", "kube-scheduler", "kubelet"])
      expect(r.stdout).toMatch(new RegExp(`^ *\\+[\\d.]+ +${service} +\\S`, "m"));
    expect(r.stdout).toMatch(
      /^created → scheduled \+[\d.]+ms → running \+[\d.]+ms → ready \+[\d.]+ms \(total [\d.]+ms\)$/m,
    );
  }, 420_000);

  it("stops from a third process, leaving no component and no container running", async () => {
    await startSleeperPod(state!.kubeconfig, 120_000);
    const before = recorded(readState(dir)!);
    expect(before.filter((p) => p.what.startsWith("container")).length).toBeGreaterThan(0);
    expect(stillRunning(before)).toHaveLength(before.length);

    const r = await subcommand(["stop", "--dir", dir], 120_000);
    expect(r.stdout).toContain("stopped\n");
    expect(r.code).toBe(0);
    expect(await supervisor!.waitForExit(30_000)).toBe(0);
    expect(stillRunning(before)).toEqual([]);
    expect(existsSync(join(dir, "cluster.json"))).toBe(false);
    expect(existsSync(join(dir, "logs", "kube-apiserver.log"))).toBe(true);
  });
});

describeWithTools("npm run cluster, stopped by Ctrl-C", ["kubectl"], () => {
  const dir = mkdtempSync(join(tmpdir(), "cluster-sigint-"));
  let supervisor: CommandProcess | undefined;
  let state: ClusterState | undefined;

  beforeAll(async () => {
    supervisor = startCommand(clusterFile, [
      "--dir",
      dir,
      "--nodes",
      "1",
      "--tracing=false",
      ...(hasKubemark ? ["--fake-nodes", "3"] : []),
    ]);
    try {
      await supervisor.waitForStdout("cluster ready", hookTimeout - 10_000);
    } catch (e) {
      throw new Error(`${(e as Error).message}\n${supervisor.stdout()}\n${supervisor.stderr()}`);
    }
    state = readState(dir);
  }, hookTimeout);

  afterAll(() => cleanup(supervisor, dir, state), 60_000);

  it.runIf(hasKubemark)(
    "hosts --fake-nodes 3 in one kubemark process, Ready beside the real node",
    async () => {
      expect(state!.components.filter((c) => c.kind === "kubemark").map((c) => c.name)).toEqual(["kubemark"]);
      expect(supervisor!.stdout()).toMatch(/^cluster ready in \d+ s: 4 nodes Ready/m);
      const r = await kubectl(state!.kubeconfig, ["get", "nodes", "--no-headers"]);
      for (const n of ["node-1", "hollow-node-0", "hollow-node-1", "hollow-node-2"])
        expect(r.out).toMatch(new RegExp(`^${n}\\s+Ready\\s`, "m"));
    },
  );

  it("reports a component that dies, with its exit and its log's last lines, and leaves it down", async () => {
    const scheduler = state!.components.find((c) => c.name === "kube-scheduler")!;
    process.kill(scheduler.pid, "SIGKILL");
    // The whole report, its first log line included: a pipe may hand it over in more than one read.
    await supervisor!.waitForStderr(
      `kube-scheduler (pid ${scheduler.pid}) exited with signal SIGKILL; it stays down (the last lines of logs/kube-scheduler.log):\n  `,
      60_000,
    );
    const r = await subcommand(["status", "--dir", dir]);
    expect(r.stdout).toMatch(new RegExp(`^kube-scheduler +exited +${scheduler.pid} `, "m"));
    // --tracing=false: no collector, no span file, no tracing flag given to any component.
    expect(r.stdout).toContain("traces: none (started with --tracing=false)\n");
    expect(state?.traces).toBeUndefined();
    expect(existsSync(join(dir, "traces.jsonl"))).toBe(false);
    for (const c of state!.components)
      expect(c.args.join(" ")).not.toMatch(/--tracing-config-file|--config=/);
  });

  it("stops everything on SIGINT, removes cluster.json, keeps the logs; down removes the directory", async () => {
    const before = recorded(readState(dir)!);
    supervisor!.child.kill("SIGINT");
    expect(await supervisor!.waitForExit(120_000)).toBe(0);
    expect(supervisor!.stdout()).toContain("SIGINT: stopping every component and container…\n");
    expect(stillRunning(before)).toEqual([]);
    expect(existsSync(join(dir, "cluster.json"))).toBe(false);
    expect(existsSync(join(dir, "logs", "etcd.log"))).toBe(true);

    const r = await subcommand(["down", "--dir", dir]);
    expect(r.code).toBe(0);
    expect(existsSync(dir)).toBe(false);
  });
});

describe("ClusterLauncher, as chaos drives it", () => {
  const dir = mkdtempSync(join(tmpdir(), "cluster-launcher-"));
  let cluster: ClusterLauncher | undefined;
  const exits: string[] = [];

  beforeAll(async () => {
    cluster = await ClusterLauncher.start({
      dir,
      nodes: 0,
      fakeNodes: 0,
      etcd: "ours",
      etcdMembers: 1,
      ha: 1,
      onExit: (c, code, sig) => {
        exits.push(`${c.name} ${sig ?? code}`);
        console.error(readFileSync(c.log, "utf8").slice(-3000));
      },
    });
  }, hookTimeout);

  afterAll(async () => {
    const seen = cluster?.components() ?? [];
    await cluster?.stop();
    killRecorded({ ...readState(dir), components: seen, kubeletRootDirs: [] } as ClusterState);
    rmSync(dir, { recursive: true, force: true });
  }, 60_000);

  const find = (name: string): ComponentState => cluster!.components().find((c) => c.name === name)!;
  const procState = (pid: number) => {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[0];
  };

  it("pauses and resumes a component (SIGSTOP, SIGCONT) without reporting it", async () => {
    const { pid } = find("kube-scheduler");
    expect(cluster!.pause("kube-scheduler")).toBe(true);
    await waitFor("the scheduler stopped", async () => procState(pid) === "T");
    cluster!.resume("kube-scheduler");
    await waitFor("the scheduler running again", async () => procState(pid) !== "T");
    expect(exits).toEqual([]);
  });

  it("restarts etcd and the API server with the same command line; what was written survives", async () => {
    await cluster!.admin.coreV1.configMaps("default").create({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "kept" },
      data: { a: "1" },
    });
    for (const name of ["etcd", "kube-apiserver"]) {
      const before = find(name);
      const after = await cluster!.restart(name);
      expect(after.pid).not.toBe(before.pid);
      expect({ ...after, pid: 0, startToken: "" }).toEqual({ ...before, pid: 0, startToken: "" });
    }
    const cm = await waitFor(
      "the ConfigMap through the restarted API server",
      () => cluster!.admin.coreV1.configMaps("default").get("kept"),
      120_000,
    );
    expect(cm.data).toEqual({ a: "1" });
    expect(exits).toEqual([]);
  });

  it("reports a component killed (-9) and stops everything, leaving nothing running", async () => {
    const scheduler = find("kube-scheduler");
    cluster!.kill("kube-scheduler");
    await waitFor("the exit reported", async () => exits.includes("kube-scheduler SIGKILL"));
    const all = cluster!.components();
    await cluster!.stop();
    expect(stillRunning(all.map((c) => ({ what: c.name, pid: c.pid, token: c.startToken })))).toEqual([]);
    expect(scheduler.pid).toBe(find("kube-scheduler").pid);
  });
});

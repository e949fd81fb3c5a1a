/**
 * kube-scheduler as a learner runs it: flags read as upstream's, a bad flag or config refused
 * in one line, and the binary started as a child against our API server, driven by the real
 * kubectl as admin, the scheduler as the PKI's kube-scheduler identity over HTTPS with RBAC —
 * pods land where they fit, a pod that fits nowhere shows FailedScheduling and is
 * placed when a node is added, taints and tolerations, scheduling gates, and a second profile
 * from `--config`. Nodes are plain Node objects (no kubelet yet). One API server and one
 * scheduler for the whole file; the scenarios share them and run in order.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { request } from "node:https";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import { type SecuredKubectlCluster, startSecuredKubectlCluster } from "../apiserver/testing/kubectl-env.ts";
import { freePort } from "../testing/ports.ts";
import { waitFor } from "../testing/wait-for.ts";
import { FlagError } from "./cli/flag.ts";
import { parseSchedulerFlags } from "./kube-scheduler.ts";
import { type CommandProcess, startCommand } from "./testing/command-process.ts";

const file = new URL("./kube-scheduler.ts", import.meta.url).pathname;

/** GET over HTTPS, trusting the scheduler's self-signed certificate (as a probe with insecureSkipVerify). */
function httpsGet(url: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request(url, { rejectUnauthorized: false }, (res) => {
      let body = "";
      res.on("data", (d) => {
        body += d;
      });
      res.on("end", () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on("error", reject);
    req.end();
  });
}

/** The shared poll (code/testing/wait-for.ts), the check first as these scenarios read. */
const eventually = <T>(check: () => Promise<T | undefined>, what: string): Promise<T> => waitFor(what, check);

describe("kube-scheduler flags", () => {
  it("has upstream's defaults", () => {
    expect(parseSchedulerFlags(["--master=http://127.0.0.1:8080"])).toMatchObject({
      run: {
        rest: { host: "http://127.0.0.1:8080", qps: 50, burst: 100 },
        config: {
          percentageOfNodesToScore: 0,
          podInitialBackoffSeconds: 1,
          podMaxBackoffSeconds: 10,
          profiles: [{ schedulerName: "default-scheduler" }],
        },
        securePort: 10259,
        bindAddress: "0.0.0.0",
        leaderElect: true,
        leaderElection: {
          leaderElect: true,
          leaseDurationMs: 15_000,
          renewDeadlineMs: 10_000,
          retryPeriodMs: 2_000,
          resourceLock: "leases",
          resourceName: "kube-scheduler",
          resourceNamespace: "kube-system",
        },
      },
    });
  });

  // chapter 6: upstream's ApplyLeaderElectionTo — with --config, a flag given wins over the
  // file's block and a flag left at its default does not; a bad combination is refused.
  it("merges --leader-elect* flags over the config file's leaderElection block", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sched-le-"));
    try {
      const cfg = join(dir, "config.yaml");
      await writeFile(
        cfg,
        [
          "apiVersion: kubescheduler.config.k8s.io/v1",
          "kind: KubeSchedulerConfiguration",
          "leaderElection: {leaderElect: false, leaseDuration: 30s, resourceName: from-file}",
          "",
        ].join("\n"),
      );
      expect(parseSchedulerFlags(["--master=http://x:1", `--config=${cfg}`])).toMatchObject({
        run: { leaderElect: false, leaderElection: { leaseDurationMs: 30_000, resourceName: "from-file" } },
      });
      expect(
        parseSchedulerFlags([
          "--master=http://x:1",
          `--config=${cfg}`,
          "--leader-elect",
          "--leader-elect-resource-name=from-flag",
        ]),
      ).toMatchObject({
        run: {
          leaderElect: true,
          leaderElection: { leaseDurationMs: 30_000, renewDeadlineMs: 10_000, resourceName: "from-flag" },
        },
      });
      const bad = parseSchedulerFlags(["--master=http://x:1", "--leader-elect-renew-deadline=20s"]);
      expect((bad as FlagError).message).toBe(
        "kube-scheduler: couldn't create leader elector: leaseDuration must be greater than renewDeadline",
      );
      const lock = parseSchedulerFlags(["--master=http://x:1", "--leader-elect-resource-lock=endpoints"]);
      expect((lock as FlagError).message).toBe(
        "kube-scheduler: couldn't create resource lock: endpoints lock is removed, migrate to leases",
      );
      // With --config, the merged block goes through the configuration's validation.
      const merged = parseSchedulerFlags([
        "--master=http://x:1",
        `--config=${cfg}`,
        "--leader-elect",
        "--leader-elect-lease-duration=5s",
      ]);
      expect((merged as FlagError).message).toContain(
        "leaderElection.leaseDuration: Invalid value: 10s: LeaseDuration must be greater than RenewDeadline",
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  it("needs --kubeconfig or --master, and says so with an example", () => {
    const err = parseSchedulerFlags([]);
    expect(err).toBeInstanceOf(FlagError);
    expect((err as FlagError).message).toBe(
      "kube-scheduler: --kubeconfig is required (or --master): e.g. --kubeconfig=pki/kube-scheduler.kubeconfig",
    );
  });

  it("a config file's clientConnection wins over --kube-api-qps / --kube-api-burst", async () => {
    const dir = await mkdtemp(join(tmpdir(), "sched-flags-"));
    try {
      const cfg = join(dir, "config.yaml");
      await writeFile(
        cfg,
        [
          "apiVersion: kubescheduler.config.k8s.io/v1",
          "kind: KubeSchedulerConfiguration",
          "clientConnection: {qps: 7, burst: 9}",
          "podMaxBackoffSeconds: 3",
          "",
        ].join("\n"),
      );
      expect(
        parseSchedulerFlags([
          "--master=http://x:1",
          `--config=${cfg}`,
          "--kube-api-qps=1",
          "--kube-api-burst=2",
        ]),
      ).toMatchObject({ run: { rest: { qps: 7, burst: 9 }, config: { podMaxBackoffSeconds: 3 } } });
      expect(parseSchedulerFlags(["--master=http://x:1", "--kube-api-qps=1"])).toMatchObject({
        run: { rest: { qps: 1, burst: 100 } },
      });
      const missing = parseSchedulerFlags(["--master=http://x:1", `--config=${join(dir, "nope.yaml")}`]);
      expect(missing).toBeInstanceOf(FlagError);
      expect((missing as FlagError).message).toContain(
        `open ${join(dir, "nope.yaml")}: no such file or directory`,
      );
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });
});

describeWithTools("kube-scheduler as a process, driven by the real kubectl", ["kubectl"], () => {
  let cluster: SecuredKubectlCluster | undefined;
  let sched: CommandProcess | undefined;
  let servePort: number;

  beforeAll(async () => {
    // Over HTTPS with RBAC, as the PKI's kube-scheduler identity: the bootstrap role
    // system:kube-scheduler must be enough for watching, binding, status patches and events.
    cluster = await startSecuredKubectlCluster("sched-cmd-");
    // Two profiles: the default one, and `second` that scores by packing (MostAllocated).
    const config = join(cluster.dir, "scheduler-config.yaml");
    await writeFile(
      config,
      [
        "apiVersion: kubescheduler.config.k8s.io/v1",
        "kind: KubeSchedulerConfiguration",
        "profiles:",
        "- schedulerName: default-scheduler",
        "- schedulerName: second",
        "  pluginConfig:",
        "  - name: NodeResourcesFit",
        "    args:",
        "      scoringStrategy:",
        "        type: MostAllocated",
        "        resources: [{name: cpu, weight: 1}, {name: memory, weight: 1}]",
        "",
      ].join("\n"),
    );
    servePort = await freePort();
    sched = startCommand(file, [
      `--kubeconfig=${cluster.kubeconfigOf("kube-scheduler")}`,
      `--config=${config}`,
      `--secure-port=${servePort}`,
      "--bind-address=127.0.0.1",
    ]);
    await sched.waitForStderr('"Caches are synced"');
  });
  afterAll(async () => {
    sched?.kill();
    await cluster?.close();
  });

  /** Runs kubectl as admin; resolves with its output and exit code (never rejects). */
  function kubectl(args: string[], stdin?: string): Promise<{ out: string; err: string; code: number }> {
    if (!cluster) throw new Error("no cluster: beforeAll failed");
    return cluster.kubectl(args, stdin);
  }
  async function ok(args: string[], stdin?: string): Promise<string> {
    const r = await kubectl(args, stdin);
    expect(r.err, `kubectl ${args.join(" ")}`).toBe("");
    expect(r.code, `kubectl ${args.join(" ")}`).toBe(0);
    return r.out;
  }
  const nodeYaml = (name: string, cpu: string, extra: string[] = []) =>
    [
      "apiVersion: v1",
      "kind: Node",
      "metadata:",
      `  name: ${name}`,
      `  labels: {kubernetes.io/hostname: ${name}}`,
      ...extra,
      "status:",
      `  capacity: {cpu: "${cpu}", memory: 8Gi, pods: "110"}`,
      `  allocatable: {cpu: "${cpu}", memory: 8Gi, pods: "110"}`,
      "",
    ].join("\n");
  const podYaml = (name: string, cpu: string, extra: string[] = []) =>
    [
      "apiVersion: v1",
      "kind: Pod",
      "metadata:",
      `  name: ${name}`,
      "spec:",
      ...extra,
      "  containers:",
      "  - name: c",
      "    image: registry.k8s.io/pause:3.10",
      `    resources: {requests: {cpu: "${cpu}"}}`,
      "",
    ].join("\n");
  const nodeOf = async (pod: string) => {
    const out = await ok(["get", "pod", pod, "-o", "jsonpath={.spec.nodeName}"]);
    return out === "" ? undefined : out;
  };

  it("serves /healthz, /livez, /readyz and /metrics over HTTPS", async () => {
    expect(sched?.stderr()).toContain(`Serving securely on 127.0.0.1:${servePort}`);
    expect(sched?.stderr()).toContain('"Starting Kubernetes Scheduler" version="v1.32.0"');
    // chapter 6: it elects by default; alone, it takes the Lease at its first try.
    await sched?.waitForStderr("successfully acquired lease kube-system/kube-scheduler");
    expect(sched?.stderr()).toMatch(/"Leader election candidate" identity="[^"]+_[0-9a-f-]{36}"/);
    for (const path of ["/healthz", "/livez", "/readyz"]) {
      expect(await httpsGet(`https://127.0.0.1:${servePort}${path}`)).toEqual({ status: 200, body: "ok" });
    }
    const metrics = await httpsGet(`https://127.0.0.1:${servePort}/metrics`);
    expect(metrics.status).toBe(200);
    expect(metrics.body).toContain("# TYPE scheduler_pending_pods gauge");
    expect(metrics.body).toContain('scheduler_pending_pods{queue="active"} 0');
  });

  it("pods with resource requests land only where they fit", async () => {
    await ok(["create", "-f", "-"], nodeYaml("small", "1"));
    await ok(["create", "-f", "-"], nodeYaml("big", "4"));
    await ok(["create", "-f", "-"], podYaml("two-cpus", "2"));
    expect(await eventually(() => nodeOf("two-cpus"), "two-cpus to be bound")).toBe("big");
    const described = await ok(["describe", "pod", "two-cpus"]);
    expect(described).toMatch(
      /Normal\s+Scheduled\s+.*default-scheduler\s+Successfully assigned default\/two-cpus to big/,
    );
    const metrics = await httpsGet(`https://127.0.0.1:${servePort}/metrics`);
    expect(metrics.body).toContain(
      'scheduler_schedule_attempts_total{result="scheduled",profile="default-scheduler"} 1',
    );
  });

  it("a pod that fits nowhere shows FailedScheduling, and is scheduled when a node is added", async () => {
    await ok(["create", "-f", "-"], podYaml("eight-cpus", "8"));
    const message = "0/2 nodes are available: 2 Insufficient cpu.";
    const events = await eventually(async () => {
      const out = await ok(["get", "events", "--field-selector", "involvedObject.name=eight-cpus"]);
      return out.includes("FailedScheduling") ? out : undefined;
    }, "a FailedScheduling event");
    expect(events).toContain(message);
    const described = await ok(["describe", "pod", "eight-cpus"]);
    expect(described).toMatch(
      /Warning\s+FailedScheduling\s+.*default-scheduler\s+0\/2 nodes are available: 2 Insufficient cpu\./,
    );
    const cond = await eventually(async () => {
      const out = await ok([
        "get",
        "pod",
        "eight-cpus",
        "-o",
        'jsonpath={.status.conditions[?(@.type=="PodScheduled")].reason}',
      ]);
      return out === "Unschedulable" ? out : undefined;
    }, "PodScheduled=False/Unschedulable");
    expect(cond).toBe("Unschedulable");
    expect(await ok(["get", "pod", "eight-cpus", "--no-headers"])).toMatch(/^eight-cpus\s+0\/1\s+Pending/);
    await ok(["create", "-f", "-"], nodeYaml("huge", "16"));
    expect(await eventually(() => nodeOf("eight-cpus"), "eight-cpus to be bound")).toBe("huge");
    // NodeResourcesFit registered Node/Add: the node's arrival moved the pod (to activeQ, or to
    // backoffQ if its 1 s backoff had not run out yet), and the attempt before counted as unschedulable.
    const metrics = await httpsGet(`https://127.0.0.1:${servePort}/metrics`);
    expect(metrics.body).toMatch(
      /scheduler_queue_incoming_pods_total\{queue="(active|backoff)",event="NodeAdd"\} 1/,
    );
    expect(metrics.body).toContain(
      'scheduler_schedule_attempts_total{result="unschedulable",profile="default-scheduler"} 1',
    );
  });

  it("taints keep pods off a node unless they tolerate them", async () => {
    await ok(
      ["create", "-f", "-"],
      nodeYaml("gpu", "32", ["spec:", "  taints: [{key: dedicated, value: gpu, effect: NoSchedule}]"]),
    );
    await ok(["create", "-f", "-"], podYaml("no-toleration", "20"));
    const events = await eventually(async () => {
      const out = await ok(["get", "events", "--field-selector", "involvedObject.name=no-toleration"]);
      return out.includes("FailedScheduling") ? out : undefined;
    }, "no-toleration's FailedScheduling");
    expect(events).toContain(
      "0/4 nodes are available: 1 node(s) had untolerated taint {dedicated: gpu}, 3 Insufficient cpu.",
    );
    await ok(
      ["create", "-f", "-"],
      podYaml("tolerates", "20", [
        "  tolerations: [{key: dedicated, operator: Equal, value: gpu, effect: NoSchedule}]",
      ]),
    );
    expect(await eventually(() => nodeOf("tolerates"), "tolerates to be bound")).toBe("gpu");
    expect(await nodeOf("no-toleration")).toBeUndefined();
  });

  it("a gated pod shows SchedulingGated and is scheduled once its gate is removed", async () => {
    await ok(["create", "-f", "-"], podYaml("gated", "1", ["  schedulingGates: [{name: example.com/wait}]"]));
    expect(await ok(["get", "pod", "gated", "--no-headers"])).toMatch(/^gated\s+0\/1\s+SchedulingGated/);
    // The queue parks it without trying: counted as gated, and no FailedScheduling for it.
    await eventually(async () => {
      const m = await httpsGet(`https://127.0.0.1:${servePort}/metrics`);
      return m.body.includes('scheduler_pending_pods{queue="gated"} 1') ? true : undefined;
    }, "the gated pod in scheduler_pending_pods");
    expect((await kubectl(["get", "events", "--field-selector", "involvedObject.name=gated"])).out).toBe("");
    await ok([
      "patch",
      "pod",
      "gated",
      "--type=json",
      "-p",
      '[{"op":"remove","path":"/spec/schedulingGates"}]',
    ]);
    expect(await eventually(() => nodeOf("gated"), "gated to be bound")).toBeDefined();
  });

  it("a pod with schedulerName: second is scheduled by the second profile", async () => {
    await ok(["create", "-f", "-"], podYaml("by-second", "100m", ["  schedulerName: second"]));
    const node = await eventually(() => nodeOf("by-second"), "by-second to be bound");
    // Each profile records its events as its own scheduler name.
    const described = await ok(["describe", "pod", "by-second"]);
    expect(described).toMatch(
      new RegExp(`Normal\\s+Scheduled\\s+.*second\\s+Successfully assigned default/by-second to ${node}`),
    );
    const metrics = await httpsGet(`https://127.0.0.1:${servePort}/metrics`);
    expect(metrics.body).toContain(
      'scheduler_schedule_attempts_total{result="scheduled",profile="second"} 1',
    );
    // A pod for a scheduler that does not exist here is not ours: it stays Pending, untouched,
    // while a default-scheduler pod created after it is placed.
    await ok(["create", "-f", "-"], podYaml("nobody", "100m", ["  schedulerName: nobody"]));
    await ok(["create", "-f", "-"], podYaml("after-nobody", "100m"));
    await eventually(() => nodeOf("after-nobody"), "after-nobody to be bound");
    expect(await nodeOf("nobody")).toBeUndefined();
    expect((await kubectl(["get", "events", "--field-selector", "involvedObject.name=nobody"])).out).toBe("");
  });

  it("exits 0 on SIGTERM after a clean stop", async () => {
    sched?.child.kill("SIGTERM");
    expect(await sched?.waitForExit()).toBe(0);
    expect(sched?.stderr()).toContain("Received SIGTERM; shutting down");
    // Nothing the scheduler wrote was refused (RBAC) or failed on the way.
    expect(sched?.stderr()).not.toMatch(/^E "/m);
  });
});

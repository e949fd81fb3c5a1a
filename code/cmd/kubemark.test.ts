/**
 * kubemark's proofs: the command refuses a bad command line with one line and the fix; and, as
 * its own process beside a cluster of separate processes (etcd, kube-apiserver, the
 * controller-manager, the scheduler), it hosts 20 hollow nodes that register with their own
 * identities and go Ready, a Deployment's pods are scheduled onto them and reach Running — the
 * hollow kubelets tracing them to the cluster's collector (`--tracing-config-file`, chapter 8) —
 * and SIGTERM stops them all with exit 0, leaving nothing behind.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Deployment } from "../api/apps.ts";
import type { Node } from "../api/core.ts";
import { waitFor } from "../testing/wait-for.ts";
import { type Collector, startCollector } from "../tracing/collector.ts";
import { FlagError } from "./cli/flag.ts";
import { parseSpans } from "./cluster/trace.ts";
import { parseKubemarkFlags } from "./kubemark.ts";
import { type CommandProcess, startCommand } from "./testing/command-process.ts";
import { LocalCluster } from "./testing/local-cluster.ts";

const entry = new URL("./kubemark.ts", import.meta.url).pathname;
const COUNT = 20;
const names = Array.from({ length: COUNT }, (_, i) => `hollow-node-${i}`);

describe("kubemark's command line", () => {
  const refused = (...argv: string[]): string => {
    const r = parseKubemarkFlags(argv);
    if (!(r instanceof FlagError)) throw new Error(`accepted: ${JSON.stringify(r)}`);
    expect(r.message.split("\n")).toHaveLength(1);
    return r.message;
  };

  it("refuses what it cannot run, in one line that says the fix", () => {
    expect(refused("--count=3")).toBe(
      "kubemark: --morph is required: say which hollow component to run (this course has --morph=kubelet)",
    );
    expect(refused("--morph=kublet")).toBe(
      "kubemark: Unknown morph: kublet. allowed values: [kubelet proxy] (use --morph=kubelet)",
    );
    expect(refused("--morph=proxy")).toMatch(/not part of this course; use --morph=kubelet$/);
    expect(refused("--morph=kubelet", "--name=a", "--count=2")).toMatch(
      /--name and --count do not go together/,
    );
    expect(refused("--morph=kubelet", "--count=0")).toBe(
      'kubemark: invalid argument "0" for "--count" flag: use a positive integer, e.g. --count=100',
    );
    expect(refused("--morph=kubelet", "--count=2", "--name-prefix=Bad_")).toMatch(
      /^kubemark: --name-prefix: "Bad_0" is not a valid node name/,
    );
    expect(refused("--morph=kubelet", "--count=2", "--root-dir=/tmp/x")).toMatch(
      /--kubeconfig-dir is required/,
    );
    expect(
      refused("--morph=kubelet", "--count=2", "--kubeconfig-dir=/nonexistent", "--root-dir=/tmp/x"),
    ).toBe(
      'kubemark: no identity for hollow node "hollow-node-0": /nonexistent/node-hollow-node-0.kubeconfig does not exist (make the nodes\' identities first: npm run pki -- --dir DIR --nodes hollow-node-0,…,hollow-node-1)',
    );
    expect(refused("--morph=kubelet", "--kube-api-qps=fast")).toBe(
      'kubemark: invalid argument "fast" for "--kube-api-qps" flag: strconv.ParseFloat: parsing "fast": invalid syntax',
    );
  });

  it("one hollow node by --name (upstream's), or many by --count; --fake-capacity over the defaults", () => {
    const one = parseKubemarkFlags([
      "--morph=kubelet",
      "--name=n1",
      `--kubeconfig=${entry}`,
      "--root-dir=/tmp/km",
    ]);
    expect(one).toMatchObject({ run: { nodes: [{ name: "n1", kubeconfig: entry, rootDir: "/tmp/km/n1" }] } });
    const dir = join(entry, "..", "testing");
    // No node-h-0.kubeconfig there: the first missing identity is named.
    expect(
      refused(
        "--morph=kubelet",
        "--count=2",
        "--name-prefix=h-",
        `--kubeconfig-dir=${dir}`,
        "--root-dir=/tmp/km",
      ),
    ).toContain(`${dir}/node-h-0.kubeconfig does not exist`);
    const capacity = parseKubemarkFlags([
      "--morph=kubelet",
      `--kubeconfig=${entry}`,
      "--root-dir=/tmp/km",
      "--fake-capacity=cpu=4,pods=30",
    ]);
    expect(capacity).toMatchObject({
      run: {
        capacity: { cpu: "4", memory: "32Gi", pods: "30", "ephemeral-storage": "100Gi" },
        qps: 10,
        burst: 20,
      },
    });
  });
});

describe("kubemark hosting hollow nodes in a cluster of processes", () => {
  let cluster: LocalCluster;
  let kubemark: CommandProcess;
  let rootDir: string;
  // chapter 8: the cluster's spans, the hollow kubelets' among them.
  const spansDir = mkdtempSync(join(tmpdir(), "kubemark-spans-"));
  const spansFile = join(spansDir, "spans.jsonl");
  let collector: Collector | undefined;

  beforeAll(async () => {
    collector = await startCollector({ file: spansFile });
    cluster = await LocalCluster.start({
      tracing: { endpoint: collector.endpoint },
      nodes: [],
      spareNodes: names,
      etcdProcess: true,
      // As kubeadm starts it: each controller with its own service account and role (the
      // controller-manager's own identity may not create ReplicaSets or pods).
      controllerManagerArgs: ["--use-service-account-credentials"],
    });
    rootDir = join(cluster.dir, "kubemark");
    kubemark = startCommand(entry, [
      "--morph=kubelet",
      `--count=${COUNT}`,
      "--name-prefix=hollow-node-",
      `--kubeconfig-dir=${join(cluster.dir, "pki")}`,
      `--root-dir=${rootDir}`,
      "--batch-size=8",
      // The file LocalCluster wrote for its control plane (its `tracing` option).
      `--tracing-config-file=${join(cluster.dir, "tracing-config.yaml")}`,
    ]);
  }, 300_000);

  afterAll(async () => {
    kubemark?.kill();
    await cluster?.close();
    await collector?.close();
    rmSync(spansDir, { recursive: true, force: true });
  }, 120_000);

  const logs = () =>
    `--- kubemark:\n${kubemark.stderr().slice(-3000)}\n--- kube-scheduler:\n${cluster.scheduler?.stderr().slice(-1500)}`;

  it("registers every hollow node with its own identity, and each goes Ready", async () => {
    await kubemark.waitForStderr(`hollow nodes started: ${COUNT}`, 240_000).catch((e: Error) => {
      throw new Error(`${e.message}\n${logs()}`);
    });
    await cluster.waitForNodesReady(names, 120_000);
    const nodes = (await cluster.admin.coreV1.nodes().list()).items;
    expect(nodes.map((n) => n.metadata.name).sort()).toEqual([...names].sort());
    const first = nodes.find((n) => n.metadata.name === "hollow-node-0") as Node;
    expect(first.status?.capacity).toMatchObject({
      cpu: "8",
      memory: "32Gi",
      pods: "110",
      "ephemeral-storage": "100Gi",
    });
    // Each node renews its own Lease: the Node authorizer let node-<name> write only its own.
    await waitFor(
      "every hollow node's Lease",
      async () => {
        const leases = await cluster.admin.coordinationV1.leases("kube-node-lease").list();
        const holders = leases.items.map((l) => l.spec?.holderIdentity).sort();
        return JSON.stringify(holders) === JSON.stringify([...names].sort());
      },
      60_000,
    );
    // Batches of 8 and a progress line while they started.
    expect(kubemark.stderr()).toMatch(/… hollow nodes: (started|all)/);
  }, 300_000);

  it("runs a Deployment's pods on the hollow nodes to Running", async () => {
    const replicas = 40;
    const d: Deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "hollow-web", namespace: "default" },
      spec: {
        replicas,
        selector: { matchLabels: { app: "hollow-web" } },
        template: {
          metadata: { labels: { app: "hollow-web" } },
          spec: { containers: [{ name: "sleeper", image: "course/sleeper:1.0" }] },
        },
      },
    };
    await cluster.admin.appsV1.deployments("default").create(d);
    const pods = await waitFor(
      `${replicas} Running pods`,
      async () => {
        const list = await cluster.admin.coreV1.pods("default").list({ labelSelector: "app=hollow-web" });
        const running = list.items.filter((p) => p.status?.phase === "Running");
        return running.length === replicas ? running : undefined;
      },
      240_000,
    ).catch((e: Error) => {
      throw new Error(`${e.message}\n${logs()}`);
    });
    const used = new Set(pods.map((p) => p.spec?.nodeName));
    for (const n of used) expect(names).toContain(n);
    // Each hollow kubelet traced its pods as a kubelet does (the spans arrive a second or so later).
    const uids = new Set(pods.map((p) => p.metadata.uid));
    const synced = await waitFor(
      "the hollow kubelets' syncPod spans of every pod",
      async () => {
        const spans = parseSpans(await readFile(spansFile, "utf8").catch(() => ""));
        const got = spans.filter(
          (s) =>
            s.service === "kubelet" && s.name === "syncPod" && uids.has(String(s.attributes["k8s.pod.uid"])),
        );
        return new Set(got.map((s) => s.attributes["k8s.pod.uid"])).size === replicas ? got : undefined;
      },
      120_000,
    );
    expect(synced.length).toBeGreaterThanOrEqual(replicas);
    // The scheduler spreads 40 pods over 20 empty nodes (LeastAllocated, PodTopologySpread).
    expect(used.size).toBeGreaterThan(1);
    await waitFor(
      "the Deployment's readyReplicas",
      async () =>
        (await cluster.admin.appsV1.deployments("default").get("hollow-web")).status?.readyReplicas ===
        replicas,
      120_000,
    );
  }, 300_000);

  it("stops every hollow node on SIGTERM and exits 0, leaving no process behind", async () => {
    const pid = kubemark.child.pid as number;
    kubemark.child.kill("SIGTERM");
    expect(await kubemark.waitForExit(60_000)).toBe(0);
    expect(kubemark.stderr()).toContain(`Received SIGTERM; stopping ${COUNT} hollow nodes`);
    expect(() => process.kill(pid, 0)).toThrow();
    // The fake runtime starts no process: nothing anywhere runs from the hollow nodes' root dir.
    const ps = execFileSync("ps", ["-eo", "pid,args"], { encoding: "utf8" });
    expect(ps.split("\n").filter((l) => l.includes(rootDir))).toEqual([]);
  }, 120_000);
});

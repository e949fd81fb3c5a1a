/**
 * Chapter 8, the whole cluster driven by the real kubectl: the scheduler as a separate process
 * deciding where pods go, seen from outside. One LocalCluster for the file (API server,
 * controller-manager, scheduler, two process-runtime kubelets; a third node's identity is made
 * up-front and its kubelet started by a scenario):
 * - a pod no node fits stays Pending with upstream's FailedScheduling message, and is scheduled
 *   once a node that fits joins the cluster;
 * - a high-priority pod that fits nowhere preempts a low-priority one: the victim is deleted
 *   gracefully, the preemptor is nominated to its node and then runs there.
 * Each scenario is written from the upstream test of the same behaviour, named in its title.
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import type { Node, Pod } from "../api/core.ts";
import { parseQuantity, quantityMilliValue } from "../api/quantity.ts";
import { LocalCluster } from "../cmd/testing/local-cluster.ts";
import { waitFor } from "../testing/wait-for.ts";

const ready = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
const running = (p: Pod) => p.status?.phase === "Running";

describeWithTools(
  "chapter 8: scheduling — pending until a node fits, and preemption, through the real kubectl",
  ["kubectl"],
  () => {
    let cluster: LocalCluster;
    let manifests: string;

    beforeAll(async () => {
      manifests = await mkdtemp(join(tmpdir(), "e2e-scheduling-"));
      cluster = await LocalCluster.start({
        nodes: ["node-1", "node-2"],
        spareNodes: ["node-3"],
        controllerManagerArgs: ["--use-service-account-credentials"],
      });
    }, 300_000);

    afterAll(async () => {
      await cluster?.close();
      if (manifests) await rm(manifests, { recursive: true, force: true });
    }, 120_000);

    function diagnostics(): string {
      const tail = (name: string, text = "") => `--- ${name}:\n${text.slice(-2000)}`;
      return [
        ...[...cluster.kubelets.values()].map((k) => tail(k.name, k.process.stderr())),
        tail("kube-scheduler", cluster.scheduler?.stderr()),
      ].join("\n");
    }

    function eventually<T>(
      what: string,
      check: () => Promise<T | undefined | false>,
      ms = 180_000,
    ): Promise<T> {
      return waitFor(what, check, ms).catch((e: Error) => {
        throw new Error(`${e.message}\n${diagnostics()}`);
      });
    }

    async function kubectlOK(args: string[]): Promise<string> {
      const r = await cluster.kubectl(args, 120_000);
      if (r.code !== 0) throw new Error(`kubectl ${args.join(" ")} exited ${r.code}: ${r.stderr}`);
      return r.stdout;
    }

    /** `kubectl create -f` of an object written to a file, as a user would. */
    async function kubectlCreate(obj: object, name: string): Promise<string> {
      const file = join(manifests, `${name}.json`);
      await writeFile(file, JSON.stringify(obj));
      return kubectlOK(["create", "-f", file]);
    }

    async function deleteNamespace(ns: string): Promise<void> {
      await cluster.kubectl(["delete", "namespace", ns, "--wait=false"]);
      await eventually(`namespace ${ns} gone`, async () => {
        try {
          await cluster.admin.coreV1.namespaces().get(ns);
          return false;
        } catch {
          return true;
        }
      });
    }

    /** The messages of the events of `reason` about pod `name`, as `kubectl get events` lists them. */
    async function eventMessages(ns: string, reason: string, name: string): Promise<string[]> {
      const out = await kubectlOK([
        "get",
        "events",
        "-n",
        ns,
        `--field-selector=reason=${reason},involvedObject.name=${name}`,
        "-o",
        "json",
      ]);
      return (JSON.parse(out).items as { message: string }[]).map((e) => e.message);
    }

    it("[sig-scheduling] SchedulerPredicates [Serial] validates that NodeSelector is respected if not matching [Conformance], " +
      "then if matching [Conformance] (test/e2e/scheduling/predicates.go): Pending with FailedScheduling until a node that fits joins", async () => {
      const ns = "e2e-sched-pending";
      const label = "e2e.example.com/pool";
      try {
        await kubectlOK(["create", "namespace", ns]);
        await kubectlCreate(
          {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: "restricted-pod", namespace: ns },
            spec: {
              nodeSelector: { [label]: "spare" },
              containers: [{ name: "app", image: "course/sleeper:1.0" }],
            },
          },
          "restricted-pod",
        );
        // Upstream's message: FitError.Error (framework/types.go) ends each part with " %v.", and
        // the PostFilter's part is itself a FitError's text — hence 1.32's two final dots.
        const expected =
          "0/2 nodes are available: 2 node(s) didn't match Pod's node affinity/selector. " +
          "preemption: 0/2 nodes are available: 2 Preemption is not helpful for scheduling..";
        const messages = await eventually("FailedScheduling for restricted-pod", async () => {
          const m = await eventMessages(ns, "FailedScheduling", "restricted-pod");
          return m.length > 0 ? m : undefined;
        });
        expect(messages).toEqual([expected]);
        const pending: Pod = await cluster.admin.coreV1.pods(ns).get("restricted-pod");
        expect(pending.status?.phase).toBe("Pending");
        expect(pending.spec?.nodeName ?? "").toBe("");
        expect(pending.status?.conditions?.find((c) => c.type === "PodScheduled")).toMatchObject({
          status: "False",
          reason: "Unschedulable",
          message: expected,
        });

        // A node that fits joins: a new kubelet registers node-3 with the label.
        await cluster.startKubelet("node-3", [`--node-labels=${label}=spare`]);
        await cluster.waitForNodesReady(["node-3"], 180_000);
        const placed = await eventually("restricted-pod Running on node-3", async () => {
          const p = await cluster.admin.coreV1.pods(ns).get("restricted-pod");
          return running(p) ? p : undefined;
        });
        expect(placed.spec?.nodeName).toBe("node-3");
        expect(await eventMessages(ns, "Scheduled", "restricted-pod")).toEqual([
          `Successfully assigned ${ns}/restricted-pod to node-3`,
        ]);
        expect(await kubectlOK(["get", "pod", "restricted-pod", "-n", ns, "-o", "wide"])).toMatch(
          /restricted-pod\s+1\/1\s+Running.*node-3/,
        );
      } finally {
        await deleteNamespace(ns);
      }
    }, 600_000);

    it("[sig-scheduling] SchedulerPreemption [Serial] validates basic preemption works [Conformance]; validates pod disruption condition is added to the preempted pod [Conformance] (test/e2e/scheduling/preemption.go): " +
      "the victim deleted gracefully with a Preempted event (pkg/scheduler/framework/preemption/preemption.go), the preemptor nominated, then running", async () => {
      const ns = "e2e-sched-preemption";
      const classes = { low: 1, medium: 100, high: 1000 };
      try {
        await kubectlOK(["create", "namespace", ns]);
        for (const [name, value] of Object.entries(classes)) {
          await kubectlOK(["create", "priorityclass", `e2e-${name}-priority`, `--value=${value}`]);
        }
        // Upstream: "Create pods that use 4/5 of node resources" — two per node, 2/5 of its
        // allocatable CPU each, held to the node by node affinity on its name; the first low
        // priority, every other medium.
        const nodes = (await cluster.admin.coreV1.nodes().list()).items.filter(
          (n: Node) =>
            !n.spec?.unschedulable &&
            n.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True"),
        );
        expect(nodes.length).toBeGreaterThanOrEqual(2);
        const pods: { name: string; node: string; priority: string; cpu: string }[] = [];
        for (const [i, node] of nodes.entries()) {
          const allocatable = parseQuantity(node.status?.allocatable?.cpu);
          if (!allocatable) throw new Error(`node ${node.metadata.name} has no allocatable cpu`);
          const cpu = `${(quantityMilliValue(allocatable) * 2n) / 5n}m`;
          for (const j of [0, 1]) {
            const priority = pods.length === 0 ? "low" : "medium";
            pods.push({ name: `pod${i}-${j}-${priority}`, node: node.metadata.name ?? "", priority, cpu });
          }
        }
        for (const p of pods) {
          await cluster.admin.coreV1.pods(ns).create({
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: p.name, namespace: ns },
            spec: {
              priorityClassName: `e2e-${p.priority}-priority`,
              // The victim takes 3 s to stop: long enough to see the preemptor nominated.
              terminationGracePeriodSeconds: 30,
              containers: [
                {
                  name: "app",
                  image: "course/sleeper:1.0",
                  args: ["--term-delay=3"],
                  resources: { requests: { cpu: p.cpu }, limits: { cpu: p.cpu } },
                },
              ],
              affinity: {
                nodeAffinity: {
                  requiredDuringSchedulingIgnoredDuringExecution: {
                    nodeSelectorTerms: [
                      { matchFields: [{ key: "metadata.name", operator: "In", values: [p.node] }] },
                    ],
                  },
                },
              },
            },
          } as Pod);
        }
        // Upstream: "Wait for pods to be scheduled."
        await eventually("every filler pod Running", async () => {
          const list = (await cluster.admin.coreV1.pods(ns).list()).items;
          return list.length === pods.length && list.every((p) => running(p) && ready(p));
        });

        // Upstream: "Run a high priority pod that has same requirements as that of lower priority pod".
        const victim = pods[0];
        await kubectlCreate(
          {
            apiVersion: "v1",
            kind: "Pod",
            metadata: { name: "preemptor-pod", namespace: ns },
            spec: {
              priorityClassName: "e2e-high-priority",
              containers: [
                {
                  name: "app",
                  image: "course/sleeper:1.0",
                  resources: { requests: { cpu: victim.cpu }, limits: { cpu: victim.cpu } },
                },
              ],
            },
          },
          "preemptor-pod",
        );
        // Every state of the preemptor seen on the way to Running: nominated first, then bound;
        // and the victim's DisruptionTarget condition while it terminates (its 3 s term delay).
        const seen: string[] = [];
        let disruption: unknown;
        const preemptor = await eventually("preemptor-pod Running", async () => {
          const v = await cluster.admin.coreV1
            .pods(ns)
            .get(victim.name)
            .catch(() => undefined);
          disruption ??= v?.status?.conditions?.find((c) => c.type === "DisruptionTarget");
          const p: Pod = await cluster.admin.coreV1.pods(ns).get("preemptor-pod");
          const state = `nominated=${p.status?.nominatedNodeName ?? ""} node=${p.spec?.nodeName ?? ""}`;
          if (seen.at(-1) !== state) seen.push(state);
          return running(p) ? p : undefined;
        });
        expect(seen, seen.join("\n")).toContain(`nominated=${victim.node} node=`);
        expect(preemptor.spec?.nodeName).toBe(victim.node);
        // Upstream's "validates pod disruption condition is added to the preempted pod [Conformance]".
        expect(disruption).toMatchObject({
          status: "True",
          reason: "PreemptionByScheduler",
          message: "default-scheduler: preempting to accommodate a higher priority pod",
        });
        expect(preemptor.spec?.priority).toBe(classes.high);

        // The victim went, gracefully (through the kubelet), and only it.
        await eventually(`${victim.name} gone`, async () => {
          const list = (await cluster.admin.coreV1.pods(ns).list()).items;
          return !list.some((p) => p.metadata.name === victim.name);
        });
        for (const p of pods.slice(1)) {
          const live: Pod = await cluster.admin.coreV1.pods(ns).get(p.name);
          expect(live.metadata.deletionTimestamp, p.name).toBeUndefined();
        }
        expect(await eventMessages(ns, "Preempted", victim.name)).toEqual([
          `Preempted by pod ${preemptor.metadata.uid} on node ${victim.node}`,
        ]);
        expect(await eventMessages(ns, "Killing", victim.name)).toEqual(["Stopping container app"]);
      } finally {
        await deleteNamespace(ns);
        for (const name of Object.keys(classes)) {
          await cluster.kubectl(["delete", "priorityclass", `e2e-${name}-priority`, "--ignore-not-found"]);
        }
      }
    }, 600_000);
  },
);

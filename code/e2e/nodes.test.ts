/**
 * Chapter 8, the whole cluster driven by the real kubectl: what an operator does to nodes and
 * what each component's identity may do. One LocalCluster (API server, controller-manager,
 * scheduler, two process-runtime kubelets — every one its own process) for the file:
 * - `kubectl drain` of a node under a PodDisruptionBudget: cordon, evictions through
 *   pods/eviction refused with 429 while the budget would be broken, then allowed one at a time
 *   as the ReplicaSet's replacements become Ready on the other node; `kubectl uncordon` after;
 * - `kubectl auth can-i --as=…` for the scheduler, the controller-manager, a kubelet and a service
 *   account: what the bootstrap RBAC policy and the Node authorizer say.
 * Each scenario is written from the upstream test of the same behaviour, named in its title.
 */
import { type ChildProcess, spawn } from "node:child_process";
import { writeFile } from "node:fs/promises";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import type { ReplicaSet } from "../api/apps.ts";
import type { Node, Pod } from "../api/core.ts";
import type { PodDisruptionBudget } from "../api/policy.ts";
import { StatusError } from "../client/errors.ts";
import { LocalCluster } from "../cmd/testing/local-cluster.ts";
import { waitFor } from "../testing/wait-for.ts";

const pdbGVR = { group: "policy", version: "v1", resource: "poddisruptionbudgets" };
const ready = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;

describeWithTools("chapter 8: nodes — drain and identities, through the real kubectl", ["kubectl"], () => {
  let cluster: LocalCluster;

  beforeAll(async () => {
    cluster = await LocalCluster.start({
      nodes: ["node-1", "node-2"],
      // Each controller writes as its own service account, as a real cluster runs it.
      controllerManagerArgs: ["--use-service-account-credentials"],
    });
  }, 300_000);

  afterAll(async () => {
    await cluster?.close();
  }, 120_000);

  /** The components' last lines, for a timeout's message. */
  function diagnostics(): string {
    const tail = (name: string, text = "") => `--- ${name}:\n${text.slice(-1500)}`;
    return [
      ...[...cluster.kubelets.values()].map((k) => tail(k.name, k.process.stderr())),
      tail("kube-controller-manager", cluster.controllerManager?.stderr()),
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

  const podsOf = async (ns: string, app: string) =>
    (await cluster.admin.coreV1.pods(ns).list({ labelSelector: `app=${app}` })).items;

  it("[sig-apps] DisruptionController should block an eviction until the PDB is updated to allow it [Conformance] (test/e2e/apps/disruption.go), " +
    "by kubectl drain --ignore-daemonsets --delete-emptydir-data (staging/src/k8s.io/kubectl/pkg/drain/drain.go): the drained node's ReplicaSet pods move to the other node", async () => {
    const ns = "e2e-drain";
    let drain: ChildProcess | undefined;
    try {
      await kubectlOK(["create", "namespace", ns]);
      // All three replicas on node-1 first: node-2 is cordoned while they are scheduled.
      expect(await kubectlOK(["cordon", "node-2"])).toContain("node/node-2 cordoned");
      const rs: ReplicaSet = {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        metadata: { name: "web", namespace: ns },
        spec: {
          replicas: 3,
          selector: { matchLabels: { app: "web" } },
          template: {
            metadata: { labels: { app: "web" } },
            spec: {
              terminationGracePeriodSeconds: 5,
              containers: [{ name: "app", image: "course/sleeper:1.0" }],
              volumes: [{ name: "scratch", emptyDir: {} }],
            },
          },
        },
      };
      await cluster.admin.appsV1.replicaSets(ns).create(rs);
      const original = await eventually("3 web pods Ready on node-1", async () => {
        const pods = await podsOf(ns, "web");
        const ok = pods.filter((p) => ready(p) && p.spec?.nodeName === "node-1");
        return ok.length === 3 ? ok : undefined;
      });
      expect(await kubectlOK(["uncordon", "node-2"])).toContain("node/node-2 uncordoned");

      // Upstream: "Creating a pdb that targets all three pods in a test replica set".
      await kubectlOK([
        "create",
        "poddisruptionbudget",
        "web",
        "-n",
        ns,
        "--selector=app=web",
        "--min-available=3",
      ]);
      const pdbs = cluster.admin.resource<PodDisruptionBudget>(pdbGVR, ns);
      await eventually("the budget computed: 3 healthy, 0 disruptions allowed", async () => {
        const pdb = await pdbs.get("web");
        const s = pdb.status;
        return (
          s?.observedGeneration === pdb.metadata.generation &&
          s?.currentHealthy === 3 &&
          s.disruptionsAllowed === 0
        );
      });

      // Upstream: "First trying to evict a pod which shouldn't be evictable" — the Eviction API's 429.
      const victim = original[0].metadata.name ?? "";
      const refused = await cluster.admin.coreV1
        .pods(ns)
        .createSubresource(victim, "eviction", {
          apiVersion: "policy/v1",
          kind: "Eviction",
          metadata: { name: victim, namespace: ns },
        })
        .then(
          () => undefined,
          (e: unknown) => e,
        );
      expect(refused).toBeInstanceOf(StatusError);
      expect((refused as StatusError).code).toBe(429);
      expect((refused as StatusError).message).toBe(
        "Cannot evict pod as it would violate the pod's disruption budget.",
      );

      // The drain cordons node-1 and keeps retrying the refused evictions (every 5 s).
      let out = "";
      drain = spawn(
        "kubectl",
        [
          `--kubeconfig=${cluster.adminKubeconfig}`,
          "drain",
          "node-1",
          "--ignore-daemonsets",
          "--delete-emptydir-data",
          "--timeout=400s",
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      drain.stdout?.on("data", (d) => {
        out += d;
      });
      drain.stderr?.on("data", (d) => {
        out += d;
      });
      const exited = new Promise<number | null>((resolve) => drain?.on("close", resolve));
      await eventually("drain refused by the budget", async () =>
        out.includes(
          `(will retry after 5s): Cannot evict pod as it would violate the pod's disruption budget.`,
        ),
      );
      expect(out).toContain("node/node-1 cordoned");
      expect((await cluster.admin.coreV1.nodes().get("node-1")).spec?.unschedulable).toBe(true);
      // Nothing was taken while refused.
      const still = await podsOf(ns, "web");
      expect(
        still.filter((p) => p.spec?.nodeName === "node-1" && !p.metadata.deletionTimestamp),
      ).toHaveLength(3);

      // Upstream: "Updating the pdb to allow a pod to be evicted" — one at a time from now on.
      await kubectlOK(["patch", "pdb", "web", "-n", ns, "--type=merge", "-p", '{"spec":{"minAvailable":2}}']);
      const code = await Promise.race([
        exited,
        eventually("kubectl drain to end", async () => false, 450_000),
      ]);
      expect(code, out).toBe(0);
      expect(out).toContain("node/node-1 drained");
      for (const p of original) expect(out).toContain(`pod/${p.metadata.name} evicted`);

      // The ReplicaSet's pods all run on node-2 now, none of the originals among them.
      const moved = await eventually("3 web pods Ready on node-2", async () => {
        const pods = await podsOf(ns, "web");
        const live = pods.filter((p) => !p.metadata.deletionTimestamp);
        return live.length === 3 && live.every((p) => ready(p) && p.spec?.nodeName === "node-2")
          ? live
          : undefined;
      });
      const before = new Set(original.map((p) => p.metadata.name));
      expect(moved.some((p) => before.has(p.metadata.name))).toBe(false);

      expect(await kubectlOK(["uncordon", "node-1"])).toContain("node/node-1 uncordoned");
      const node: Node = await cluster.admin.coreV1.nodes().get("node-1");
      expect(node.spec?.unschedulable ?? false).toBe(false);
    } finally {
      drain?.kill("SIGKILL");
      await cluster.kubectl(["uncordon", "node-1"]);
      await cluster.kubectl(["uncordon", "node-2"]);
      await deleteNamespace(ns);
    }
  }, 600_000);
  /** `kubectl auth can-i` as someone else: "yes" (exit 0) or "no" (exit 1), from its first word. */
  async function canI(as: string[], args: string[]): Promise<string> {
    const r = await cluster.kubectl(["auth", "can-i", ...args, ...as], 120_000);
    const answer = r.stdout.trim().split(/\s/)[0];
    if (!(answer === "yes" && r.code === 0) && !(answer === "no" && r.code === 1)) {
      throw new Error(`kubectl auth can-i ${args.join(" ")} answered ${r.code} ${r.stdout} ${r.stderr}`);
    }
    return answer;
  }
  /** Each question of a table, asked and answered: a mismatch names the question. */
  async function expectAnswers(as: string[], table: [string[], "yes" | "no"][]): Promise<void> {
    const got: string[] = [];
    for (const [args] of table) got.push(`${args.join(" ")}: ${await canI(as, args)}`);
    expect(got).toEqual(table.map(([args, want]) => `${args.join(" ")}: ${want}`));
  }

  it("kubectl auth can-i --as the scheduler and the controller-manager: the bootstrap ClusterRoles system:kube-scheduler and system:kube-controller-manager " +
    "(plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go; staging/src/k8s.io/kubectl/pkg/cmd/auth/cani.go)", async () => {
    await expectAnswers(
      ["--as=system:kube-scheduler"],
      [
        [["create", "pods", "--subresource=binding", "-n", "default"], "yes"],
        [["patch", "pods", "--subresource=status", "-n", "default"], "yes"],
        [["delete", "pods", "-n", "default"], "yes"], // preemption
        [["list", "nodes"], "yes"],
        [["update", "leases/kube-scheduler", "-n", "kube-system"], "yes"],
        [["update", "leases/kube-controller-manager", "-n", "kube-system"], "no"],
        [["create", "pods", "-n", "default"], "no"],
        [["get", "secrets", "-n", "default"], "no"],
        [["update", "nodes"], "no"],
      ],
    );
    await expectAnswers(
      ["--as=system:kube-controller-manager"],
      [
        [["list", "pods", "--all-namespaces"], "yes"],
        [["watch", "deployments.apps", "--all-namespaces"], "yes"],
        [["create", "serviceaccounts", "--subresource=token", "-n", "kube-system"], "yes"],
        [["update", "leases/kube-controller-manager", "-n", "kube-system"], "yes"],
        // Its controllers write as their own service accounts (--use-service-account-credentials).
        [["create", "pods", "-n", "default"], "no"],
        [["delete", "nodes"], "no"],
        [["update", "deployments.apps", "-n", "default"], "no"],
      ],
    );
    // A controller's own service account, as --use-service-account-credentials makes it write.
    await expectAnswers(
      ["--as=system:serviceaccount:kube-system:replicaset-controller"],
      [
        [["create", "pods", "-n", "default"], "yes"],
        [["update", "replicasets.apps", "--subresource=status", "-n", "default"], "yes"],
        [["delete", "nodes"], "no"],
      ],
    );
  }, 300_000);

  it("[sig-auth] [Feature:NodeAuthorizer] Getting a secret for a workload the node has access to should succeed; " +
    "A node shouldn't be able to create another node; A node shouldn't be able to delete another node (test/e2e/auth/node_authz.go) — asked with kubectl auth can-i --as=system:node:node-1 --as-group=system:nodes", async () => {
    const ns = "e2e-node-authz";
    const node = ["--as=system:node:node-1", "--as-group=system:nodes"];
    try {
      await kubectlOK(["create", "namespace", ns]);
      await kubectlOK([
        "create",
        "secret",
        "generic",
        "node-auth-secret",
        "-n",
        ns,
        "--from-literal=data=keep it secret",
      ]);
      await kubectlOK([
        "create",
        "secret",
        "generic",
        "other-secret",
        "-n",
        ns,
        "--from-literal=data=not yours",
      ]);
      // Upstream: "Node should not get the secret" — no pod of node-1 uses it yet.
      await expectAnswers(node, [
        [["get", "secrets/node-auth-secret", "-n", ns], "no"],
        [["get", "secrets/foo", "-n", ns], "no"], // a missing secret: the same no, never a NotFound
      ]);
      // Upstream: "Create a pod that use the secret", bound to node-1 directly.
      await cluster.admin.coreV1.pods(ns).create({
        apiVersion: "v1",
        kind: "Pod",
        metadata: { name: "pause", namespace: ns },
        spec: {
          nodeName: "node-1",
          containers: [{ name: "pause", image: "course/sleeper:1.0" }],
          volumes: [{ name: "node-auth-secret", secret: { secretName: "node-auth-secret" } }],
        },
      } as Pod);
      // Upstream: "The node should able to access the secret" — once the graph has the pod.
      await eventually(
        "node-1 may get the secret of its pod",
        async () => (await canI(node, ["get", "secrets/node-auth-secret", "-n", ns])) === "yes",
      );
      await expectAnswers(node, [
        [["get", "secrets/other-secret", "-n", ns], "no"], // no pod of node-1 uses it
        [["list", "secrets", "-n", ns], "no"], // a read of related objects needs a name
        // 1.32's AuthorizeNodeWithSelectors (beta, on): pods by name only if bound here, and a
        // list only with the spec.nodeName field selector, which can-i cannot send.
        [["get", "pods/pause", "-n", ns], "yes"],
        [["get", "pods", "-n", ns], "no"],
        [["list", "pods", "--all-namespaces"], "no"],
        [["create", "pods", "--subresource=eviction", "-n", ns], "yes"],
        [["update", "nodes", "--subresource=status"], "yes"],
        [["update", "leases/node-1", "-n", "kube-node-lease"], "yes"],
        [["update", "leases/node-2", "-n", "kube-node-lease"], "no"], // only its own Lease
        [["delete", "nodes/foo"], "no"], // "A node shouldn't be able to delete another node"
      ]);
      // "A node shouldn't be able to create another node": authorization says yes (the kubelet
      // registers its own Node), the NodeRestriction admission plugin says no to any other name.
      await expectAnswers(node, [[["create", "nodes"], "yes"]]);
      const file = join(cluster.dir, "node-foo.json");
      await writeFile(file, JSON.stringify({ apiVersion: "v1", kind: "Node", metadata: { name: "foo" } }));
      const created = await cluster.kubectl(["create", "-f", file, ...node]);
      expect(created.code).toBe(1);
      expect(created.stderr).toContain(
        'nodes "foo" is forbidden: node "node-1" is not allowed to modify node "foo"',
      );
      // The other node is not told node-1's secrets.
      await expectAnswers(
        ["--as=system:node:node-2", "--as-group=system:nodes"],
        [[["get", "secrets/node-auth-secret", "-n", ns], "no"]],
      );
    } finally {
      await cluster.kubectl(["delete", "node", "foo", "--ignore-not-found"]);
      await deleteNamespace(ns);
    }
  }, 300_000);

  it("kubectl auth can-i --as a service account: nothing but discovery until a RoleBinding grants the view ClusterRole in its namespace " +
    "(plugin/pkg/auth/authorizer/rbac/bootstrappolicy/policy.go: view; staging/src/k8s.io/kubectl/pkg/cmd/auth/cani.go)", async () => {
    const ns = "e2e-sa-authz";
    const sa = [`--as=system:serviceaccount:${ns}:robot`];
    try {
      await kubectlOK(["create", "namespace", ns]);
      await kubectlOK(["create", "serviceaccount", "robot", "-n", ns]);
      await expectAnswers(sa, [[["list", "pods", "-n", ns], "no"]]);
      await kubectlOK([
        "create",
        "rolebinding",
        "robot-view",
        "-n",
        ns,
        "--clusterrole=view",
        `--serviceaccount=${ns}:robot`,
      ]);
      await expectAnswers(sa, [
        [["list", "pods", "-n", ns], "yes"],
        [["watch", "deployments.apps", "-n", ns], "yes"],
        [["get", "secrets", "-n", ns], "no"], // view leaves secrets out
        [["create", "pods", "-n", ns], "no"],
        [["list", "pods", "-n", "default"], "no"], // a RoleBinding grants in its namespace only
      ]);
    } finally {
      await deleteNamespace(ns);
    }
  }, 300_000);
});

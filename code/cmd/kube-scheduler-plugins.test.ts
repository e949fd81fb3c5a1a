/**
 * The kube-scheduler binary's placement plugins driven end to end by the real kubectl: node
 * affinity (required In / NotIn / Exists on labels set by `kubectl label node`, nodeSelector,
 * preferred terms), topology spread over zones, inter-pod anti-affinity and affinity, and
 * preemption with PriorityClasses — each asserted on what `kubectl get` and `kubectl get events`
 * print, with upstream's messages.
 *
 * Solves: the plugin tests prove the arithmetic on a simulated cluster; these prove the same
 * plugins behave in the binary, fed by informers from a real API server over HTTPS + RBAC.
 *
 * Invariants:
 * - one API server and one scheduler process for the file (beforeAll / afterAll, stopped even
 *   when a case fails);
 * - each case has its own namespace and its own nodes, and deletes both nodes and pods when it
 *   ends (pass or fail), so each case's "0/N nodes" counts only its own nodes;
 * - there is no kubelet: a node is a plain Node object, and a victim's graceful deletion is
 *   finished by the test (`kubectl delete --force`), as the kubelet would after the pod stops.
 *
 * @upstream kubernetes/kubernetes test/integration/scheduler/filters/filters_test.go (the same cases, in Go)
 * @upstream kubernetes/kubernetes test/integration/scheduler/preemption/preemption_test.go
 * @chapter 05-scheduler
 */
import { afterAll, afterEach, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../scripts/external-tools.ts";
import { type SecuredKubectlCluster, startSecuredKubectlCluster } from "../apiserver/testing/kubectl-env.ts";
import { freePort } from "../testing/ports.ts";
import { waitFor } from "../testing/wait-for.ts";
import { type CommandProcess, startCommand } from "./testing/command-process.ts";

const file = new URL("./kube-scheduler.ts", import.meta.url).pathname;

describeWithTools("kube-scheduler's plugins, driven by the real kubectl", ["kubectl"], () => {
  let cluster: SecuredKubectlCluster | undefined;
  let sched: CommandProcess | undefined;
  /** The nodes and namespace the running case made, removed by afterEach. */
  let caseNodes: string[] = [];
  let caseNamespace: string | undefined;

  beforeAll(async () => {
    // Admission on for Priority (priorityClassName → spec.priority and preemptionPolicy), with
    // TaintNodesByCondition off: without a node lifecycle controller nothing would ever lift the
    // not-ready taint it puts on every new node. ServiceAccount off: no token volumes to mount.
    cluster = await startSecuredKubectlCluster("sched-plugins-", {
      admission: { disablePlugins: ["TaintNodesByCondition", "ServiceAccount"] },
    });
    const port = await freePort();
    sched = startCommand(file, [
      `--kubeconfig=${cluster.kubeconfigOf("kube-scheduler")}`,
      `--secure-port=${port}`,
      "--bind-address=127.0.0.1",
    ]);
    await sched.waitForStderr('"Caches are synced"');
  });
  afterAll(async () => {
    sched?.kill();
    await cluster?.close();
  });
  afterEach(async () => {
    // Pending pods first: deleting the bound ones could make a pending one fit, and the
    // scheduler would then bind a pod that is about to go. Force: no kubelet finishes a
    // graceful deletion here.
    if (caseNamespace) {
      const force = ["-n", caseNamespace, "--grace-period=0", "--force"];
      await kubectl(["delete", "pods", "--field-selector", "spec.nodeName=", ...force]);
      await kubectl(["delete", "pods", "--all", ...force]);
    }
    if (caseNodes.length > 0) await kubectl(["delete", "node", ...caseNodes]);
    caseNodes = [];
    caseNamespace = undefined;
  });

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

  /** Starts a case: its namespace, and nodes of 4 CPUs labelled with their hostname and zone. */
  async function setUp(ns: string, nodes: { name: string; zone: string; unschedulable?: boolean }[]) {
    caseNamespace = ns;
    await ok(["create", "namespace", ns]);
    for (const n of nodes) {
      caseNodes.push(n.name);
      await ok(
        ["create", "-f", "-"],
        [
          "apiVersion: v1",
          "kind: Node",
          "metadata:",
          `  name: ${n.name}`,
          `  labels: {kubernetes.io/hostname: ${n.name}, topology.kubernetes.io/zone: ${n.zone}}`,
          ...(n.unschedulable ? ["spec: {unschedulable: true}"] : []),
          "status:",
          '  capacity: {cpu: "4", memory: 8Gi, pods: "110"}',
          '  allocatable: {cpu: "4", memory: 8Gi, pods: "110"}',
          "",
        ].join("\n"),
      );
    }
  }
  /** Creates a pod in the case's namespace; `spec` lines go under `spec:`, before the container. */
  async function createPod(name: string, o: { cpu?: string; labels?: string; spec?: string[] } = {}) {
    await ok(
      ["create", "-n", caseNamespace ?? "default", "-f", "-"],
      [
        "apiVersion: v1",
        "kind: Pod",
        "metadata:",
        `  name: ${name}`,
        ...(o.labels ? [`  labels: {${o.labels}}`] : []),
        "spec:",
        ...(o.spec ?? []).map((l) => `  ${l}`),
        "  containers:",
        "  - name: c",
        "    image: registry.k8s.io/pause:3.10",
        `    resources: {requests: {cpu: "${o.cpu ?? "100m"}"}}`,
        "",
      ].join("\n"),
    );
  }
  const nodeOf = async (pod: string) =>
    (await ok(["get", "pod", pod, "-n", caseNamespace ?? "", "-o", "jsonpath={.spec.nodeName}"])) ||
    undefined;
  const boundTo = (pod: string) => waitFor(`${pod} to be bound`, () => nodeOf(pod));
  /** The message of the pod's first event with `reason`, exactly as stored (`kubectl get events` prints it last on the line). */
  const messageOf = async (pod: string, reason: string) => {
    const table = await eventsOf(pod, reason);
    if (process.env.SCHED_E2E_PRINT) console.log(table);
    const out = await ok([
      "get",
      "events",
      "-n",
      caseNamespace ?? "",
      "--field-selector",
      `involvedObject.name=${pod},reason=${reason}`,
      "-o",
      "jsonpath={.items[0].message}",
    ]);
    // The table ends each line with the message: what a learner sees is what is stored.
    expect(table).toContain(` ${out}\n`);
    return out;
  };
  /** The pod's events as `kubectl get events` prints them, once one has `reason`. */
  const eventsOf = (pod: string, reason: string) =>
    waitFor(`a ${reason} event for ${pod}`, async () => {
      const out = await ok([
        "get",
        "events",
        "-n",
        caseNamespace ?? "",
        "--field-selector",
        `involvedObject.name=${pod}`,
      ]);
      return out.includes(reason) ? out : undefined;
    });

  it("node affinity: required In / NotIn / Exists, nodeSelector, preferred terms, and a pod no node matches", async () => {
    await setUp("affinity", [
      { name: "aff-a", zone: "a" },
      { name: "aff-b", zone: "b" },
      { name: "aff-c", zone: "c" },
    ]);
    await ok(["label", "node", "aff-a", "disktype=ssd"]);
    await ok(["label", "node", "aff-b", "disktype=hdd"]);
    await ok(["label", "node", "aff-c", "gpu=true"]);
    const required = (exprs: string) => [
      "affinity:",
      "  nodeAffinity:",
      "    requiredDuringSchedulingIgnoredDuringExecution:",
      `      nodeSelectorTerms: [{matchExpressions: [${exprs}]}]`,
    ];
    await createPod("wants-ssd", { spec: required("{key: disktype, operator: In, values: [ssd]}") });
    expect(await boundTo("wants-ssd")).toBe("aff-a");
    // NotIn alone also matches a node without the label (aff-c); Exists, ANDed in the same term, rules it out.
    await createPod("not-ssd", {
      spec: required("{key: disktype, operator: NotIn, values: [ssd]}, {key: disktype, operator: Exists}"),
    });
    expect(await boundTo("not-ssd")).toBe("aff-b");
    await createPod("by-selector", { spec: ['nodeSelector: {gpu: "true"}'] });
    expect(await boundTo("by-selector")).toBe("aff-c");
    // Preferred: weight 100 on hdd gives aff-b NodeAffinity's full 100 × weight 2; the other
    // scores differ by a point or two between these near-empty nodes.
    await createPod("likes-hdd", {
      spec: [
        "affinity:",
        "  nodeAffinity:",
        "    preferredDuringSchedulingIgnoredDuringExecution:",
        "    - weight: 100",
        "      preference: {matchExpressions: [{key: disktype, operator: In, values: [hdd]}]}",
      ],
    });
    expect(await boundTo("likes-hdd")).toBe("aff-b");

    await createPod("wants-nvme", { spec: required("{key: disktype, operator: In, values: [nvme]}") });
    // Upstream's FitError ends each part with "." and the preemption part is itself a FitError
    // message, hence the "..".
    expect(await messageOf("wants-nvme", "FailedScheduling")).toBe(
      "0/3 nodes are available: 3 node(s) didn't match Pod's node affinity/selector. preemption: 0/3 nodes are available: 3 Preemption is not helpful for scheduling..",
    );
    expect(await ok(["get", "pod", "wants-nvme", "-n", "affinity", "--no-headers"])).toMatch(
      /^wants-nvme\s+0\/1\s+Pending/,
    );
    // NodeAffinity registered Node/UpdateNodeLabel: relabelling aff-c brings the pod back.
    await ok(["label", "node", "aff-c", "disktype=nvme"]);
    expect(await boundTo("wants-nvme")).toBe("aff-c");
  });

  it("topology spread: maxSkew 1 over zones keeps a pod Pending until the other zone can take it", async () => {
    // Zone b's only node is cordoned: it still counts as a domain (with 0 pods), so a second pod
    // in zone a would make the skew 2.
    await setUp("spread", [
      { name: "sp-a1", zone: "a" },
      { name: "sp-a2", zone: "a" },
      { name: "sp-b1", zone: "b", unschedulable: true },
    ]);
    const spread = [
      "topologySpreadConstraints:",
      "- maxSkew: 1",
      "  topologyKey: topology.kubernetes.io/zone",
      "  whenUnsatisfiable: DoNotSchedule",
      "  labelSelector: {matchLabels: {app: web}}",
    ];
    await createPod("web-1", { labels: "app: web", spec: spread });
    expect(await boundTo("web-1")).toMatch(/^sp-a[12]$/);
    await createPod("web-2", { labels: "app: web", spec: spread });
    expect(await messageOf("web-2", "FailedScheduling")).toBe(
      "0/3 nodes are available: 1 node(s) were unschedulable, 2 node(s) didn't match pod topology spread constraints. preemption: 0/3 nodes are available: 1 Preemption is not helpful for scheduling, 2 No preemption victims found for incoming pod..",
    );
    await ok(["uncordon", "sp-b1"]);
    expect(await boundTo("web-2")).toBe("sp-b1");
    await createPod("web-3", { labels: "app: web", spec: spread });
    await createPod("web-4", { labels: "app: web", spec: spread });
    await boundTo("web-3");
    await boundTo("web-4");
    const wide = await ok(["get", "pods", "-n", "spread", "-l", "app=web", "-o", "wide", "--no-headers"]);
    const perZone = { a: 0, b: 0 };
    for (const line of wide.trim().split("\n")) perZone[/\ssp-b1\s/.test(line) ? "b" : "a"]++;
    expect(perZone).toEqual({ a: 2, b: 2 });
  });

  it("inter-pod anti-affinity spreads one pod per node; affinity co-locates with a labelled pod", async () => {
    await setUp("anti", [
      { name: "anti-1", zone: "a" },
      { name: "anti-2", zone: "a" },
    ]);
    const solo = [
      "affinity:",
      "  podAntiAffinity:",
      "    requiredDuringSchedulingIgnoredDuringExecution:",
      "    - labelSelector: {matchLabels: {app: solo}}",
      "      topologyKey: kubernetes.io/hostname",
    ];
    await createPod("solo-1", { labels: "app: solo", spec: solo });
    await createPod("solo-2", { labels: "app: solo", spec: solo });
    const placed = [await boundTo("solo-1"), await boundTo("solo-2")].sort();
    expect(placed).toEqual(["anti-1", "anti-2"]);
    await createPod("solo-3", { labels: "app: solo", spec: solo });
    expect(await messageOf("solo-3", "FailedScheduling")).toBe(
      "0/2 nodes are available: 2 node(s) didn't match pod anti-affinity rules. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..",
    );
    expect(await nodeOf("solo-3")).toBeUndefined();

    // Affinity: "cache" must share a node with the pod labelled app=db, wherever that landed.
    await createPod("db", { labels: "app: db", spec: ["nodeSelector: {kubernetes.io/hostname: anti-2}"] });
    expect(await boundTo("db")).toBe("anti-2");
    await createPod("cache", {
      spec: [
        "affinity:",
        "  podAffinity:",
        "    requiredDuringSchedulingIgnoredDuringExecution:",
        "    - labelSelector: {matchLabels: {app: db}}",
        "      topologyKey: kubernetes.io/hostname",
      ],
    });
    expect(await boundTo("cache")).toBe("anti-2");
  });

  it("preemption: a high-priority pod evicts a low one and is bound; preemptionPolicy Never does not preempt", async () => {
    await setUp("preempt", [{ name: "pre-1", zone: "a" }]);
    try {
      await ok(["create", "priorityclass", "low", "--value=100"]);
      await ok(["create", "priorityclass", "high", "--value=1000"]);
      await ok(["create", "priorityclass", "polite", "--value=500", "--preemption-policy=Never"]);
      // Two 2-CPU low pods fill the 4-CPU node.
      await createPod("low-1", { cpu: "2", spec: ["priorityClassName: low"] });
      await createPod("low-2", { cpu: "2", spec: ["priorityClassName: low"] });
      expect(await boundTo("low-1")).toBe("pre-1");
      expect(await boundTo("low-2")).toBe("pre-1");
      expect(await ok(["get", "pod", "low-1", "-n", "preempt", "-o", "jsonpath={.spec.priority}"])).toBe(
        "100",
      );

      // Priority 500 would be enough to evict, but its class says Never.
      await createPod("polite", { cpu: "2", spec: ["priorityClassName: polite"] });
      expect(await messageOf("polite", "FailedScheduling")).toBe(
        "0/1 nodes are available: 1 Insufficient cpu. preemption: not eligible due to preemptionPolicy=Never..",
      );
      expect(await nodeOf("low-1")).toBe("pre-1");

      await createPod("high", { cpu: "2", spec: ["priorityClassName: high"] });
      expect(
        await waitFor(
          "high's nominatedNodeName",
          async () =>
            (await ok([
              "get",
              "pod",
              "high",
              "-n",
              "preempt",
              "-o",
              "jsonpath={.status.nominatedNodeName}",
            ])) || undefined,
        ),
      ).toBe("pre-1");
      // Preemption succeeded, so the PostFilter adds nothing to the attempt's message.
      expect(await messageOf("high", "FailedScheduling")).toBe(
        "0/1 nodes are available: 1 Insufficient cpu.",
      );
      // One victim is enough (upstream reprieves every pod it can); it is marked and
      // deleted gracefully: Terminating, not gone, until its kubelet would finish.
      const victim = await waitFor("a victim marked DisruptionTarget", async () => {
        for (const name of ["low-1", "low-2"]) {
          const reason = await ok([
            "get",
            "pod",
            name,
            "-n",
            "preempt",
            "-o",
            'jsonpath={.status.conditions[?(@.type=="DisruptionTarget")].reason}',
          ]);
          if (reason === "PreemptionByScheduler") return name;
        }
        return undefined;
      });
      const spared = victim === "low-1" ? "low-2" : "low-1";
      const condition = JSON.parse(
        await ok([
          "get",
          "pod",
          victim,
          "-n",
          "preempt",
          "-o",
          'jsonpath={.status.conditions[?(@.type=="DisruptionTarget")]}',
        ]),
      );
      expect(condition).toMatchObject({
        type: "DisruptionTarget",
        status: "True",
        reason: "PreemptionByScheduler",
        message: "default-scheduler: preempting to accommodate a higher priority pod",
      });
      expect(await ok(["get", "pod", victim, "-n", "preempt", "--no-headers"])).toMatch(
        new RegExp(`^${victim}\\s+0/1\\s+Terminating`),
      );
      const highUID = await ok(["get", "pod", "high", "-n", "preempt", "-o", "jsonpath={.metadata.uid}"]);
      expect(await eventsOf(victim, "Preempted")).toMatch(
        new RegExp(`Normal\\s+Preempted\\s+pod/${victim}\\s+Preempted by pod ${highUID} on node pre-1\n`),
      );
      expect(await messageOf(victim, "Preempted")).toBe(`Preempted by pod ${highUID} on node pre-1`);
      // The high pod waits for the victim to go: the node still counts the terminating pod.
      expect(await nodeOf("high")).toBeUndefined();
      // As the kubelet would once the containers stop.
      // (kubectl warns on stderr that immediate deletion does not wait for the containers.)
      expect(
        (await kubectl(["delete", "pod", victim, "-n", "preempt", "--grace-period=0", "--force"])).code,
      ).toBe(0);
      expect(await boundTo("high")).toBe("pre-1");
      expect(await messageOf("high", "Scheduled")).toBe("Successfully assigned preempt/high to pre-1");
      expect(await nodeOf(spared)).toBe("pre-1");
      expect(await nodeOf("polite")).toBeUndefined();
      expect(
        await ok(["get", "pod", "polite", "-n", "preempt", "-o", "jsonpath={.status.nominatedNodeName}"]),
      ).toBe("");
    } finally {
      await kubectl(["delete", "priorityclass", "low", "high", "polite"]);
    }
  });

  it("wrote nothing the API server refused", () => {
    expect(sched?.stderr()).not.toMatch(/^E "/m);
  });
});

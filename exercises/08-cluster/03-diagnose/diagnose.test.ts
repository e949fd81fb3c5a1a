// Exercise 8.3: your diagnose() against a cluster with one component broken on purpose. Each test
// breaks at most one component — SIGSTOP of the scheduler, of the controller-manager, or of one
// kubelet — waits until the fault can be seen through the API (the component's Lease has run out),
// asks your diagnose(), and undoes the fault in a `finally` (the stopped control-plane process is
// restarted, the kubelet continued) before the next test checks that the cluster is healthy again.
//
// This file starts a cluster of its own instead of using the grader's shared one: the grader's
// cluster serves every other chapter-8 test at the same time, and a controller-manager cannot be
// broken "for one test only" (nothing like a pod's schedulerName routes a Deployment to one
// controller-manager of several) — stopping the shared one would stall every other test's
// Deployments and show this test's variants each other's faults.
import { afterAll, afterEach, beforeAll, beforeEach, describe, expect, it } from "vitest";
import { stringify } from "yaml";
import type { Deployment } from "../../../code/api/apps.ts";
import type { Lease } from "../../../code/api/coordination.ts";
import type { Namespace, Pod } from "../../../code/api/core.ts";
import { eventually } from "../../../code/cmd/testing/grader-cluster.ts";
import { LocalCluster } from "../../../code/cmd/testing/local-cluster.ts";
import { type Diagnosis, diagnose } from "./diagnose.ts";

const nodes = ["node-1", "node-2"];
/** The kubelets renew their node Lease every 2.5 s (a quarter of it), as upstream's do every 10 s of 40. */
const nodeLeaseDurationSeconds = 10;
/** Upstream's defaults (--leader-elect-lease-duration, --leader-elect-renew-deadline, --leader-elect-retry-period). */
const leaderElection = { lease: 15_000, renew: 10_000, retry: 2_000 };
const schedulerLease = { namespace: "kube-system", name: "kube-scheduler" };
const controllerManagerLease = { namespace: "kube-system", name: "kube-controller-manager" };
const nodeLease = (node: string) => ({ namespace: "kube-node-lease", name: node });

let cluster: LocalCluster | undefined;
const c = () => {
  if (!cluster) throw new Error("the diagnose cluster did not start (see the beforeAll's error)");
  return cluster;
};

beforeAll(async () => {
  cluster = await LocalCluster.start({
    nodes,
    // Containers that only change state on timers: the faults here are the components', and a
    // real process per container would only add load.
    kubeletArgs: ["--runtime=fake", "--fake-capacity=cpu=4,memory=8Gi,pods=110,ephemeral-storage=20Gi"],
    kubeletConfig: stringify({
      apiVersion: "kubelet.config.k8s.io/v1beta1",
      kind: "KubeletConfiguration",
      nodeLeaseDurationSeconds,
    }),
    // The scheduler and the controller-manager elect a leader, as upstream's do by default: their
    // Leases in kube-system are their heartbeats.
    leaderElection,
    // Each controller as its own service account, as kubeadm runs it (the controller-manager's
    // own user may not create ReplicaSets or pods).
    controllerManagerArgs: ["--use-service-account-credentials"],
  });
}, 300_000);

afterAll(async () => {
  await cluster?.close();
}, 120_000);

/** How long ago the Lease was renewed, and for how long a renewal holds. */
async function leaseState(where: { namespace: string; name: string }) {
  const lease: Lease | undefined = await c()
    .admin.coordinationV1.leases(where.namespace)
    .get(where.name)
    .catch(() => undefined);
  const renewed = Date.parse(lease?.spec?.renewTime ?? "");
  return {
    ageMs: Number.isNaN(renewed) ? Number.POSITIVE_INFINITY : Date.now() - renewed,
    durationMs: (lease?.spec?.leaseDurationSeconds ?? 0) * 1000,
    holder: lease?.spec?.holderIdentity,
  };
}
const describeLease = (
  where: { namespace: string; name: string },
  s: Awaited<ReturnType<typeof leaseState>>,
) =>
  `Lease ${where.namespace}/${where.name} last renewed ${(s.ageMs / 1000).toFixed(1)} s ago, leaseDurationSeconds ${s.durationMs / 1000}`;

/** Waits until the Lease's holder has missed its renewal: renewTime + leaseDurationSeconds is past. */
async function waitUntilExpired(where: { namespace: string; name: string }): Promise<string> {
  let last = "";
  await eventually(
    `${where.namespace}/${where.name} to expire after its holder was stopped`,
    async () => {
      const s = await leaseState(where);
      last = describeLease(where, s);
      // Half a second past expiry: the answer may not depend on the milliseconds of a poll.
      return s.durationMs > 0 && s.ageMs > s.durationMs + 500;
    },
    120_000,
    () => last,
  );
  return last;
}

async function isFresh(where: { namespace: string; name: string }): Promise<boolean> {
  const s = await leaseState(where);
  return s.durationMs > 0 && s.ageMs < s.durationMs;
}

const nodeReady = async (name: string) =>
  (await c().admin.coreV1.nodes().get(name)).status?.conditions?.find((x) => x.type === "Ready")?.status;

/** Every component renews its Lease and every node is Ready: no fault is left from a test before. */
async function waitUntilHealthy(): Promise<void> {
  const leases = [schedulerLease, controllerManagerLease, ...nodes.map(nodeLease)];
  let last = "";
  await eventually(
    "a healthy cluster before the next fault",
    async () => {
      for (const l of leases) {
        if (!(await isFresh(l))) {
          last = describeLease(l, await leaseState(l));
          return false;
        }
      }
      for (const n of nodes) {
        if ((await nodeReady(n)) !== "True") {
          last = `node ${n} is not Ready`;
          return false;
        }
      }
      return true;
    },
    180_000,
    () => last,
  );
}

let namespace = "";
const randomSuffix = () => Math.random().toString(36).slice(2, 7);

beforeEach(async () => {
  await waitUntilHealthy();
  namespace = `diagnose-${randomSuffix()}`;
  const ns: Namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name: namespace } };
  await c().admin.coreV1.namespaces().create(ns);
}, 240_000);

afterEach(async () => {
  await cluster?.admin.coreV1
    .namespaces()
    .delete(namespace)
    .catch(() => undefined);
}, 60_000);

const web = (name: string, replicas: number, cpu?: string): Deployment => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, namespace },
  spec: {
    replicas,
    selector: { matchLabels: { app: name } },
    template: {
      metadata: { labels: { app: name } },
      spec: {
        terminationGracePeriodSeconds: 1,
        containers: [
          {
            name: "web",
            image: "course/web",
            ...(cpu ? { resources: { requests: { cpu } } } : {}),
          },
        ],
      },
    },
  },
});
const pods = async (app: string): Promise<Pod[]> =>
  (
    await c()
      .admin.coreV1.pods(namespace)
      .list({ labelSelector: `app=${app}` })
  ).items;
const running = (p: Pod) => p.status?.phase === "Running" && !p.metadata.deletionTimestamp;

async function runningWeb(app: string, replicas: number): Promise<Pod[]> {
  await c().admin.appsV1.deployments(namespace).create(web(app, replicas));
  return eventually(
    `${replicas} pod(s) of Deployment ${app} Running`,
    async () => {
      const ps = (await pods(app)).filter(running);
      return ps.length === replicas ? ps : undefined;
    },
    120_000,
  );
}

/** Your diagnose(), bounded: a diagnosis that does not come is a wrong one. */
async function ask(): Promise<Diagnosis> {
  let timer: NodeJS.Timeout | undefined;
  const timeout = new Promise<never>((_, reject) => {
    timer = setTimeout(
      () =>
        reject(
          new Error(
            "diagnose() did not answer within 60 s (it reads the API once: no waiting for the cluster to change)",
          ),
        ),
      60_000,
    );
  });
  try {
    return await Promise.race([diagnose(c().admin, namespace), timeout]);
  } finally {
    clearTimeout(timer);
  }
}

const said = (d: Diagnosis) => `your diagnose() said ${JSON.stringify(d)}`;
const verdict = (d: Diagnosis) => ({
  component: d.component,
  node: d.component === "kubelet" ? d.node : undefined,
});

describe("diagnose(): which component is broken, from what the API shows", () => {
  it("a healthy cluster: nothing is broken", async () => {
    await runningWeb("web", 2);
    const d = await ask();
    expect(
      verdict(d),
      `every component renews its Lease and the Deployment's pods run: nothing is broken — ${said(d)}`,
    ).toEqual({ component: "none", node: undefined });
  }, 240_000);

  it("a pod that fits no node: the scheduler is working, it said why", async () => {
    await runningWeb("web", 1);
    await c()
      .admin.appsV1.deployments(namespace)
      .create(web("huge", 1, "64"));
    await eventually(
      "the scheduler to mark the pod of Deployment huge Unschedulable",
      async () =>
        (await pods("huge")).some((p) =>
          p.status?.conditions?.some((x) => x.type === "PodScheduled" && x.reason === "Unschedulable"),
        ),
      120_000,
    );
    const d = await ask();
    expect(
      verdict(d),
      "a pod asking for 64 CPUs is Pending, but the scheduler looked at it: PodScheduled False, reason " +
        "Unschedulable, and a FailedScheduling event saying why no node fits. A Pending pod is not by " +
        `itself a broken scheduler; every component renews its Lease — ${said(d)}`,
    ).toEqual({ component: "none", node: undefined });
  }, 240_000);

  it("the scheduler is stopped (SIGSTOP)", async () => {
    c().pauseComponent("kube-scheduler-1");
    try {
      await c().admin.appsV1.deployments(namespace).create(web("web", 2));
      await eventually(
        "the ReplicaSet controller to create the 2 pods of Deployment web",
        async () => (await pods("web")).length === 2,
        120_000,
      );
      const lease = await waitUntilExpired(schedulerLease);
      const d = await ask();
      expect(
        verdict(d),
        "the Deployment's ReplicaSet made its pods, they have no node and no PodScheduled condition " +
          `(no scheduler has looked at them), and the scheduler's ${lease} — ${said(d)}`,
      ).toEqual({ component: "kube-scheduler", node: undefined });
    } finally {
      // A leader stopped past its renew deadline gives up leadership and exits when continued, as
      // upstream's does: start it again, as an operator would.
      await c().restartComponent("kube-scheduler-1");
    }
  }, 240_000);

  it("the controller-manager is stopped (SIGSTOP)", async () => {
    c().pauseComponent("kube-controller-manager-1");
    try {
      await c().admin.appsV1.deployments(namespace).create(web("web", 2));
      const lease = await waitUntilExpired(controllerManagerLease);
      const d = await ask();
      expect(
        verdict(d),
        "the Deployment has no ReplicaSet and so no pods — there is nothing for the scheduler to " +
          "schedule: the Deployment and ReplicaSet controllers run in the controller-manager, whose " +
          `${lease} — ${said(d)}`,
      ).toEqual({ component: "kube-controller-manager", node: undefined });
    } finally {
      await c().restartComponent("kube-controller-manager-1");
    }
  }, 240_000);

  it("one kubelet is stopped (SIGSTOP), and its Node still says Ready", async () => {
    const [first] = await runningWeb("web", 2);
    const victim = first.spec?.nodeName ?? "";
    expect(nodes, "the pod runs on a node of this cluster").toContain(victim);
    c().pauseComponent(`kubelet-${victim}`);
    try {
      // What a user would have done: "restart the pod". It stays Terminating: only its kubelet may
      // confirm that the container is gone.
      await c()
        .admin.coreV1.pods(namespace)
        .delete(first.metadata.name ?? "");
      const lease = await waitUntilExpired(nodeLease(victim));
      const readyBefore = await nodeReady(victim);
      const d = await ask();
      const readyAfter = await nodeReady(victim);
      // The point of this test: the Node's Ready condition lags the Lease by the node lifecycle
      // controller's grace period (--node-monitor-grace-period, 50 s in 1.32). A machine so slow
      // that it ran out while waiting would not test that.
      expect(
        [readyBefore, readyAfter],
        `node ${victim} went NotReady before diagnose() was asked (the machine is very slow): run again`,
      ).toEqual(["True", "True"]);
      expect(
        verdict(d),
        `node ${victim}'s ${lease}; its Node still says Ready only because the node lifecycle ` +
          "controller waits --node-monitor-grace-period (50 s) after the last heartbeat before it " +
          `marks it Unknown. The pod deleted there stays Terminating — ${said(d)}`,
      ).toEqual({ component: "kubelet", node: victim });
    } finally {
      c().resumeComponent(`kubelet-${victim}`);
    }
  }, 240_000);
});

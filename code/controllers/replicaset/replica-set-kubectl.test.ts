/**
 * The ReplicaSet controller against our API server over HTTP, driven with the real kubectl:
 * create, heal, scale (and which pods scale-down picks), adopt and release, ready and available
 * counts — and the expectations property: with the pod watch held back, the controller never
 * creates more pods than `replicas`, counted at the API server.
 */
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, expect, it } from "vitest";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import type { ReplicaSet } from "../../api/apps.ts";
import type { Pod } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { kubectlOK, plainKubectlEnv } from "../../apiserver/testing/kubectl-env.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import {
  type ListerWatcher,
  newListWatchFromClient,
  type Watch,
} from "../../client/tools/cache/listwatch.ts";
import {
  newSharedIndexInformer,
  type SharedIndexInformer,
} from "../../client/tools/cache/shared-informer.ts";
import { waitFor } from "../../testing/wait-for.ts";
import { newEventRecorder } from "../event-recorder.ts";
import { type PodControlInterface, RealPodControl } from "../pod-control.ts";
import { newReplicaSetController, type ReplicaSetController } from "./replica-set.ts";

/** A cluster: the API server, a kubeconfig for kubectl, a clientset, and the controller running. */
interface Cluster {
  server: APIServer;
  dir: string;
  env: NodeJS.ProcessEnv;
  client: Clientset;
  controller: ReplicaSetController;
  rsInformer: SharedIndexInformer<KubeObject>;
  podCreates: () => number;
  stop: () => Promise<void>;
}

interface ClusterOptions {
  /** Wraps the pod informer's list-and-watch (to slow it down). */
  wrapPods?: (lw: ListerWatcher) => ListerWatcher;
  /** Wraps how the controller creates and deletes pods (to make creates fail). */
  wrapPodControl?: (real: PodControlInterface) => PodControlInterface;
}

async function startCluster(opts: ClusterOptions = {}): Promise<Cluster> {
  const wrapPods = opts.wrapPods ?? ((lw) => lw);
  let creates = 0;
  const server = await startAPIServer({
    insecurePort: 0,
    log: (line) => {
      if (/verb="CREATE" URI="\/api\/v1\/namespaces\/[^/"]+\/pods[?"]/.test(line)) creates++;
    },
  });
  const dir = await mkdtemp(join(tmpdir(), "rsctl-test-"));
  const env = await plainKubectlEnv(dir, server.url);
  const client = newForConfig({ host: server.url, qps: -1 });
  const podInformer = newSharedIndexInformer(
    wrapPods(newListWatchFromClient(client.coreV1.restClient, "pods", "")),
    0,
  );
  const rsInformer = newSharedIndexInformer(
    newListWatchFromClient(client.appsV1.restClient, "replicasets", ""),
    0,
  );
  const errors: unknown[] = [];
  const real = new RealPodControl(
    client,
    newEventRecorder(client, "replicaset-controller", { group: "apps", version: "v1", kind: "ReplicaSet" }),
  );
  const controller = newReplicaSetController(podInformer, rsInformer, client, {
    onError: (_key, err) => errors.push(err),
    podControl: opts.wrapPodControl ? opts.wrapPodControl(real) : real,
  });
  const ctl = new AbortController();
  const running = [podInformer.run(ctl.signal), rsInformer.run(ctl.signal), controller.run(2, ctl.signal)];
  return {
    server,
    dir,
    env,
    client,
    controller,
    rsInformer,
    podCreates: () => creates,
    stop: async () => {
      ctl.abort();
      await Promise.all(running);
      await server.close();
      await rm(dir, { recursive: true, force: true });
    },
  };
}

const kubectl = (c: Cluster, args: string[], stdin?: string) => kubectlOK(c.env, args, stdin);

const replicaSetJSON = (name: string, replicas: number, extra: Record<string, unknown> = {}) =>
  JSON.stringify({
    apiVersion: "apps/v1",
    kind: "ReplicaSet",
    metadata: { name },
    spec: {
      replicas,
      selector: { matchLabels: { app: name } },
      template: {
        metadata: { labels: { app: name } },
        spec: { containers: [{ name: "c", image: "nginx" }] },
      },
      ...extra,
    },
  });

/** The active pods labelled app=<name> (not terminating). */
async function activePods(c: Cluster, app: string): Promise<Pod[]> {
  const list = await c.client.coreV1.pods("default").list({ labelSelector: `app=${app}` });
  return list.items.filter((p) => !p.metadata.deletionTimestamp);
}

const podsCount = (c: Cluster, app: string, n: number) => async () => {
  const pods = await activePods(c, app);
  return pods.length === n ? pods : undefined;
};

async function getRS(c: Cluster, name: string): Promise<ReplicaSet> {
  return c.client.appsV1.replicaSets("default").get(name);
}

describeWithTools("the ReplicaSet controller driven by kubectl", ["kubectl"], () => {
  let c: Cluster;
  beforeAll(async () => {
    c = await startCluster();
  });
  afterAll(async () => {
    await c?.stop();
  });

  it("creates 3 pods with a controller ownerReference, and reports replicas and observedGeneration", async () => {
    expect(await kubectl(c, ["apply", "-f", "-"], replicaSetJSON("web", 3))).toBe(
      "replicaset.apps/web created\n",
    );
    const pods = await waitFor("3 pods", podsCount(c, "web", 3));
    const rs = await getRS(c, "web");
    for (const p of pods) {
      expect(p.metadata.generateName).toBe("web-");
      expect(p.metadata.ownerReferences).toEqual([
        {
          apiVersion: "apps/v1",
          kind: "ReplicaSet",
          name: "web",
          uid: rs.metadata.uid,
          controller: true,
          blockOwnerDeletion: true,
        },
      ]);
    }
    await waitFor("status", async () => {
      const s = (await getRS(c, "web")).status;
      return s?.replicas === 3 && s.fullyLabeledReplicas === 3 && s.observedGeneration === 1;
    });
    expect(
      await kubectl(c, [
        "get",
        "rs",
        "web",
        "-o",
        "jsonpath={.status.replicas}/{.status.observedGeneration}",
      ]),
    ).toBe("3/1");
    // The creates were recorded as Events on the ReplicaSet.
    await waitFor("3 SuccessfulCreate events", async () => {
      const all = (await c.client.coreV1.events("default").list()).items;
      const events = all.filter(
        (e) =>
          e.involvedObject.name === "web" &&
          e.involvedObject.kind === "ReplicaSet" &&
          e.reason === "SuccessfulCreate",
      );
      return (
        events.length === 3 &&
        events.every(
          (e) =>
            /^Created pod: web-/.test(e.message ?? "") && e.source?.component === "replicaset-controller",
        )
      );
    });
  });

  it("replaces a pod deleted with kubectl delete", async () => {
    const [victim] = await activePods(c, "web");
    await kubectl(c, ["delete", "pod", victim.metadata.name ?? ""]);
    const pods = await waitFor("a replacement", async () => {
      const ps = await activePods(c, "web");
      return ps.length === 3 && !ps.some((p) => p.metadata.name === victim.metadata.name) ? ps : undefined;
    });
    expect(pods).toHaveLength(3);
  });

  it("follows kubectl scale up to 5, counts ready and available, and scales down to 1 keeping the scheduled ready pod", async () => {
    expect(await kubectl(c, ["scale", "rs", "web", "--replicas=5"])).toBe("replicaset.apps/web scaled\n");
    const pods = await waitFor("5 pods", podsCount(c, "web", 5));
    await waitFor(
      "observedGeneration 2",
      async () => (await getRS(c, "web")).status?.observedGeneration === 2,
    );
    // Two pods get a node (no scheduler here: the binding subresource, as the scheduler writes it);
    // one of them is then marked Ready as a kubelet would.
    const [keeper, boundNotReady] = pods;
    for (const p of [keeper, boundNotReady])
      await c.client.coreV1.pods("default").bind({
        apiVersion: "v1",
        kind: "Binding",
        metadata: { name: p.metadata.name },
        target: { apiVersion: "v1", kind: "Node", name: "node-1" },
      } as never);
    const ready = {
      status: {
        phase: "Running",
        conditions: [
          {
            type: "Ready",
            status: "True",
            lastTransitionTime: new Date(Date.now() - 60000).toISOString().replace(/\.\d+Z$/, "Z"),
          },
        ],
      },
    };
    await kubectl(c, [
      "patch",
      "pod",
      keeper.metadata.name ?? "",
      "--subresource=status",
      "--type=merge",
      "-p",
      JSON.stringify(ready),
    ]);
    await waitFor("readyReplicas 1, availableReplicas 1", async () => {
      const s = (await getRS(c, "web")).status;
      return s?.readyReplicas === 1 && s.availableReplicas === 1;
    });
    expect(await kubectl(c, ["get", "rs", "web", "--no-headers"])).toMatch(/^web\s+5\s+5\s+1\s/);

    await kubectl(c, ["scale", "rs", "web", "--replicas=1"]);
    const [survivor] = await waitFor("1 pod", podsCount(c, "web", 1));
    // Unscheduled pods went first, then the scheduled one that was not ready.
    expect(survivor.metadata.name).toBe(keeper.metadata.name);
    const gone = await c.client.coreV1.pods("default").get(boundNotReady.metadata.name ?? "");
    expect(gone.metadata.deletionTimestamp).toBeDefined(); // a bound pod is deleted gracefully
    await waitFor("status.replicas 1", async () => (await getRS(c, "web")).status?.replicas === 1);
  });

  it("adopts a matching orphan and releases a pod relabelled out of its selector", async () => {
    expect(await kubectl(c, ["run", "orphan", "--image=nginx", "--labels=app=adopter"])).toBe(
      "pod/orphan created\n",
    );
    await kubectl(c, ["apply", "-f", "-"], replicaSetJSON("adopter", 2));
    const rs = await getRS(c, "adopter");
    const pods = await waitFor("2 pods, the orphan adopted", async () => {
      const ps = await activePods(c, "adopter");
      const orphan = ps.find((p) => p.metadata.name === "orphan");
      return ps.length === 2 && orphan?.metadata.ownerReferences?.[0]?.uid === rs.metadata.uid
        ? ps
        : undefined;
    });
    expect(pods.find((p) => p.metadata.name === "orphan")?.metadata.ownerReferences).toEqual([
      {
        apiVersion: "apps/v1",
        kind: "ReplicaSet",
        name: "adopter",
        uid: rs.metadata.uid,
        controller: true,
        blockOwnerDeletion: true,
      },
    ]);
    // Only one pod was created for the two replicas: the orphan counted.
    expect(pods.filter((p) => p.metadata.generateName === "adopter-")).toHaveLength(1);

    await kubectl(c, ["label", "pod", "orphan", "app=debugging", "--overwrite"]);
    await waitFor("the orphan released", async () => {
      const p = await c.client.coreV1.pods("default").get("orphan");
      return (p.metadata.ownerReferences ?? []).length === 0;
    });
    const after = await waitFor("a replacement for the released pod", podsCount(c, "adopter", 2));
    expect(after.every((p) => p.metadata.generateName === "adopter-")).toBe(true);
  });
});

// #region slow-watch
/** A pod watch whose events are held until `release()` — a watch that is very, very slow. */
function heldWatch() {
  let open = false;
  let wake: (() => void)[] = [];
  const release = () => {
    open = true;
    for (const w of wake) w();
    wake = [];
  };
  const wrap = (lw: ListerWatcher): ListerWatcher => ({
    list: (o) => lw.list(o),
    watch: async (o) => {
      const w = await lw.watch(o);
      const held: Watch = {
        stop: () => {
          w.stop();
          release();
        },
        async *[Symbol.asyncIterator]() {
          for await (const ev of w) {
            while (!open) await new Promise<void>((r) => wake.push(r));
            yield ev;
          }
        },
      };
      return held;
    },
  });
  return { wrap, release };
}
// #endregion slow-watch

describeWithTools("the ReplicaSet controller with a slow pod watch (expectations)", ["kubectl"], () => {
  const held = heldWatch();
  let c: Cluster;
  beforeAll(async () => {
    c = await startCluster({ wrapPods: held.wrap });
  });
  afterAll(async () => {
    held.release();
    await c?.stop();
  });

  it("never creates more pods than replicas while its cache cannot see the ones it made", async () => {
    // Count the syncs, and what the cache showed each of them.
    const sync = c.controller.syncReplicaSet.bind(c.controller);
    const seen: string[] = [];
    c.controller.syncReplicaSet = async (key) => {
      const cached = c.rsInformer.getIndexer().getByKey(key);
      await sync(key);
      seen.push(cached?.metadata.annotations?.poke ?? "");
    };
    await kubectl(c, ["apply", "-f", "-"], replicaSetJSON("slow", 3));
    await waitFor("3 creates at the API server", async () => c.podCreates() === 3);
    // Five more syncs, each with a cache that still shows no pod: without expectations each
    // would create 3 more.
    for (let i = 1; i <= 5; i++) {
      await kubectl(c, ["annotate", "rs", "slow", `poke=${i}`, "--overwrite"]);
      await waitFor(`a sync that saw poke=${i}`, async () => seen.includes(String(i)));
    }
    expect(c.podCreates()).toBe(3);
    expect(c.controller.expectations.satisfiedExpectations("default/slow")).toBe(false);

    held.release();
    await waitFor("status.replicas 3", async () => (await getRS(c, "slow")).status?.replicas === 3);
    expect(c.controller.expectations.satisfiedExpectations("default/slow")).toBe(true);
    await kubectl(c, ["annotate", "rs", "slow", "poke=after", "--overwrite"]);
    await waitFor("a sync after the pods arrived", async () => seen.includes("after"));
    expect(c.podCreates()).toBe(3);
    expect(await activePods(c, "slow")).toHaveLength(3);
  });
});

describeWithTools("the ReplicaSet controller when pod creation fails", ["kubectl"], () => {
  let failing = true;
  let attempts = 0;
  let c: Cluster;
  beforeAll(async () => {
    c = await startCluster({
      wrapPodControl: (real) => ({
        createPods: async (...args) => {
          attempts++;
          if (failing) throw new Error('pods "broken-" is forbidden: exceeded quota: compute-resources');
          await real.createPods(...args);
        },
        deletePod: (...args) => real.deletePod(...args),
        patchPod: (...args) => real.patchPod(...args),
      }),
    });
  });
  afterAll(async () => {
    await c?.stop();
  });

  it("tries one create per sync (slow start), reports ReplicaFailure, and clears it once creates work", async () => {
    // A retry comes after the workqueue's backoff; the slow start makes each sync try only once.
    const syncs = { n: 0 };
    const sync = c.controller.syncReplicaSet.bind(c.controller);
    c.controller.syncReplicaSet = async (key) => {
      syncs.n++;
      await sync(key);
    };
    await kubectl(c, ["apply", "-f", "-"], replicaSetJSON("broken", 10));
    await waitFor("the ReplicaFailure condition", async () => {
      const cond = (await getRS(c, "broken")).status?.conditions?.find((x) => x.type === "ReplicaFailure");
      return cond?.status === "True" && cond.reason === "FailedCreate";
    });
    expect(await kubectl(c, ["get", "rs", "broken", "-o", "jsonpath={.status.conditions[0].message}"])).toBe(
      'pods "broken-" is forbidden: exceeded quota: compute-resources',
    );
    await waitFor("a few retries", async () => syncs.n >= 3);
    // Each failed sync tried exactly one create: the first batch failed, the rest were skipped
    // (and taken off the expectations, or the retry would wait five minutes). Without the slow
    // start every sync would try all 10.
    expect(attempts).toBeLessThanOrEqual(syncs.n);
    failing = false;
    await waitFor("10 pods", podsCount(c, "broken", 10));
    await waitFor("the condition removed", async () => {
      const s = (await getRS(c, "broken")).status;
      return s?.replicas === 10 && !s.conditions?.some((x) => x.type === "ReplicaFailure");
    });
  });
});

// Exercise 8.5: your invariant judges (a) recordings made by hand in the shapes the observers
// record — every object as the API server serves it, each change an ADDED, MODIFIED or DELETED —
// some that must PASS and some that must FAIL, and (b) a recording of a real rolling update in the
// grader's live cluster, made by informers exactly as the chaos run's observers make theirs.
import { afterAll, describe, expect, it } from "vitest";
import type { Deployment, RollingUpdateDeployment } from "../../../code/api/apps.ts";
import type { Pod } from "../../../code/api/core.ts";
import { newSharedInformerFactory, Resources } from "../../../code/client/informers/factory.ts";
import { DeletedFinalStateUnknown } from "../../../code/client/tools/cache/delta-fifo.ts";
import type { InvariantResult } from "../../../code/cmd/cluster/chaos/invariants.ts";
import { eventually, useGraderCluster } from "../../../code/cmd/testing/grader-cluster.ts";
import { neverAboveMaxSurge, type Observation } from "./surge-invariant.ts";

// #region recordings by hand
const namespace = "shop";
const rfc3339 = (ms: number) => new Date(ms).toISOString().replace(/\.\d+Z$/, "Z");

/** A recording built change by change: each call is one event an informer would deliver. */
class Recording {
  readonly observations: Observation[] = [];
  private now = Date.parse("2026-03-02T10:00:00Z");
  private rv = 1000;
  private readonly pods = new Map<string, Pod>();
  private readonly deployments = new Map<string, Deployment>();

  private next(): number {
    this.now += 137;
    return this.now;
  }
  private stamp<T extends Deployment | Pod>(o: T): T {
    o.metadata.resourceVersion = String(++this.rv);
    return structuredClone(o);
  }

  /** A Deployment as the API server defaults it (strategy RollingUpdate 25% / 25% unless given). */
  deployment(name: string, replicas: number, rollingUpdate?: RollingUpdateDeployment): this {
    const d: Deployment = {
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: {
        name,
        namespace,
        uid: `0d3e-${name}`,
        generation: 1,
        creationTimestamp: rfc3339(this.now),
        annotations: { "deployment.kubernetes.io/revision": "1" },
      },
      spec: {
        replicas,
        selector: { matchLabels: { app: name } },
        template: {
          metadata: { labels: { app: name } },
          spec: {
            terminationGracePeriodSeconds: 5,
            containers: [{ name: "app", image: "course/sleeper", args: ["--term-delay=2"] }],
          },
        },
        strategy: {
          type: "RollingUpdate",
          rollingUpdate: rollingUpdate ?? { maxUnavailable: "25%", maxSurge: "25%" },
        },
        revisionHistoryLimit: 10,
        progressDeadlineSeconds: 600,
      },
      status: {},
    };
    this.deployments.set(name, d);
    this.observations.push({ at: this.next(), type: "ADDED", kind: "Deployment", object: this.stamp(d) });
    return this;
  }

  /** A new pod template: `kubectl rollout restart` (generation 2). */
  restart(name: string): this {
    const d = this.deployments.get(name)!;
    d.metadata.generation = (d.metadata.generation ?? 1) + 1;
    d.spec.template.metadata = {
      ...d.spec.template.metadata,
      annotations: { "kubectl.kubernetes.io/restartedAt": rfc3339(this.now) },
    };
    this.observations.push({ at: this.next(), type: "MODIFIED", kind: "Deployment", object: this.stamp(d) });
    return this;
  }

  /** The ReplicaSet controller creates pod `<app>-<hash>-<id>` (Pending, not yet bound). */
  create(app: string, hash: string, id: string): this {
    const name = `${app}-${hash}-${id}`;
    const p: Pod = {
      apiVersion: "v1",
      kind: "Pod",
      metadata: {
        name,
        namespace,
        uid: `9f1c-${name}`,
        generateName: `${app}-${hash}-`,
        creationTimestamp: rfc3339(this.now),
        labels: { app, "pod-template-hash": hash },
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "ReplicaSet",
            name: `${app}-${hash}`,
            uid: `5e2a-${app}-${hash}`,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        terminationGracePeriodSeconds: 5,
        containers: [{ name: "app", image: "course/sleeper", args: ["--term-delay=2"] }],
      },
      status: { phase: "Pending", qosClass: "BestEffort" },
    };
    this.pods.set(name, p);
    this.observations.push({ at: this.next(), type: "ADDED", kind: "Pod", object: this.stamp(p) });
    return this;
  }

  private change(name: string, f: (p: Pod) => void): this {
    const p = this.pods.get(name);
    if (!p) throw new Error(`the recording has no pod ${name}`);
    f(p);
    this.observations.push({ at: this.next(), type: "MODIFIED", kind: "Pod", object: this.stamp(p) });
    return this;
  }

  /** Bound, started and Ready (three changes in a real recording; one is enough here). */
  run(name: string): this {
    return this.change(name, (p) => {
      p.spec.nodeName = "node-1";
      p.status = {
        phase: "Running",
        qosClass: "BestEffort",
        conditions: [{ type: "Ready", status: "True" }],
        containerStatuses: [
          {
            name: "app",
            ready: true,
            restartCount: 0,
            image: "course/sleeper",
            imageID: "",
            state: { running: { startedAt: rfc3339(this.now) } },
          },
        ],
      } as Pod["status"];
    });
  }

  /** Deleted with a grace period: the API server sets deletionTimestamp; the pod is still there. */
  terminate(name: string): this {
    return this.change(name, (p) => {
      p.metadata.deletionTimestamp = rfc3339(this.now + 5000);
      p.metadata.deletionGracePeriodSeconds = 5;
    });
  }

  /** Evicted by the kubelet (node memory pressure): phase Failed, and the pod object stays. */
  evict(name: string): this {
    return this.change(name, (p) => {
      p.status = {
        phase: "Failed",
        reason: "Evicted",
        message: "The node was low on resource: memory.",
        qosClass: "BestEffort",
      } as Pod["status"];
    });
  }

  /** The kubelet confirmed the deletion: the watch says DELETED with the last state. */
  gone(name: string): this {
    const p = this.pods.get(name);
    if (!p) throw new Error(`the recording has no pod ${name}`);
    this.pods.delete(name);
    this.observations.push({ at: this.next(), type: "DELETED", kind: "Pod", object: this.stamp(p) });
    return this;
  }

  /** `n` pods of a new ReplicaSet `hash`, created and running. */
  running(app: string, hash: string, ids: string[]): this {
    for (const id of ids) this.create(app, hash, id).run(`${app}-${hash}-${id}`);
    return this;
  }
}

/**
 * A rollout of `web` (3 replicas, 25% / 25%: maxSurge 1, maxUnavailable 0) as the controllers
 * make it: a new pod, Ready; only then an old one terminates, and the next new pod comes while it
 * still shuts down. At most 4 pods not terminating; 5 with the terminating ones.
 */
function rolloutOfWeb(r: Recording): Recording {
  const o = (id: string) => `web-6c9f7d5b4-${id}`;
  const n = (id: string) => `web-84d7c6f9b-${id}`;
  r.restart("web");
  r.create("web", "84d7c6f9b", "x2kq9").run(n("x2kq9"));
  r.terminate(o("a1b2c"));
  r.create("web", "84d7c6f9b", "m7r4t").run(n("m7r4t"));
  r.terminate(o("d3e4f"));
  r.gone(o("a1b2c"));
  r.create("web", "84d7c6f9b", "p5w8z").run(n("p5w8z"));
  r.terminate(o("g5h6j"));
  r.gone(o("d3e4f"));
  return r.gone(o("g5h6j"));
}

const webBeforeRollout = (r: Recording) =>
  r.deployment("web", 3).running("web", "6c9f7d5b4", ["a1b2c", "d3e4f", "g5h6j"]);

function judge(name: string, r: Recording | Observation[]): InvariantResult {
  const result = neverAboveMaxSurge(name, r instanceof Recording ? r.observations : r);
  expect(result, "neverAboveMaxSurge must return an InvariantResult").toMatchObject({
    ok: expect.any(Boolean),
    evidence: expect.any(Array),
  });
  return result;
}
const explain = (r: InvariantResult) => `ok=${r.ok}, evidence: ${JSON.stringify(r.evidence.slice(0, 5))}`;
// #endregion recordings by hand

describe("recordings that must PASS", () => {
  it("a rollout at 4 pods (3 replicas + 25% rounded up), old pods still terminating beside the new ones", () => {
    const r = judge("web", rolloutOfWeb(webBeforeRollout(new Recording())));
    expect(
      r.ok,
      `a rollout that never ran more than 4 pods not terminating must PASS (terminating pods do not count; 25% of 3 is 1 extra pod, rounded up): ${explain(r)}`,
    ).toBe(true);
    expect(r.evidence).toEqual([]);
  });

  it("maxSurge as a percentage: 50% of 3 replicas is 2 extra pods, so 5 at once is allowed", () => {
    const rec = new Recording()
      .deployment("web", 3, { maxSurge: "50%", maxUnavailable: 0 })
      .running("web", "6c9f7d5b4", ["a1b2c", "d3e4f", "g5h6j"])
      .restart("web")
      .running("web", "84d7c6f9b", ["x2kq9", "m7r4t"])
      .terminate("web-6c9f7d5b4-a1b2c")
      .terminate("web-6c9f7d5b4-d3e4f")
      .running("web", "84d7c6f9b", ["p5w8z"])
      .terminate("web-6c9f7d5b4-g5h6j");
    const r = judge("web", rec);
    expect(r.ok, `5 pods with maxSurge 50% of 3 (= 2, rounded up) must PASS: ${explain(r)}`).toBe(true);
  });

  it("maxSurge as a number: 4 replicas + 2", () => {
    const rec = new Recording()
      .deployment("web", 4, { maxSurge: 2, maxUnavailable: 0 })
      .running("web", "6c9f7d5b4", ["a1b2c", "d3e4f", "g5h6j", "k7l8m"])
      .restart("web")
      .running("web", "84d7c6f9b", ["x2kq9", "m7r4t"])
      .terminate("web-6c9f7d5b4-a1b2c")
      .terminate("web-6c9f7d5b4-d3e4f")
      .running("web", "84d7c6f9b", ["p5w8z", "q9s2v"])
      .terminate("web-6c9f7d5b4-g5h6j")
      .terminate("web-6c9f7d5b4-k7l8m");
    const r = judge("web", rec);
    expect(r.ok, `6 pods with replicas 4 + maxSurge 2 must PASS: ${explain(r)}`).toBe(true);
  });

  it("another Deployment's pods in the same namespace are not web's", () => {
    const rec = new Recording().deployment("api", 3).running("api", "7b8c9d6f5", ["r1", "r2", "r3"]);
    webBeforeRollout(rec);
    const r = judge("web", rolloutOfWeb(rec));
    expect(r.ok, `api's 3 pods must not count against web (its selector is app=web): ${explain(r)}`).toBe(
      true,
    );
  });

  it("an evicted pod (phase Failed) no longer counts: its replacement does", () => {
    const rec = webBeforeRollout(new Recording())
      .evict("web-6c9f7d5b4-a1b2c")
      .running("web", "6c9f7d5b4", ["n4v6b"])
      .restart("web")
      .running("web", "84d7c6f9b", ["x2kq9"])
      .terminate("web-6c9f7d5b4-d3e4f")
      .running("web", "84d7c6f9b", ["m7r4t"])
      .terminate("web-6c9f7d5b4-g5h6j")
      .running("web", "84d7c6f9b", ["p5w8z"])
      .terminate("web-6c9f7d5b4-n4v6b");
    const r = judge("web", rec);
    expect(
      r.ok,
      `an evicted pod stays as an object but is not active (IsPodActive: phase Failed); with it, 5 — without, 4: ${explain(r)}`,
    ).toBe(true);
  });
});

describe("recordings that must FAIL", () => {
  it("a fifth pod not terminating with maxSurge 25% of 3", () => {
    const rec = webBeforeRollout(new Recording())
      .restart("web")
      .running("web", "84d7c6f9b", ["x2kq9"])
      // The next new pod before any old one was deleted: 3 old + 2 new.
      .running("web", "84d7c6f9b", ["m7r4t"]);
    const r = judge("web", rec);
    expect(r.ok, `5 pods not terminating, limit 3 + 1: must FAIL: ${explain(r)}`).toBe(false);
    expect(r.evidence.length, "a FAIL carries at least one evidence line").toBeGreaterThan(0);
  });

  it("7 pods with 4 replicas + maxSurge 2", () => {
    const rec = new Recording()
      .deployment("web", 4, { maxSurge: 2, maxUnavailable: 0 })
      .running("web", "6c9f7d5b4", ["a1b2c", "d3e4f", "g5h6j", "k7l8m"])
      .restart("web")
      .running("web", "84d7c6f9b", ["x2kq9", "m7r4t", "p5w8z"]);
    const r = judge("web", rec);
    expect(r.ok, `7 pods, limit 4 + 2: must FAIL: ${explain(r)}`).toBe(false);
    expect(r.evidence.length).toBeGreaterThan(0);
  });

  it("nothing recorded at all", () => {
    const r = judge("web", []);
    expect(r.ok, `an empty recording proves nothing: must FAIL: ${explain(r)}`).toBe(false);
    expect(r.evidence.length, "say why: the Deployment was never observed").toBeGreaterThan(0);
  });

  it("a recording without the Deployment (only another one's)", () => {
    const rec = new Recording().deployment("api", 3).running("api", "7b8c9d6f5", ["r1", "r2", "r3"]);
    const r = judge("web", rec);
    expect(r.ok, `web was never observed: must FAIL: ${explain(r)}`).toBe(false);
    expect(r.evidence.length).toBeGreaterThan(0);
  });

  it("the Deployment without any of its pods (the observer's pod watch saw nothing)", () => {
    const rec = new Recording().deployment("web", 3).restart("web");
    const r = judge("web", rec);
    expect(r.ok, `a Deployment of 3 replicas and no pod seen proves nothing: must FAIL: ${explain(r)}`).toBe(
      false,
    );
    expect(r.evidence.length).toBeGreaterThan(0);
  });
});

describe("a rolling update recorded in the grader's live cluster", () => {
  const cluster = useGraderCluster("chaos-invariant", { namespacePer: "file" });
  const recorded: Observation[] = [];
  const abort = new AbortController();
  afterAll(() => abort.abort());

  it("PASSes: 3 replicas of course/sleeper (2 s to stop), default strategy, one rollout", async () => {
    const ns = cluster.namespace;
    // The observers' way (code/cmd/cluster/chaos/observers.ts): informers, every change recorded.
    const factory = newSharedInformerFactory(cluster.admin, 0, { namespace: ns });
    const unwrap = <T>(o: T | DeletedFinalStateUnknown<T>) =>
      o instanceof DeletedFinalStateUnknown ? o.obj : o;
    const record = (kind: "Pod" | "Deployment", type: Observation["type"], obj: unknown) => {
      recorded.push({ at: Date.now(), type, kind, object: structuredClone(obj) } as Observation);
    };
    for (const [kind, gvr] of [
      ["Pod", Resources.pods],
      ["Deployment", Resources.deployments],
    ] as const) {
      factory.informerFor(gvr).addEventHandler({
        onAdd: (o) => record(kind, "ADDED", o),
        onUpdate: (_old, o) => record(kind, "MODIFIED", o),
        onDelete: (o) => record(kind, "DELETED", unwrap(o)),
      });
    }
    factory.start(abort.signal);
    await factory.waitForCacheSync(abort.signal);

    const deployments = cluster.admin.appsV1.deployments(ns);
    await deployments.create({
      apiVersion: "apps/v1",
      kind: "Deployment",
      metadata: { name: "web", namespace: ns },
      spec: {
        replicas: 3,
        selector: { matchLabels: { app: "web" } },
        template: {
          metadata: { labels: { app: "web" } },
          spec: {
            terminationGracePeriodSeconds: 5,
            containers: [{ name: "app", image: "course/sleeper", args: ["--term-delay=2"] }],
          },
        },
      },
    });
    let last: Deployment | undefined;
    const complete = async () => {
      last = await deployments.get("web");
      const s = last.status ?? {};
      return (
        (s.observedGeneration ?? 0) >= (last.metadata.generation ?? 1) &&
        s.replicas === 3 &&
        s.updatedReplicas === 3 &&
        s.availableReplicas === 3
      );
    };
    const where = () => `status ${JSON.stringify(last?.status ?? {})}`;
    await eventually("Deployment web: 3 replicas available", complete, 120_000, where);
    // `kubectl rollout restart`: a new pod template, so a rollout.
    const d = await deployments.get("web");
    d.spec.template.metadata = {
      ...d.spec.template.metadata,
      annotations: { "kubectl.kubernetes.io/restartedAt": new Date().toISOString() },
    };
    await deployments.update(d);
    await eventually("the rollout of web to complete", complete, 120_000, where);
    const pods = cluster.admin.coreV1.pods(ns);
    await eventually("the old pods to be gone", async () => (await pods.list()).items.length === 3, 90_000);
    await new Promise((r) => setTimeout(r, 1000)); // the last DELETED events reach the informer
    abort.abort();
    await factory.shutdown();

    // The test's own precondition, not your answer: the recording holds a rollout.
    const hashes = new Set(
      recorded.filter((o) => o.kind === "Pod").map((o) => o.object.metadata.labels?.["pod-template-hash"]),
    );
    expect(hashes.size, "the recording holds pods of two ReplicaSets").toBe(2);

    const r = judge("web", recorded);
    expect(
      r.ok,
      `the cluster's rollout kept to 3 + 1 pods not terminating (old ones took 2 s to stop), so your invariant must PASS it: ${explain(r)}`,
    ).toBe(true);
  }, 280_000);

  it("FAILs the same recording when told that maxSurge was 0", () => {
    expect(recorded.length, "the previous test recorded the rollout").toBeGreaterThan(0);
    const told: Observation[] = recorded.map((o) => {
      if (o.kind !== "Deployment") return o;
      const d = structuredClone(o.object);
      d.spec.strategy = { type: "RollingUpdate", rollingUpdate: { maxSurge: 0, maxUnavailable: 1 } };
      return { ...o, object: d };
    });
    const r = judge("web", told);
    expect(
      r.ok,
      `the real rollout had 4 pods not terminating at once (the new pod Ready before an old one went); with maxSurge 0 that is over the limit of 3: must FAIL: ${explain(r)}`,
    ).toBe(false);
  });
});

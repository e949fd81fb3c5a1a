// Exercise 8.5: your invariant judges (a) recordings made by hand in the shapes the observers
// record — every object as the API server serves it, each change an ADDED, MODIFIED or DELETED —
// some that must PASS and some that must FAIL, and (b) a recording of a real rolling update in the
// grader's live cluster, made by informers exactly as the chaos run's observers make theirs. The
// hand-made rollouts have the pods lag behind the ReplicaSets as they do in a real one: the
// ReplicaSet controller's deletion of an old pod and its creation of a new one race.
import { afterAll, describe, expect, it } from "vitest";
import type { Deployment, ReplicaSet, RollingUpdateDeployment } from "../../../code/api/apps.ts";
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
  private readonly replicaSets = new Map<string, ReplicaSet>();

  private next(): number {
    this.now += 137;
    return this.now;
  }
  private stamp<T extends Deployment | ReplicaSet | Pod>(o: T): T {
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

  /** The deployment controller makes ReplicaSet `<app>-<hash>`, controlled by Deployment `app`. */
  replicaSet(app: string, hash: string, replicas: number): this {
    const d = this.deployments.get(app);
    const rs: ReplicaSet = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: {
        name: `${app}-${hash}`,
        namespace,
        uid: `5e2a-${app}-${hash}`,
        generation: 1,
        creationTimestamp: rfc3339(this.now),
        labels: { app, "pod-template-hash": hash },
        annotations: { "deployment.kubernetes.io/desired-replicas": String(d?.spec.replicas ?? replicas) },
        ownerReferences: [
          {
            apiVersion: "apps/v1",
            kind: "Deployment",
            name: app,
            uid: `0d3e-${app}`,
            controller: true,
            blockOwnerDeletion: true,
          },
        ],
      },
      spec: {
        replicas,
        selector: { matchLabels: { app, "pod-template-hash": hash } },
        template: {
          metadata: { labels: { app, "pod-template-hash": hash } },
          spec: { containers: [{ name: "app", image: "course/sleeper", args: ["--term-delay=2"] }] },
        },
      },
      status: { replicas: 0 },
    };
    this.replicaSets.set(rs.metadata.name ?? "", rs);
    this.observations.push({ at: this.next(), type: "ADDED", kind: "ReplicaSet", object: this.stamp(rs) });
    return this;
  }

  /** The deployment controller scales ReplicaSet `<app>-<hash>` (its spec.replicas). */
  scale(app: string, hash: string, replicas: number): this {
    const rs = this.replicaSets.get(`${app}-${hash}`);
    if (!rs) throw new Error(`the recording has no ReplicaSet ${app}-${hash}`);
    rs.spec.replicas = replicas;
    rs.metadata.generation = (rs.metadata.generation ?? 1) + 1;
    this.observations.push({ at: this.next(), type: "MODIFIED", kind: "ReplicaSet", object: this.stamp(rs) });
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

const oldHash = "6c9f7d5b4";
const newHash = "84d7c6f9b";
const o = (id: string) => `web-${oldHash}-${id}`;
const n = (id: string) => `web-${newHash}-${id}`;

/** web: 3 replicas (default strategy) of ReplicaSet web-6c9f7d5b4, its 3 pods running. */
const webBeforeRollout = (r: Recording) =>
  r.deployment("web", 3).replicaSet("web", oldHash, 3).running("web", oldHash, ["a1b2c", "d3e4f", "g5h6j"]);

/**
 * A rollout of web (25% / 25% of 3: maxSurge 1, maxUnavailable 0) as the controllers make it: the
 * ReplicaSets' specs never sum over 4; the pods follow late — once, a new pod comes before the old
 * one the scale-down meant was deleted (5 pods not terminating for a moment, as recorded in a real
 * rollout), and old pods take their grace period to go.
 */
function rolloutOfWeb(r: Recording): Recording {
  r.restart("web").replicaSet("web", newHash, 1); // 3 + 1
  r.create("web", newHash, "x2kq9").run(n("x2kq9"));
  r.scale("web", oldHash, 2).scale("web", newHash, 2); // 2 + 2
  r.create("web", newHash, "m7r4t"); // before a1b2c's deletion: the two syncs raced
  r.terminate(o("a1b2c")).run(n("m7r4t"));
  r.scale("web", oldHash, 1).scale("web", newHash, 3); // 1 + 3
  r.terminate(o("d3e4f")).create("web", newHash, "p5w8z").run(n("p5w8z"));
  r.gone(o("a1b2c"));
  r.scale("web", oldHash, 0).terminate(o("g5h6j")); // 0 + 3
  return r.gone(o("d3e4f")).gone(o("g5h6j"));
}

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
  it("a rollout at 3 + 1 (25% of 3, rounded up), its pods lagging behind its ReplicaSets", () => {
    const r = judge("web", rolloutOfWeb(webBeforeRollout(new Recording())));
    expect(
      r.ok,
      `the ReplicaSets never asked for more than 4 pods (25% of 3 is 1 extra, rounded up) — the pods are late, not over the limit: must PASS: ${explain(r)}`,
    ).toBe(true);
    expect(r.evidence).toEqual([]);
  });

  it("maxSurge as a percentage: 50% of 3 replicas is 2 extra pods, so 3 + 2 is allowed", () => {
    const rec = new Recording()
      .deployment("web", 3, { maxSurge: "50%", maxUnavailable: 0 })
      .replicaSet("web", oldHash, 3)
      .running("web", oldHash, ["a1b2c", "d3e4f", "g5h6j"])
      .restart("web")
      .replicaSet("web", newHash, 2)
      .running("web", newHash, ["x2kq9", "m7r4t"])
      .scale("web", oldHash, 1)
      .terminate(o("a1b2c"))
      .terminate(o("d3e4f"))
      .scale("web", newHash, 3)
      .running("web", newHash, ["p5w8z"])
      .scale("web", oldHash, 0)
      .terminate(o("g5h6j"));
    const r = judge("web", rec);
    expect(r.ok, `5 with maxSurge 50% of 3 (= 2, rounded up) must PASS: ${explain(r)}`).toBe(true);
  });

  it("maxSurge as a number: 4 replicas + 2", () => {
    const rec = new Recording()
      .deployment("web", 4, { maxSurge: 2, maxUnavailable: 0 })
      .replicaSet("web", oldHash, 4)
      .restart("web")
      .replicaSet("web", newHash, 2)
      .scale("web", oldHash, 2)
      .scale("web", newHash, 4)
      .scale("web", oldHash, 0);
    const r = judge("web", rec);
    expect(r.ok, `4 + 2 asked for with replicas 4 and maxSurge 2 must PASS: ${explain(r)}`).toBe(true);
  });

  it("another Deployment's ReplicaSet in the same namespace is not web's", () => {
    const rec = new Recording().deployment("api", 3).replicaSet("api", "7b8c9d6f5", 3);
    const r = judge("web", rolloutOfWeb(webBeforeRollout(rec)));
    expect(
      r.ok,
      `api's ReplicaSet (controlled by api, not web) must not count against web: ${explain(r)}`,
    ).toBe(true);
  });
});

describe("recordings that must FAIL", () => {
  it("the new ReplicaSet scaled to 2 while the old one still has 3 (25% of 3)", () => {
    const rec = webBeforeRollout(new Recording())
      .restart("web")
      .replicaSet("web", newHash, 1)
      .scale("web", newHash, 2);
    const r = judge("web", rec);
    expect(r.ok, `3 + 2 asked for, limit 3 + 1: must FAIL: ${explain(r)}`).toBe(false);
    expect(r.evidence.length, "a FAIL carries at least one evidence line").toBeGreaterThan(0);
  });

  it("4 + 3 with 4 replicas and maxSurge 2", () => {
    const rec = new Recording()
      .deployment("web", 4, { maxSurge: 2, maxUnavailable: 0 })
      .replicaSet("web", oldHash, 4)
      .restart("web")
      .replicaSet("web", newHash, 3);
    const r = judge("web", rec);
    expect(r.ok, `7 asked for, limit 4 + 2: must FAIL: ${explain(r)}`).toBe(false);
    expect(r.evidence.length).toBeGreaterThan(0);
  });

  it("nothing recorded at all", () => {
    const r = judge("web", []);
    expect(r.ok, `an empty recording proves nothing: must FAIL: ${explain(r)}`).toBe(false);
    expect(r.evidence.length, "say why: the Deployment was never observed").toBeGreaterThan(0);
  });

  it("a recording without the Deployment (only another one's)", () => {
    const rec = new Recording().deployment("api", 3).replicaSet("api", "7b8c9d6f5", 3);
    const r = judge("web", rec);
    expect(r.ok, `web was never observed: must FAIL: ${explain(r)}`).toBe(false);
    expect(r.evidence.length).toBeGreaterThan(0);
  });

  it("the Deployment without any of its ReplicaSets (the observer's ReplicaSet watch saw nothing)", () => {
    const rec = new Recording().deployment("web", 3).restart("web");
    const r = judge("web", rec);
    expect(
      r.ok,
      `a Deployment of 3 replicas and no ReplicaSet seen proves nothing: must FAIL: ${explain(r)}`,
    ).toBe(false);
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
    const record = (kind: Observation["kind"], type: Observation["type"], obj: unknown) => {
      recorded.push({ at: Date.now(), type, kind, object: structuredClone(obj) } as Observation);
    };
    for (const [kind, gvr] of [
      ["Pod", Resources.pods],
      ["ReplicaSet", Resources.replicaSets],
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
    const replicaSets = new Set(
      recorded.filter((o) => o.kind === "ReplicaSet").map((o) => o.object.metadata.name),
    );
    expect(replicaSets.size, "the recording holds two ReplicaSets").toBe(2);

    const r = judge("web", recorded);
    expect(
      r.ok,
      `the cluster's deployment controller kept its ReplicaSets to 3 + 1 pods, so your invariant must PASS its rollout: ${explain(r)}`,
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
      `the real rollout asked for 3 + 1 pods at once (the new ReplicaSet at 1 before the old one scaled down); with maxSurge 0 that is over the limit of 3: must FAIL: ${explain(r)}`,
    ).toBe(false);
  });
});

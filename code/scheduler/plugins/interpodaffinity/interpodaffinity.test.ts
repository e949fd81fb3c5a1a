// InterPodAffinity through the real Framework and the simulated scheduler: required affinity
// and anti-affinity (both directions), namespaceSelector, preferred weights and min-max
// normalization, PreFilterExtensions, and the queueing hints.
import { describe, expect, it } from "vitest";
import type { Namespace, Pod, PodAffinityTerm } from "../../../api/core.ts";
import { Resources } from "../../../client/informers/factory.ts";
import { SharedInformerFactory } from "../../../client/tools/cache/informer-factory.ts";
import type { ListerWatcher } from "../../../client/tools/cache/listwatch.ts";
import { CycleState } from "../../framework/cycle-state.ts";
import { AssignedPodAdd, QueueingHint } from "../../framework/events.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import { Code, codeOf } from "../../framework/status.ts";
import { PodInfo } from "../../framework/types.ts";
import { newSim, type SimOptions } from "../../testing/sim.ts";
import { makeNode, makePod, type PodOptions } from "../../testing/wrappers.ts";
import { defaultProfile } from "../registry.ts";
import {
  ErrReasonAffinityRulesNotMatch,
  ErrReasonAntiAffinityRulesNotMatch,
  ErrReasonExistingAntiAffinityRulesNotMatch,
  getPreFilterState,
} from "./filtering.ts";
import {
  InterPodAffinity,
  isSchedulableAfterNodeChange,
  isSchedulableAfterPodChange,
  Name,
} from "./plugin.ts";

const ZONE = "topology.kubernetes.io/zone";
const HOST = "kubernetes.io/hostname";

const term = (app: string, topologyKey: string, extra: Partial<PodAffinityTerm> = {}): PodAffinityTerm => ({
  labelSelector: { matchLabels: { app } },
  topologyKey,
  ...extra,
});

interface Affinity {
  affinity?: PodAffinityTerm[];
  anti?: PodAffinityTerm[];
  preferred?: [number, PodAffinityTerm][];
  preferredAnti?: [number, PodAffinityTerm][];
}

/** A pod labelled app=<app>, with the given terms. */
function pod(name: string, app: string, a: Affinity = {}, o: PodOptions = {}): Pod {
  const p = makePod(name, { labels: { app }, ...o });
  const weighted = (ts?: [number, PodAffinityTerm][]) =>
    ts?.map(([weight, podAffinityTerm]) => ({ weight, podAffinityTerm }));
  const podAffinity =
    a.affinity || a.preferred
      ? {
          requiredDuringSchedulingIgnoredDuringExecution: a.affinity,
          preferredDuringSchedulingIgnoredDuringExecution: weighted(a.preferred),
        }
      : undefined;
  const podAntiAffinity =
    a.anti || a.preferredAnti
      ? {
          requiredDuringSchedulingIgnoredDuringExecution: a.anti,
          preferredDuringSchedulingIgnoredDuringExecution: weighted(a.preferredAnti),
        }
      : undefined;
  if (podAffinity || podAntiAffinity) p.spec.affinity = { podAffinity, podAntiAffinity };
  return p;
}

/** A sim whose cluster already runs `existing` (bound pods, in the cache as the informer would add them). */
function simWith(existing: Pod[], o: SimOptions) {
  const sim = newSim(o);
  for (const p of existing) sim.cache.addPod(p);
  return sim;
}

const boundTo = (sim: ReturnType<typeof newSim>) =>
  Object.fromEntries(sim.bound.map((b) => [b.pod.metadata.name, b.node]));
// The Filter part of FailedScheduling; DefaultPreemption's " preemption: …" tail (its own tests
// check it) follows when the default profile runs PostFilter.
const failures = (sim: ReturnType<typeof newSim>) =>
  sim.events.filter((e) => e.reason === "FailedScheduling").map((e) => e.message.split(" preemption: ")[0]);

describe("InterPodAffinity Filter through the scheduler", () => {
  it("required affinity: a web pod goes only to the zone that runs a cache pod", async () => {
    const nodes = [
      makeNode("a1", { zone: "a" }),
      makeNode("a2", { zone: "a" }),
      makeNode("b1", { zone: "b" }),
      makeNode("b2", { zone: "b" }),
    ];
    const cache = pod("cache", "cache", {}, { nodeName: "b1" });
    const sim = simWith([cache], { nodes });
    // affinityCounts after PreFilter: {zone=b: 1} — one pod matches the one term, on a node in zone b.
    for (let i = 0; i < 4; i++) sim.add(pod(`web-${i}`, "web", { affinity: [term("cache", ZONE)] }));
    sim.add(pod("lost", "web", { affinity: [term("memcached", ZONE)] }));
    await sim.drain();
    const placed = boundTo(sim);
    for (let i = 0; i < 4; i++) expect(["b1", "b2"]).toContain(placed[`web-${i}`]);
    // No memcached pod anywhere and "lost" is not one itself: every node fails, Unresolvable.
    expect(placed.lost).toBeUndefined();
    expect(failures(sim)).toEqual([`0/4 nodes are available: 4 ${ErrReasonAffinityRulesNotMatch}.`]);
  });

  it("self-affinity: the first pod of the group may go anywhere with the topology label, the rest follow it", async () => {
    const nodes = [makeNode("a1", { zone: "a" }), makeNode("b1", { zone: "b" }), makeNode("bare")];
    const sim = simWith([], { nodes });
    const db = (n: string) => pod(n, "db", { affinity: [term("db", ZONE)] });
    sim.add(db("db-0"));
    await sim.drain();
    const first = boundTo(sim)["db-0"];
    // "bare" has no zone label: it is in no zone, so even the first pod cannot go there.
    expect(["a1", "b1"]).toContain(first);
    sim.add(db("db-1"));
    sim.add(db("db-2"));
    await sim.drain();
    // Now affinityCounts = {zone=<first's zone>: 1, then 2}: the special case no longer applies.
    expect(boundTo(sim)["db-1"]).toBe(first);
    expect(boundTo(sim)["db-2"]).toBe(first);
  });

  it("required anti-affinity spreads replicas one per node; the 4th on 3 nodes is unschedulable", async () => {
    const nodes = [makeNode("n1"), makeNode("n2"), makeNode("n3")];
    const sim = simWith([], { nodes });
    for (let i = 0; i < 4; i++) sim.add(pod(`web-${i}`, "web", { anti: [term("web", HOST)] }));
    await sim.drain();
    const placed = boundTo(sim);
    expect(new Set(Object.values(placed))).toEqual(new Set(["n1", "n2", "n3"]));
    expect(Object.keys(placed)).toHaveLength(3);
    // For the 4th: antiAffinityCounts = {hostname=n1: 1, n2: 1, n3: 1}; its own term is checked
    // before the existing pods' (which would say the same), so the reason is its own.
    expect(failures(sim)).toEqual([`0/3 nodes are available: 3 ${ErrReasonAntiAffinityRulesNotMatch}.`]);
    const left = [0, 1, 2, 3].map((i) => `web-${i}`).filter((n) => !placed[n]);
    expect(left).toHaveLength(1);
    expect(sim.queue.whereIs(pod(left[0], "web"))).toBe("Unschedulable");
  });

  it("an existing pod's anti-affinity repels the incoming pod from its whole topology domain", async () => {
    const nodes = [
      makeNode("a1", { zone: "a" }),
      makeNode("a2", { zone: "a" }),
      makeNode("b1", { zone: "b" }),
    ];
    // The loner hates web pods in its zone; the web pod itself asks for nothing.
    const loner = pod("loner", "loner", { anti: [term("web", ZONE)] }, { nodeName: "a1" });
    const sim = simWith([loner], { nodes });
    sim.add(pod("web", "web"));
    await sim.drain();
    // existingAntiAffinityCounts = {zone=a: 1}: a1 and a2 are out, although only a1 runs the loner.
    expect(boundTo(sim).web).toBe("b1");

    const only = simWith([loner], { nodes: nodes.slice(0, 2) });
    only.add(pod("web", "web"));
    await only.drain();
    expect(failures(only)).toEqual([
      `0/2 nodes are available: 2 ${ErrReasonExistingAntiAffinityRulesNotMatch}.`,
    ]);
  });
});

// #region namespaces
/** An informer factory that is never started: the test fills the namespaces' cache itself. */
function factoryWithNamespaces(ns: Record<string, Record<string, string>>): SharedInformerFactory {
  const idle: ListerWatcher = {
    list: () => Promise.reject(new Error("not started")),
    watch: () => Promise.reject(new Error("not started")),
  };
  const f = new SharedInformerFactory(() => idle, 0);
  const indexer = f.informerFor(Resources.namespaces).getIndexer();
  for (const [name, labels] of Object.entries(ns)) {
    const n: Namespace = { apiVersion: "v1", kind: "Namespace", metadata: { name, labels } };
    indexer.add(n);
  }
  return f;
}

describe("InterPodAffinity namespaces", () => {
  const nodes = [makeNode("a1", { zone: "a" }), makeNode("b1", { zone: "b" })];
  const caches = [
    pod("cache-dev", "cache", {}, { nodeName: "a1", namespace: "dev" }),
    pod("cache-prod", "cache", {}, { nodeName: "b1", namespace: "prod" }),
  ];
  const namespaces = { dev: { env: "dev" }, prod: { env: "prod" }, shop: { env: "prod" } };

  it("a term without namespaces means the pod's own namespace only", async () => {
    const sim = simWith(caches, { nodes });
    sim.add(pod("web", "web", { affinity: [term("cache", ZONE)] }, { namespace: "dev" }));
    await sim.drain();
    expect(boundTo(sim).web).toBe("a1");
  });

  it("namespaceSelector is resolved through the namespaces lister", async () => {
    const sim = simWith(caches, { nodes, informerFactory: factoryWithNamespaces(namespaces) });
    // The web pod lives in "shop"; its term selects namespaces labelled env=prod → {prod, shop}.
    const sel = { namespaceSelector: { matchLabels: { env: "prod" } } };
    sim.add(pod("web", "web", { affinity: [term("cache", ZONE, sel)] }, { namespace: "shop" }));
    // {} selects every namespace: cache-dev and cache-prod both count.
    sim.add(
      pod(
        "any",
        "web",
        { affinity: [term("cache", HOST, { namespaceSelector: {} })] },
        { namespace: "shop" },
      ),
    );
    await sim.drain();
    expect(boundTo(sim).web).toBe("b1");
    expect(["a1", "b1"]).toContain(boundTo(sim).any);
  });

  it("without a lister (a simulation) a namespaceSelector selects no namespace", async () => {
    const sim = simWith(caches, { nodes });
    const sel = { namespaceSelector: { matchLabels: { env: "prod" } } };
    sim.add(pod("web", "web", { affinity: [term("cache", ZONE, sel)] }, { namespace: "shop" }));
    await sim.drain();
    expect(failures(sim)).toEqual([`0/2 nodes are available: 2 ${ErrReasonAffinityRulesNotMatch}.`]);
  });

  it("an existing pod's namespaceSelector is matched against the incoming pod's namespace labels", async () => {
    // The guard on a1 hates web pods from namespaces labelled env=prod.
    const guard = pod(
      "guard",
      "guard",
      { anti: [term("web", ZONE, { namespaceSelector: { matchLabels: { env: "prod" } } })] },
      { nodeName: "a1", namespace: "dev" },
    );
    const sim = simWith([guard], {
      nodes: nodes.slice(0, 1),
      informerFactory: factoryWithNamespaces(namespaces),
    });
    sim.add(pod("web-shop", "web", {}, { namespace: "shop" })); // shop: env=prod → repelled
    sim.add(pod("web-dev", "web", {}, { namespace: "dev" })); // dev: env=dev → welcome
    await sim.drain();
    expect(boundTo(sim)).toEqual({ "web-dev": "a1" });
    expect(failures(sim)).toEqual([
      `0/1 nodes are available: 1 ${ErrReasonExistingAntiAffinityRulesNotMatch}.`,
    ]);
  });
});
// #endregion namespaces

describe("InterPodAffinity Score", () => {
  const nodes = [
    makeNode("a1", { zone: "a" }),
    makeNode("a2", { zone: "a" }),
    makeNode("b1", { zone: "b" }),
    makeNode("c1", { zone: "c" }),
  ];
  const existing = [
    pod("cache-1", "cache", {}, { nodeName: "a1" }),
    pod("cache-2", "cache", {}, { nodeName: "b1" }),
    pod("db", "db", {}, { nodeName: "b1" }),
    // Existing pods' terms toward web pods: a preferred anti-affinity, and a REQUIRED affinity.
    pod("batch", "batch", { preferredAnti: [[10, term("web", ZONE)]] }, { nodeName: "c1" }),
    pod("frontend", "frontend", { affinity: [term("web", ZONE)] }, { nodeName: "a2" }),
  ];
  const web = pod("web", "web", {
    preferred: [[5, term("cache", ZONE)]],
    preferredAnti: [[2, term("db", HOST)]],
  });

  /** PreScore, raw Score and NormalizeScore of InterPodAffinity in the default profile's Framework. */
  function scores(args?: unknown) {
    const profile = defaultProfile();
    if (args) profile.pluginConfig = [{ name: Name, args }];
    const sim = simWith(existing, { nodes, profile });
    const snapshot = sim.fwk.snapshotSharedLister();
    sim.cache.updateSnapshot(snapshot);
    const state = new CycleState();
    const infos = snapshot.list();
    expect(sim.fwk.runPreScorePlugins(state, web, infos)).toBeUndefined();
    const pl = sim.fwk.plugins.get(Name) as InterPodAffinity;
    const raw = Object.fromEntries(infos.map((n) => [n.nodeName(), pl.score(state, web, n)[0]]));
    const [total, status] = sim.fwk.runScorePlugins(state, web, infos);
    expect(status).toBeUndefined();
    const weighted = Object.fromEntries(
      total.map((n) => [n.name, n.scores.find((s) => s.name === Name)?.score]),
    );
    return { raw, weighted };
  }

  it("sums both directions per topology pair, then min-max normalizes (weight 2)", () => {
    // topologyScore:
    //   cache-1 on a1: web's preferred affinity (5, zone)        → zone=a  +5
    //   cache-2 on b1: same                                       → zone=b  +5
    //   db on b1: web's preferred anti-affinity (2, hostname)     → host=b1 −2
    //   batch on c1: ITS preferred anti-affinity toward web (10)  → zone=c −10
    //   frontend on a2: ITS required affinity toward web, weighted hardPodAffinityWeight 1 → zone=a +1
    // raw: a1 = a2 = 5 + 1 = 6; b1 = 5 − 2 = 3; c1 = −10.
    const { raw, weighted } = scores();
    expect(raw).toEqual({ a1: 6, a2: 6, b1: 3, c1: -10 });
    // min −10, max 6, diff 16: a = 100·16/16 = 100; b1 = trunc(100·13/16 = 81.25) = 81; c1 = 0.
    // × weight 2.
    expect(weighted).toEqual({ a1: 200, a2: 200, b1: 162, c1: 0 });
  });

  it("hardPodAffinityWeight 0 ignores existing pods' required affinity", () => {
    // zone=a is now 5 alone: a = 5, b1 = 3, c1 = −10; diff 15: b1 = trunc(100·13/15 = 86.67) = 86.
    const { raw, weighted } = scores({ hardPodAffinityWeight: 0 });
    expect(raw).toEqual({ a1: 5, a2: 5, b1: 3, c1: -10 });
    expect(weighted).toEqual({ a1: 200, a2: 200, b1: 172, c1: 0 });
  });

  it("a pod without preferences is scored only by existing pods' terms; none → Skip", () => {
    const sim = simWith(existing, { nodes });
    const snapshot = sim.fwk.snapshotSharedLister();
    sim.cache.updateSnapshot(snapshot);
    const pl = sim.fwk.plugins.get(Name) as InterPodAffinity;
    const state = new CycleState();
    // Only batch (−10 on zone c) and frontend (+1 on zone a) have terms; web matches both.
    expect(pl.preScore(state, pod("plain", "web"), snapshot.list())).toBeUndefined();
    expect(snapshot.list().map((n) => pl.score(state, pod("plain", "web"), n)[0])).toEqual(
      snapshot.list().map((n) => ({ a1: 1, a2: 1, b1: 0, c1: -10 })[n.nodeName()]),
    );
    // A pod nobody has terms about: nothing in topologyScore, so PreScore skips the Score.
    expect(codeOf(pl.preScore(new CycleState(), pod("other", "other"), snapshot.list()))).toBe(Code.Skip);
    // ignorePreferredTermsOfExistingPods: the existing pods' wishes are not even looked at.
    const ignoring = new InterPodAffinity({ ignorePreferredTermsOfExistingPods: true }, sim.fwk);
    expect(codeOf(ignoring.preScore(new CycleState(), pod("plain", "web"), snapshot.list()))).toBe(Code.Skip);
  });

  it("rejects hardPodAffinityWeight outside [0, 100] with upstream's message", () => {
    const sim = newSim();
    expect(() => new InterPodAffinity({ hardPodAffinityWeight: 101 }, sim.fwk)).toThrow(
      "hardPodAffinityWeight: Invalid value: 101: not in valid range [0, 100]",
    );
  });
});

describe("InterPodAffinity PreFilterExtensions", () => {
  it("AddPod / RemovePod change what Filter answers, and a clone is independent", () => {
    const nodes = [
      makeNode("n1", { zone: "a" }),
      makeNode("n2", { zone: "a" }),
      makeNode("n3", { zone: "b" }),
    ];
    const sim = simWith([pod("web-0", "web", {}, { nodeName: "n1" })], { nodes });
    const snapshot = sim.fwk.snapshotSharedLister();
    sim.cache.updateSnapshot(snapshot);
    const [n1, n2, n3] = ["n1", "n2", "n3"].map((n) => snapshot.get(n)) as ReturnType<typeof snapshot.list>;
    const pl = sim.fwk.plugins.get(Name) as InterPodAffinity;
    const incoming = pod("web-1", "web", { anti: [term("web", HOST)] });
    const state = new CycleState();
    const [, s] = sim.fwk.runPreFilterPlugins(state, incoming);
    expect(s).toBeUndefined();
    const reason = (ni: typeof n1, st = state) => sim.fwk.runFilterPlugins(st, incoming, ni)?.message();

    // antiAffinityCounts = {hostname=n1: 1}.
    expect(reason(n1)).toBe(ErrReasonAntiAffinityRulesNotMatch);
    expect(reason(n2)).toBeUndefined();

    // Preemption's question: "n1 without web-0?" → {hostname=n1: 0}, the entry is deleted.
    const without = state.clone();
    pl.removePod(without, incoming, new PodInfo(pod("web-0", "web", {}, { nodeName: "n1" })), n1);
    expect(reason(n1, without)).toBeUndefined();
    expect(reason(n1)).toBe(ErrReasonAntiAffinityRulesNotMatch); // the original is untouched

    // A nominated pod on n2 counts as if it were there.
    pl.addPod(state, incoming, new PodInfo(pod("web-2", "web", {}, { nodeName: "n2" })), n2);
    expect(reason(n2)).toBe(ErrReasonAntiAffinityRulesNotMatch);

    // A pod whose OWN anti-affinity (zone) hates web pods, added on n3: existingAntiAffinityCounts
    // = {zone=b: 1}, so n3 fails for the symmetric rule.
    pl.addPod(state, incoming, new PodInfo(pod("hater", "x", { anti: [term("web", ZONE)] })), n3);
    expect(reason(n3)).toBe(ErrReasonExistingAntiAffinityRulesNotMatch);
  });

  it("PreFilter skips a pod that nothing attracts or repels", () => {
    const sim = simWith([pod("web-0", "web", {}, { nodeName: "n1" })], { nodes: [makeNode("n1")] });
    sim.cache.updateSnapshot(sim.fwk.snapshotSharedLister());
    const pl = sim.fwk.plugins.get(Name) as InterPodAffinity;
    const [, s] = pl.preFilter(new CycleState(), pod("plain", "plain"));
    expect(codeOf(s)).toBe(Code.Skip);
  });

  it("an invalid selector is Unresolvable at PreFilter", () => {
    const sim = simWith([], { nodes: [makeNode("n1")] });
    const bad = pod("bad", "web", {
      affinity: [
        { labelSelector: { matchExpressions: [{ key: "app", operator: "In" }] }, topologyKey: HOST },
      ],
    });
    const [, s] = (sim.fwk.plugins.get(Name) as InterPodAffinity).preFilter(new CycleState(), bad);
    expect(codeOf(s)).toBe(Code.UnschedulableAndUnresolvable);
    expect(s?.message()).toMatch(/^parsing pod: /);
  });
});

describe("InterPodAffinity queueing hints", () => {
  const web = pod("web", "web", { affinity: [term("cache", ZONE)], anti: [term("web", HOST)] });
  const bound = (name: string, app: string) => pod(name, app, {}, { nodeName: "n1" });

  it.each([
    ["an unscheduled pod added", undefined, pod("c", "cache"), QueueingHint.QueueSkip],
    ["an assigned cache pod added", undefined, bound("c", "cache"), QueueingHint.Queue],
    ["an assigned unrelated pod added", undefined, bound("x", "x"), QueueingHint.QueueSkip],
    ["a pod relabelled into the affinity", bound("x", "x"), bound("x", "cache"), QueueingHint.Queue],
    ["a pod relabelled out of the anti-affinity", bound("w", "web"), bound("w", "x"), QueueingHint.Queue],
    ["a pod relabelled, no change for the terms", bound("x", "x"), bound("x", "y"), QueueingHint.QueueSkip],
    ["a hated pod deleted", bound("w", "web"), undefined, QueueingHint.Queue],
    ["an unrelated pod deleted", bound("x", "x"), undefined, QueueingHint.QueueSkip],
  ] as [string, Pod | undefined, Pod | undefined, QueueingHint][])("pod event: %s", (_, o, n, want) => {
    expect(isSchedulableAfterPodChange(web, o, n)).toBe(want);
  });

  it("pod event: a deleted pod whose own anti-affinity repelled is not recognised (as 1.32)", () => {
    const plain = pod("plain", "web");
    const hater = pod("hater", "x", { anti: [term("web", HOST)] }, { nodeName: "n1" });
    expect(isSchedulableAfterPodChange(plain, hater, undefined)).toBe(QueueingHint.QueueSkip);
  });

  it.each([
    ["a node added with the zone", undefined, makeNode("n", { zone: "a" }), QueueingHint.Queue],
    // Without the zone the affinity cannot use it, but the anti-affinity (hostname) can.
    ["a node added without the zone", undefined, makeNode("n"), QueueingHint.Queue],
    ["a node gains the zone", makeNode("n"), makeNode("n", { zone: "a" }), QueueingHint.Queue],
    ["a node changes zone", makeNode("n", { zone: "a" }), makeNode("n", { zone: "b" }), QueueingHint.Queue],
    [
      "a node relabelled otherwise",
      makeNode("n"),
      makeNode("n", { labels: { x: "y" } }),
      QueueingHint.QueueSkip,
    ],
  ] as const)("node event: %s", (_, o, n, want) => {
    expect(isSchedulableAfterNodeChange(web, o, n)).toBe(want);
  });

  it("node event: only the affinity's topology key matters to a pod without anti-affinity", () => {
    const p = pod("p", "web", { affinity: [term("cache", ZONE)] });
    expect(isSchedulableAfterNodeChange(p, undefined, makeNode("n"))).toBe(QueueingHint.QueueSkip);
  });

  it("a web pod rejected for affinity is requeued when a cache pod is bound, not for other pods", async () => {
    const sim = simWith([], { nodes: [makeNode("n1", { zone: "a" })] });
    const p = pod("web", "web", { affinity: [term("cache", ZONE)] });
    sim.add(p);
    await sim.drain();
    expect(sim.queue.whereIs(p)).toBe("Unschedulable");
    const other = bound("x", "x");
    sim.cache.addPod(other);
    sim.queue.assignedPodAdded(other);
    expect(sim.queue.whereIs(p)).toBe("Unschedulable");
    const cache = bound("cache", "cache");
    sim.cache.addPod(cache);
    sim.queue.moveAllToActiveOrBackoffQueue(AssignedPodAdd, undefined, cache);
    expect(["Active", "Backoff"]).toContain(sim.queue.whereIs(p));
  });
});

describe("InterPodAffinity as scheduler_perf's SchedulingPodAntiAffinity (5Nodes)", () => {
  // templates/pod-with-pod-anti-affinity.yaml: color=green, hating color=green on its hostname
  // in namespaces sched-0 and sched-1. 1 initial pod in sched-0, then 4 measured in sched-1.
  const green = (name: string, namespace: string) => {
    const p = makePod(name, { namespace, labels: { color: "green" } });
    p.spec.affinity = {
      podAntiAffinity: {
        requiredDuringSchedulingIgnoredDuringExecution: [
          {
            labelSelector: { matchLabels: { color: "green" } },
            topologyKey: HOST,
            namespaces: ["sched-1", "sched-0"],
          },
        ],
      },
    };
    return p;
  };

  it("places each pod alone on a node, across the two namespaces; a 6th has nowhere to go", async () => {
    const nodes = ["n0", "n1", "n2", "n3", "n4"].map((n) => makeNode(n));
    const sim = simWith([], { nodes });
    sim.add(green("init-0", "sched-0"));
    await sim.drain();
    for (let i = 0; i < 4; i++) sim.add(green(`measure-${i}`, "sched-1"));
    await sim.drain();
    expect(new Set(sim.bound.map((b) => b.node)).size).toBe(5);
    sim.add(green("extra", "sched-1"));
    await sim.drain();
    expect(failures(sim)).toEqual([`0/5 nodes are available: 5 ${ErrReasonAntiAffinityRulesNotMatch}.`]);
  });
});

describe("InterPodAffinity: one pod must match all the affinity terms", () => {
  it("two pods matching one term each do not satisfy a pod with both terms", () => {
    const nodes = [makeNode("a1", { zone: "a" }), makeNode("b1", { zone: "b" })];
    const labelled = (name: string, labels: Record<string, string>, nodeName: string) =>
      makePod(name, { labels, nodeName });
    const sim = simWith(
      [
        labelled("cache", { app: "cache" }, "a1"),
        labelled("fast", { tier: "fast" }, "a1"),
        labelled("fast-cache", { app: "cache", tier: "fast" }, "b1"),
      ],
      { nodes },
    );
    const snapshot = sim.fwk.snapshotSharedLister();
    sim.cache.updateSnapshot(snapshot);
    const web = pod("web", "web", {
      affinity: [
        term("cache", ZONE),
        { labelSelector: { matchLabels: { tier: "fast" } }, topologyKey: ZONE },
      ],
    });
    const state = new CycleState();
    expect(sim.fwk.runPreFilterPlugins(state, web)[1]).toBeUndefined();
    // Only fast-cache matches both terms: affinityCounts = {zone=b: 2} (one per term).
    const at = (n: string) => sim.fwk.runFilterPlugins(state, web, snapshot.get(n) as NodeInfo)?.message();
    expect(at("a1")).toBe(ErrReasonAffinityRulesNotMatch);
    expect(at("b1")).toBeUndefined();
  });
});

/** The snapshot's NodeInfo of `name` (the test's own nodes: never missing). */
function nodeInfo(sim: ReturnType<typeof newSim>, name: string): NodeInfo {
  const ni = sim.fwk.snapshotSharedLister().get(name);
  if (ni instanceof Error) throw ni;
  return ni;
}

describe("InterPodAffinity PreFilter counts (per topology key, then value)", () => {
  it("counts each side's terms under their own keys, and a pair at 0 is gone", () => {
    // n1 (zone a), n2 (zone a), n3 (zone b).
    const nodes = [
      makeNode("n1", { zone: "a" }),
      makeNode("n2", { zone: "a" }),
      makeNode("n3", { zone: "b" }),
    ];
    const existing = [
      // Repels web pods per host AND per zone: two terms, two keys.
      pod("hater", "x", { anti: [term("web", HOST), term("web", ZONE)] }, { nodeName: "n1" }),
      pod("web-0", "web", {}, { nodeName: "n2" }),
      pod("web-1", "web", {}, { nodeName: "n3" }),
    ];
    const sim = simWith(existing, { nodes });
    sim.cache.updateSnapshot(sim.fwk.snapshotSharedLister());
    const pl = sim.fwk.plugins.get(Name) as InterPodAffinity;
    const incoming = pod("web-2", "web", { anti: [term("web", ZONE)] });
    const state = new CycleState();
    expect(pl.preFilter(state, incoming)[1]).toBeUndefined();
    const s = getPreFilterState(state);
    if (s instanceof Error) throw s;
    // existingAntiAffinityCounts: hater's two terms both match web-2, hater is on n1:
    //   {hostname=n1: 1, zone=a: 1}.
    expect(Object.fromEntries(s.existingAntiAffinityCounts.entries())).toEqual({
      [`${HOST}=n1`]: 1,
      [`${ZONE}=a`]: 1,
    });
    // antiAffinityCounts: web-2's one zone term selects web-0 (n2, zone a) and web-1 (n3, zone b):
    //   {zone=a: 1, zone=b: 1}; hater (app=x) is not selected.
    expect(Object.fromEntries(s.antiAffinityCounts.entries())).toEqual({
      [`${ZONE}=a`]: 1,
      [`${ZONE}=b`]: 1,
    });
    expect(s.affinityCounts.size).toBe(0);

    // RemovePod of web-1 from n3: zone=b goes 1 → 0 and is deleted, so size is 1.
    const n3 = nodeInfo(sim, "n3");
    const without = state.clone();
    expect(pl.removePod(without, incoming, new PodInfo(existing[2]), n3)).toBeUndefined();
    const w = getPreFilterState(without);
    if (w instanceof Error) throw w;
    expect(w.antiAffinityCounts.entries()).toEqual([[`${ZONE}=a`, 1]]);
    expect(w.antiAffinityCounts.size).toBe(1);
    // The original state is untouched (clone copies the counts).
    expect(s.antiAffinityCounts.size).toBe(2);
    // n3 now passes; n1/n2 (zone a) still fail for web-2's own term, before the symmetric rule.
    expect(pl.filter(without, incoming, n3)?.message()).toBeUndefined();
    const n1 = nodeInfo(sim, "n1");
    expect(pl.filter(without, incoming, n1)?.message()).toBe(ErrReasonAntiAffinityRulesNotMatch);
  });

  it("the symmetric rule looks a node up under every counted key, not only the terms' own", () => {
    // hater on n1 repels web pods per host; n2 shares no host with n1 → only n1 is out.
    const nodes = [makeNode("n1", { zone: "a" }), makeNode("n2", { zone: "a" })];
    const sim = simWith([pod("hater", "x", { anti: [term("web", HOST)] }, { nodeName: "n1" })], { nodes });
    sim.cache.updateSnapshot(sim.fwk.snapshotSharedLister());
    const pl = sim.fwk.plugins.get(Name) as InterPodAffinity;
    const incoming = pod("web-0", "web"); // no terms of its own
    const state = new CycleState();
    expect(pl.preFilter(state, incoming)[1]).toBeUndefined();
    // existingAntiAffinityCounts = {hostname=n1: 1}: n1's hostname label hits it, n2's does not.
    expect(pl.filter(state, incoming, nodeInfo(sim, "n1"))?.message()).toBe(
      ErrReasonExistingAntiAffinityRulesNotMatch,
    );
    expect(pl.filter(state, incoming, nodeInfo(sim, "n2"))).toBeUndefined();
  });
});

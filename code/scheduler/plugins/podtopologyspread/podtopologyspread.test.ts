// PodTopologySpread: Filter's skew arithmetic (maxSkew, minDomains, matchLabelKeys, a node
// without the key, node inclusion), AddPod/RemovePod, Score's weighted counts, the system
// default constraints with a fake lister, the queueing hints, and whole cycles through the sim.
import { describe, expect, it } from "vitest";
import type {
  Node,
  NodeSelectorRequirement,
  NodeSelectorTerm,
  Pod,
  TopologySpreadConstraint,
} from "../../../api/core.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { getRequiredNodeAffinity } from "../../../api/node-affinity.ts";
import { SharedInformerFactory } from "../../../client/tools/cache/informer-factory.ts";
import type { ListerWatcher } from "../../../client/tools/cache/listwatch.ts";
import { newSnapshot, type Snapshot } from "../../backend/cache/snapshot.ts";
import { CycleState } from "../../framework/cycle-state.ts";
import { QueueingHint } from "../../framework/events.ts";
import type { NodeScore } from "../../framework/interface.ts";
import type { NodeInfo } from "../../framework/node-info.ts";
import type { Handle } from "../../framework/runtime/registry.ts";
import { Code, codeOf } from "../../framework/status.ts";
import { PodInfo } from "../../framework/types.ts";
import { newSim } from "../../testing/sim.ts";
import { makeNode, makePod } from "../../testing/wrappers.ts";
import { ErrReasonConstraintsNotMatch, ErrReasonNodeLabelNotMatch, PodTopologySpread } from "./plugin.ts";

const ZONE = "topology.kubernetes.io/zone";
const HOST = "kubernetes.io/hostname";
const web = { matchLabels: { app: "web" } };

const hard = (o: Partial<TopologySpreadConstraint> = {}): TopologySpreadConstraint => ({
  maxSkew: 1,
  topologyKey: ZONE,
  whenUnsatisfiable: "DoNotSchedule",
  labelSelector: web,
  ...o,
});
const soft = (o: Partial<TopologySpreadConstraint> = {}) =>
  hard({ whenUnsatisfiable: "ScheduleAnyway", ...o });

/** A pod of app=web with these constraints (and extra labels). */
const spreadPod = (
  name: string,
  tsc: TopologySpreadConstraint[],
  labels: Record<string, string> = {},
): Pod => {
  const p = makePod(name, { labels: { app: "web", ...labels } });
  p.spec.topologySpreadConstraints = tsc;
  return p;
};
/** An existing app=web pod (or with `labels`) on `node`. */
const placed = (name: string, node: string, labels: Record<string, string> = { app: "web" }) =>
  makePod(name, { nodeName: node, labels });

/** 3 zones × 2 nodes: a-1, a-2, b-1, b-2, c-1, c-2. */
const threeZones = (): Node[] =>
  ["a", "b", "c"].flatMap((z) => [1, 2].map((i) => makeNode(`${z}-${i}`, { zone: z })));

function plugin(snapshot: Snapshot, factory?: SharedInformerFactory, args?: unknown) {
  const handle = {
    snapshotSharedLister: () => snapshot,
    sharedInformerFactory: () => factory,
  } as unknown as Handle;
  return new PodTopologySpread(args as never, handle);
}

/** PreFilter, then Filter on every node: node name → [code, message]. */
function filterAll(pl: PodTopologySpread, snapshot: Snapshot, pod: Pod, state = new CycleState()) {
  const [, s] = pl.preFilter(state, pod);
  expect(codeOf(s)).toBe(Code.Success);
  return filterWith(pl, snapshot, pod, state);
}
function filterWith(pl: PodTopologySpread, snapshot: Snapshot, pod: Pod, state: CycleState) {
  const out: Record<string, [Code, string]> = {};
  for (const ni of snapshot.list()) {
    const st = pl.filter(state, pod, ni);
    out[ni.nodeName()] = [codeOf(st), st?.message() ?? ""];
  }
  return out;
}
const OK: [Code, string] = [Code.Success, ""];
const SKEW: [Code, string] = [Code.Unschedulable, ErrReasonConstraintsNotMatch];

describe("Filter (DoNotSchedule)", () => {
  it("3 zones × 2 nodes, maxSkew 1: only the zones at the minimum take the next pod", () => {
    // Counts a=2 (a-1, a-2), b=1, c=1; global min = 1; the incoming pod matches itself (+1).
    // zone a: 2 + 1 − 1 = 2 > 1 → rejected; zones b, c: 1 + 1 − 1 = 1 ≤ 1 → fit.
    const pods = [placed("p1", "a-1"), placed("p2", "a-2"), placed("p3", "b-1"), placed("p4", "c-2")];
    const snap = newSnapshot(pods, threeZones());
    const out = filterAll(plugin(snap), snap, spreadPod("new", [hard()]));
    expect(out).toEqual({ "a-1": SKEW, "a-2": SKEW, "b-1": OK, "b-2": OK, "c-1": OK, "c-2": OK });
  });

  it("pods that do not match the selector, or live in another namespace, do not count", () => {
    // a: 2 pods of app=db + 1 app=web in namespace other → count 0; b = 1, c = 1 → min 0.
    // a: 0 + 1 − 0 = 1 fits; b, c: 1 + 1 − 0 = 2 > 1 rejected.
    const pods = [
      placed("d1", "a-1", { app: "db" }),
      placed("d2", "a-2", { app: "db" }),
      makePod("o1", { nodeName: "a-1", namespace: "other", labels: { app: "web" } }),
      placed("p3", "b-1"),
      placed("p4", "c-1"),
    ];
    const snap = newSnapshot(pods, threeZones());
    const out = filterAll(plugin(snap), snap, spreadPod("new", [hard()]));
    expect(out["a-1"]).toEqual(OK);
    expect(out["b-1"]).toEqual(SKEW);
    expect(out["c-2"]).toEqual(SKEW);
  });

  it("minDomains: with fewer domains than minDomains the global minimum is 0", () => {
    // Two zones, one pod each. minDomains unset: min = 1, skew = 1 + 1 − 1 = 1 → fits.
    // minDomains 3: only 2 domains < 3 → min = 0, skew = 1 + 1 − 0 = 2 > 1 → every node rejected.
    const nodes = [makeNode("a-1", { zone: "a" }), makeNode("b-1", { zone: "b" })];
    const snap = newSnapshot([placed("p1", "a-1"), placed("p2", "b-1")], nodes);
    const pl = plugin(snap);
    expect(filterAll(pl, snap, spreadPod("new", [hard()]))).toEqual({ "a-1": OK, "b-1": OK });
    expect(filterAll(pl, snap, spreadPod("new", [hard({ minDomains: 3 })]))).toEqual({
      "a-1": SKEW,
      "b-1": SKEW,
    });
    // maxSkew 2 absorbs it: 1 + 1 − 0 = 2 ≤ 2.
    expect(filterAll(pl, snap, spreadPod("new", [hard({ minDomains: 3, maxSkew: 2 })]))["a-1"]).toEqual(OK);
  });

  it("matchLabelKeys: only pods with the incoming pod's values of those keys count", () => {
    // Zone a holds two app=web pods of the old revision (hash=old); zone b none.
    // Without matchLabelKeys: a = 2, b = 0, min 0 → a: 2 + 1 − 0 = 3 > 1 rejected.
    // With matchLabelKeys [hash]: selector app=web,hash=new → a = 0, b = 0 → a: 0 + 1 − 0 = 1 fits.
    const nodes = [makeNode("a-1", { zone: "a" }), makeNode("b-1", { zone: "b" })];
    const old = { app: "web", hash: "old" };
    const snap = newSnapshot([placed("o1", "a-1", old), placed("o2", "a-1", old)], nodes);
    const pl = plugin(snap);
    const newHash = { hash: "new" };
    expect(filterAll(pl, snap, spreadPod("new", [hard()], newHash))["a-1"]).toEqual(SKEW);
    expect(filterAll(pl, snap, spreadPod("new", [hard({ matchLabelKeys: ["hash"] })], newHash))).toEqual({
      "a-1": OK,
      "b-1": OK,
    });
    // A key the pod lacks adds nothing: back to app=web alone.
    expect(filterAll(pl, snap, spreadPod("new", [hard({ matchLabelKeys: ["missing"] })]))["a-1"]).toEqual(
      SKEW,
    );
  });

  it("a node without the topology key is UnschedulableAndUnresolvable and no domain", () => {
    // "bare" has pods but no zone label: not a domain, so a = 1, b = 0 → min 0.
    const nodes = [makeNode("a-1", { zone: "a" }), makeNode("b-1", { zone: "b" }), makeNode("bare")];
    const snap = newSnapshot([placed("p1", "a-1"), placed("x1", "bare"), placed("x2", "bare")], nodes);
    const out = filterAll(plugin(snap), snap, spreadPod("new", [hard()]));
    expect(out.bare).toEqual([Code.UnschedulableAndUnresolvable, ErrReasonNodeLabelNotMatch]);
    // a: 1 + 1 − 0 = 2 > 1; b: 0 + 1 − 0 = 1.
    expect([out["a-1"], out["b-1"]]).toEqual([SKEW, OK]);
  });

  it("nodeAffinityPolicy Honor (default) counts only nodes the pod may use; Ignore counts all", () => {
    // The pod may only run in zones a and b (required node affinity). a = 1, b = 1, c = 0.
    // Honor: c is not a domain → min 1 → a: 1 + 1 − 1 = 1 fits.
    // Ignore: c counts → min 0 → a: 1 + 1 − 0 = 2 > 1 rejected.
    const snap = newSnapshot([placed("p1", "a-1"), placed("p2", "b-1")], threeZones());
    const pl = plugin(snap);
    const pinned = (tsc: TopologySpreadConstraint) => {
      const p = spreadPod("new", [tsc]);
      p.spec.affinity = {
        nodeAffinity: {
          requiredDuringSchedulingIgnoredDuringExecution: {
            nodeSelectorTerms: [{ matchExpressions: [{ key: ZONE, operator: "In", values: ["a", "b"] }] }],
          },
        },
      };
      return p;
    };
    expect(filterAll(pl, snap, pinned(hard()))["a-1"]).toEqual(OK);
    expect(filterAll(pl, snap, pinned(hard({ nodeAffinityPolicy: "Ignore" })))["a-1"]).toEqual(SKEW);
  });

  it("nodeTaintsPolicy Honor leaves out nodes with untolerated NoSchedule taints", () => {
    // Zone c's nodes are tainted. a = 1, b = 1, c = 0. Ignore (default): min 0 → a rejected.
    // Honor: c is no domain → min 1 → a: 1 + 1 − 1 = 1 fits.
    const nodes = threeZones().map((n) =>
      n.metadata.name!.startsWith("c")
        ? { ...n, spec: { taints: [{ key: "x", effect: "NoSchedule" as const }] } }
        : n,
    );
    const snap = newSnapshot([placed("p1", "a-1"), placed("p2", "b-1")], nodes);
    const pl = plugin(snap);
    expect(filterAll(pl, snap, spreadPod("new", [hard()]))["a-1"]).toEqual(SKEW);
    expect(filterAll(pl, snap, spreadPod("new", [hard({ nodeTaintsPolicy: "Honor" })]))["a-1"]).toEqual(OK);
  });

  it("PreFilter skips a pod without hard constraints; Filter without PreFilter is an Error", () => {
    const snap = newSnapshot([], threeZones());
    const pl = plugin(snap);
    expect(codeOf(pl.preFilter(new CycleState(), spreadPod("s", [soft()]))[1])).toBe(Code.Skip);
    expect(codeOf(pl.preFilter(new CycleState(), makePod("plain"))[1])).toBe(Code.Skip);
    const st = pl.filter(new CycleState(), spreadPod("s", [hard()]), snap.list()[0]);
    expect([codeOf(st), st?.message()]).toEqual([
      Code.Error,
      'reading "PreFilterPodTopologySpread" from cycleState: not found',
    ]);
    const [, sc] = pl.score(new CycleState(), spreadPod("s", [soft()]), snap.list()[0]);
    expect(sc?.message()).toBe('error reading "PreScorePodTopologySpread" from cycleState: not found');
  });

  it("AddPod / RemovePod change the Filter answer; a clone does not see them", () => {
    // a = 1, b = 0 → min 0: a-1: 1 + 1 − 0 = 2 > 1 rejected, b-1 fits.
    const nodes = [makeNode("a-1", { zone: "a" }), makeNode("b-1", { zone: "b" })];
    const snap = newSnapshot([placed("p1", "a-1")], nodes);
    const pl = plugin(snap);
    const pod = spreadPod("new", [hard()]);
    const state = new CycleState();
    expect(filterAll(pl, snap, pod, state)).toEqual({ "a-1": SKEW, "b-1": OK });
    const before = state.clone();
    const b1 = snap.get("b-1") as NodeInfo;
    const a1 = snap.get("a-1") as NodeInfo;
    // AddPod of a matching pod on b-1: b = 1, min 1 → a-1: 1 + 1 − 1 = 1 fits; b-1: 1 + 1 − 1 = 1 fits.
    const nominated = new PodInfo(placed("nom", "b-1"));
    expect(pl.addPod(state, pod, nominated, b1)).toBeUndefined();
    expect(filterWith(pl, snap, pod, state)).toEqual({ "a-1": OK, "b-1": OK });
    // A pod of another namespace or not matching changes nothing.
    pl.addPod(state, pod, new PodInfo(makePod("o", { namespace: "x", labels: { app: "web" } })), a1);
    pl.addPod(state, pod, new PodInfo(placed("db", "a-1", { app: "db" })), a1);
    expect(filterWith(pl, snap, pod, state)).toEqual({ "a-1": OK, "b-1": OK });
    // RemovePod takes it back out: the first answer again.
    pl.removePod(state, pod, nominated, b1);
    expect(filterWith(pl, snap, pod, state)).toEqual({ "a-1": SKEW, "b-1": OK });
    // RemovePod of the pod on a-1 (a preemption victim): a = 0, b = 0 → both fit.
    pl.removePod(state, pod, new PodInfo(placed("p1", "a-1")), a1);
    expect(filterWith(pl, snap, pod, state)).toEqual({ "a-1": OK, "b-1": OK });
    // The clone taken before still says the first answer.
    expect(filterWith(pl, snap, pod, before)).toEqual({ "a-1": SKEW, "b-1": OK });
  });
});

/** PreScore over every node, Score, NormalizeScore: [raw, normalized] by node. */
function scoreAll(pl: PodTopologySpread, snap: Snapshot, pod: Pod) {
  const state = new CycleState();
  const st = pl.preScore(state, pod, snap.list());
  if (st) return { skip: codeOf(st) };
  const scores: NodeScore[] = snap
    .list()
    .map((ni) => ({ name: ni.nodeName(), score: pl.score(state, pod, ni)[0] }));
  const raw = Object.fromEntries(scores.map((s) => [s.name, s.score]));
  pl.normalizeScore(state, pod, scores);
  return { raw, normalized: Object.fromEntries(scores.map((s) => [s.name, s.score])) };
}

describe("Score (ScheduleAnyway)", () => {
  it("weights counts by log(domains + 2), inverts between min and max, ignores label-less nodes", () => {
    // Zones: a = {a-1 (3 pods), a-2}, b = {b-1 (1 pod)}, c = {c-1}; "bare" has no zone label.
    // Feasible nodes with the key: 3 zones → weight ln(3 + 2) = 1.6094; maxSkew 1 adds 0.
    //   a-1, a-2: 3 × 1.6094 = 4.83 → 5;  b-1: 1 × 1.6094 = 1.61 → 2;  c-1: 0.
    //   bare: ignored → raw 0, normalized 0.
    // Normalize, max 5, min 0: a: 100·(5+0−5)/5 = 0; b-1: 100·(5−2)/5 = 60; c-1: 100·5/5 = 100.
    const nodes = [
      makeNode("a-1", { zone: "a" }),
      makeNode("a-2", { zone: "a" }),
      makeNode("b-1", { zone: "b" }),
      makeNode("c-1", { zone: "c" }),
      makeNode("bare"),
    ];
    const pods = [placed("p1", "a-1"), placed("p2", "a-1"), placed("p3", "a-1"), placed("p4", "b-1")];
    const snap = newSnapshot(pods, nodes);
    const r = scoreAll(plugin(snap), snap, spreadPod("new", [soft()]));
    expect(r.raw).toEqual({ "a-1": 5, "a-2": 5, "b-1": 2, "c-1": 0, bare: 0 });
    expect(r.normalized).toEqual({ "a-1": 0, "a-2": 0, "b-1": 60, "c-1": 100, bare: 0 });
  });

  it("hostname constraints count per node, with maxSkew − 1 watering the differences down", () => {
    // Hostname, maxSkew 3, 3 feasible nodes → weight ln(5) = 1.6094, plus maxSkew − 1 = 2.
    //   n1 (2 pods): 2 × 1.6094 + 2 = 5.22 → 5;  n2 (1 pod): 3.61 → 4;  n3: 2.
    // max 5, min 2: n1: 100·(7−5)/5 = 40; n2: 100·(7−4)/5 = 60; n3: 100·(7−2)/5 = 100.
    const nodes = [makeNode("n1"), makeNode("n2"), makeNode("n3")];
    const snap = newSnapshot([placed("p1", "n1"), placed("p2", "n1"), placed("p3", "n2")], nodes);
    const r = scoreAll(plugin(snap), snap, spreadPod("new", [soft({ topologyKey: HOST, maxSkew: 3 })]));
    expect(r.raw).toEqual({ n1: 5, n2: 4, n3: 2 });
    expect(r.normalized).toEqual({ n1: 40, n2: 60, n3: 100 });
  });

  it("PreScore skips a pod with only hard constraints, or no nodes", () => {
    const snap = newSnapshot([], threeZones());
    expect(scoreAll(plugin(snap), snap, spreadPod("h", [hard()]))).toEqual({ skip: Code.Skip });
    const empty = newSnapshot([], []);
    expect(scoreAll(plugin(empty), empty, spreadPod("s", [soft()]))).toEqual({ skip: Code.Skip });
  });
});

/** An informer factory whose caches the test fills by hand (its informers are never run). */
function fakeFactory(objs: Record<string, KubeObject[]>): SharedInformerFactory {
  const f = new SharedInformerFactory(() => ({}) as ListerWatcher, 0);
  for (const [key, list] of Object.entries(objs)) {
    const [group, resource] = key.split("/");
    const idx = f.informerFor({ group, version: "v1", resource }).getIndexer();
    for (const o of list) idx.add(o);
  }
  return f;
}

describe("system default constraints", () => {
  const nodes = [
    makeNode("a-1", { zone: "a" }),
    makeNode("a-2", { zone: "a" }),
    makeNode("b-1", { zone: "b" }),
  ];
  const pods = [placed("p1", "a-1"), placed("p2", "a-1")];
  const service = {
    apiVersion: "v1",
    kind: "Service",
    metadata: { name: "web", namespace: "default" },
    spec: { selector: { app: "web" } },
  };

  it("spread softly by hostname (maxSkew 3) and zone (maxSkew 5) with the Service's selector", () => {
    // Selector app=web from the Service. 3 feasible nodes, 2 zones.
    //   hostname weight ln(3 + 2) = 1.6094, + (3 − 1) = 2;  zone weight ln(2 + 2) = 1.3863, + (5 − 1) = 4.
    //   zone counts: a = 2, b = 0.
    //   a-1: (2 × 1.6094 + 2) + (2 × 1.3863 + 4) = 5.22 + 6.77 = 11.99 → 12
    //   a-2: (0 + 2) + 6.77 = 8.77 → 9
    //   b-1: (0 + 2) + (0 + 4) = 6
    // max 12, min 6: a-1: 100·(18−12)/12 = 50; a-2: 100·(18−9)/12 = 75; b-1: 100·(18−6)/12 = 100.
    const snap = newSnapshot(pods, nodes);
    const pl = plugin(snap, fakeFactory({ "/services": [service] }));
    const r = scoreAll(pl, snap, makePod("new", { labels: { app: "web" } }));
    expect(r.raw).toEqual({ "a-1": 12, "a-2": 9, "b-1": 6 });
    expect(r.normalized).toEqual({ "a-1": 50, "a-2": 75, "b-1": 100 });
    // The defaults are ScheduleAnyway: nothing for Filter.
    expect(codeOf(pl.preFilter(new CycleState(), makePod("new", { labels: { app: "web" } }))[1])).toBe(
      Code.Skip,
    );
  });

  it("the ReplicaSet controlling the pod gives the selector too; nothing selecting it, no defaults", () => {
    const snap = newSnapshot(pods, nodes);
    const rs = {
      apiVersion: "apps/v1",
      kind: "ReplicaSet",
      metadata: { name: "web-rs", namespace: "default" },
      spec: { selector: { matchLabels: { app: "web" } } },
    };
    const owned = makePod("new", { labels: { app: "web" } });
    owned.metadata.ownerReferences = [
      { apiVersion: "apps/v1", kind: "ReplicaSet", name: "web-rs", uid: "rs", controller: true },
    ];
    const pl = plugin(snap, fakeFactory({ "apps/replicasets": [rs] }));
    expect(scoreAll(pl, snap, owned).normalized).toEqual({ "a-1": 50, "a-2": 75, "b-1": 100 });
    // No Service and no owner: empty selector → no default constraints → Skip.
    expect(scoreAll(pl, snap, makePod("lone", { labels: { app: "web" } }))).toEqual({ skip: Code.Skip });
    // No informer factory (a simulation): no listers → no default selector → Skip.
    expect(scoreAll(plugin(snap), snap, owned)).toEqual({ skip: Code.Skip });
  });

  it("a zone-less node is still scored by hostname under the system defaults", () => {
    // requireAllTopologies is false for the system defaults: "bare" is not ignored.
    // Feasible: a-1 (2 pods), bare. hostname weight ln(4) = 1.3863 (+2); zone domains "a" and ""
    // (bare reads as "") → ln(4) = 1.3863 (+4). a-1: 2.77 + 2 + 2.77 + 4 = 11.55 → 12;
    // bare: 0 + 2 (no zone label: the zone term is skipped) = 2.
    // max 12, min 2: a-1: 100·(14−12)/12 = 16; bare: 100·(14−2)/12 = 100.
    const snap = newSnapshot(pods, [makeNode("a-1", { zone: "a" }), makeNode("bare")]);
    const pl = plugin(snap, fakeFactory({ "/services": [service] }));
    const r = scoreAll(pl, snap, makePod("new", { labels: { app: "web" } }));
    expect(r.raw).toEqual({ "a-1": 12, bare: 2 });
    expect(r.normalized).toEqual({ "a-1": 16, bare: 100 });
  });

  it("defaultingType List uses the configured constraints; System with a list is invalid", () => {
    const snap = newSnapshot(pods, nodes);
    const args = {
      defaultingType: "List",
      defaultConstraints: [{ maxSkew: 1, topologyKey: ZONE, whenUnsatisfiable: "DoNotSchedule" }],
    };
    const pl = plugin(snap, fakeFactory({ "/services": [service] }), args);
    // a = 2, b = 0 → a: 2 + 1 − 0 = 3 > 1.
    const out = filterAll(pl, snap, makePod("new", { labels: { app: "web" } }));
    expect(out).toEqual({ "a-1": SKEW, "a-2": SKEW, "b-1": OK });
    expect(() =>
      plugin(snap, undefined, { defaultingType: "System", defaultConstraints: args.defaultConstraints }),
    ).toThrow('defaultingType: Invalid value: "System": when .defaultConstraints are not empty');
  });
});

describe("queueing hints", () => {
  const snap = newSnapshot([], []);
  const pl = plugin(snap);
  const pod = spreadPod("pending", [hard()]);
  const [podHint, nodeHint] = pl.eventsToRegister().map((e) => e.queueingHintFn!);

  it("pods: an assigned matching pod added or deleted queues; others skip", () => {
    expect(podHint(pod, undefined, placed("x", "a-1"))).toBe(QueueingHint.Queue);
    expect(podHint(pod, placed("x", "a-1"), undefined)).toBe(QueueingHint.Queue);
    expect(podHint(pod, undefined, placed("x", "a-1", { app: "db" }))).toBe(QueueingHint.QueueSkip);
    // Unassigned, or in another namespace: not part of the spreading.
    expect(podHint(pod, undefined, makePod("u", { labels: { app: "web" } }))).toBe(QueueingHint.QueueSkip);
    expect(
      podHint(pod, undefined, makePod("o", { nodeName: "a-1", namespace: "x", labels: { app: "web" } })),
    ).toBe(QueueingHint.QueueSkip);
  });

  it("pods: a label update queues only if it flips a selector match", () => {
    expect(podHint(pod, placed("x", "a-1"), placed("x", "a-1", { app: "db" }))).toBe(QueueingHint.Queue);
    expect(podHint(pod, placed("x", "a-1"), placed("x", "a-1", { app: "web", v: "2" }))).toBe(
      QueueingHint.QueueSkip,
    );
  });

  it("nodes: added with the keys, relabelled in a key, or losing a key queues", () => {
    const za = makeNode("n", { zone: "a" });
    expect(nodeHint(pod, undefined, za)).toBe(QueueingHint.Queue);
    expect(nodeHint(pod, undefined, makeNode("bare"))).toBe(QueueingHint.QueueSkip);
    expect(nodeHint(pod, za, makeNode("n", { zone: "b" }))).toBe(QueueingHint.Queue);
    expect(nodeHint(pod, za, makeNode("n"))).toBe(QueueingHint.Queue);
    expect(nodeHint(pod, za, makeNode("n", { zone: "a", labels: { other: "x" } }))).toBe(
      QueueingHint.QueueSkip,
    );
    expect(nodeHint(pod, za, undefined)).toBe(QueueingHint.Queue);
  });
});

describe("through the scheduler (sim)", () => {
  it("3 zones × 2 nodes, maxSkew 1: pods fill the zones round-robin", async () => {
    // Each pod goes to a zone at the current minimum: after pods 1–3 every zone has 1, after
    // 4–6 every zone has 2; the counts never differ by more than 1 at any step.
    // Zone a's nodes are 16× larger, so LeastAllocated always prefers them: only the Filter
    // keeps the pods out of zone a once it is one ahead.
    const big = { cpu: "64", memory: "128Gi", pods: "110" };
    const nodes = threeZones().map((n) =>
      n.metadata.name!.startsWith("a") ? makeNode(n.metadata.name!, { zone: "a", allocatable: big }) : n,
    );
    const sim = newSim({ nodes });
    const zoneOf = (node: string) => node.split("-")[0];
    for (let i = 0; i < 6; i++) {
      const p = spreadPod(`p${i}`, [hard()]);
      p.spec.containers[0].resources = { requests: { cpu: "500m", memory: "512Mi" } };
      sim.add(p);
      await sim.drain();
      const counts = { a: 0, b: 0, c: 0 } as Record<string, number>;
      for (const b of sim.bound) counts[zoneOf(b.node)]++;
      const v = Object.values(counts);
      expect(Math.max(...v) - Math.min(...v), `after pod ${i}`).toBeLessThanOrEqual(1);
    }
    const perZone = (z: string) => sim.bound.filter((b) => zoneOf(b.node) === z).length;
    expect([perZone("a"), perZone("b"), perZone("c")]).toEqual([2, 2, 2]);
  });

  it("a pod that fits nowhere gets upstream's reasons in FailedScheduling", async () => {
    // Two zones, a = 2 placed pods, b tainted so no pod lands there: b has 0, min 0.
    // a: 2 + 1 − 0 = 3 > 1 → PodTopologySpread; b: TaintToleration.
    const nodes = [makeNode("a-1", { zone: "a" }), makeNode("b-1", { zone: "b" })];
    nodes[1].spec = { taints: [{ key: "x", effect: "NoSchedule" }] };
    const sim = newSim({ nodes });
    sim.cache.addPod(placed("p1", "a-1"));
    sim.cache.addPod(placed("p2", "a-1"));
    sim.add(spreadPod("new", [hard()]));
    await sim.drain();
    expect(sim.bound).toEqual([]);
    expect(sim.events.at(-1)?.message).toContain(`1 ${ErrReasonConstraintsNotMatch}`);
  });
});

describe("getRequiredNodeAffinity (which nodes count as domains)", () => {
  const node = makeNode("n1", { zone: "a", labels: { gen: "5" } });
  const withTerms = (terms: NodeSelectorTerm[] | undefined, nodeSelector?: Record<string, string>) => {
    const p = makePod("p");
    if (nodeSelector) p.spec.nodeSelector = nodeSelector;
    if (terms)
      p.spec.affinity = {
        nodeAffinity: { requiredDuringSchedulingIgnoredDuringExecution: { nodeSelectorTerms: terms } },
      };
    return getRequiredNodeAffinity(p).match(node)[0];
  };
  const expr = (key: string, operator: NodeSelectorRequirement["operator"], values?: string[]) => [
    { matchExpressions: [{ key, operator, values }] },
  ];
  it.each([
    ["no affinity", undefined, undefined, true],
    ["nodeSelector match", undefined, { [ZONE]: "a" }, true],
    ["nodeSelector mismatch", undefined, { [ZONE]: "b" }, false],
    ["NotIn", expr(ZONE, "NotIn", ["b"]), undefined, true],
    ["Exists", expr("gen", "Exists"), undefined, true],
    ["DoesNotExist", expr("gen", "DoesNotExist"), undefined, false],
    ["Gt 4", expr("gen", "Gt", ["4"]), undefined, true],
    ["Lt 5", expr("gen", "Lt", ["5"]), undefined, false],
    ["Gt on a non-integer never matches", expr("gen", "Gt", ["x"]), undefined, false],
    [
      "matchFields metadata.name",
      [{ matchFields: [{ key: "metadata.name", operator: "In" as const, values: ["n1"] }] }],
      undefined,
      true,
    ],
    ["only empty terms match nothing", [{}], undefined, false],
    ["terms are ORed", [...expr(ZONE, "In", ["b"]), ...expr(ZONE, "In", ["a"])], undefined, true],
  ] as [string, NodeSelectorTerm[] | undefined, Record<string, string> | undefined, boolean][])(
    "%s",
    (_name, terms, sel, want) => {
      expect(withTerms(terms, sel)).toBe(want);
    },
  );
});

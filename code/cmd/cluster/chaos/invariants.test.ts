import { describe, expect, it } from "vitest";
import type { Deployment } from "../../../api/apps.ts";
import type { Event as AuditEvent } from "../../../apiserver/audit/event.ts";
import {
  cachesMatchFreshList,
  deploymentsConverged,
  formatResults,
  type LeaderHistory,
  neverTwoLeadersActing,
  noAcknowledgedWriteLost,
  noOrphanProcess,
  noPodOnTwoNodes,
  type WriteRecord,
} from "./invariants.ts";

const deployment = (
  name: string,
  replicas: number,
  status: Deployment["status"],
  generation = 3,
): Deployment => ({
  apiVersion: "apps/v1",
  kind: "Deployment",
  metadata: { name, generation },
  spec: { replicas, selector: { matchLabels: { app: name } }, template: { spec: { containers: [] } } },
  status,
});
const converged = (n: number) => ({
  observedGeneration: 3,
  replicas: n,
  updatedReplicas: n,
  readyReplicas: n,
  availableReplicas: n,
});

describe("deploymentsConverged", () => {
  it("passes when every Deployment has its desired replicas, updated and available", () => {
    expect(
      deploymentsConverged(
        [deployment("a", 2, converged(2)), deployment("b", 0, converged(0))],
        [
          { name: "a", replicas: 2 },
          { name: "b", replicas: 0 },
        ],
      ).ok,
    ).toBe(true);
  });
  it("fails on an old pod left, a stale observedGeneration, a missing Deployment", () => {
    const r = deploymentsConverged(
      [
        deployment("a", 2, { ...converged(2), replicas: 3 }),
        deployment("b", 1, { ...converged(1), observedGeneration: 2 }),
      ],
      [
        { name: "a", replicas: 2 },
        { name: "b", replicas: 1 },
        { name: "c", replicas: 1 },
      ],
    );
    expect(r.ok).toBe(false);
    expect(r.evidence).toEqual([
      "deployment a: want 2 replicas, replicas=3",
      "deployment b: want 1 replicas, observedGeneration=2 < 3",
      "deployment c is missing",
    ]);
  });
});

describe("noPodOnTwoNodes", () => {
  it("passes when each uid stays on one node, whoever reports it", () => {
    expect(
      noPodOnTwoNodes([
        { uid: "u1", pod: "ns/a", node: "n1", at: 1, source: "api" },
        { uid: "u1", pod: "ns/a", node: "n1", at: 2, source: "kubelet" },
        { uid: "u2", pod: "ns/a", node: "n2", at: 3, source: "api" }, // same name, new pod
      ]).ok,
    ).toBe(true);
  });
  it("fails when a kubelet runs a container of a pod bound elsewhere", () => {
    const r = noPodOnTwoNodes([
      { uid: "u1", pod: "ns/a", node: "n1", at: 1, source: "api" },
      { uid: "u1", pod: "ns/a", node: "n2", at: 2, source: "kubelet" },
    ]);
    expect(r.ok).toBe(false);
    expect(r.evidence[0]).toMatch(/pod ns\/a uid u1 on n1 \(api.*\) and n2 \(kubelet/);
  });
});

const t0 = Date.parse("2026-01-01T00:00:00Z");
const iso = (ms: number) => new Date(t0 + ms).toISOString();
const leaseWrite = (uid: string, at: number, holder: string, acquire: number, verb = "update"): AuditEvent =>
  ({
    stage: "ResponseComplete",
    verb,
    user: { username: "system:kube-scheduler", uid },
    objectRef: {
      resource: "leases",
      namespace: "kube-system",
      name: "kube-scheduler",
      apiGroup: "coordination.k8s.io",
    },
    responseStatus: { code: 200 },
    stageTimestamp: iso(at),
    requestObject: { spec: { holderIdentity: holder, acquireTime: iso(acquire), renewTime: iso(at) } },
  }) as unknown as AuditEvent;
const bind = (
  uid: string,
  at: number,
  pod: string,
  code = 201,
  username = "system:kube-scheduler",
): AuditEvent =>
  ({
    stage: "ResponseComplete",
    verb: "create",
    user: { username, uid },
    objectRef: { resource: "pods", subresource: "binding", namespace: "w", name: pod },
    responseStatus: { code },
    stageTimestamp: iso(at),
  }) as unknown as AuditEvent;

const history = (audit: AuditEvent[], wakes: number[] = []): LeaderHistory => ({
  leases: ["kube-scheduler"],
  audit,
  observations: [],
  wakes: wakes.map((w) => t0 + w),
  staleBoundMs: 2000,
});

describe("neverTwoLeadersActing (audit)", () => {
  // s1 leads from 0, s2 takes over at 10 s (s1's lease ran out).
  const takeover = [
    leaseWrite("s1", 0, "id1", 0, "create"),
    leaseWrite("s1", 2000, "id1", 0),
    leaseWrite("s2", 10_000, "id2", 10_000),
  ];

  it("passes for bindings inside each term, and a woken leader's within the bound", () => {
    const r = neverTwoLeadersActing(
      history(
        [
          ...takeover,
          bind("s1", 1000, "a"),
          bind("s2", 11_000, "b"),
          bind("s1", 15_500, "c"),
          bind("admin", 16_000, "d", 201, "admin"),
        ],
        [15_000],
      ),
    );
    expect(r.evidence).toEqual([]);
    expect(r.ok).toBe(true);
  });
  it("fails for a binding by a process that never led", () => {
    const r = neverTwoLeadersActing(history([...takeover, bind("s3", 11_000, "b")]));
    expect(r.ok).toBe(false);
    expect(r.evidence[0]).toMatch(/s3 wrote create pods\/binding w\/b .* without ever leading/);
  });
  it("fails for a stale leader acting past the bound after its term ended", () => {
    const r = neverTwoLeadersActing(history([...takeover, bind("s1", 13_000, "c")]));
    expect(r.ok).toBe(false);
    expect(r.evidence[0]).toMatch(/s1 wrote .* 3000 ms after its term ended/);
  });
  it("fails for a pod bound twice and a renewal over a takeover", () => {
    const r = neverTwoLeadersActing(
      history([
        ...takeover,
        bind("s2", 11_000, "b"),
        bind("s2", 11_500, "b"),
        leaseWrite("s1", 12_000, "id1", 0),
      ]),
    );
    expect(r.ok).toBe(false);
    expect(r.evidence.some((e) => /bound twice/.test(e))).toBe(true);
    expect(r.evidence.some((e) => /s1 wrote holder id1/.test(e))).toBe(true);
  });
});

describe("neverTwoLeadersActing (controller-manager writing as its ServiceAccounts)", () => {
  const kcmLease = (uid: string, at: number, holder: string): AuditEvent =>
    ({
      ...leaseWrite(uid, at, holder, at, "update"),
      user: { username: "system:kube-controller-manager", uid },
      objectRef: { resource: "leases", namespace: "kube-system", name: "kube-controller-manager" },
    }) as unknown as AuditEvent;
  const rsCreate = (at: number): AuditEvent =>
    ({
      stage: "ResponseComplete",
      verb: "create",
      user: { username: "system:serviceaccount:kube-system:deployment-controller", uid: "sa-uid" },
      objectRef: { resource: "replicasets", namespace: "w", name: "web-0-abc", apiGroup: "apps" },
      responseStatus: { code: 201 },
      stageTimestamp: iso(at),
    }) as unknown as AuditEvent;
  const h = (audit: AuditEvent[]): LeaderHistory => ({
    ...history(audit),
    leases: ["kube-controller-manager"],
  });

  it("passes for a ReplicaSet created while some controller-manager leads", () => {
    expect(neverTwoLeadersActing(h([kcmLease("c1", 0, "id1"), rsCreate(1000)])).ok).toBe(true);
  });
  it("fails for one created when no controller-manager ever led, or long after the last term ended", () => {
    expect(neverTwoLeadersActing(h([rsCreate(1000), kcmLease("c1", 2000, "id1")])).evidence[0]).toMatch(
      /without ever leading/,
    );
    const late = neverTwoLeadersActing(
      h([kcmLease("c1", 0, "id1"), kcmLease("c1", 1000, ""), rsCreate(9000)]),
    );
    expect(late.evidence[0]).toMatch(/8000 ms after its term ended/);
  });
});

describe("neverTwoLeadersActing (Leases only)", () => {
  const obs = (holder: string, acquire: number, renew: number) => ({
    lease: "kube-scheduler",
    holder,
    acquireTime: t0 + acquire,
    renewTime: t0 + renew,
    leaseDurationMs: 8000,
    transitions: 0,
  });
  it("passes for a takeover after the lease ran out, or after a release", () => {
    const h = { ...history([]), audit: undefined };
    expect(
      neverTwoLeadersActing({
        ...h,
        observations: [
          obs("a", 0, 4000),
          obs("b", 12_500, 12_500),
          obs("", 13_000, 13_000),
          obs("a", 13_100, 13_100),
        ],
      }).ok,
    ).toBe(true);
  });
  it("fails for a takeover while the old holder's lease still ran", () => {
    const h = { ...history([]), audit: undefined };
    const r = neverTwoLeadersActing({ ...h, observations: [obs("a", 0, 4000), obs("b", 9000, 9000)] });
    expect(r.ok).toBe(false);
    expect(r.evidence[0]).toMatch(/b acquired at .*, before a's lease ran out/);
  });
});

describe("noAcknowledgedWriteLost", () => {
  const w = (op: string, outcome: "ok" | "unknown", rv: string, fp: string): WriteRecord => ({
    object: "w/web-0",
    op,
    outcome,
    uid: "u",
    resourceVersion: outcome === "ok" ? rv : undefined,
    fingerprint: fp,
    at: t0,
  });
  const writes = [
    w("create", "ok", "10", "r=1 g=0"),
    w("scale", "ok", "20", "r=3 g=0"),
    w("roll", "unknown", "", "r=3 g=1"),
  ];
  it("passes when the last acknowledged write, or a later unknown one, is there", () => {
    expect(
      noAcknowledgedWriteLost(
        writes,
        new Map([["w/web-0", { uid: "u", resourceVersion: "25", fingerprint: "r=3 g=0" }]]),
      ).ok,
    ).toBe(true);
    expect(
      noAcknowledgedWriteLost(
        writes,
        new Map([["w/web-0", { uid: "u", resourceVersion: "30", fingerprint: "r=3 g=1" }]]),
      ).ok,
    ).toBe(true);
  });
  it("fails when an acknowledged write was rolled back, the object vanished or was recreated", () => {
    const rolledBack = noAcknowledgedWriteLost(
      writes,
      new Map([["w/web-0", { uid: "u", resourceVersion: "15", fingerprint: "r=1 g=0" }]]),
    );
    expect(rolledBack.ok).toBe(false);
    expect(rolledBack.evidence).toHaveLength(2); // older resourceVersion, and the spec of an earlier write
    expect(noAcknowledgedWriteLost(writes, new Map([["w/web-0", undefined]])).evidence[0]).toMatch(
      /gone, after acknowledged scale/,
    );
    expect(
      noAcknowledgedWriteLost(
        writes,
        new Map([["w/web-0", { uid: "v", resourceVersion: "40", fingerprint: "r=3 g=0" }]]),
      ).ok,
    ).toBe(false);
  });
});

describe("cachesMatchFreshList", () => {
  it("passes on equal stores and fails on a stale, a missing and a ghost entry", () => {
    const fresh = new Map([
      ["w/a", "u1@5"],
      ["w/b", "u2@7"],
    ]);
    expect(cachesMatchFreshList([{ resource: "pods", cached: new Map(fresh), fresh }]).ok).toBe(true);
    const r = cachesMatchFreshList([
      {
        resource: "pods",
        cached: new Map([
          ["w/a", "u1@4"],
          ["w/c", "u3@1"],
        ]),
        fresh,
      },
    ]);
    expect(r.evidence).toEqual([
      "pods w/a: cache has u1@4, the list u1@5",
      "pods w/b: in the list (u2@7), not in the cache",
      "pods w/c: in the cache (u3@1), gone from the list",
    ]);
  });
});

describe("noOrphanProcess", () => {
  const c = { node: "n1", podUid: "u1", pod: "w/a", containerId: "c1", pid: 100 };
  it("passes when every container's pod is known (deleting ones too)", () => {
    expect(noOrphanProcess({ containers: [c], pods: new Map([["u1", { deleting: true }]]) }).ok).toBe(true);
  });
  it("fails for a container of a pod the API server forgot, and a component left after stop", () => {
    const r = noOrphanProcess({
      containers: [c],
      pods: new Map(),
      componentsAfterStop: [{ name: "kubelet-n1", pid: 7 }],
    });
    expect(r.evidence).toHaveLength(2);
    expect(formatResults([r])).toMatch(/^FAIL no orphan process[^\n]*\n {5}container c1 \(pid 100\) on n1/);
  });
});

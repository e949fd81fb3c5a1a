/** The leader witness on hand-made audit logs: it finds what the fault tests rely on it to find. */
import { describe, expect, it } from "vitest";
import type { Event as AuditEvent } from "../../apiserver/audit/event.ts";
import { witness } from "./leader-witness.ts";

const t = (s: number) => new Date(Date.UTC(2026, 0, 1, 0, 0, s)).toISOString();

function leaseWrite(
  at: number,
  uid: string,
  holder: string,
  acquired: number,
  code = 200,
  verb = "update",
): AuditEvent {
  return {
    kind: "Event",
    apiVersion: "audit.k8s.io/v1",
    level: "Request",
    auditID: `${uid}-${at}`,
    stage: "ResponseComplete",
    requestURI: "/apis/coordination.k8s.io/v1/namespaces/kube-system/leases/kube-scheduler",
    verb,
    user: { username: "system:kube-scheduler", uid },
    objectRef: {
      resource: "leases",
      namespace: "kube-system",
      name: "kube-scheduler",
      apiGroup: "coordination.k8s.io",
    },
    responseStatus: { metadata: {}, code },
    requestObject: { spec: { holderIdentity: holder, acquireTime: t(acquired), renewTime: t(at) } },
    requestReceivedTimestamp: t(at),
    stageTimestamp: t(at),
  };
}

function binding(at: number, uid: string, pod: string, code = 201): AuditEvent {
  return {
    kind: "Event",
    apiVersion: "audit.k8s.io/v1",
    level: "Metadata",
    auditID: `${uid}-${pod}-${at}`,
    stage: "ResponseComplete",
    requestURI: `/api/v1/namespaces/default/pods/${pod}/binding`,
    verb: "create",
    user: { username: "system:kube-scheduler", uid },
    objectRef: {
      resource: "pods",
      subresource: "binding",
      namespace: "default",
      name: pod,
      apiVersion: "v1",
    },
    responseStatus: { metadata: {}, code },
    requestReceivedTimestamp: t(at),
    stageTimestamp: t(at),
  };
}

describe("witness", () => {
  it("follows the terms, and calls a binding by the previous holder stale, with its delay", () => {
    const w = witness(
      [
        leaseWrite(0, "a", "A", 0, 201, "create"),
        binding(1, "a", "p1"),
        leaseWrite(2, "a", "A", 0),
        leaseWrite(5, "b", "B", 5), // b takes over
        binding(6, "b", "p2"),
        leaseWrite(6, "a", "A", 0, 409), // a's stale renewal is refused
        binding(7, "a", "p3"), // but a still binds: stale, 2 s after its term ended
        binding(8, "a", "p2", 409), // p2 is bound already
      ],
      "kube-scheduler",
    );
    expect(w.terms.map((x) => [x.uid, x.identity])).toEqual([
      ["a", "A"],
      ["b", "B"],
    ]);
    expect(w.staleBindings).toEqual([
      { uid: "a", pod: "default/p3", at: Date.parse(t(7)), sinceTermEnd: 2000 },
    ]);
    expect(w.bindingConflicts).toBe(1);
    expect(w.leaseConflicts).toBe(1);
    expect(w.failedLeaseWrites.get("a")).toEqual([Date.parse(t(6))]);
    expect(w.fencingViolations).toEqual([]);
    expect(w.doubleBound).toEqual([]);
  });

  it("flags a pod bound twice, a follower that binds, and a renewal landing on another holder's write", () => {
    const w = witness(
      [
        leaseWrite(0, "a", "A", 0, 201, "create"),
        binding(1, "a", "p1"),
        binding(2, "c", "p1"), // a second successful binding, by one that never led
        leaseWrite(3, "b", "B", 3),
        leaseWrite(4, "a", "A", 0), // a renewal (acquired at 0) over B's write: not fenced
      ],
      "kube-scheduler",
    );
    expect(w.doubleBound).toEqual(["default/p1"]);
    expect(w.staleBindings).toEqual([
      { uid: "c", pod: "default/p1", at: Date.parse(t(2)), sinceTermEnd: undefined },
    ]);
    expect(w.fencingViolations).toHaveLength(1);
    expect(w.fencingViolations[0]).toMatch(/^a wrote holder A \(acquired .*\) over B's renewal/);
  });

  it("after a delete, the Lease may come back with times read before it (a create, or the holder's PUT)", () => {
    const del = { ...leaseWrite(3, "admin", "", 0), verb: "delete", requestObject: undefined };
    const w = witness(
      [
        leaseWrite(0, "a", "A", 0, 201, "create"),
        leaseWrite(3, "a", "A", 0),
        del,
        leaseWrite(4, "b", "B", 2, 201, "create"),
      ],
      "kube-scheduler",
    );
    expect(w.fencingViolations).toEqual([]);
    expect(w.terms.map((x) => x.uid)).toEqual(["a", "b"]);
  });

  it("a release ends the term: bindings after it are stale; another Lease is not looked at", () => {
    const other = {
      ...leaseWrite(1, "x", "X", 1),
      objectRef: { resource: "leases", namespace: "kube-system", name: "other" },
    };
    const w = witness(
      [leaseWrite(0, "a", "A", 0, 201, "create"), other, leaseWrite(2, "a", "", 2), binding(3, "a", "p1")],
      "kube-scheduler",
    );
    expect(w.terms).toEqual([{ uid: "a", identity: "A", start: Date.parse(t(0)), end: Date.parse(t(2)) }]);
    expect(w.staleBindings.map((s) => s.sinceTermEnd)).toEqual([1000]);
  });
});

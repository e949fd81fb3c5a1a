import { describe, expect, it } from "vitest";
import type { Pod } from "../../../code/api/core.ts";
import { replicaSetDiff } from "./replicaset-diff.ts";

const now = Date.parse("2026-01-01T12:00:00Z");
const ago = (s: number) => new Date(now - s * 1000).toISOString().replace(/\.\d+Z$/, "Z");

interface P {
  node?: string;
  phase?: string;
  ready?: boolean;
  age?: number;
  deleting?: boolean;
}
const pod = (name: string, o: P = {}): Pod =>
  ({
    metadata: {
      name,
      uid: name,
      creationTimestamp: ago(o.age ?? 3600),
      ...(o.deleting ? { deletionTimestamp: ago(1) } : {}),
    },
    spec: { containers: [{ name: "c", image: "nginx" }], ...(o.node ? { nodeName: o.node } : {}) },
    status: {
      phase: o.phase ?? "Running",
      ...(o.ready
        ? { conditions: [{ type: "Ready", status: "True", lastTransitionTime: ago(o.age ?? 3600) }] }
        : {}),
    },
  }) as Pod;

const names = (pods: Pod[]) => pods.map((p) => p.metadata.name);

describe("how many to create", () => {
  it("creates the shortfall", () => {
    expect(replicaSetDiff([pod("a", { node: "n1", ready: true })], 3, 500, now)).toEqual({
      create: 2,
      delete: [],
    });
    expect(replicaSetDiff([], 1, 500, now)).toEqual({ create: 1, delete: [] });
  });

  it("does nothing when the count is right", () => {
    expect(replicaSetDiff([pod("a"), pod("b")], 2, 500, now)).toEqual({ create: 0, delete: [] });
  });

  it("does not count terminating, Succeeded or Failed pods", () => {
    const pods = [
      pod("live", { node: "n1", ready: true }),
      pod("leaving", { node: "n1", ready: true, deleting: true }),
      pod("crashed", { node: "n1", phase: "Failed" }),
      pod("finished", { node: "n1", phase: "Succeeded" }),
    ];
    expect(replicaSetDiff(pods, 3, 500, now)).toEqual({ create: 2, delete: [] });
  });

  it("creates at most burstReplicas in one sync", () => {
    expect(replicaSetDiff([], 10000, 500, now)).toEqual({ create: 500, delete: [] });
  });
});

describe("which to delete", () => {
  it("deletes the surplus, at most burstReplicas, and never an inactive pod", () => {
    const pods = [
      ...Array.from({ length: 8 }, (_, i) => pod(`p${i}`, { node: "n1", ready: true })),
      pod("gone", { deleting: true }),
    ];
    const d = replicaSetDiff(pods, 2, 4, now);
    expect(d.create).toBe(0);
    expect(d.delete).toHaveLength(4);
    expect(names(d.delete)).not.toContain("gone");
    expect(replicaSetDiff(pods, 2, 500, now).delete).toHaveLength(6);
  });

  it("deletes the unscheduled and not-ready pods before the ready ones, even when they are older", () => {
    const pods = [
      pod("ready-young", { node: "n1", ready: true, age: 60 }),
      pod("ready-old", { node: "n2", ready: true, age: 86400 }),
      pod("unscheduled-old", { age: 90000, phase: "Pending" }),
      pod("notready-old", { node: "n3", age: 90000 }),
    ];
    const d = replicaSetDiff(pods, 2, 500, now);
    expect(names(d.delete)).toEqual(["unscheduled-old", "notready-old"]);
  });

  it("deletes the newer of two otherwise equal ready pods", () => {
    const pods = [
      pod("old", { node: "n1", ready: true, age: 86400 }),
      pod("new", { node: "n2", ready: true, age: 60 }),
    ];
    expect(names(replicaSetDiff(pods, 1, 500, now).delete)).toEqual(["new"]);
  });

  it("prefers a pod doubled up on a node over one alone on its node", () => {
    // Same age, same readiness: only the rank tells them apart.
    const pods = [
      pod("alone", { node: "n1", ready: true, age: 600 }),
      pod("twin-a", { node: "n2", ready: true, age: 600 }),
      pod("twin-b", { node: "n2", ready: true, age: 600 }),
    ];
    const d = replicaSetDiff(pods, 2, 500, now);
    expect(d.delete).toHaveLength(1);
    expect(names(d.delete)[0]).toMatch(/^twin-/);
  });
});

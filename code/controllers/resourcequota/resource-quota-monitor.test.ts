import { describe, expect, it } from "vitest";
import type { Pod, PodPhase } from "../../api/core.ts";
import type { KubeObject } from "../../api/meta.ts";
import { quotableResources, requiresReplenishOnUpdate } from "./resource-quota-monitor.ts";

const now = new Date("2026-01-01T00:00:00Z");
const pod = (phase?: PodPhase, meta: Partial<Pod["metadata"]> = {}): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name: "p", namespace: "ns", ...meta },
  spec: { containers: [{ name: "c", image: "x" }] },
  status: phase ? { phase } : {},
});
const pods = { group: "", resource: "pods" };

describe("the monitor's update filter", () => {
  it("signals a pod that stops holding compute, and nothing else a pod does", () => {
    expect(requiresReplenishOnUpdate(pods, pod("Running"), pod("Succeeded"), now)).toBe(true);
    expect(requiresReplenishOnUpdate(pods, pod("Pending"), pod("Failed"), now)).toBe(true);
    expect(requiresReplenishOnUpdate(pods, pod("Pending"), pod("Running"), now)).toBe(false);
    // Already finished: the usage went down at the first transition.
    expect(requiresReplenishOnUpdate(pods, pod("Succeeded"), pod("Succeeded"), now)).toBe(false);
    // A deletion whose grace period ran out (QuotaV1Pod) no longer holds compute.
    const graceOver = pod("Running", {
      deletionTimestamp: "2025-12-31T23:59:00Z",
      deletionGracePeriodSeconds: 30,
    });
    expect(requiresReplenishOnUpdate(pods, pod("Running"), graceOver, now)).toBe(true);
    const graceLeft = pod("Running", {
      deletionTimestamp: now.toISOString(),
      deletionGracePeriodSeconds: 30,
    });
    expect(requiresReplenishOnUpdate(pods, pod("Running"), graceLeft, now)).toBe(false);
  });

  it("signals a service whose quota type changes, a claim whose request changes", () => {
    const svc = (type: string) =>
      ({ apiVersion: "v1", kind: "Service", metadata: { name: "s" }, spec: { type } }) as KubeObject;
    const services = { group: "", resource: "services" };
    expect(requiresReplenishOnUpdate(services, svc("NodePort"), svc("ClusterIP"), now)).toBe(true);
    expect(requiresReplenishOnUpdate(services, svc("ClusterIP"), svc("ExternalName"), now)).toBe(false);
    const pvc = (storage: string) =>
      ({
        apiVersion: "v1",
        kind: "PersistentVolumeClaim",
        metadata: { name: "c" },
        spec: { resources: { requests: { storage } } },
      }) as KubeObject;
    const claims = { group: "", resource: "persistentvolumeclaims" };
    expect(requiresReplenishOnUpdate(claims, pvc("1Gi"), pvc("2Gi"), now)).toBe(true);
    expect(requiresReplenishOnUpdate(claims, pvc("1Gi"), pvc("1Gi"), now)).toBe(false);
    expect(
      requiresReplenishOnUpdate({ group: "apps", resource: "deployments" }, svc("a"), svc("b"), now),
    ).toBe(false);
  });
});

describe("GetQuotableResources", () => {
  it("keeps what can be created, listed, watched and deleted, less the ignored kinds", () => {
    const all = ["create", "delete", "get", "list", "watch"];
    expect(
      quotableResources([
        { group: "", version: "v1", resource: "pods", verbs: all },
        { group: "", version: "v1", resource: "events", verbs: all },
        { group: "", version: "v1", resource: "bindings", verbs: ["create"] },
        {
          group: "authorization.k8s.io",
          version: "v1",
          resource: "localsubjectaccessreviews",
          verbs: ["create"],
        },
        { group: "apps", version: "v1", resource: "deployments", verbs: all },
        { group: "", version: "v1", resource: "readonly", verbs: ["get", "list", "watch"] },
      ]),
    ).toEqual([
      { group: "", version: "v1", resource: "pods" },
      { group: "apps", version: "v1", resource: "deployments" },
    ]);
  });
});

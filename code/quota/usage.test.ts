import { describe, expect, it } from "vitest";
import type { Pod, PodPhase, ResourceQuota } from "../api/core.ts";
import type { KubeObject } from "../api/meta.ts";
import { calculateUsage, matchesScopes, resourcesForQuota } from "./usage.ts";

const pod = (name: string, extra: Partial<Pod["spec"]> = {}, phase?: PodPhase): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name, namespace: "ns" },
  spec: { containers: [{ name: "c", image: "x" }], ...extra },
  status: phase ? { phase } : {},
});
const withCPU = (name: string, cpu: string): Pod =>
  pod(name, { containers: [{ name: "c", image: "x", resources: { requests: { cpu } } }] });
const quota = (hard: Record<string, string>, scopes?: string[]): ResourceQuota => ({
  apiVersion: "v1",
  kind: "ResourceQuota",
  metadata: { name: "q", namespace: "ns" },
  spec: { hard, scopes },
});

describe("calculateUsage (CalculateUsage)", () => {
  const objects: Record<string, KubeObject[]> = {
    "/pods": [withCPU("a", "250m"), withCPU("b", "500m"), pod("done", {}, "Succeeded")],
    "/services": [
      {
        apiVersion: "v1",
        kind: "Service",
        metadata: { name: "s" },
        spec: { type: "NodePort", ports: [{ port: 80 }, { port: 81 }] },
      } as KubeObject,
    ],
  };
  const list = ({ group, resource }: { group: string; resource: string }) => objects[`${group}/${resource}`];

  it("sums what the namespace's objects use, for the names the quota limits only", async () => {
    const used = await calculateUsage(
      quota({ pods: "10", "requests.cpu": "2", "count/pods": "10", "services.nodeports": "5" }),
      list,
    );
    // The Succeeded pod holds no compute: not in pods or cpu, still in count/pods.
    expect(used).toEqual({ pods: "2", "requests.cpu": "750m", "count/pods": "3", "services.nodeports": "2" });
  });

  it("gives 0 for a limited name nothing uses, and skips a resource it cannot list", async () => {
    expect(await calculateUsage(quota({ services: "3", "count/widgets.example.com": "1" }), list)).toEqual({
      services: "1",
    });
    expect(await calculateUsage(quota({ "services.loadbalancers": "3" }), list)).toEqual({
      "services.loadbalancers": "0",
    });
  });

  it("counts only the pods a scoped quota selects", async () => {
    const objs = [
      pod("best-effort"),
      withCPU("burstable", "1"),
      pod("deadline", { activeDeadlineSeconds: 60 }),
    ];
    const l = () => objs;
    expect(await calculateUsage(quota({ pods: "9" }, ["BestEffort"]), l)).toEqual({ pods: "2" });
    expect(await calculateUsage(quota({ pods: "9" }, ["NotBestEffort"]), l)).toEqual({ pods: "1" });
    expect(await calculateUsage(quota({ pods: "9" }, ["Terminating"]), l)).toEqual({ pods: "1" });
    expect(await calculateUsage(quota({ pods: "9" }, ["NotTerminating", "BestEffort"]), l)).toEqual({
      pods: "1",
    });
  });

  it("uses the evaluator it is given (the learner's, in the chapter 3 exercise)", async () => {
    const used = await calculateUsage(quota({ pods: "9" }), () => [pod("a")], {
      usage: () => ({ pods: "7" }),
    });
    expect(used).toEqual({ pods: "7" });
  });
});

describe("scopes and resources", () => {
  it("a scoped quota matches pods only; a scopeSelector (not built) matches nothing", () => {
    const svc = { apiVersion: "v1", kind: "Service", metadata: { name: "s" } } as KubeObject;
    expect(matchesScopes(quota({ services: "1" }), "", "services", svc)).toBe(true);
    expect(matchesScopes(quota({ services: "1" }, ["BestEffort"]), "", "services", svc)).toBe(false);
    const selector = { ...quota({ pods: "1" }), spec: { hard: { pods: "1" }, scopeSelector: {} } };
    expect(matchesScopes(selector, "", "pods", pod("a"))).toBe(false);
  });

  it("names the resources whose objects a quota's hard names count", () => {
    expect(
      resourcesForQuota({
        pods: "1",
        "limits.memory": "1Gi",
        "count/deployments.apps": "2",
        configmaps: "3",
      }),
    ).toEqual([
      { group: "", resource: "pods" },
      { group: "apps", resource: "deployments" },
      { group: "", resource: "configmaps" },
    ]);
  });
});

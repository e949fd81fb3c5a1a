import { describe, expect, it } from "vitest";
import { makeNode, makePod } from "../testing/wrappers.ts";
import { CycleState, NotFoundError } from "./cycle-state.ts";
import { NodeInfo } from "./node-info.ts";
import { DefaultMemoryRequest, DefaultMilliCPURequest, HostPortInfo, PodInfo, podRequests } from "./types.ts";

describe("podRequests", () => {
  it("adds containers, takes the largest init container, and adds sidecars", () => {
    const pod = makePod("p", { requests: [{ cpu: "500m", memory: "1Gi" }, { cpu: "250m" }] });
    pod.spec.initContainers = [
      { name: "init", resources: { requests: { cpu: "2", memory: "100Mi" } } },
      { name: "sidecar", restartPolicy: "Always", resources: { requests: { cpu: "100m", memory: "50Mi" } } },
      { name: "late-init", resources: { requests: { cpu: "1" } } },
    ];
    const r = podRequests(pod);
    // containers 750m + sidecar 100m = 850m; init max: 2000m, then 1000m + 100m sidecar → 2000m.
    expect(r.milliCPU).toBe(2000);
    // memory: 1Gi + 50Mi vs init 100Mi → 1Gi + 50Mi.
    expect(r.memory).toBe(1024 ** 3 + 50 * 1024 ** 2);
  });

  it("counts a missing CPU or memory request as 100m / 200Mi in the non-zero sum, but not an explicit 0", () => {
    const missing = makePod("a");
    expect(podRequests(missing).milliCPU).toBe(0);
    expect(podRequests(missing, true).milliCPU).toBe(DefaultMilliCPURequest);
    expect(podRequests(missing, true).memory).toBe(DefaultMemoryRequest);
    const zero = makePod("b", { requests: [{ cpu: "0", memory: "0" }] });
    expect(podRequests(zero, true).milliCPU).toBe(0);
    expect(podRequests(zero, true).memory).toBe(0);
    expect(DefaultMemoryRequest).toBe(209715200);
  });

  it("rounds up to whole units and keeps extended resources", () => {
    const r = podRequests(
      makePod("p", { requests: [{ cpu: "1.0001m", "example.com/gpu": "2", memory: "1.5" }] }),
    );
    expect(r.milliCPU).toBe(2);
    expect(r.memory).toBe(2);
    expect(r.scalarResources.get("example.com/gpu")).toBe(2);
  });
});

describe("NodeInfo", () => {
  it("sums requests, ports and affinity pods as pods come and go, with a new generation each time", () => {
    const ni = new NodeInfo();
    ni.setNode(makeNode("n1", { allocatable: { cpu: "4", memory: "8Gi", pods: "110" } }));
    expect(ni.allocatable.milliCPU).toBe(4000);
    expect(ni.allocatable.allowedPodNumber).toBe(110);
    const g0 = ni.generation;
    const a = makePod("a", { requests: [{ cpu: "1", memory: "1Gi" }], hostPorts: [8080] });
    const b = makePod("b", { antiAffinityKey: "web", pvc: "data" });
    ni.addPod(a);
    ni.addPod(b);
    expect(ni.generation).toBeGreaterThan(g0);
    expect(ni.requested.milliCPU).toBe(1000);
    expect(ni.nonZeroRequested.milliCPU).toBe(1000 + DefaultMilliCPURequest);
    expect(ni.nonZeroRequested.memory).toBe(1024 ** 3 + DefaultMemoryRequest);
    expect(ni.usedPorts.checkConflict("", "TCP", 8080)).toBe(true);
    expect(ni.podsWithAffinity.map((p) => p.pod.metadata.name)).toEqual(["b"]);
    expect(ni.podsWithRequiredAntiAffinity.map((p) => p.pod.metadata.name)).toEqual(["b"]);
    expect([...ni.pvcRefCounts]).toEqual([["default/data", 1]]);

    const g1 = ni.generation;
    expect(ni.removePod(a)).toBeUndefined();
    expect(ni.generation).toBeGreaterThan(g1);
    expect(ni.requested.milliCPU).toBe(0);
    expect(ni.usedPorts.len()).toBe(0);
    expect(ni.removePod(b)).toBeUndefined();
    expect(ni.podsWithAffinity).toEqual([]);
    expect(ni.pvcRefCounts.size).toBe(0);
    expect(ni.nonZeroRequested.milliCPU).toBe(0);
    expect(ni.removePod(a)?.message).toBe("no corresponding pod a in pods of node n1");
  });

  it("snapshots into an independent copy", () => {
    const ni = new NodeInfo(makePod("a", { hostPorts: [80] }));
    const s = ni.snapshot();
    ni.addPod(makePod("b", { hostPorts: [81], requests: [{ cpu: "1" }] }));
    expect(s.pods).toHaveLength(1);
    expect(s.requested.milliCPU).toBe(0);
    expect(s.usedPorts.len()).toBe(1);
    expect(s.generation).toBeLessThan(ni.generation);
  });
});

describe("HostPortInfo", () => {
  it("treats 0.0.0.0 as every address and TCP as the default protocol", () => {
    const h = new HostPortInfo();
    h.add("10.0.0.1", "TCP", 80);
    expect(h.checkConflict("0.0.0.0", "", 80)).toBe(true);
    expect(h.checkConflict("10.0.0.2", "TCP", 80)).toBe(false);
    expect(h.checkConflict("10.0.0.1", "UDP", 80)).toBe(false);
    h.add("", "UDP", 53);
    expect(h.checkConflict("10.0.0.9", "UDP", 53)).toBe(true);
    h.add("", "TCP", 0);
    expect(h.len()).toBe(2);
  });
});

describe("PodInfo", () => {
  it("parses affinity terms once, defaulting namespaces to the pod's own", () => {
    const pi = new PodInfo(makePod("p", { namespace: "ns1", antiAffinityKey: "db" }));
    expect(pi.requiredAntiAffinityTerms).toHaveLength(1);
    expect([...pi.requiredAntiAffinityTerms[0].namespaces]).toEqual(["ns1"]);
    expect(pi.requiredAntiAffinityTerms[0].topologyKey).toBe("kubernetes.io/hostname");
    expect(pi.parseError).toBeUndefined();
  });
});

describe("CycleState", () => {
  it("reads what was written, fails loudly on a missing key, and clones deeply", () => {
    class Counter {
      constructor(public n: number) {}
      clone() {
        return new Counter(this.n);
      }
    }
    const cs = new CycleState();
    expect(cs.read("PreFilterNodeResourcesFit")).toBeInstanceOf(NotFoundError);
    cs.write("k", new Counter(1));
    cs.skipFilterPlugins.add("NodeAffinity");
    const c = cs.clone();
    (c.read("k") as Counter).n = 5;
    c.skipFilterPlugins.add("X");
    expect((cs.read("k") as Counter).n).toBe(1);
    expect([...cs.skipFilterPlugins]).toEqual(["NodeAffinity"]);
    cs.delete("k");
    expect(cs.read("k")).toBeInstanceOf(NotFoundError);
  });
});

import { describe, expect, it } from "vitest";
import type { Lease } from "../../../api/coordination.ts";
import type { Event, Node, Pod } from "../../../api/core.ts";
import { eventRow, leaseRow, nodeRow, podRow, recentEvents } from "./cluster-model.ts";

const now = new Date("2026-12-07T06:00:00Z");

describe("the view's rows", () => {
  it("a cordoned, tainted node that stopped reporting reads as kubectl get nodes says", () => {
    const node: Node = {
      metadata: { name: "node-2" },
      spec: {
        unschedulable: true,
        taints: [
          { key: "node.kubernetes.io/unreachable", effect: "NoExecute" },
          { key: "dedicated", value: "gpu", effect: "NoSchedule" },
        ],
      },
      status: { conditions: [{ type: "Ready", status: "Unknown" }], nodeInfo: { kubeletVersion: "v1.32.0" } },
    } as Node;
    expect(nodeRow(node, now)).toEqual({
      key: "node-2",
      name: "node-2",
      status: "NotReady,SchedulingDisabled",
      ready: false,
      cordoned: true,
      taints: ["node.kubernetes.io/unreachable:NoExecute", "dedicated=gpu:NoSchedule"],
      kubeletVersion: "v1.32.0",
    });
    const ready = { ...node, spec: {}, status: { conditions: [{ type: "Ready", status: "True" }] } } as Node;
    expect(nodeRow(ready, now)).toMatchObject({ status: "Ready", ready: true, cordoned: false, taints: [] });
  });

  it("a pod: unscheduled, running and ready, then terminating", () => {
    const pod: Pod = {
      metadata: { name: "web", namespace: "default", creationTimestamp: "2026-12-07T05:59:00Z" },
      spec: { containers: [{ name: "web", image: "course/web:1.0" }] },
      status: { phase: "Pending" },
    } as Pod;
    expect(podRow(pod, now)).toMatchObject({
      key: "default/web",
      node: "",
      phase: "Pending",
      status: "Pending",
      readyCount: "0/1",
      ready: false,
      terminating: false,
    });
    const running = {
      ...pod,
      spec: { ...pod.spec, nodeName: "node-1" },
      status: {
        phase: "Running",
        conditions: [{ type: "Ready", status: "True" }],
        containerStatuses: [
          { name: "web", ready: true, restartCount: 0, image: "", imageID: "", state: { running: {} } },
        ],
      },
    } as Pod;
    expect(podRow(running, now)).toMatchObject({
      node: "node-1",
      status: "Running",
      readyCount: "1/1",
      ready: true,
    });
    const deleting = {
      ...running,
      metadata: { ...running.metadata, deletionTimestamp: "2026-12-07T06:00:00Z" },
    };
    expect(podRow(deleting as Pod, now)).toMatchObject({ status: "Terminating", terminating: true });
  });

  it("leader Leases, node heartbeats and the rest", () => {
    const lease = (namespace: string, name: string): Lease => ({
      metadata: { name, namespace },
      spec: { holderIdentity: "h_1", leaseDurationSeconds: 15, renewTime: "2026-12-07T05:59:59.000001Z" },
    });
    expect(leaseRow(lease("kube-system", "kube-scheduler")).role).toBe("leader");
    expect(leaseRow(lease("kube-system", "kube-controller-manager")).role).toBe("leader");
    expect(leaseRow(lease("kube-node-lease", "node-1"))).toEqual({
      key: "kube-node-lease/node-1",
      namespace: "kube-node-lease",
      name: "node-1",
      role: "heartbeat",
      holder: "h_1",
      renewTime: "2026-12-07T05:59:59.000001Z",
      acquireTime: "",
      leaseDurationSeconds: 15,
      leaseTransitions: 0,
    });
    expect(leaseRow(lease("default", "kube-scheduler")).role).toBe("other");
  });

  it("events: kubectl's cells, the most recent first, compared as times", () => {
    const ev = (name: string, lastTimestamp: string): Event => ({
      metadata: { name, namespace: "default" },
      involvedObject: { kind: "Pod", name: "web" },
      reason: "Scheduled",
      message: "Successfully assigned default/web to node-1",
      source: { component: "default-scheduler" },
      type: "Normal",
      lastTimestamp,
      count: 1,
    });
    const row = eventRow(ev("a", "2026-12-07T05:59:58Z"), now);
    expect(row).toMatchObject({ object: "pod/web", type: "Normal", source: "default-scheduler", count: 1 });
    const rows = [
      eventRow(ev("a", "2026-12-07T05:59:58Z"), now),
      eventRow(ev("b", "2026-12-07T05:59:59Z"), now),
      // A MicroTime later in the same second as b: text order would put it before b.
      eventRow({ ...ev("c", ""), lastTimestamp: null, eventTime: "2026-12-07T05:59:59.500000Z" }, now),
    ];
    expect(recentEvents(rows).map((r) => r.key)).toEqual(["default/c", "default/b", "default/a"]);
    expect(recentEvents(rows, 2).map((r) => r.key)).toEqual(["default/c", "default/b"]);
  });
});

// NodePorts: host-port conflicts (0.0.0.0 against every IP, protocols apart), the pod-deleted
// hint, and a whole cycle where only the node with the port free can take the pod.
import { describe, expect, it } from "vitest";
import type { ContainerPort, Pod } from "../../../api/core.ts";
import { CycleState } from "../../framework/cycle-state.ts";
import { AssignedPodDelete, QueueingHint } from "../../framework/events.ts";
import { NodeInfo } from "../../framework/node-info.ts";
import { Code, codeOf } from "../../framework/status.ts";
import { newSim } from "../../testing/sim.ts";
import { makeNode, makePod } from "../../testing/wrappers.ts";
import { ErrReason, NodePorts } from "./node-ports.ts";

const withPorts = (name: string, ports: Partial<ContainerPort>[], nodeName?: string): Pod => {
  const p = makePod(name, nodeName ? { nodeName } : {});
  p.spec.containers[0].ports = ports.map((x) => ({ containerPort: x.hostPort ?? 80, ...x }));
  return p;
};
const nodeWith = (...pods: Pod[]) => {
  const ni = new NodeInfo(...pods);
  ni.setNode(makeNode("n"));
  return ni;
};
const filter = (pod: Pod, ni: NodeInfo) => {
  const pl = new NodePorts();
  const state = new CycleState();
  const [, s] = pl.preFilter(state, pod);
  if (codeOf(s) === Code.Skip) return s;
  return pl.filter(state, pod, ni);
};

describe("NodePorts Filter", () => {
  it("is Skip for a pod without host ports (container ports alone do not count)", () => {
    const p = makePod("p");
    p.spec.containers[0].ports = [{ containerPort: 8080 }];
    expect(codeOf(filter(p, nodeWith()))).toBe(Code.Skip);
  });

  it.each([
    // [existing, wanted, conflict?]
    [{ hostPort: 8080 }, { hostPort: 8080 }, true], // both 0.0.0.0/TCP
    [{ hostPort: 8080 }, { hostPort: 8081 }, false],
    [{ hostPort: 8080, protocol: "UDP" }, { hostPort: 8080 }, false], // protocols apart
    [{ hostPort: 8080, hostIP: "10.0.0.1" }, { hostPort: 8080, hostIP: "10.0.0.2" }, false],
    [{ hostPort: 8080, hostIP: "10.0.0.1" }, { hostPort: 8080 }, true], // 0.0.0.0 overlaps every IP
    [{ hostPort: 8080 }, { hostPort: 8080, hostIP: "10.0.0.2" }, true], // and every IP overlaps 0.0.0.0
  ] as [Partial<ContainerPort>, Partial<ContainerPort>, boolean][])(
    "%o then %o → conflict %s",
    (have, want, conflict) => {
      const s = filter(withPorts("p", [want]), nodeWith(withPorts("old", [have], "n")));
      if (conflict) {
        expect(codeOf(s)).toBe(Code.Unschedulable);
        expect(s?.reasons()).toEqual([ErrReason]);
      } else {
        expect(s).toBeUndefined();
      }
    },
  );
});

describe("isSchedulableAfterPodDeleted", () => {
  const pl = new NodePorts();
  const pod = withPorts("p", [{ hostPort: 8080 }]);

  it("queues only when the deleted pod held a conflicting port on a node", () => {
    expect(pl.isSchedulableAfterPodDeleted(pod, withPorts("d", [{ hostPort: 8080 }], "n"))).toBe(
      QueueingHint.Queue,
    );
    // other port
    expect(pl.isSchedulableAfterPodDeleted(pod, withPorts("d", [{ hostPort: 9090 }], "n"))).toBe(
      QueueingHint.QueueSkip,
    );
    // no host ports at all
    expect(pl.isSchedulableAfterPodDeleted(pod, makePod("d", { nodeName: "n" }))).toBe(
      QueueingHint.QueueSkip,
    );
    // never scheduled nor nominated: it held nothing
    expect(pl.isSchedulableAfterPodDeleted(pod, withPorts("d", [{ hostPort: 8080 }]))).toBe(
      QueueingHint.QueueSkip,
    );
  });

  it("registers pod delete (hinted) and node add", () => {
    const evs = pl.eventsToRegister();
    expect(evs.map((e) => [e.event.resource, e.event.actionType, e.queueingHintFn !== undefined])).toEqual([
      ["Pod", 2, true],
      ["Node", 1, false],
    ]);
  });
});

describe("NodePorts in whole scheduling cycles", () => {
  it("places the pod on the only node with the port free", async () => {
    const sim = newSim({ nodes: [makeNode("a"), makeNode("b"), makeNode("c")] });
    sim.cache.addPod(makePod("web-a", { nodeName: "a", hostPorts: [80] }));
    sim.cache.addPod(makePod("web-c", { nodeName: "c", hostPorts: [80] }));
    sim.add(makePod("web", { hostPorts: [80] }));
    await sim.drain();
    expect(sim.bound.map((b) => b.node)).toEqual(["b"]);
  });

  it("reports the port conflict per node in FailedScheduling", async () => {
    const sim = newSim({ nodes: [makeNode("a"), makeNode("b")] });
    sim.cache.addPod(makePod("web-a", { nodeName: "a", hostPorts: [80] }));
    sim.cache.addPod(makePod("web-b", { nodeName: "b", hostPorts: [80] }));
    sim.add(makePod("web", { hostPorts: [80] }));
    await sim.drain();
    expect(sim.events.map((e) => e.message)).toEqual([
      "0/2 nodes are available: 2 node(s) didn't have free ports for the requested pod ports. preemption: 0/2 nodes are available: 2 No preemption victims found for incoming pod..",
    ]);
  });

  it("requeues the rejected pod only when a pod holding its port is deleted", async () => {
    const sim = newSim({ nodes: [makeNode("a")] });
    const holder = makePod("web-a", { nodeName: "a", hostPorts: [80] });
    const other = makePod("metrics-a", { nodeName: "a", hostPorts: [9090] });
    sim.cache.addPod(holder);
    sim.cache.addPod(other);
    const web = makePod("web", { hostPorts: [80] });
    sim.add(web);
    await sim.drain();
    expect(sim.queue.whereIs(web)).toBe("Unschedulable");
    // 9090 freed: cannot help a pod that wants 80
    sim.queue.moveAllToActiveOrBackoffQueue(AssignedPodDelete, other, undefined);
    expect(sim.queue.whereIs(web)).toBe("Unschedulable");
    sim.queue.moveAllToActiveOrBackoffQueue(AssignedPodDelete, holder, undefined);
    expect(["Active", "Backoff"]).toContain(sim.queue.whereIs(web));
  });
});

import { describe, expect, it } from "vitest";
import type { ContainerStatus, Pod } from "../../api/core.ts";
import { convertToTable } from "./printers.ts";

// Expected cells follow upstream's printPod (pkg/printers/internalversion/printers.go) and the
// cases of its printers_test.go (TestPrintPod, TestPrintPodwide, TestPrintNonTerminatedPod).
const now = new Date("2024-05-01T12:00:00Z");
const ago = (seconds: number) => new Date(now.getTime() - seconds * 1000).toISOString();

function pod(
  name: string,
  p: { spec?: Partial<Pod["spec"]>; status?: Pod["status"]; created?: string } = {},
): Pod {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default", creationTimestamp: p.created },
    spec: { containers: [{ name: "a" }, { name: "b" }], ...p.spec },
    status: p.status,
  };
}
const cs = (s: Partial<ContainerStatus>): ContainerStatus => ({
  name: "c",
  ready: false,
  restartCount: 0,
  image: "",
  imageID: "",
  ...s,
});
const running = { running: { startedAt: ago(100) } };
const cells = (p: Pod) => convertToTable("", "pods", [p], now).rows[0].cells;
const short = (p: Pod) => cells(p).slice(0, 5);

describe("pod table", () => {
  it("has upstream's columns, the wide ones at priority 1", () => {
    const t = convertToTable("", "pods", [], now);
    expect(t.columnDefinitions.map((c) => [c.name, c.type, c.format, c.priority])).toEqual([
      ["Name", "string", "name", 0],
      ["Ready", "string", "", 0],
      ["Status", "string", "", 0],
      ["Restarts", "string", "", 0],
      ["Age", "string", "", 0],
      ["IP", "string", "", 1],
      ["Node", "string", "", 1],
      ["Nominated Node", "string", "", 1],
      ["Readiness Gates", "string", "", 1],
    ]);
    expect(t.kind).toBe("Table");
    expect(t.apiVersion).toBe("meta.k8s.io/v1");
  });

  it("counts ready running containers and restarts", () => {
    const p = pod("test1", {
      status: {
        phase: "podPhase" as never,
        containerStatuses: [cs({ ready: true, restartCount: 3, state: running }), cs({ restartCount: 3 })],
      },
    });
    expect(short(p)).toEqual(["test1", "1/2", "podPhase", "6", "<unknown>"]);
  });

  it("a waiting container's reason overrides the phase; the first container wins", () => {
    const waiting = pod("test2", {
      status: {
        phase: "Running",
        containerStatuses: [
          cs({ ready: true, restartCount: 3, state: running }),
          cs({ restartCount: 3, state: { waiting: { reason: "CrashLoopBackOff" } } }),
        ],
      },
    });
    expect(short(waiting)).toEqual(["test2", "1/2", "CrashLoopBackOff", "6", "<unknown>"]);

    const first = pod("test3", {
      status: {
        phase: "Running",
        containerStatuses: [
          cs({ state: { waiting: { reason: "ImagePullBackOff" } } }),
          cs({ state: { terminated: { exitCode: 1, reason: "Error" } } }),
        ],
      },
    });
    expect(short(first)).toEqual(["test3", "0/2", "ImagePullBackOff", "0", "<unknown>"]);
  });

  it("ready without a running state is not ready; status.reason overrides the phase", () => {
    const notRunning = pod("test4", {
      status: { phase: "Pending", containerStatuses: [cs({ ready: true }), cs({ ready: true })] },
    });
    expect(short(notRunning)[1]).toBe("0/2");
    const evicted = pod("test5", { status: { phase: "Failed", reason: "Evicted", message: "low memory" } });
    expect(short(evicted)[2]).toBe("Evicted");
  });

  it("a terminated container without a reason prints its exit code or signal", () => {
    const exit = pod("x", {
      spec: { containers: [{ name: "a" }] },
      status: { phase: "Running", containerStatuses: [cs({ state: { terminated: { exitCode: 137 } } })] },
    });
    expect(short(exit)[2]).toBe("ExitCode:137");
    const signal = pod("y", {
      spec: { containers: [{ name: "a" }] },
      status: {
        phase: "Running",
        containerStatuses: [cs({ state: { terminated: { exitCode: 0, signal: 9 } } })],
      },
    });
    expect(short(signal)[2]).toBe("Signal:9");
  });

  it("Completed next to a running container reads NotReady, or Running with the Ready condition", () => {
    const statuses = [
      cs({ ready: true, restartCount: 3, state: { terminated: { exitCode: 0, reason: "Completed" } } }),
      cs({ ready: true, restartCount: 3, state: running }),
    ];
    const notReady = pod("test6", { status: { phase: "Running", containerStatuses: statuses } });
    expect(short(notReady)).toEqual(["test6", "1/2", "NotReady", "6", "<unknown>"]);
    const ready = pod("test7", {
      status: {
        phase: "Running",
        containerStatuses: statuses,
        conditions: [{ type: "Ready", status: "True" }],
      },
    });
    expect(short(ready)).toEqual(["test7", "1/2", "Running", "6", "<unknown>"]);
  });

  it("while initializing: Init:i/n, Init:<reason>, with init restarts and when the last one was", () => {
    const restarting = cs({
      restartCount: 3,
      state: running,
      lastState: { terminated: { exitCode: 1, finishedAt: ago(10) } },
    });
    const oneInit = pod("test8", {
      spec: { initContainers: [{ name: "init" }], containers: [{ name: "a" }] },
      status: {
        phase: "Pending",
        initContainerStatuses: [restarting],
        containerStatuses: [cs({ state: { waiting: {} } })],
      },
    });
    expect(short(oneInit)).toEqual(["test8", "0/1", "Init:0/1", "3 (10s ago)", "<unknown>"]);

    const secondInit = pod("test9", {
      spec: { initContainers: [{ name: "i1" }, { name: "i2" }], containers: [{ name: "a" }] },
      status: {
        phase: "Pending",
        initContainerStatuses: [cs({ state: { terminated: { exitCode: 0 } } }), restarting],
        containerStatuses: [cs({ state: { waiting: {} } })],
      },
    });
    expect(short(secondInit)).toEqual(["test9", "0/1", "Init:1/2", "3 (10s ago)", "<unknown>"]);

    const failed = pod("test10", {
      spec: { initContainers: [{ name: "i1" }], containers: [{ name: "a" }] },
      status: { phase: "Pending", initContainerStatuses: [cs({ state: { terminated: { exitCode: 2 } } })] },
    });
    expect(short(failed)[2]).toBe("Init:ExitCode:2");

    const crash = pod("test11", {
      spec: { initContainers: [{ name: "i1" }], containers: [{ name: "a" }] },
      status: {
        phase: "Pending",
        initContainerStatuses: [cs({ state: { waiting: { reason: "CrashLoopBackOff" } } })],
      },
    });
    expect(short(crash)[2]).toBe("Init:CrashLoopBackOff");

    // PodInitializing is the kubelet's placeholder, not a reason worth showing.
    const placeholder = pod("test12", {
      spec: { initContainers: [{ name: "i1" }], containers: [{ name: "a" }] },
      status: {
        phase: "Pending",
        initContainerStatuses: [cs({ state: { waiting: { reason: "PodInitializing" } } })],
      },
    });
    expect(short(placeholder)[2]).toBe("Init:0/1");
  });

  it("after init: only containers' (and sidecars') restarts count, with the latest restart time", () => {
    const p = pod("test13", {
      created: ago(3600 * 26),
      spec: { initContainers: [{ name: "i1" }], containers: [{ name: "a" }] },
      status: {
        phase: "Running",
        initContainerStatuses: [
          cs({
            restartCount: 2,
            state: { terminated: { exitCode: 0 } },
            lastState: { terminated: { exitCode: 1, finishedAt: ago(120) } },
          }),
        ],
        containerStatuses: [
          cs({
            ready: true,
            restartCount: 4,
            state: running,
            lastState: { terminated: { exitCode: 1, finishedAt: ago(60) } },
          }),
        ],
      },
    });
    expect(short(p)).toEqual(["test13", "1/1", "Running", "4 (60s ago)", "26h"]);
  });

  it("a started, ready sidecar (restartable init container) counts as a ready container", () => {
    const p = pod("test14", {
      spec: { initContainers: [{ name: "proxy", restartPolicy: "Always" }], containers: [{ name: "a" }] },
      status: {
        phase: "Running",
        conditions: [{ type: "Initialized", status: "True" }],
        initContainerStatuses: [
          cs({ name: "proxy", ready: true, started: true, restartCount: 1, state: running }),
        ],
        containerStatuses: [cs({ ready: true, state: running })],
      },
    });
    expect(short(p)).toEqual(["test14", "2/2", "Running", "1", "<unknown>"]);
  });

  it("deletion shows Terminating, Unknown for a pod on a lost node, nothing for a finished pod", () => {
    const terminating = pod("t1", { status: { phase: "Running" } });
    terminating.metadata.deletionTimestamp = now.toISOString();
    expect(short(terminating)[2]).toBe("Terminating");
    const lost = pod("t2", { status: { phase: "Running", reason: "NodeLost" } });
    lost.metadata.deletionTimestamp = now.toISOString();
    expect(short(lost)[2]).toBe("Unknown");
    const done = pod("t3", { status: { phase: "Succeeded" } });
    done.metadata.deletionTimestamp = now.toISOString();
    expect(short(done)[2]).toBe("Succeeded");
  });

  it("a gated pod reads SchedulingGated", () => {
    const p = pod("g", {
      status: {
        phase: "Pending",
        conditions: [{ type: "PodScheduled", status: "False", reason: "SchedulingGated" }],
      },
    });
    expect(short(p)[2]).toBe("SchedulingGated");
  });

  it("finished pods carry the Completed row condition", () => {
    const t = convertToTable(
      "",
      "pods",
      [pod("s", { status: { phase: "Succeeded" } }), pod("f", { status: { phase: "Failed" } }), pod("r")],
      now,
    );
    expect(t.rows[0].conditions).toEqual([
      {
        type: "Completed",
        status: "True",
        reason: "Succeeded",
        message: "The pod has completed successfully.",
      },
    ]);
    expect(t.rows[1].conditions?.[0].reason).toBe("Failed");
    expect(t.rows[2].conditions).toBeUndefined();
  });

  it("wide cells: IP, node, nominated node, readiness gates", () => {
    const p = pod("w", {
      created: ago(5),
      spec: { nodeName: "node-1", readinessGates: [{ conditionType: "a" }, { conditionType: "b" }] } as never,
      status: {
        phase: "Running",
        podIP: "10.1.2.3",
        podIPs: [{ ip: "10.1.2.3" }, { ip: "fd00::3" }],
        nominatedNodeName: "node-2",
        conditions: [
          { type: "a", status: "True" },
          { type: "b", status: "False" },
        ],
      },
    });
    expect(cells(p)).toEqual(["w", "0/2", "Running", "0", "5s", "10.1.2.3", "node-1", "node-2", "1/2"]);
    expect(cells(pod("none")).slice(5)).toEqual(["<none>", "<none>", "<none>", "<none>"]);
  });
});

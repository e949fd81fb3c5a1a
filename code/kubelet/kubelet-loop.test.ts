/**
 * syncLoopIteration without an API server, on a fake clock: what each kind of input makes the
 * kubelet do — config changes, PLEG events, the resync tick, probe results, housekeeping.
 */
import { describe, expect, it } from "vitest";
import type { Pod } from "../api/core.ts";
import { FakeClock } from "../client/util/clock.ts";
import { FakeRuntime } from "./container/testing/fake-runtime.ts";
import { testGenerateAPIPodStatus } from "./container/testing/generate-status.ts";
import { Kubelet } from "./kubelet.ts";

const pod = (uid: string, spec: Partial<Pod["spec"]> = {}): Pod => ({
  metadata: { name: uid, namespace: "default", uid, annotations: { "kubernetes.io/config.source": "api" } },
  spec: { nodeName: "n1", containers: [{ name: "c", image: "img" }], ...spec },
});

function setup() {
  const clock = new FakeClock(Date.parse("2026-04-01T00:00:00Z"));
  const runtime = new FakeRuntime(clock);
  const kubelet = new Kubelet({
    nodeName: "n1",
    runtime,
    clock,
    rootDir: "/nonexistent",
    generateAPIPodStatus: testGenerateAPIPodStatus,
    random: () => 0,
  });
  /** A PLEG relist a moment later, then the workers and the loop's handlers settle. */
  const relist = async () => {
    clock.step(1);
    await kubelet.pleg.relist();
    for (let i = 0; i < 10; i++) await new Promise((r) => setImmediate(r));
  };
  const syncs = (name: string) => runtime.calls.filter((c) => c === `syncPod default/${name}`).length;
  return { clock, runtime, kubelet, relist, syncs };
}

describe("syncLoopIteration", () => {
  it("ADD starts a worker; a PLEG ContainerDied syncs the pod again; ContainerRemoved does not", async () => {
    const { kubelet, relist, syncs, runtime } = setup();
    const p = pod("a");
    await kubelet.syncLoopIteration({ kind: "config", update: { op: "ADD", pods: [p], source: "api" } });
    await relist();
    expect(syncs("a")).toBe(1);
    // The first sync reported the runtime as it was before it: nothing yet.
    expect(kubelet.statusManager.getPodStatus("a")?.phase).toBe("Pending");
    expect(kubelet.statusManager.getPodStatus("a")?.containerStatuses?.[0].state).toEqual({
      waiting: { reason: "ContainerCreating" },
    });

    await kubelet.syncLoopIteration({
      kind: "pleg",
      event: { id: "a", type: "ContainerStarted", data: "fake://1" },
    });
    await relist();
    expect(syncs("a")).toBe(2);
    expect(kubelet.statusManager.getPodStatus("a")?.phase).toBe("Running");
    await kubelet.syncLoopIteration({
      kind: "pleg",
      event: { id: "a", type: "ContainerDied", data: "fake://1" },
    });
    await relist();
    expect(syncs("a")).toBe(3);
    await kubelet.syncLoopIteration({
      kind: "pleg",
      event: { id: "a", type: "ContainerRemoved", data: "fake://1" },
    });
    await relist();
    expect(syncs("a")).toBe(3);
    expect(runtime.runningContainers("a")).toEqual(["c"]);
  });

  it("the sync tick resyncs only the pods due in the work queue (resync interval 1 min)", async () => {
    const { kubelet, relist, syncs, clock } = setup();
    await kubelet.syncLoopIteration({
      kind: "config",
      update: { op: "ADD", pods: [pod("a")], source: "api" },
    });
    await relist();
    await kubelet.syncLoopIteration({ kind: "sync" });
    await relist();
    expect(syncs("a")).toBe(1); // not due yet
    clock.step(60_000);
    await kubelet.syncLoopIteration({ kind: "sync" });
    await relist();
    expect(syncs("a")).toBe(2);
  });

  it("a liveness Failure resyncs the pod; a readiness result updates the status manager", async () => {
    const { kubelet, relist, syncs } = setup();
    const p = pod("a", {
      containers: [{ name: "c", image: "img", readinessProbe: { exec: { command: ["true"] } } }],
    });
    await kubelet.syncLoopIteration({ kind: "config", update: { op: "ADD", pods: [p], source: "api" } });
    await relist();
    await kubelet.syncLoopIteration({
      kind: "pleg",
      event: { id: "a", type: "ContainerStarted", data: "fake://1" },
    });
    await relist();
    const cs = () => kubelet.statusManager.getPodStatus("a")?.containerStatuses?.[0];
    expect(cs()).toMatchObject({ ready: false, started: true });
    const id = cs()!.containerID!;

    await kubelet.syncLoopIteration({
      kind: "probe",
      probe: "readiness",
      update: { podUID: "a", containerID: id, result: "Success" },
    });
    expect(cs()?.ready).toBe(true);
    expect(kubelet.statusManager.getPodStatus("a")?.conditions?.find((c) => c.type === "Ready")?.status).toBe(
      "True",
    );

    await relist(); // a readiness change also syncs the pod (handleProbeSync)
    const before = syncs("a");
    await kubelet.syncLoopIteration({
      kind: "probe",
      probe: "liveness",
      update: { podUID: "a", containerID: id, result: "Success" },
    });
    await relist();
    expect(syncs("a")).toBe(before); // a passing liveness probe is no news
    await kubelet.syncLoopIteration({
      kind: "probe",
      probe: "liveness",
      update: { podUID: "a", containerID: id, result: "Failure" },
    });
    await relist();
    expect(syncs("a")).toBe(before + 1);
    await kubelet.probeManager.stop();
  });

  it("REMOVE kills the pod with its grace period; housekeeping then forgets the finished worker", async () => {
    const { kubelet, relist, runtime } = setup();
    const p = pod("a", { terminationGracePeriodSeconds: 7 });
    await kubelet.syncLoopIteration({ kind: "config", update: { op: "ADD", pods: [p], source: "api" } });
    await relist();
    await kubelet.syncLoopIteration({ kind: "config", update: { op: "REMOVE", pods: [p], source: "api" } });
    await relist();
    await relist();
    expect(runtime.killed.get("a")).toBe(7);
    expect(kubelet.podWorkers.podSyncStatuses.get("a")?.finished).toBe(true);
    await kubelet.syncLoopIteration({ kind: "housekeeping" });
    expect(kubelet.podWorkers.podSyncStatuses.has("a")).toBe(false);
    expect(runtime.hasPod("a")).toBe(false); // deleted and terminated: its content removed
    expect(runtime.calls.filter((c) => c.endsWith("default/a")).at(-1)).toBe("removeTerminatedPod default/a");
  });

  it("a pod whose containers finished (restartPolicy Never) goes terminating → terminated on its own", async () => {
    const { kubelet, relist, runtime } = setup();
    const p = pod("job", { restartPolicy: "Never" });
    await kubelet.syncLoopIteration({ kind: "config", update: { op: "ADD", pods: [p], source: "api" } });
    await relist();
    runtime.exitContainer("job", "c", 0);
    await kubelet.syncLoopIteration({
      kind: "pleg",
      event: { id: "job", type: "ContainerDied", data: "fake://1" },
    });
    await relist();
    await relist();
    await relist();
    expect(runtime.calls.filter((c) => c.endsWith("default/job"))).toEqual([
      "syncPod default/job",
      "killPod default/job",
    ]);
    const status = kubelet.statusManager.getPodStatus("job");
    expect(status?.phase).toBe("Succeeded");
    expect(status?.containerStatuses?.[0].state?.terminated).toMatchObject({
      exitCode: 0,
      reason: "Completed",
    });
    expect(kubelet.podWorkers.podSyncStatuses.get("job")?.finished).toBe(true);
  });

  // Upstream: SyncTerminatedPod removes nothing; the container GC removes a pod's content only
  // once ShouldPodContentBeRemoved (deleted and terminated) — pkg/kubelet/pod_workers.go.
  it("a finished pod keeps its exited container (for kubectl logs) until it is deleted", async () => {
    const { kubelet, relist, runtime } = setup();
    const p = pod("job", { restartPolicy: "Never" });
    await kubelet.syncLoopIteration({ kind: "config", update: { op: "ADD", pods: [p], source: "api" } });
    await relist();
    runtime.exitContainer("job", "c", 0);
    await kubelet.syncLoopIteration({
      kind: "pleg",
      event: { id: "job", type: "ContainerDied", data: "fake://1" },
    });
    await relist();
    await relist();
    await relist();
    expect(kubelet.podWorkers.podSyncStatuses.get("job")?.finished).toBe(true);
    await kubelet.syncLoopIteration({ kind: "housekeeping" });
    expect(runtime.hasPod("job")).toBe(true);
    expect(kubelet.podWorkers.shouldPodContentBeRemoved("job")).toBe(false);

    await kubelet.syncLoopIteration({ kind: "config", update: { op: "REMOVE", pods: [p], source: "api" } });
    await relist();
    await kubelet.syncLoopIteration({ kind: "housekeeping" });
    expect(runtime.hasPod("job")).toBe(false);
    expect(runtime.calls.filter((c) => c.endsWith("default/job")).at(-1)).toBe(
      "removeTerminatedPod default/job",
    );
  });

  it("run() and stop() leave no timer behind", async () => {
    const { kubelet, clock } = setup();
    kubelet.run();
    clock.step(5_000);
    await new Promise((r) => setImmediate(r));
    await kubelet.stop();
    expect(clock.hasWaiters()).toBe(false);
  });
});

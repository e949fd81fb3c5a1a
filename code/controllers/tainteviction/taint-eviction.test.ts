/**
 * The taint-eviction controller over real informers and a real API server, its timers on a
 * FakeClock: a NoExecute taint a pod does not tolerate deletes it at once; one it tolerates for
 * 60 s deletes it when the clock reaches 60 s (not at 59 s); a taint removed in time cancels the
 * deletion with upstream's event; a later taint change does not restart a running timer.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Node, Pod, Taint, Toleration } from "../../api/core.ts";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { newSharedInformerFactory } from "../../client/informers/factory.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { FakeClock } from "../../client/util/clock.ts";
import { waitFor } from "../../testing/wait-for.ts";
import type { EventRecorder } from "../pod-control.ts";
import { newTaintEvictionController, type TaintEvictionController } from "./taint-eviction.ts";

describe("the taint-eviction controller on a FakeClock", () => {
  let server: APIServer;
  let client: Clientset;
  let controller: TaintEvictionController;
  const abort = new AbortController();
  let running: Promise<void>;
  const clock = new FakeClock(Date.parse("2026-01-01T00:00:00Z"));
  const events: string[] = [];
  const recorder: EventRecorder = (_o, _t, reason, message) => events.push(`${reason}: ${message}`);
  const ns = "default";
  const maintenance: Taint = { key: "example.com/maintenance", effect: "NoExecute" };
  const tolerate = (seconds: number): Toleration => ({
    key: maintenance.key,
    operator: "Exists",
    effect: "NoExecute",
    tolerationSeconds: seconds,
  });

  const createPod = (name: string, node: string, tolerations: Toleration[]) =>
    client.coreV1.pods(ns).create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name },
      spec: { nodeName: node, containers: [{ name: "c", image: "course/sleeper" }], tolerations },
    } as Pod);
  const setTaints = async (node: string, taints: Taint[]) => {
    const n = await client.coreV1.nodes().get(node);
    await client.coreV1.nodes().update({ ...n, spec: { ...n.spec, taints } });
  };
  const marked = async (name: string) =>
    !!(await client.coreV1.pods(ns).get(name)).metadata.deletionTimestamp;
  /** The controller works from watch events: wait until it has scheduled the pod's deletion. */
  const timerOf = (name: string) =>
    waitFor(
      `timer of ${name}`,
      async () => controller.taintEvictionQueue.getWorkerUnsafe(`${ns}/${name}`) ?? undefined,
    );
  const noTimerOf = (name: string) =>
    waitFor(
      `no timer of ${name}`,
      async () => !controller.taintEvictionQueue.getWorkerUnsafe(`${ns}/${name}`),
    );

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url, qps: -1 });
    for (const name of ["n1", "n2"])
      await client.coreV1
        .nodes()
        .create({ apiVersion: "v1", kind: "Node", metadata: { name }, spec: {} } as Node);
    const factory = newSharedInformerFactory(client, 0);
    controller = newTaintEvictionController({ informerFactory: factory, log: () => {} }, client, {
      clock,
      recorder,
    });
    factory.start(abort.signal);
    // Synced before run: its own cache wait polls on the clock, which only this test moves.
    await factory.waitForCacheSync(abort.signal);
    running = controller.run(abort.signal);
  });

  afterAll(async () => {
    abort.abort();
    await running;
    client?.closeIdleConnections();
    await server?.close();
  });

  it("deletes an intolerant pod at once and a tolerating one when its tolerationSeconds run out", async () => {
    await createPod("intolerant", "n1", []);
    await createPod("patient", "n1", [tolerate(60)]);
    await setTaints("n1", [maintenance]);
    await waitFor("intolerant marked for deletion", () => marked("intolerant"));
    const intolerant = await client.coreV1.pods(ns).get("intolerant");
    expect(intolerant.status?.conditions?.find((c) => c.type === "DisruptionTarget")).toMatchObject({
      status: "True",
      reason: "DeletionByTaintManager",
      message: "Taint manager: deleting due to NoExecute taint",
    });
    expect(events).toContain("TaintManagerEviction: Marking for deletion Pod default/intolerant");

    const timer = await timerOf("patient");
    expect(timer.fireAt - timer.createdAt).toBe(60_000);
    clock.step(59_000);
    expect(await marked("patient")).toBe(false);
    // A change of the node's taints does not restart the running timer.
    await setTaints("n1", [maintenance, { key: "example.com/other", effect: "NoSchedule" }]);
    await setTaints("n1", [{ ...maintenance, value: "again" }]);
    await waitFor("the node update seen", async () =>
      controller.taintedNodes.get("n1")?.[0]?.value === "again" ? true : undefined,
    );
    expect(controller.taintEvictionQueue.getWorkerUnsafe(`${ns}/patient`)?.fireAt).toBe(timer.fireAt);
    clock.step(1_000);
    await waitFor("patient marked for deletion", () => marked("patient"));
    expect(events).toContain("TaintManagerEviction: Marking for deletion Pod default/patient");
  });

  it("cancels the deletion when the taint is removed in time", async () => {
    await createPod("lucky", "n2", [tolerate(60)]);
    await setTaints("n2", [maintenance]);
    await timerOf("lucky");
    clock.step(30_000);
    await setTaints("n2", []);
    await noTimerOf("lucky");
    expect(events).toContain("TaintManagerEviction: Cancelling deletion of Pod default/lucky");
    clock.step(60_000);
    expect(await marked("lucky")).toBe(false);
  });
});

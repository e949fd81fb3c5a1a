/**
 * newScheduler in process against a real API server over HTTP: the informers' non-terminal
 * selector, the binding POST, the pods/status patch of a failure (and none when nothing would
 * change), and a clean stop.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pod } from "../api/core.ts";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import { TokenBucket } from "../client/util/flowcontrol/token-bucket.ts";
import { type KubeScheduler, newScheduler, updatePodViaAPI } from "./scheduler.ts";
import { makeNode, makePod } from "./testing/wrappers.ts";

async function eventually<T>(
  check: () => Promise<T | undefined>,
  what: string,
  timeoutMs = 15_000,
): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A pod as a client creates it: no uid, no status. */
function newPod(name: string, cpu: string): Pod {
  const p = makePod(name, { requests: [{ cpu }] });
  const { uid: _uid, ...metadata } = p.metadata;
  return { ...p, metadata };
}

describe("newScheduler against a real API server", () => {
  let server: APIServer;
  let client: Clientset;
  let s: KubeScheduler | undefined;
  const errors: string[] = [];

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url });
  });
  afterAll(async () => {
    await s?.stop();
    client?.closeIdleConnections();
    await server?.close();
  });

  it("binds through pods/binding, patches PodScheduled on failure, ignores finished pods", async () => {
    const node = makeNode("n1", { allocatable: { cpu: "2", memory: "4Gi", pods: "10" } });
    const { uid: _u, ...nodeMeta } = node.metadata;
    await client.coreV1.nodes().create({ ...node, metadata: nodeMeta });
    // A finished pod asking for everything: listed by the informer, it would be scheduled (or
    // counted); the selector keeps it out entirely.
    const done = await client.coreV1.pods("default").create(newPod("done", "100"));
    await client.coreV1.pods("default").updateStatus({ ...done, status: { phase: "Succeeded" } });

    s = newScheduler({ client, onError: (e) => errors.push(e.message) });
    expect(await s.start()).toBe(true);
    expect(s.ready()).toBe(true);
    expect(s.queue.pendingPods().pods).toEqual([]);

    await client.coreV1.pods("default").create(newPod("fits", "1"));
    await client.coreV1.pods("default").create(newPod("too-big", "4"));
    const bound = await eventually(async () => {
      const p = await client.coreV1.pods("default").get("fits");
      return p.spec.nodeName ? p : undefined;
    }, "fits to be bound");
    expect(bound.spec.nodeName).toBe("n1");
    // The API server's binding sets PodScheduled=True; the cache has the pod confirmed.
    expect(bound.status?.conditions?.find((c) => c.type === "PodScheduled")?.status).toBe("True");
    await eventually(
      async () => (s?.cache.getPod(bound) && !s.cache.isAssumedPod(bound) ? true : undefined),
      "confirmed",
    );

    const failed = await eventually(async () => {
      const p = await client.coreV1.pods("default").get("too-big");
      const c = p.status?.conditions?.find((x) => x.type === "PodScheduled");
      return c?.reason === "Unschedulable" ? p : undefined;
    }, "too-big's PodScheduled=False");
    const cond = failed.status?.conditions?.find((c) => c.type === "PodScheduled");
    expect(cond).toMatchObject({
      status: "False",
      reason: "Unschedulable",
      message:
        "0/1 nodes are available: 1 Insufficient cpu. preemption: 0/1 nodes are available: 1 Preemption is not helpful for scheduling..",
    });
    expect(cond?.lastTransitionTime).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\dZ$/);
    expect(s.queue.whereIs(failed)).toBe("Unschedulable");
    expect(errors).toEqual([]);
  });

  it("updatePod sends nothing when the condition is already there, and sets a nomination", async () => {
    const pod = await client.coreV1.pods("default").get("too-big");
    const rv = pod.metadata.resourceVersion;
    const cond = pod.status?.conditions?.find((c) => c.type === "PodScheduled");
    const update = updatePodViaAPI(client);
    const same = {
      type: "PodScheduled" as const,
      status: "False" as const,
      reason: "Unschedulable" as const,
      message: cond?.message ?? "",
    };
    await update(pod, same, undefined);
    expect((await client.coreV1.pods("default").get("too-big")).metadata.resourceVersion).toBe(rv);
    await update(pod, same, { nominatedNodeName: "n1", nominatingMode: 1 });
    const after = await client.coreV1.pods("default").get("too-big");
    expect(after.status?.nominatedNodeName).toBe("n1");
    // The condition kept its transition time: its status did not change.
    expect(after.status?.conditions?.find((c) => c.type === "PodScheduled")?.lastTransitionTime).toBe(
      cond?.lastTransitionTime,
    );
  });

  it("stops cleanly: the loop ends, the informers stop", async () => {
    await s?.stop();
    await s?.loop();
    expect(s?.ready()).toBe(false);
    s = undefined;
  });

  it("writes its Events through eventClient when it has one (kube-scheduler's own clientset for events)", async () => {
    // Each request of a clientset waits on its own rate limiter first: counting each limiter's
    // accepts tells which clientset the Scheduled event went through.
    const asked = { client: 0, events: 0 };
    const counted = (who: keyof typeof asked) =>
      new (class extends TokenBucket {
        override async accept(signal?: AbortSignal) {
          asked[who]++;
          return super.accept(signal);
        }
      })(1000, 1000);
    const main = newForConfig({ host: server.url, rateLimiter: counted("client") });
    const events = newForConfig({ host: server.url, rateLimiter: counted("events") });
    const one = newScheduler({ client: main, eventClient: events, onError: (e) => errors.push(e.message) });
    try {
      expect(await one.start()).toBe(true);
      await client.coreV1.pods("default").create(newPod("evented", "1"));
      const scheduled = await eventually(async () => {
        const list = await client.coreV1.events("default").list({});
        return list.items.find((e) => e.involvedObject?.name === "evented" && e.reason === "Scheduled");
      }, "the Scheduled event of evented");
      expect(scheduled.message).toMatch(/^Successfully assigned default\/evented to n1$/);
      expect(asked.events, JSON.stringify(asked)).toBeGreaterThan(0);
      // The binding and the informers' lists and watches: the scheduler's own clientset.
      expect(asked.client, JSON.stringify(asked)).toBeGreaterThan(0);
    } finally {
      await one.stop();
      main.closeIdleConnections();
      events.closeIdleConnections();
    }
  });
});

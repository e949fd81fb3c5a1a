/**
 * newScheduler honours PodDisruptionBudgets, end to end against a real API server: the PDB
 * informer feeds DefaultPreemption, and pickOneNodeForPreemption's first rule (fewest PDB
 * violations) beats its second (lowest highest-priority victim).
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pod } from "../api/core.ts";
import type { PodDisruptionBudget } from "../api/policy.ts";
import { type APIServer, startAPIServer } from "../apiserver/server.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import { type KubeScheduler, newScheduler, podDisruptionBudgets } from "./scheduler.ts";
import { makeNode, makePod, type PodOptions } from "./testing/wrappers.ts";

async function eventually<T>(check: () => Promise<T | undefined>, what: string): Promise<T> {
  const deadline = Date.now() + 15_000;
  for (;;) {
    const v = await check().catch(() => undefined);
    if (v !== undefined) return v;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 50));
  }
}

/** A pod as a client creates it: no uid, no status. */
function newPod(name: string, o: PodOptions): Pod {
  const p = makePod(name, o);
  const { uid: _uid, ...metadata } = p.metadata;
  return { ...p, metadata };
}

describe("newScheduler with PodDisruptionBudgets", () => {
  let server: APIServer;
  let client: Clientset;
  let s: KubeScheduler | undefined;

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
    client = newForConfig({ host: server.url });
  });
  afterAll(async () => {
    await s?.stop();
    client?.closeIdleConnections();
    await server?.close();
  });

  it("evicts the victim no budget protects, though the protected one has the lower priority", async () => {
    for (const name of ["n1", "n2"]) {
      const node = makeNode(name, { allocatable: { cpu: "1", memory: "4Gi", pods: "10" } });
      const { uid: _u, ...metadata } = node.metadata;
      await client.coreV1.nodes().create({ ...node, metadata });
    }
    const pods = client.coreV1.pods("default");
    // Each node is full. Priority alone (rule 2: the lowest highest-priority victim) would pick
    // n1, whose victim has priority 0; the budget makes that a violation (rule 1 comes first).
    await pods.create(
      newPod("guarded", {
        nodeName: "n1",
        priority: 0,
        requests: [{ cpu: "1" }],
        labels: { app: "guarded" },
      }),
    );
    await pods.create(
      newPod("free", { nodeName: "n2", priority: 5, requests: [{ cpu: "1" }], labels: { app: "free" } }),
    );
    // Created with status zeros: disruptionsAllowed 0 (no disruption controller runs here).
    const pdb = await client.resource<PodDisruptionBudget>(podDisruptionBudgets, "default").create({
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name: "guard" },
      spec: { minAvailable: 1, selector: { matchLabels: { app: "guarded" } } },
    });
    expect(pdb.status?.disruptionsAllowed).toBe(0);

    s = newScheduler({ client });
    expect(await s.start()).toBe(true);
    await pods.create(newPod("preemptor", { priority: 100, requests: [{ cpu: "1" }] }));

    const nominated = await eventually(async () => {
      const p = await pods.get("preemptor");
      return p.status?.nominatedNodeName || undefined;
    }, "the preemptor's nomination");
    expect(nominated).toBe("n2");
    const free = await pods.get("free").catch(() => undefined);
    // Gracefully deleted (no kubelet finishes it) or gone; either way it is the one evicted.
    expect(free === undefined || free.metadata.deletionTimestamp !== undefined).toBe(true);
    const guarded = await pods.get("guarded");
    expect(guarded.metadata.deletionTimestamp).toBeUndefined();
  });
});

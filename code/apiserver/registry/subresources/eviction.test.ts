import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type APIServer, startAPIServer } from "../../server.ts";

// Pods here have no kubelet: a pod bound to a node is deleted gracefully (it stays, with a
// deletionTimestamp); an unbound one at once. Statuses are written as the kubelet and the
// disruption controller would, through /status.
describe("POST pods/<name>/eviction (EvictionREST.Create)", () => {
  let server: APIServer;
  const call = async (method: string, path: string, body?: unknown, type = "application/json") => {
    const res = await fetch(`${server.url}${path}`, {
      method,
      headers: { "content-type": type },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    return { status: res.status, retryAfter: res.headers.get("retry-after"), body: await res.json() };
  };
  const ns = "/api/v1/namespaces/default";
  const evict = (name: string, extra: Record<string, unknown> = {}) =>
    call("POST", `${ns}/pods/${name}/eviction`, {
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name },
      ...extra,
    });
  const pod = async (name: string, labels: Record<string, string>, phase: string, ready: boolean) => {
    const created = await call("POST", `${ns}/pods`, {
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name, labels },
      spec: { nodeName: "n1", containers: [{ name: "c", image: "nginx" }] },
    });
    expect(created.status).toBe(201);
    const status = { phase, conditions: [{ type: "Ready", status: ready ? "True" : "False" }] };
    const res = await call("PATCH", `${ns}/pods/${name}/status`, { status }, "application/merge-patch+json");
    expect(res.status).toBe(200);
  };
  const pdbPath = "/apis/policy/v1/namespaces/default/poddisruptionbudgets";
  const pdb = async (name: string, app: string, status: Record<string, unknown>) => {
    const created = await call("POST", pdbPath, {
      apiVersion: "policy/v1",
      kind: "PodDisruptionBudget",
      metadata: { name },
      spec: { minAvailable: 1, selector: { matchLabels: { app } } },
    });
    expect(created.status).toBe(201);
    const s = { observedGeneration: created.body.metadata.generation, expectedPods: 2, ...status };
    const res = await call(
      "PATCH",
      `${pdbPath}/${name}/status`,
      { status: s },
      "application/merge-patch+json",
    );
    expect(res.status).toBe(200);
  };
  const deleting = async (name: string) =>
    (await call("GET", `${ns}/pods/${name}`)).body.metadata.deletionTimestamp;

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0 });
  });
  afterAll(async () => {
    await server?.close();
  });

  it("is in discovery as a policy/v1 Eviction, which is how kubectl drain chooses to evict", async () => {
    const { body } = await call("GET", "/api/v1");
    const sub = body.resources.find((r: { name: string }) => r.name === "pods/eviction");
    expect(sub).toMatchObject({ kind: "Eviction", group: "policy", version: "v1", verbs: ["create"] });
  });

  it("takes one disruption from the budget, records the pod in disruptedPods, and deletes it gracefully", async () => {
    await pod("a-1", { app: "a" }, "Running", true);
    await pod("a-2", { app: "a" }, "Running", true);
    await pdb("a", "a", { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 });

    const first = await evict("a-1");
    expect(first.status).toBe(201);
    expect(first.body).toMatchObject({ kind: "Status", status: "Success" });
    expect(await deleting("a-1")).toBeTruthy();
    // Marked before its delete, so its owner can tell an eviction from a failure.
    const evicted = (await call("GET", `${ns}/pods/a-1`)).body;
    expect(evicted.status.conditions).toContainEqual(
      expect.objectContaining({
        type: "DisruptionTarget",
        status: "True",
        reason: "EvictionByEvictionAPI",
        message: "Eviction API: evicting",
      }),
    );
    const after = (await call("GET", `${pdbPath}/a`)).body.status;
    expect(after.disruptionsAllowed).toBe(0);
    expect(Object.keys(after.disruptedPods)).toEqual(["a-1"]);
    expect(after.conditions).toEqual([
      expect.objectContaining({ type: "DisruptionAllowed", status: "False", reason: "InsufficientPods" }),
    ]);

    // The budget is spent: the second is refused with upstream's 429, and the pod stays.
    const second = await evict("a-2");
    expect(second.status).toBe(429);
    expect(second.retryAfter).toBeNull(); // no retry-after: kubectl drain tries again itself, every 5 s
    expect(second.body).toMatchObject({
      reason: "TooManyRequests",
      message: "Cannot evict pod as it would violate the pod's disruption budget.",
      details: {
        causes: [
          {
            reason: "DisruptionBudget",
            message: "The disruption budget a needs 1 healthy pods and has 2 currently",
          },
        ],
      },
    });
    expect(await deleting("a-2")).toBeUndefined();
  });

  it("refuses while the budget's spec is newer than its status (not yet processed), retry after 10 s", async () => {
    await pod("b-1", { app: "b" }, "Running", true);
    await pdb("b", "b", {
      disruptionsAllowed: 1,
      currentHealthy: 1,
      desiredHealthy: 0,
      observedGeneration: 0,
    });
    const res = await evict("b-1");
    expect(res.status).toBe(429);
    // The header too (responsewriters.ErrorNegotiated): client-go waits 10 s and retries.
    expect(res.retryAfter).toBe("10");
    expect(res.body.details).toMatchObject({
      retryAfterSeconds: 10,
      causes: [
        {
          reason: "DisruptionBudget",
          message: "The disruption budget b is still being processed by the server.",
        },
      ],
    });
  });

  it("deletes a Pending pod, and a pod no budget covers, without asking", async () => {
    await pod("c-1", { app: "c" }, "Pending", false);
    await pdb("c", "c", { disruptionsAllowed: 0, currentHealthy: 0, desiredHealthy: 1 });
    expect((await evict("c-1")).status).toBe(201);
    expect(await deleting("c-1")).toBeTruthy();
    await pod("free", { app: "none" }, "Running", true);
    expect((await evict("free")).status).toBe(201);
    expect(await deleting("free")).toBeTruthy();
  });

  it("evicts a not-Ready pod without decrementing when the budget is already met", async () => {
    await pod("d-1", { app: "d" }, "Running", true);
    await pod("d-2", { app: "d" }, "Running", false);
    await pdb("d", "d", { disruptionsAllowed: 0, currentHealthy: 1, desiredHealthy: 1 });
    expect((await evict("d-2")).status).toBe(201);
    expect(await deleting("d-2")).toBeTruthy();
    expect((await call("GET", `${pdbPath}/d`)).body.status.disruptionsAllowed).toBe(0);
    expect((await evict("d-1")).status).toBe(429);
  });

  it("dry run: answers as the eviction would, and changes nothing", async () => {
    await pod("f-1", { app: "f" }, "Running", true);
    await pdb("f", "f", { disruptionsAllowed: 1, currentHealthy: 2, desiredHealthy: 1 });
    const res = await call("POST", `${ns}/pods/f-1/eviction?dryRun=All`, {
      apiVersion: "policy/v1",
      kind: "Eviction",
      metadata: { name: "f-1" },
    });
    expect(res.status).toBe(201);
    expect(await deleting("f-1")).toBeUndefined();
    const pdbNow = (await call("GET", `${pdbPath}/f`)).body.status;
    expect(pdbNow.disruptionsAllowed).toBe(1);
    expect(pdbNow.disruptedPods).toBeUndefined();
    const podNow = (await call("GET", `${ns}/pods/f-1`)).body;
    expect(podNow.status.conditions.map((c: { type: string }) => c.type)).not.toContain("DisruptionTarget");
  });

  it("refuses a pod two budgets cover (500) and a name that is not the URL's (400)", async () => {
    await pod("e-1", { app: "e" }, "Running", true);
    await pdb("e1", "e", { disruptionsAllowed: 1, currentHealthy: 1, desiredHealthy: 0 });
    await pdb("e2", "e", { disruptionsAllowed: 1, currentHealthy: 1, desiredHealthy: 0 });
    const two = await evict("e-1");
    expect(two.status).toBe(500);
    expect(two.body.message).toBe(
      "This pod has more than one PodDisruptionBudget, which the eviction subresource does not support.",
    );
    const wrong = await evict("e-1", { metadata: { name: "other" } });
    expect(wrong.status).toBe(400);
    expect(wrong.body.message).toBe("name in URL does not match name in Eviction object");
  });
});

import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pod, ResourceQuota } from "../../../api/core.ts";
import { podConstraints, podUsage } from "../../../quota/evaluator.ts";
import { newConflict, newForbidden } from "../../errors.ts";
import { type APIServer, startAPIServer } from "../../server.ts";
import { chargeQuota, type QuotaAccess } from "./quota-charge.ts";

/** A quota in memory with a resourceVersion, as the store keeps it; `conflicts` stale writes are refused first. */
function memoryQuota(hard: Record<string, string>, used: Record<string, string>, conflicts = 0) {
  let stored: ResourceQuota = {
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: { name: "q", resourceVersion: "1" },
    spec: { hard },
    status: { hard, used },
  };
  let toRefuse = conflicts;
  const access: QuotaAccess = {
    get: async () => structuredClone(stored),
    async updateStatus(quota) {
      const rv = quota.metadata.resourceVersion;
      if (toRefuse > 0 || (rv && rv !== stored.metadata.resourceVersion)) {
        toRefuse--;
        // A write from elsewhere moved the quota on meanwhile.
        stored = {
          ...stored,
          metadata: {
            ...stored.metadata,
            resourceVersion: String(Number(stored.metadata.resourceVersion) + 1),
          },
        };
        throw newConflict({ group: "", resource: "resourcequotas" }, "q", "the object has been modified");
      }
      stored = {
        ...structuredClone(quota),
        metadata: {
          ...quota.metadata,
          resourceVersion: String(Number(rv ?? stored.metadata.resourceVersion) + 1),
        },
      };
      return stored;
    },
    forbidden: (why) => newForbidden({ group: "", resource: "pods" }, "web", why),
  };
  return { access, used: () => stored.status?.used };
}

describe("charging a quota", () => {
  it("charges up to hard, then refuses with upstream's message", async () => {
    const m = memoryQuota({ pods: "2", "requests.cpu": "1" }, { pods: "1", "requests.cpu": "500m" });
    await chargeQuota({ pods: "1", "requests.cpu": "500m", "count/pods": "1" }, m.access);
    expect(m.used()).toEqual({ pods: "2", "requests.cpu": "1" });
    await expect(chargeQuota({ pods: "1", "requests.cpu": "100m" }, m.access)).rejects.toThrow(
      'pods "web" is forbidden: exceeded quota: q, requested: pods=1,requests.cpu=100m, used: pods=2,requests.cpu=1, limited: pods=2,requests.cpu=1',
    );
    // Only what is exceeded is named.
    const n = memoryQuota({ pods: "10", "requests.cpu": "1" }, { pods: "3", "requests.cpu": "900m" });
    await expect(chargeQuota({ pods: "1", "requests.cpu": "200m" }, n.access)).rejects.toThrow(
      "exceeded quota: q, requested: requests.cpu=200m, used: requests.cpu=900m, limited: requests.cpu=1",
    );
  });

  it("re-reads and decides again after a conflict", async () => {
    const m = memoryQuota({ pods: "10" }, { pods: "9" }, 3);
    await chargeQuota({ pods: "1" }, m.access);
    expect(m.used()).toEqual({ pods: "10" });
  });

  it("charges nothing for what the quota does not limit", async () => {
    const m = memoryQuota({ configmaps: "1" }, { configmaps: "1" });
    await chargeQuota({ pods: "1", "count/pods": "1" }, m.access);
    expect(m.used()).toEqual({ configmaps: "1" });
  });
});

describe("a pod's usage", () => {
  const pod = (extra: Partial<Pod> = {}): Pod => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name: "p" },
    spec: {
      initContainers: [{ name: "init", image: "x", resources: { requests: { cpu: "2" } } }],
      containers: [
        {
          name: "a",
          image: "x",
          resources: { requests: { cpu: "500m", memory: "1Gi" }, limits: { cpu: "1" } },
        },
        { name: "b", image: "x", resources: { requests: { cpu: "500m", memory: "512Mi" } } },
      ],
    },
    ...extra,
  });

  it("is its requests and limits (the largest init container if that is more), one pod and one count/pods", () => {
    expect(podUsage(pod())).toEqual({
      "count/pods": "1",
      pods: "1",
      cpu: "2",
      "requests.cpu": "2",
      "limits.cpu": "1",
      memory: "1536Mi",
      "requests.memory": "1536Mi",
    });
  });

  it("is only count/pods once the pod has finished or its deletion grace period is over", () => {
    expect(podUsage(pod({ status: { phase: "Succeeded" } }))).toEqual({ "count/pods": "1" });
    const deleting = pod();
    deleting.metadata = {
      name: "p",
      deletionTimestamp: "2026-01-01T00:00:00Z",
      deletionGracePeriodSeconds: 30,
    };
    expect(podUsage(deleting, new Date("2026-01-01T00:00:10Z")).pods).toBe("1");
    expect(podUsage(deleting, new Date("2026-01-01T00:01:00Z"))).toEqual({ "count/pods": "1" });
  });

  it("must state what a compute quota limits", () => {
    expect(podConstraints({ "requests.memory": "1Gi", "limits.cpu": "2" }, pod())).toBe(
      "must specify limits.cpu for: b,init; requests.memory for: init",
    );
    expect(podConstraints({ pods: "3" }, pod())).toBeUndefined();
  });
});

describe("ResourceQuota through the API server", () => {
  let server: APIServer;
  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0, admission: {} });
  });
  afterAll(async () => {
    await server?.close();
  });
  const send = (method: string, path: string, body?: unknown) =>
    fetch(`${server.url}${path}`, {
      method,
      headers: { "Content-Type": "application/json" },
      body: body ? JSON.stringify(body) : undefined,
    }).then(async (r) => ({
      code: r.status,
      body: (await r.json()) as Record<string, unknown> & { message?: string },
    }));
  const newPod = (name: string) => ({
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name },
    spec: { containers: [{ name: "c", image: "nginx" }] },
  });
  async function namespace(name: string) {
    expect(
      (await send("POST", "/api/v1/namespaces", { apiVersion: "v1", kind: "Namespace", metadata: { name } }))
        .code,
    ).toBe(201);
    // Upstream's serviceaccounts controller would create it (chapter 4).
    await send("POST", `/api/v1/namespaces/${name}/serviceaccounts`, {
      apiVersion: "v1",
      kind: "ServiceAccount",
      metadata: { name: "default" },
    });
  }

  it("50 concurrent pod creates against pods: 10 leave exactly 10 pods and status.used pods=10", async () => {
    await namespace("race");
    const quota = {
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "q" },
      spec: { hard: { pods: "10" } },
    };
    expect((await send("POST", "/api/v1/namespaces/race/resourcequotas", quota)).code).toBe(201);
    const results = await Promise.all(
      Array.from({ length: 50 }, (_, i) => send("POST", "/api/v1/namespaces/race/pods", newPod(`p${i}`))),
    );
    const created = results.filter((r) => r.code === 201);
    const refused = results.filter((r) => r.code === 403);
    expect([created.length, refused.length]).toEqual([10, 40]);
    for (const r of refused) {
      expect(r.body.message).toMatch(
        /^pods "p\d+" is forbidden: exceeded quota: q, requested: pods=1, used: pods=10, limited: pods=10$/,
      );
    }
    const list = await send("GET", "/api/v1/namespaces/race/pods");
    expect((list.body.items as unknown[]).length).toBe(10);
    const stored = (await send("GET", "/api/v1/namespaces/race/resourcequotas/q"))
      .body as unknown as ResourceQuota;
    expect(stored.status).toEqual({ hard: { pods: "10" }, used: { pods: "10" } });
  });

  it("counts what exists when a quota is created, and counts configmaps, secrets and services", async () => {
    await namespace("objects");
    await send("POST", "/api/v1/namespaces/objects/configmaps", {
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name: "old" },
    });
    const hard = { configmaps: "2", "count/secrets": "1", services: "1" };
    await send("POST", "/api/v1/namespaces/objects/resourcequotas", {
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "objs" },
      spec: { hard },
    });
    const cm = (name: string) => ({ apiVersion: "v1", kind: "ConfigMap", metadata: { name } });
    expect((await send("POST", "/api/v1/namespaces/objects/configmaps", cm("a"))).code).toBe(201);
    const third = await send("POST", "/api/v1/namespaces/objects/configmaps", cm("b"));
    expect([third.code, third.body.message]).toEqual([
      403,
      'configmaps "b" is forbidden: exceeded quota: objs, requested: configmaps=1, used: configmaps=2, limited: configmaps=2',
    ]);
    const secret = (name: string) => ({ apiVersion: "v1", kind: "Secret", metadata: { name } });
    expect((await send("POST", "/api/v1/namespaces/objects/secrets", secret("s1"))).code).toBe(201);
    expect((await send("POST", "/api/v1/namespaces/objects/secrets", secret("s2"))).body.message).toBe(
      'secrets "s2" is forbidden: exceeded quota: objs, requested: count/secrets=1, used: count/secrets=1, limited: count/secrets=1',
    );
    const svc = (name: string) => ({
      apiVersion: "v1",
      kind: "Service",
      metadata: { name },
      spec: { ports: [{ port: 80 }] },
    });
    expect((await send("POST", "/api/v1/namespaces/objects/services", svc("one"))).code).toBe(201);
    expect((await send("POST", "/api/v1/namespaces/objects/services", svc("two"))).code).toBe(403);
    const stored = (await send("GET", "/api/v1/namespaces/objects/resourcequotas/objs"))
      .body as unknown as ResourceQuota;
    expect(stored.status?.used).toEqual({ configmaps: "2", "count/secrets": "1", services: "1" });
  });

  it("refuses a pod that states no request for a quota'd resource; a dry run charges nothing", async () => {
    await namespace("compute");
    await send("POST", "/api/v1/namespaces/compute/resourcequotas", {
      apiVersion: "v1",
      kind: "ResourceQuota",
      metadata: { name: "cpu" },
      spec: { hard: { "requests.cpu": "1", "limits.memory": "1Gi" } },
    });
    const bare = await send("POST", "/api/v1/namespaces/compute/pods", newPod("bare"));
    expect(bare.body.message).toBe(
      'pods "bare" is forbidden: failed quota: cpu: must specify limits.memory for: c; requests.cpu for: c',
    );
    const sized = {
      ...newPod("sized"),
      spec: {
        containers: [
          {
            name: "c",
            image: "nginx",
            resources: { requests: { cpu: "600m" }, limits: { memory: "512Mi" } },
          },
        ],
      },
    };
    expect((await send("POST", "/api/v1/namespaces/compute/pods?dryRun=All", sized)).code).toBe(201);
    expect((await send("POST", "/api/v1/namespaces/compute/pods", sized)).code).toBe(201);
    const again = await send("POST", "/api/v1/namespaces/compute/pods", {
      ...sized,
      metadata: { name: "again" },
    });
    expect(again.body.message).toBe(
      'pods "again" is forbidden: exceeded quota: cpu, requested: requests.cpu=600m, used: requests.cpu=600m, limited: requests.cpu=1',
    );
  });
});

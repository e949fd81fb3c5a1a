import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { Pod, ResourceQuota } from "../../../code/api/core.ts";
import { setDefaults } from "../../../code/api/defaults.ts";
import type { KubeObject } from "../../../code/api/meta.ts";
import { AdmissionChain } from "../../../code/apiserver/admission/chain.ts";
import type { Attributes } from "../../../code/apiserver/admission/interfaces.ts";
import { newResourceQuota } from "../../../code/apiserver/admission/plugin/resource-quota.ts";
import { isStatusError } from "../../../code/apiserver/errors.ts";
import { newRESTStorage } from "../../../code/apiserver/registry/rest-storage.ts";
import type { Store } from "../../../code/apiserver/registry/store.ts";
import { newStorageBackend, type StorageBackend } from "../../../code/apiserver/storage/factory.ts";
import { usageOf } from "../../../code/quota/evaluator.ts";
import { chargeQuota, podUsage } from "./quota-usage.ts";

let backend: StorageBackend;
let stores: Map<string, Store>;
let chain: AdmissionChain;
const pods = () => stores.get("/pods") as Store;
const quotas = () => stores.get("/resourcequotas") as Store;

beforeEach(async () => {
  backend = await newStorageBackend({});
  stores = newRESTStorage(backend, false);
  // The real ResourceQuota plugin, with your two functions in it.
  const plugin = newResourceQuota(
    { store: (g, r) => stores.get(`${g}/${r}`) },
    chargeQuota,
    (group, resource, obj) =>
      group === "" && resource === "pods" ? podUsage(obj as Pod, new Date()) : usageOf(group, resource, obj),
  );
  chain = new AdmissionChain([plugin]);
});
afterEach(async () => {
  await backend?.close();
});

const newPod = (name: string): Pod => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { name },
  spec: { containers: [{ name: "c", image: "nginx" }] },
});

/** A pod create as the handler makes it: validating admission just before storage. */
async function createPod(pod: Pod): Promise<"created" | string> {
  setDefaults(pod);
  const attrs = (obj: KubeObject): Attributes => ({
    name: obj.metadata.name ?? "",
    namespace: "default",
    resource: { group: "", version: "v1", resource: "pods" },
    subresource: "",
    kind: { group: "", version: "v1", kind: "Pod" },
    operation: "CREATE",
    dryRun: false,
    object: obj,
    userInfo: { name: "jane", groups: [] },
  });
  try {
    await pods().create("default", pod, { createValidation: (obj) => chain.validate(attrs(obj)) });
    return "created";
  } catch (e) {
    return isStatusError(e) ? `${e.code} ${e.message}` : String(e);
  }
}

async function quota(pods: string): Promise<void> {
  const q: KubeObject = {
    apiVersion: "v1",
    kind: "ResourceQuota",
    metadata: { name: "q" },
    spec: { hard: { pods } },
  };
  await quotas().create("default", q);
}
const used = async () => ((await quotas().get("default", "q")) as ResourceQuota).status?.used;

describe("podUsage", () => {
  it("is one pod and one count/pods for a pending or running pod", () => {
    expect(podUsage(newPod("a"), new Date())).toEqual({ "count/pods": "1", pods: "1" });
    expect(podUsage({ ...newPod("a"), status: { phase: "Running" } }, new Date())).toEqual({
      "count/pods": "1",
      pods: "1",
    });
  });

  it("is only count/pods once the pod has finished or its deletion grace period is over", () => {
    expect(podUsage({ ...newPod("a"), status: { phase: "Succeeded" } }, new Date())).toEqual({
      "count/pods": "1",
    });
    expect(podUsage({ ...newPod("a"), status: { phase: "Failed" } }, new Date())).toEqual({
      "count/pods": "1",
    });
    const deleting = newPod("a");
    deleting.metadata.deletionTimestamp = "2026-01-01T00:00:00Z";
    deleting.metadata.deletionGracePeriodSeconds = 30;
    expect(podUsage(deleting, new Date("2026-01-01T00:00:20Z"))).toEqual({ "count/pods": "1", pods: "1" });
    expect(podUsage(deleting, new Date("2026-01-01T00:00:31Z"))).toEqual({ "count/pods": "1" });
  });
});

describe("chargeQuota in the ResourceQuota plugin", () => {
  it("admits up to hard — the tenth of ten too — then refuses with upstream's message", async () => {
    await quota("10");
    for (let i = 0; i < 10; i++) expect(await createPod(newPod(`p${i}`))).toBe("created");
    expect(await createPod(newPod("extra"))).toBe(
      '403 pods "extra" is forbidden: exceeded quota: q, requested: pods=1, used: pods=10, limited: pods=10',
    );
    expect(await used()).toEqual({ pods: "10" });
  });

  it("50 concurrent creates against pods: 10 leave exactly 10 pods and used pods=10", async () => {
    await quota("10");
    const results = await Promise.all(Array.from({ length: 50 }, (_, i) => createPod(newPod(`p${i}`))));
    expect(results.filter((r) => r === "created")).toHaveLength(10);
    const refused = results.filter((r) => r !== "created");
    expect(refused).toHaveLength(40);
    for (const r of refused) {
      expect(r).toMatch(
        /^403 pods "p\d+" is forbidden: exceeded quota: q, requested: pods=1, used: pods=10, limited: pods=10$/,
      );
    }
    expect((await pods().list("default", {})).items).toHaveLength(10);
    expect(await used()).toEqual({ pods: "10" });
  });

  it("does not count a finished pod that was there before the quota", async () => {
    expect(await createPod(newPod("done"))).toBe("created");
    const stored = await pods().get("default", "done");
    await pods().update(
      "default",
      "done",
      () => ({ ...stored, status: { ...(stored.status as object), phase: "Succeeded" } }),
      {
        strategy: pods().strategy.status,
      },
    );
    await quota("1");
    expect(await createPod(newPod("next"))).toBe("created");
    expect(await used()).toEqual({ pods: "1" });
  });
});

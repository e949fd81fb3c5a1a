import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { resources } from "../resources.ts";
import { newStorageBackend, type StorageBackend } from "../storage/factory.ts";
import { strategyFor } from "./rest-storage.ts";
import { Store } from "./store.ts";

let backend: StorageBackend;
let configMaps: Store;

beforeEach(async () => {
  backend = await newStorageBackend({ compactionIntervalMs: 0 });
  const info = resources.find((r) => r.group === "" && r.resource === "configmaps");
  if (!info) throw new Error("configmaps missing from the resource table");
  const prefix = "/registry/configmaps";
  configMaps = new Store(info, backend.forResource(prefix), strategyFor("", "configmaps"), prefix);
});

afterEach(async () => {
  await backend.close();
});

const configMap = (name: string, finalizers?: string[]): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name, ...(finalizers ? { finalizers } : {}) },
  data: { a: "1" },
});

describe("Store.delete of an object already marked for deletion", () => {
  it("keeps it while a finalizer is left", async () => {
    await configMaps.create("default", configMap("held", ["example.com/hold"]));
    expect((await configMaps.delete("default", "held")).deleted).toBe(false);
    const again = await configMaps.delete("default", "held");
    expect(again.deleted).toBe(false);
    const held = await configMaps.get("default", "held");
    expect(held.metadata.deletionTimestamp).toBeTruthy();
    expect(held.metadata.finalizers).toEqual(["example.com/hold"]);
  });

  it("removes it when its grace period is over and no finalizer is left (the failed-delete recovery)", async () => {
    await configMaps.create("default", configMap("stuck", ["example.com/hold"]));
    await configMaps.delete("default", "stuck");
    // What a crash between the update that empties the finalizers and the delete after it leaves
    // behind: deletionTimestamp set, grace period 0, nothing left to wait for.
    await configMaps.storage.guaranteedUpdate(configMaps.keyFor("default", "stuck"), {}, (cur) => {
      const next = structuredClone(cur as KubeObject);
      delete next.metadata.finalizers;
      return next;
    });
    const r = await configMaps.delete("default", "stuck");
    expect(r.deleted).toBe(true);
    await expect(configMaps.get("default", "stuck")).rejects.toMatchObject({ code: 404 });
  });
});

describe("Store.delete preconditions", () => {
  it("refuses a stale uid or resourceVersion in rest.BeforeDelete's words, naming the kind", async () => {
    const created = await configMaps.create("default", configMap("pre"));
    const uid = created.metadata.uid;
    await expect(
      configMaps.delete("default", "pre", { preconditions: { uid: "other" } }),
    ).rejects.toMatchObject({
      code: 409,
      reason: "Conflict",
      message: `Operation cannot be fulfilled on ConfigMap "pre": the UID in the precondition (other) does not match the UID in record (${uid}). The object might have been deleted and then recreated`,
    });
    const rv = created.metadata.resourceVersion;
    await expect(
      configMaps.delete("default", "pre", { preconditions: { resourceVersion: "999" } }),
    ).rejects.toMatchObject({
      message: `Operation cannot be fulfilled on ConfigMap "pre": the ResourceVersion in the precondition (999) does not match the ResourceVersion in record (${rv}). The object might have been modified`,
    });
    expect((await configMaps.delete("default", "pre", { preconditions: { uid } })).deleted).toBe(true);
  });
});

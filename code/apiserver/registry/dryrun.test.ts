import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { newStorageBackend, type StorageBackend } from "../storage/factory.ts";
import { DryRunnableStorage } from "./dryrun.ts";

let backend: StorageBackend;
let storage: DryRunnableStorage;
const key = "/registry/configmaps/default/a";
const cm = (data: string): KubeObject => ({
  apiVersion: "v1",
  kind: "ConfigMap",
  metadata: { name: "a", namespace: "default", uid: "u1" },
  data: { v: data },
});

beforeEach(async () => {
  backend = await newStorageBackend({ compactionIntervalMs: 0 });
  storage = new DryRunnableStorage(backend.forResource("/registry/configmaps"), {
    group: "",
    resource: "configmaps",
  });
});

afterEach(async () => {
  await backend.close();
});

describe("DryRunnableStorage", () => {
  it("a dry-run create answers the object, or AlreadyExists, and writes nothing", async () => {
    expect((await storage.create(key, cm("1"), true)).data).toEqual({ v: "1" });
    expect(await storage.get(key, { ignoreNotFound: true })).toBeUndefined();
    await storage.create(key, cm("1"));
    await expect(storage.create(key, cm("2"), true)).rejects.toMatchObject({
      code: 409,
      reason: "AlreadyExists",
      message: 'configmaps "a" already exists',
    });
  });

  it("a dry-run update runs tryUpdate once on the stored object, checks preconditions, writes nothing", async () => {
    const stored = await storage.create(key, cm("1"));
    let tries = 0;
    const updated = await storage.guaranteedUpdate(
      key,
      {},
      (cur) => {
        tries++;
        return { ...(cur as KubeObject), data: { v: "2" } };
      },
      true,
    );
    expect([tries, updated.data]).toEqual([1, { v: "2" }]);
    expect((await storage.get(key))?.metadata.resourceVersion).toBe(stored.metadata.resourceVersion);
    await expect(
      storage.guaranteedUpdate(key, { preconditions: { uid: "other" } }, (cur) => cur as KubeObject, true),
    ).rejects.toMatchObject({ code: 409, reason: "Conflict" });
  });

  it("a dry-run delete checks preconditions and validation, answers the object, and keeps it", async () => {
    await storage.create(key, cm("1"));
    const seen: string[] = [];
    const answer = await storage.delete(
      key,
      { uid: "u1" },
      (cur) => void seen.push((cur.data as { v: string }).v),
      true,
    );
    expect([answer.data, seen]).toEqual([{ v: "1" }, ["1"]]);
    expect(await storage.get(key)).toBeDefined();
    await expect(storage.delete(key, { uid: "other" }, undefined, true)).rejects.toMatchObject({ code: 409 });
    await storage.delete(key);
    await expect(storage.delete(key, undefined, undefined, true)).rejects.toMatchObject({ code: 404 });
  });
});

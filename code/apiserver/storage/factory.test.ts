import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { EtcdServer } from "../../store/etcdserver/server.ts";
import { InProcessEtcdClient, isCompactedError } from "./etcd-client.ts";
import { Compactor, newStorageBackend } from "./factory.ts";
import { pod, statusOf } from "./storage-suite.ts";

const dirs: string[] = [];
afterEach(() => {
  for (const d of dirs.splice(0)) rmSync(d, { recursive: true, force: true });
});

describe("newStorageBackend", () => {
  it("keeps objects across a restart when given a data dir", async () => {
    const dir = mkdtempSync(join(tmpdir(), "storage-factory-"));
    dirs.push(dir);
    const first = await newStorageBackend({ dataDir: dir, compactionIntervalMs: 0 });
    const created = await first
      .forResource("/registry/pods")
      .create("/registry/pods/default/web", pod("web"));
    await first.close();

    const second = await newStorageBackend({ dataDir: dir, compactionIntervalMs: 0 });
    const pods = second.forResource("/registry/pods");
    expect(await pods.get("/registry/pods/default/web")).toEqual(created);
    await second.close();
  });

  it("names the resource in errors, and hands out one cacher per prefix", async () => {
    const backend = await newStorageBackend({ compactionIntervalMs: 0 });
    const deployments = backend.forResource("/registry/deployments", {
      groupResource: { group: "apps", resource: "deployments" },
    });
    const err = await statusOf(deployments.get("/registry/deployments/default/x"));
    expect(err.status.message).toBe('deployments.apps "x" not found');
    const defaulted = await statusOf(
      backend.forResource("/registry/configmaps").get("/registry/configmaps/default/y"),
    );
    expect(defaulted.status.message).toBe('configmaps "y" not found');
    expect(backend.forResource("/registry/pods", { cache: true })).toBe(
      backend.forResource("/registry/pods/", { cache: true }),
    );
    await backend.close();
  });
});

describe("Compactor", () => {
  it("compacts to the revision seen one round earlier; API servers sharing etcd take turns", async () => {
    const server = new EtcdServer();
    const client = new InProcessEtcdClient(server);
    const write = (i: number) =>
      client.txn({
        success: [{ requestPut: { key: new TextEncoder().encode(`k${i}`), value: new Uint8Array() } }],
      });
    const a = new Compactor(client);
    const b = new Compactor(client);
    await write(1);
    await a.run(); // first round: records the revision, compacts nothing
    const seenByA = (await client.range({ key: new TextEncoder().encode("compact_rev_key") })).header
      .revision;
    await b.run(); // loses the race on compact_rev_key's version: adopts a's clock, no compaction
    await write(2);
    await write(3);
    await a.run(); // b only read: a's clock still matches, so a wins again and compacts to seenByA
    const readOld = client.range({ key: new TextEncoder().encode("k1"), revision: seenByA - 1 });
    await expect(readOld).rejects.toSatisfy(isCompactedError);
    expect((await client.range({ key: new TextEncoder().encode("k1"), revision: seenByA })).kvs).toHaveLength(
      1,
    );
    // b's clock is behind now: its next round loses and catches up, the one after wins.
    const before = (await client.range({ key: new TextEncoder().encode("compact_rev_key") })).kvs[0].version;
    await b.run();
    expect((await client.range({ key: new TextEncoder().encode("compact_rev_key") })).kvs[0].version).toBe(
      before,
    );
    await b.run();
    expect((await client.range({ key: new TextEncoder().encode("compact_rev_key") })).kvs[0].version).toBe(
      before + 1,
    );
    await server.close();
  });
});

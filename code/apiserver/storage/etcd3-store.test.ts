import { describe, expect, it } from "vitest";
import { freePort, ourEtcdBackend, realEtcdBackend } from "../../../scripts/etcd-backends.ts";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import { nextEvents, pod, runStorageSuite, type SuiteBackend, watchEnded } from "../testing/storage-suite.ts";
import { GrpcEtcdClient } from "./etcd-client.ts";
import { newStorageBackend } from "./factory.ts";
import { everything } from "./selection-predicate.ts";

// Bookmarks come from etcd's progress notifications, asked for every 100 ms in these tests.
const fast = { compactionIntervalMs: 0, progressRequestIntervalMs: 100, bookmarkFrequencyMs: 200 };

describe("storage on the embedded store (in process)", () => {
  runStorageSuite(async () => {
    const backend = await newStorageBackend(fast);
    return { backend, compact: (rev) => backend.client.compact(rev), close: () => backend.close() };
  });
});

describe("storage over gRPC to our chapter-1 etcd", () => {
  runStorageSuite(async () => {
    const etcd = await ourEtcdBackend();
    // A dead endpoint first: the client must fail over to the live one.
    const dead = `http://127.0.0.1:${await freePort()}`;
    const backend = await newStorageBackend({
      ...fast,
      etcdServers: [dead, ...(etcd.etcdServers ?? [])],
    });
    return {
      backend,
      compact: (rev) => backend.client.compact(rev),
      close: async () => {
        await backend.close();
        await etcd.close();
      },
    };
  });
});

describe("GrpcEtcdClient", () => {
  it("fails over to the next endpoint, for calls and for a watch opened first", async () => {
    const etcd = await ourEtcdBackend();
    const client = new GrpcEtcdClient([`http://127.0.0.1:${await freePort()}`, ...(etcd.etcdServers ?? [])]);
    try {
      const key = new TextEncoder().encode("k");
      const w = client.watch({ key });
      expect(await w.next()).toMatchObject({ created: true });
      await client.txn({ success: [{ requestPut: { key, value: new TextEncoder().encode("v") } }] });
      const resp = await w.next();
      expect(resp?.events.map((e) => [e.type, new TextDecoder().decode(e.kv.value)])).toEqual([["PUT", "v"]]);
      expect((await client.range({ key })).kvs).toHaveLength(1);
      w.close();
      expect(await w.next()).toBeUndefined();
    } finally {
      await client.close();
      await etcd.close();
    }
  });
});

describeWithTools("storage over gRPC to a real etcd", ["etcd"], (tools) => {
  runStorageSuite(() => startRealEtcd(tools.etcd.path as string));
});

// chapter 4: found by the informer's fault tests (client/tools/cache/informer-apiserver-faults.test.ts).
// Only on our store: etcd 3.4 (Debian's) drops the tombstone at the compaction revision itself
// (etcd-io/etcd#18089, fixed in 3.5.15), so its watch shows nothing at all here.
describe("a watch over a compacted deletion", () => {
  it("ends with an ERROR (InternalError), as upstream's parseEvent, instead of losing the deletion", async () => {
    const backend = await newStorageBackend(fast);
    try {
      const prefix = "/registry/pods";
      const s = backend.forResource(prefix, { groupResource: { group: "", resource: "pods" } });
      const a = await s.create(`${prefix}/default/a`, pod("a"));
      await s.delete(`${prefix}/default/a`, {});
      const rev = Number(a.metadata.resourceVersion) + 1;
      // The deletion's revision survives; the value it deleted (its prevKv) does not.
      await backend.client.compact(rev);
      const w = await s.watch(prefix, {
        resourceVersion: String(rev - 1),
        predicate: everything,
        recursive: true,
      });
      const [ev] = await nextEvents(w, 1);
      expect(ev.type).toBe("ERROR");
      expect(ev.object).toMatchObject({ kind: "Status", code: 500, reason: "InternalError" });
      expect(await watchEnded(w)).toBe(true);
    } finally {
      await backend.close();
    }
  });
});

/** A real etcd (scripts/etcd-backends.ts) with a storage backend over gRPC in front of it. */
async function startRealEtcd(binary: string): Promise<SuiteBackend> {
  const etcd = await realEtcdBackend(binary);
  const backend = await newStorageBackend({ ...fast, etcdServers: etcd.etcdServers });
  return {
    backend,
    compact: (rev) => backend.client.compact(rev),
    close: async () => {
      await backend.close();
      await etcd.close();
    },
  };
}

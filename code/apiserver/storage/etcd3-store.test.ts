import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { createServer } from "node:net";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import { startEtcd } from "../../store/embed.ts";
import { GrpcEtcdClient } from "./etcd-client.ts";
import { newStorageBackend } from "./factory.ts";
import { runStorageSuite, type SuiteBackend } from "./storage-suite.ts";

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
    const etcd = await startEtcd({
      name: "default",
      dataDir: "",
      inMemory: true,
      listenClientURLs: ["http://127.0.0.1:0"],
      advertiseClientURLs: ["http://127.0.0.1:0"],
    });
    if (etcd instanceof Error) throw etcd;
    // A dead endpoint first: the client must fail over to the live one.
    const dead = `http://127.0.0.1:${await freePort()}`;
    const backend = await newStorageBackend({
      ...fast,
      etcdServers: [dead, `http://${etcd.clientAddresses[0]}`],
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
    const etcd = await startEtcd({
      name: "default",
      dataDir: "",
      inMemory: true,
      listenClientURLs: ["http://127.0.0.1:0"],
      advertiseClientURLs: ["http://127.0.0.1:0"],
    });
    if (etcd instanceof Error) throw etcd;
    const client = new GrpcEtcdClient([
      `http://127.0.0.1:${await freePort()}`,
      `http://${etcd.clientAddresses[0]}`,
    ]);
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

function freePort(): Promise<number> {
  return new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const address = srv.address();
      const port = typeof address === "object" && address ? address.port : 0;
      srv.close(() => resolve(port));
    });
  });
}

async function startRealEtcd(binary: string): Promise<SuiteBackend> {
  const dataDir = mkdtempSync(join(tmpdir(), "storage-etcd-"));
  const [client, peer] = [await freePort(), await freePort()];
  const clientURL = `http://127.0.0.1:${client}`;
  const peerURL = `http://127.0.0.1:${peer}`;
  const child: ChildProcess = spawn(
    binary,
    [
      "--name=suite",
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${clientURL}`,
      `--advertise-client-urls=${clientURL}`,
      `--listen-peer-urls=${peerURL}`,
      `--initial-advertise-peer-urls=${peerURL}`,
      `--initial-cluster=suite=${peerURL}`,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  let stderr = "";
  child.stderr?.on("data", (c: Buffer) => {
    stderr = (stderr + c.toString()).slice(-2000);
  });
  const exited = new Promise<void>((r) => child.once("exit", () => r()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) {
      child.kill("SIGTERM");
      await Promise.race([exited, new Promise((r) => setTimeout(r, 5000))]);
      if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    }
    rmSync(dataDir, { recursive: true, force: true });
  };
  // Wait until it answers.
  const probe = new GrpcEtcdClient([clientURL], 1000);
  const deadline = Date.now() + 15_000;
  try {
    for (;;) {
      if (child.exitCode !== null) throw new Error(`etcd exited with ${child.exitCode}: ${stderr}`);
      try {
        await probe.range({ key: new TextEncoder().encode("probe") });
        break;
      } catch (e) {
        if (Date.now() > deadline) throw new Error(`etcd did not answer in 15 s: ${(e as Error).message}`);
        await new Promise((r) => setTimeout(r, 100));
      }
    }
  } catch (e) {
    await stop();
    throw e;
  } finally {
    await probe.close();
  }
  const backend = await newStorageBackend({ ...fast, etcdServers: [clientURL] });
  return {
    backend,
    compact: (rev) => backend.client.compact(rev),
    close: async () => {
      await backend.close();
      await stop();
    },
  };
}

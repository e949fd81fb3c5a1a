/**
 * Storage backends for API server tests: where one test run keeps its objects. The same API
 * checks run on each, so "works on our store" is also "works on etcd":
 * - the embedded store (in process — `startAPIServer`'s default, no `etcdServers`);
 * - our chapter-1 etcd (`code/store/embed/etcd.ts`) served over gRPC on loopback, in memory;
 * - a real etcd (`/usr/bin/etcd`, Debian's etcd-server) on two free loopback ports with a
 *   temporary data directory, removed again on close.
 *
 * @upstream none — test tooling
 */
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtempSync, rmSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { GrpcEtcdClient } from "../code/apiserver/storage/etcd-client.ts";
import { startEtcd } from "../code/store/embed/etcd.ts";

import { freePort } from "../code/testing/ports.ts";

export { freePort };

/** Where the API servers of one run keep their objects: `etcdServers`, or none (embedded). */
export interface Backend {
  etcdServers?: string[];
  close(): Promise<void>;
}

export async function embeddedBackend(): Promise<Backend> {
  return { close: async () => {} };
}

/** Our chapter-1 etcd, in memory, on a free loopback port. */
export async function ourEtcdBackend(): Promise<Backend> {
  const etcd = await startEtcd({
    name: "default",
    dataDir: "",
    inMemory: true,
    listenClientURLs: ["http://127.0.0.1:0"],
    advertiseClientURLs: ["http://127.0.0.1:0"],
  });
  if (etcd instanceof Error) throw etcd;
  return { etcdServers: [`http://${etcd.clientAddresses[0]}`], close: () => etcd.close() };
}

/** The real etcd binary on two free loopback ports with a temporary data directory. */
export async function realEtcdBackend(binary: string): Promise<Backend> {
  const dataDir = mkdtempSync(join(tmpdir(), "api-etcd-"));
  const clientURL = `http://127.0.0.1:${await freePort()}`;
  const peerURL = `http://127.0.0.1:${await freePort()}`;
  const child: ChildProcess = spawn(
    binary,
    [
      "--name=api",
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${clientURL}`,
      `--advertise-client-urls=${clientURL}`,
      `--listen-peer-urls=${peerURL}`,
      `--initial-advertise-peer-urls=${peerURL}`,
      `--initial-cluster=api=${peerURL}`,
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
  // Ready once it answers a read (it may take a second to elect itself leader).
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
  return { etcdServers: [clientURL], close: stop };
}

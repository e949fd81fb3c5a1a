// Differential test: the same seeded random traffic (differential.ts) against our store and a
// real etcd, answer by answer, watch stream by watch stream. Each seed gets two fresh servers, so
// a seed replays alone: DIFF_SEED=<n>[,<m>…] runs those seeds; DIFF_SEEDS=<n> runs seeds 1..n; DIFF_OPS=<n>
// sets the ops per seed. A difference prints the seed, the op index, the op and both answers.
//
// The reference is Debian's etcd 3.4.23; our target is etcd v3.5. Where the two differ, the
// difference is special-cased in differential.ts with the upstream reference that shows it.
import { type ChildProcess, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, expect, it } from "vitest";
import { describeWithTools } from "../../../scripts/external-tools.ts";
import { freePort } from "../../testing/ports.ts";
import { type Etcd, startEtcd } from "../embed/etcd.ts";
import { Endpoint, formatMismatch, type Mismatch, runSeed } from "./differential.ts";

const defaultSeeds = 4;
const defaultOpsPerSeed = 500;

function seedsToRun(): number[] {
  if (process.env.DIFF_SEED) return process.env.DIFF_SEED.split(",").map(Number);
  const n = Number(process.env.DIFF_SEEDS ?? defaultSeeds);
  return Array.from({ length: n }, (_, i) => i + 1);
}
const opsPerSeed = Number(process.env.DIFF_OPS ?? defaultOpsPerSeed);

interface RealEtcd {
  address: string;
  stop(): Promise<void>;
}

/**
 * Starts /usr/bin/etcd on loopback with its data in a fresh temporary directory — on /dev/shm
 * when there is one: etcd fsyncs every write, and a disk would make the run ten times slower.
 */
async function startRealEtcd(path: string): Promise<RealEtcd> {
  const base = existsSync("/dev/shm") ? "/dev/shm" : tmpdir();
  const dataDir = await mkdtemp(join(base, "diff-etcd-"));
  const [client, peer] = [await freePort(), await freePort()];
  const clientURL = `http://127.0.0.1:${client}`;
  const peerURL = `http://127.0.0.1:${peer}`;
  const child: ChildProcess = spawn(
    path,
    [
      "--name=diff",
      `--data-dir=${dataDir}`,
      `--listen-client-urls=${clientURL}`,
      `--advertise-client-urls=${clientURL}`,
      `--listen-peer-urls=${peerURL}`,
      `--initial-advertise-peer-urls=${peerURL}`,
      `--initial-cluster=diff=${peerURL}`,
    ],
    { stdio: ["ignore", "ignore", "pipe"] },
  );
  const exited = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const stop = async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
    await rm(dataDir, { recursive: true, force: true });
  };
  let log = "";
  const ready = await new Promise<boolean>((resolve) => {
    const timer = setTimeout(() => resolve(false), 15_000);
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      log += chunk;
      if (log.includes("ready to serve client requests")) {
        clearTimeout(timer);
        resolve(true);
      }
    });
    void exited.then(() => resolve(false));
  });
  if (!ready) {
    await stop();
    throw new Error(`etcd did not start:\n${log}`);
  }
  return { address: `127.0.0.1:${client}`, stop };
}

describeWithTools("differential: our store against the real etcd", ["etcd"], (tools) => {
  const cleanups: (() => Promise<void>)[] = [];
  afterAll(async () => {
    for (const c of cleanups.splice(0).reverse()) await c();
  });

  const seeds = seedsToRun();
  it(
    `agrees with etcd on ${seeds.length} seed(s) × ${opsPerSeed} random ops`,
    async () => {
      const mismatches: Mismatch[] = [];
      let totalOps = 0;
      const coverage: Record<string, number> = {};
      // The next seed's etcd starts while this seed runs: etcd takes about a second to start.
      const start = () => {
        const started = startRealEtcd(tools.etcd.path!);
        // Stopped after its seed, or by afterAll if the test fails before.
        void started.then((real) => cleanups.push(real.stop)).catch(() => {});
        return started;
      };
      let nextEtcd = start();
      for (const [i, seed] of seeds.entries()) {
        const real = await nextEtcd;
        if (i + 1 < seeds.length) nextEtcd = start();
        const started = await startEtcd({
          name: "default",
          dataDir: "",
          inMemory: true,
          listenClientURLs: ["http://127.0.0.1:0"],
          advertiseClientURLs: ["http://127.0.0.1:0"],
        });
        if (started instanceof Error) throw started;
        const ourEtcd: Etcd = started;
        const etcd = new Endpoint("etcd", real.address);
        const ours = new Endpoint("ours", ourEtcd.clientAddresses[0]);
        try {
          const result = await runSeed(seed, opsPerSeed, etcd, ours);
          totalOps += result.ops;
          for (const [what, n] of Object.entries(result.coverage)) coverage[what] = (coverage[what] ?? 0) + n;
          if (result.mismatch) {
            mismatches.push(result.mismatch);
            console.error(formatMismatch(result.mismatch));
          }
        } finally {
          etcd.close();
          ours.close();
          await ourEtcd.close();
          await real.stop();
        }
      }
      console.info(
        `differential: ${totalOps} ops over ${seeds.length} seed(s), ${mismatches.length} mismatch(es)`,
      );
      const summary = Object.entries(coverage)
        .sort(([a], [b]) => a.localeCompare(b))
        .map(([what, n]) => `${what}: ${n}`);
      console.info(`coverage:\n  ${summary.join("\n  ")}`);
      expect(mismatches.map(formatMismatch)).toEqual([]);
      // The traffic reached the outcomes it is meant to compare (so agreeing means something);
      // a short replay (DIFF_OPS) may not, and need not.
      if (totalOps < 1000) return;
      for (const what of [
        "Txn ok succeeded",
        "Txn ok failed",
        "Range OUT_OF_RANGE",
        "Compact ok",
        "LeaseRevoke ok",
        "watches from the past",
        "watches cancelled by compaction",
      ]) {
        expect(coverage[what] ?? 0, what).toBeGreaterThan(0);
      }
      expect(coverage["watch events compared"]).toBeGreaterThan(totalOps / 2);
    },
    30_000 + seeds.length * opsPerSeed * 20,
  );
});

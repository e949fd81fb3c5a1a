import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { afterEach, describe, expect, it } from "vitest";
import { WALError } from "./errors.ts";
import { SnapError } from "./snapshotter.ts";
import { payloadFor, snapshotPayloadFor } from "./testdata/crash-writer.ts";
import { WAL } from "./wal.ts";

const writer = fileURLToPath(new URL("./testdata/crash-writer.ts", import.meta.url));
const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0)) await cleanup();
});

/**
 * Runs the crash writer on `dir` and kills it with SIGKILL once it has acknowledged `acks`
 * appends. Returns every revision it acknowledged (some arrive between the kill and its death).
 */
async function runAndKill(dir: string, acks: number): Promise<number[]> {
  // 32 concurrent callers; a snapshot every 150 revisions, so kills also land inside snapshots.
  const child: ChildProcess = spawn(process.execPath, ["--import", "tsx", writer, dir, "32", "150"], {
    cwd: repoRoot,
    stdio: ["ignore", "pipe", "pipe"],
  });
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
  });

  const acked: number[] = [];
  let stderr = "";
  let pending = "";
  child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
    stderr += chunk;
  });
  child.stdout!.setEncoding("utf8").on("data", (chunk: string) => {
    pending += chunk;
    const lines = pending.split("\n");
    pending = lines.pop()!;
    for (const line of lines) {
      if (line.startsWith("ack ")) acked.push(Number(line.slice(4)));
    }
    if (acked.length >= acks && child.signalCode === null) child.kill("SIGKILL");
  });

  const signal = await new Promise<NodeJS.Signals | null>((resolve) =>
    child.on("close", (_, sig) => resolve(sig)),
  );
  if (signal !== "SIGKILL")
    throw new Error(`the crash writer exited on its own (signal ${signal}):\n${stderr}`);
  return acked;
}

/**
 * Recovers `dir` in this process and checks it against what the killed writer acknowledged:
 * the snapshot and records are exactly revisions 1..last with the bytes that were written, and
 * every acknowledged revision is among them. Returns `last`.
 */
async function recoverAndCheck(dir: string, acked: number[]): Promise<number> {
  const opened = await WAL.open(dir, { log: () => {} });
  if (opened instanceof WALError || opened instanceof SnapError) throw opened;
  const { wal, snapshot, records } = opened;
  await wal.close();

  const base = snapshot?.revision ?? 0;
  if (snapshot) expect(Buffer.from(snapshot.payload).equals(snapshotPayloadFor(base))).toBe(true);
  // A gap-free run base+1, base+2, …: what recovery returns is a prefix of what was appended.
  const revisions = records.map((r) => r.revision);
  expect(revisions).toEqual(Array.from({ length: records.length }, (_, i) => base + 1 + i));
  // Every record is intact, byte for byte: nothing half-applied.
  const damaged = records.filter((r) => !Buffer.from(r.payload).equals(payloadFor(r.revision)));
  expect(damaged.map((r) => r.revision)).toEqual([]);

  const last = revisions.at(-1) ?? base;
  // Every acknowledged write survived: they all lie within 1..last.
  expect(Math.max(...acked)).toBeLessThanOrEqual(last);
  return last;
}

// kill -9 ends the process but not the kernel: bytes already handed to write() survive it, fsynced
// or not. So this test proves the order "write, then acknowledge" and recovery from real
// interrupted runs (mid-batch, mid-snapshot, mid-cleanup); that nothing is acknowledged before
// its fsync returns is checked in wal.test.ts with a gated fsync.
describe("WAL: kill -9", () => {
  it("keeps every acknowledged record, and recovers a gap-free prefix, across repeated kills", async () => {
    const dir = await mkdtemp(join(tmpdir(), "wal-crash-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));

    let last = 0;
    for (let round = 0; round < 3; round++) {
      const acked = await runAndKill(dir, 300);
      expect(acked.length).toBeGreaterThanOrEqual(300);
      expect(Math.min(...acked)).toBe(last + 1); // the writer continued where recovery left off
      last = await recoverAndCheck(dir, acked);
    }
  });
});

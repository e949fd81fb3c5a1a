/**
 * Crash writer — a process for the WAL's crash test to kill with SIGKILL in the middle of a load.
 * No upstream counterpart (the reason is at the end of this header).
 *
 * Solves: "an acknowledged write survives kill -9" can only be tested by killing a real process;
 * a test cannot simulate what the kernel keeps and drops. This process recovers the WAL in a
 * directory, then appends records from many concurrent callers, taking a snapshot now and then,
 * and prints `ack <revision>` for each append only after its promise resolved — exactly when a
 * store would answer its client.
 *
 * Invariants:
 * - revisions are handed out in the order appends are made: 1, 2, 3, … after the recovered
 *   revision, so a correct recovery holds a gap-free run of them;
 * - every record's payload, and every snapshot's payload, is a function of its revision alone
 *   (`payloadFor`, `snapshotPayloadFor`), so the test can check each byte it gets back.
 *
 * Usage: node --import tsx code/store/wal/testdata/crash-writer.ts <dir> [workers] [snapshotEvery]
 *
 * @upstream none — a test helper; etcd's own crash tests kill whole clusters (tests/robustness).
 * @chapter 01-etcd-watch
 */
import { pathToFileURL } from "node:url";
import { WALError } from "../errors.ts";
import { SnapError } from "../snapshotter.ts";
import { WAL } from "../wal.ts";

/** The payload written at `revision`: 1–300 bytes, so frames get every amount of padding. */
export function payloadFor(revision: number): Uint8Array {
  const bytes = new Uint8Array(1 + ((revision * 37) % 300));
  for (let i = 0; i < bytes.length; i++) bytes[i] = (revision * 131 + i * 7) & 0xff;
  return bytes;
}

/** The state of this toy "store" at `revision` — all records up to it — described by its revision. */
export function snapshotPayloadFor(revision: number): Uint8Array {
  return new TextEncoder().encode(`state after revisions 1..${revision}`);
}

async function main(dir: string, workers: number, snapshotEvery: number): Promise<void> {
  const opened = await WAL.open(dir, { log: (line) => process.stderr.write(`${line}\n`) });
  if (opened instanceof WALError || opened instanceof SnapError) {
    process.stderr.write(`${opened.message}\n`);
    process.exit(2);
  }
  const { wal } = opened;
  let nextRevision = wal.lastRevision + 1;
  let lastSnapshot = wal.lastRevision;
  let snapshotting = false;
  process.stdout.write(`ready ${wal.lastRevision}\n`);

  const worker = async () => {
    for (;;) {
      const revision = nextRevision++;
      await wal.append(revision, payloadFor(revision));
      // stdout to a pipe is synchronous on Linux: once this returns, the parent can read it.
      process.stdout.write(`ack ${revision}\n`);
      if (!snapshotting && wal.lastRevision - lastSnapshot >= snapshotEvery) {
        // The snapshot must cover everything appended so far, so it is taken at lastRevision.
        snapshotting = true;
        lastSnapshot = wal.lastRevision;
        await wal.saveSnapshot(lastSnapshot, snapshotPayloadFor(lastSnapshot));
        snapshotting = false;
      }
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
}

if (import.meta.url === pathToFileURL(process.argv[1] ?? "").href) {
  const [dir, workers = "32", snapshotEvery = "150"] = process.argv.slice(2);
  if (!dir) {
    process.stderr.write("usage: crash-writer.ts <dir> [workers] [snapshotEvery]\n");
    process.exit(2);
  }
  main(dir, Number(workers), Number(snapshotEvery)).catch((err) => {
    process.stderr.write(`${err instanceof Error ? err.stack : String(err)}\n`);
    process.exit(1);
  });
}

import type { FileHandle } from "node:fs/promises";
import { copyFile, mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WALError } from "./errors.ts";
import { decodeSnapshot, encodeSnapshot, SnapError, Snapshotter, snapshotName } from "./snapshotter.ts";
import { walName } from "./util.ts";
import { type RecoveredWAL, WAL, type WALOptions } from "./wal.ts";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "snap-test-"));
  dirs.push(dir);
  return dir;
}

async function openOk(dir: string, options: WALOptions = {}): Promise<RecoveredWAL> {
  // Smaller segments than the default 64 MB: each test would otherwise write 128 MB of zeros.
  const opened = await WAL.open(dir, { log: () => {}, segmentBytes: 256 * 1024, ...options });
  if (opened instanceof WALError || opened instanceof SnapError) throw opened;
  return opened;
}

const bytes = (s: string) => new TextEncoder().encode(s);
const text = (b: Uint8Array | undefined) => (b ? new TextDecoder().decode(b) : undefined);

/** A WAL in a fresh directory with records 1..n appended (payload "r<rev>"), still open. */
async function walWithRevisions(n: number, options: WALOptions = {}): Promise<{ dir: string; wal: WAL }> {
  const dir = await tempDir();
  const { wal } = await openOk(dir, options);
  for (let rev = 1; rev <= n; rev++) await wal.append(rev, bytes(`r${rev}`));
  return { dir, wal };
}

describe("snapshot file", () => {
  it("round-trips and detects a flipped bit or a short file", () => {
    const encoded = encodeSnapshot({ revision: 1234, payload: bytes("the whole keyspace") });
    expect(decodeSnapshot(encoded, "x.snap")).toEqual({
      revision: 1234,
      payload: bytes("the whole keyspace"),
    });

    for (const at of [0, 10, 25]) {
      // revision, payload length, payload
      const damaged = encoded.slice();
      damaged[at] ^= 0x02;
      expect(decodeSnapshot(damaged, "x.snap")).toMatchObject({
        reason: "snap: crc mismatch",
        file: "x.snap",
      });
    }
    expect(decodeSnapshot(encoded.subarray(0, 7), "x.snap")).toMatchObject({
      reason: "snap: empty snapshot",
    });
  });

  it("is saved atomically: temp file fsynced, renamed, then the directory fsynced", async () => {
    const dir = await tempDir();
    const synced: string[] = [];
    const fsync = async (file: FileHandle, path: string) => {
      synced.push(path);
      await file.sync();
    };
    const path = await new Snapshotter(dir, fsync).save(3, { revision: 77, payload: bytes("state") });

    expect(path).toBe(join(dir, snapshotName(3, 77)));
    expect(synced).toEqual([`${path}.tmp`, dir]);
    expect(await readdir(dir)).toEqual(["0000000000000003-000000000000004d.snap"]);
  });
});

describe("WAL.saveSnapshot", () => {
  it("cuts a new segment, removes what the snapshot covers, and recovers from snapshot + tail", async () => {
    const lines: string[] = [];
    const { dir, wal } = await walWithRevisions(5, { log: (line) => lines.push(line) });
    await wal.saveSnapshot(5, bytes("state@5"));
    // While the WAL is open, the segment after this one is being prepared beside it (file-pipeline.ts).
    expect((await readdir(dir)).filter((name) => name !== "next.wal.tmp").sort()).toEqual([
      "0000000000000001-0000000000000005.snap",
      "0000000000000001-0000000000000005.wal",
    ]);
    expect(lines).toEqual([
      `wal: started segment ${join(dir, walName(1, 5))}`,
      `wal: removed ${join(dir, walName(0, 0))}, covered by a snapshot`,
    ]);

    await wal.append(6, bytes("r6"));
    await wal.append(7, bytes("r7"));
    await wal.close();

    const { wal: reopened, snapshot, records } = await openOk(dir);
    expect(snapshot?.revision).toBe(5);
    expect(text(snapshot?.payload)).toBe("state@5");
    expect(records.map((r) => [r.revision, text(r.payload)])).toEqual([
      [6, "r6"],
      [7, "r7"],
    ]);
    expect(reopened.lastRevision).toBe(7);

    // A second snapshot replaces the first one and its segment.
    await reopened.saveSnapshot(7, bytes("state@7"));
    await reopened.close();
    expect((await readdir(dir)).sort()).toEqual([
      "0000000000000002-0000000000000007.snap",
      "0000000000000002-0000000000000007.wal",
    ]);
    const last = await openOk(dir);
    expect([last.snapshot?.revision, text(last.snapshot?.payload), last.records]).toEqual([7, "state@7", []]);
    await last.wal.close();
  });

  it("puts appends made while the snapshot is written into the new segment", async () => {
    const { dir, wal } = await walWithRevisions(3);
    const saving = wal.saveSnapshot(3, bytes("state@3"));
    const appends = [wal.append(4, bytes("r4")), wal.append(5, bytes("r5"))];
    await Promise.all([saving, ...appends]);
    await wal.close();

    expect((await readdir(dir)).sort()).toEqual([
      "0000000000000001-0000000000000003.snap",
      "0000000000000001-0000000000000003.wal",
    ]);
    const { wal: reopened, snapshot, records } = await openOk(dir);
    expect(snapshot?.revision).toBe(3);
    expect(records.map((r) => r.revision)).toEqual([4, 5]);
    await reopened.close();
  });

  it("refuses a snapshot that does not include every appended record", async () => {
    const { wal } = await walWithRevisions(4);
    await expect(wal.saveSnapshot(3, bytes("state@3"))).rejects.toMatchObject({
      reason: "wal: snapshot mismatch",
    });
    await wal.close();
  });

  it("recovers every record when a crash stops it after the cut, before the snapshot is durable", async () => {
    const { dir, wal } = await walWithRevisions(3, {
      fsync: async (file, path) => {
        if (path.endsWith(".snap.tmp")) throw new Error("EIO: simulated crash while writing the snapshot");
        await file.sync();
      },
    });
    await expect(wal.saveSnapshot(3, bytes("state@3"))).rejects.toThrow(/simulated crash/);
    await wal.append(4, bytes("r4")); // the new segment is in use
    await wal.close();
    expect((await readdir(dir)).sort()).toEqual([
      "0000000000000000-0000000000000000.wal",
      "0000000000000001-0000000000000003.wal",
    ]);

    const { wal: reopened, snapshot, records } = await openOk(dir);
    expect(snapshot).toBeUndefined();
    expect(records.map((r) => r.revision)).toEqual([1, 2, 3, 4]);
    await reopened.close();
  });

  it("finishes the clean-up on start when a crash stopped it after the snapshot was saved", async () => {
    const { dir, wal } = await walWithRevisions(2);
    await wal.saveSnapshot(2, bytes("state@2"));
    const firstSnapshot = join(dir, snapshotName(1, 2));
    const firstSegment = join(dir, walName(1, 2));
    await copyFile(firstSnapshot, `${firstSnapshot}.keep`);
    await copyFile(firstSegment, `${firstSegment}.keep`);
    await wal.append(3, bytes("r3"));
    await wal.saveSnapshot(3, bytes("state@3"));
    await wal.append(4, bytes("r4"));
    await wal.close();
    // Put back the files of the first snapshot, as if the second one's deletions never happened.
    await copyFile(`${firstSnapshot}.keep`, firstSnapshot);
    await copyFile(`${firstSegment}.keep`, firstSegment);
    await rm(`${firstSnapshot}.keep`);
    await rm(`${firstSegment}.keep`);

    const lines: string[] = [];
    const { wal: reopened, snapshot, records } = await openOk(dir, { log: (line) => lines.push(line) });
    expect([snapshot?.revision, records.map((r) => r.revision)]).toEqual([3, [4]]);
    expect(lines).toEqual([
      `wal: removed ${firstSegment}, covered by a snapshot`,
      `snap: removed ${firstSnapshot}, superseded by a newer snapshot`,
    ]);
    await reopened.close();
    expect((await readdir(dir)).sort()).toEqual([
      "0000000000000002-0000000000000003.snap",
      "0000000000000002-0000000000000003.wal",
    ]);
  });

  it("deletes a temp file left by an interrupted save", async () => {
    const { dir, wal } = await walWithRevisions(1);
    await wal.close();
    const temp = join(dir, `${snapshotName(1, 1)}.tmp`);
    await writeFile(temp, bytes("half a snaps"));
    const lines: string[] = [];
    const { wal: reopened, records } = await openOk(dir, { log: (line) => lines.push(line) });
    expect(records.map((r) => r.revision)).toEqual([1]);
    expect(lines).toEqual([`snap: removed ${temp}, left over from an interrupted snapshot`]);
    await reopened.close();
  });

  it("refuses to start from a damaged snapshot, naming the file", async () => {
    const { dir, wal } = await walWithRevisions(2);
    await wal.saveSnapshot(2, bytes("state@2"));
    await wal.close();
    const path = join(dir, snapshotName(1, 2));
    const damaged = await readFile(path);
    damaged[damaged.length - 1] ^= 0x80;
    await writeFile(path, damaged);

    const opened = await WAL.open(dir, { log: () => {} });
    expect(opened).toBeInstanceOf(SnapError);
    expect(opened).toMatchObject({ reason: "snap: crc mismatch", file: path });
    expect((opened as SnapError).message).toMatch(/restore the data directory from a backup/);
  });

  it("refuses to start when the segment that continues the snapshot is missing", async () => {
    const { dir, wal } = await walWithRevisions(2);
    await wal.saveSnapshot(2, bytes("state@2"));
    await wal.close();
    await rm(join(dir, walName(1, 2)));

    const opened = await WAL.open(dir, { log: () => {} });
    expect(opened).toMatchObject({ reason: "wal: file not found" });
    expect((opened as WALError).message).toContain(
      `snapshot ${join(dir, snapshotName(1, 2))} is continued by`,
    );
  });
});

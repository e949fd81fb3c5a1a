import type { FileHandle } from "node:fs/promises";
import { appendFile, mkdtemp, readdir, readFile, rm, stat, truncate, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { WALError } from "./errors.ts";
import { encodeFrame, FRAME_HEADER_BYTES, MAX_BODY_BYTES, type WALRecord } from "./record.ts";
import { SnapError } from "./snapshotter.ts";
import { walName } from "./util.ts";
import { type RecoveredWAL, WAL, type WALOptions } from "./wal.ts";

const dirs: string[] = [];
afterEach(async () => {
  await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "wal-test-"));
  dirs.push(dir);
  return dir;
}

/** Smaller than the default 64 MB, so that each test does not write 128 MB of zeros. */
const segmentBytes = 256 * 1024;

async function openOk(dir: string, options: WALOptions = {}): Promise<RecoveredWAL> {
  const opened = await WAL.open(dir, { log: () => {}, segmentBytes, ...options });
  if (opened instanceof WALError || opened instanceof SnapError) throw opened;
  return opened;
}

/** The records a restart would replay (the WAL is closed again). */
async function replay(dir: string): Promise<WALRecord[]> {
  const { wal, records } = await openOk(dir);
  await wal.close();
  return records;
}

async function openError(dir: string): Promise<WALError> {
  const opened = await WAL.open(dir, { log: () => {}, segmentBytes });
  if (!(opened instanceof WALError)) throw new Error(`expected a WALError, got ${String(opened)}`);
  return opened;
}

/** An fsync hook that counts calls; `gate`, when set, holds every fsync until it resolves. */
function countingFsync() {
  const hook = {
    calls: [] as string[],
    gate: undefined as Promise<void> | undefined,
    fsync: async (file: FileHandle, path: string) => {
      // The next segment, prepared in the background (file-pipeline.ts, FilePipeline), is not a batch.
      if (path.endsWith("next.wal.tmp")) return file.sync();
      hook.calls.push(path);
      if (hook.gate) await hook.gate;
      await file.sync();
    },
  };
  return hook;
}

function recordAt(revision: number): WALRecord {
  return {
    revision,
    payload: Uint8Array.from({ length: (revision * 5) % 23 }, (_, i) => (revision + i) & 0xff),
  };
}

/** Where each record's frame starts in a segment that holds `records` from its beginning. */
function frameStarts(records: WALRecord[]): number[] {
  const starts: number[] = [];
  let offset = 0;
  let crc = 0;
  for (const record of records) {
    starts.push(offset);
    const frame = encodeFrame(record, crc);
    offset += frame.bytes.length;
    crc = frame.crc;
  }
  return starts;
}

/** Writes a segment file directly, for shapes the WAL itself never produces. */
async function writeSegment(
  dir: string,
  seq: number,
  revision: number,
  records: WALRecord[],
): Promise<string> {
  const frames: Uint8Array[] = [];
  let crc = 0;
  for (const record of records) {
    const frame = encodeFrame(record, crc);
    frames.push(frame.bytes);
    crc = frame.crc;
  }
  const path = join(dir, walName(seq, revision));
  await writeFile(path, Buffer.concat(frames));
  return path;
}

/** A WAL in a fresh directory holding `records`, closed; returns the directory and segment path. */
async function walWith(records: WALRecord[]): Promise<{ dir: string; path: string }> {
  const dir = await tempDir();
  const { wal } = await openOk(dir);
  await Promise.all(records.map((r) => wal.append(r.revision, r.payload)));
  await wal.close();
  return { dir, path: join(dir, walName(0, 0)) };
}

describe("WAL: append and recover", () => {
  it("starts a fresh directory with segment 0 and nothing to replay", async () => {
    const dir = await tempDir();
    const { wal, snapshot, records } = await openOk(dir);
    expect(snapshot).toBeUndefined();
    expect(records).toEqual([]);
    expect(wal.lastRevision).toBe(0);
    await wal.close();
    expect(await readdir(dir)).toEqual(["0000000000000000-0000000000000000.wal"]);
  });

  it("gives back every record in append order after a restart, equal revisions included", async () => {
    const records = [1, 2, 3, 3, 4, 10].map(recordAt);
    const { dir } = await walWith(records);
    const reopened = await openOk(dir);
    expect(reopened.records).toEqual(records);
    expect(reopened.wal.lastRevision).toBe(10);
    await reopened.wal.append(11, recordAt(11).payload);
    await reopened.wal.close();
    expect(await replay(dir)).toEqual([...records, recordAt(11)]);
  });

  it("refuses a revision that goes back, a record it could not read back, and any append after close", async () => {
    const dir = await tempDir();
    const { wal } = await openOk(dir);
    await wal.append(5, new Uint8Array([1]));
    await expect(wal.append(4, new Uint8Array([2]))).rejects.toMatchObject({
      reason: "wal: revision out of order",
    });
    await expect(wal.append(Number.NaN, new Uint8Array([2]))).rejects.toMatchObject({
      reason: "wal: invalid record",
    });
    // A record recovery could not read back (longer than MAX_BODY_BYTES) is refused up front.
    await expect(wal.append(6, new Uint8Array(MAX_BODY_BYTES))).rejects.toThrow(/exceeds the .*-byte limit/);
    await wal.close();
    await expect(wal.append(6, new Uint8Array([3]))).rejects.toMatchObject({ reason: "wal: closed" });
    expect((await replay(dir)).map((r) => r.revision)).toEqual([5]);
  });
});

describe("WAL: group commit", () => {
  it("makes 100 appends made in the same tick durable with one write and one fsync", async () => {
    const dir = await tempDir();
    const disk = countingFsync();
    const { wal } = await openOk(dir, { fsync: disk.fsync });
    disk.calls.length = 0;

    await Promise.all(Array.from({ length: 100 }, (_, i) => wal.append(i + 1, recordAt(i + 1).payload)));
    expect(disk.calls).toEqual([join(dir, walName(0, 0))]);
    await wal.close();
    expect(await replay(dir)).toHaveLength(100);
  });

  it("batches appends that arrive while an fsync is in flight into the next write+fsync", async () => {
    const dir = await tempDir();
    const disk = countingFsync();
    const { wal } = await openOk(dir, { fsync: disk.fsync });
    disk.calls.length = 0;
    let release!: () => void;
    disk.gate = new Promise((resolve) => {
      release = resolve;
    });

    const acked: number[] = [];
    const append = (revision: number) =>
      wal.append(revision, recordAt(revision).payload).then(() => acked.push(revision));
    const first = append(1);
    while (disk.calls.length === 0) await new Promise((resolve) => setImmediate(resolve)); // first fsync started
    const rest = Array.from({ length: 99 }, (_, i) => append(i + 2));
    await new Promise((resolve) => setImmediate(resolve));
    expect(acked).toEqual([]); // nobody is acknowledged before the fsync returns

    release();
    await Promise.all([first, ...rest]);
    expect(disk.calls).toHaveLength(2); // [1] and then [2..100]: 100 appends, 2 fsyncs
    expect(acked).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
    await wal.close();
  });

  it("needs far fewer fsyncs than appends when callers append one after another", async () => {
    const dir = await tempDir();
    const disk = countingFsync();
    const { wal } = await openOk(dir, { fsync: disk.fsync });
    disk.calls.length = 0;

    let next = 1;
    const caller = async () => {
      for (let i = 0; i < 10; i++) {
        const revision = next++;
        await wal.append(revision, recordAt(revision).payload);
      }
    };
    await Promise.all(Array.from({ length: 10 }, caller)); // 10 callers x 10 appends
    // When a batch's fsync returns, its 10 callers resume in the same tick and make their next
    // appends together: one batch per round, 10 fsyncs for 100 appends.
    expect(disk.calls).toHaveLength(10);
    await wal.close();
    expect((await replay(dir)).map((r) => r.revision)).toEqual(Array.from({ length: 100 }, (_, i) => i + 1));
  });

  it("rejects the batch whose fsync failed and every append after it", async () => {
    const dir = await tempDir();
    let fail = false;
    const { wal } = await openOk(dir, {
      fsync: async (file) => {
        if (fail) throw Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
        await file.sync();
      },
    });
    await wal.append(1, new Uint8Array([1]));
    fail = true;
    const batch = [wal.append(2, new Uint8Array([2])), wal.append(3, new Uint8Array([3]))];
    for (const append of batch) await expect(append).rejects.toMatchObject({ reason: "wal: write failed" });
    fail = false;
    await expect(wal.append(4, new Uint8Array([4]))).rejects.toThrow(/accepts no more writes/);
    await wal.close();
  });
});

describe("WAL: torn tail", () => {
  // Four records; the fourth is then damaged the way a crash can leave the last write.
  const records = [1, 2, 3, 4].map(recordAt);
  const lastStart = frameStarts(records)[3];
  const tornShapes: { reason: string; damage: (path: string) => Promise<void> }[] = [
    { reason: "short length", damage: (path) => truncate(path, lastStart + 5) },
    { reason: "short payload", damage: (path) => truncate(path, lastStart + FRAME_HEADER_BYTES + 6) },
    {
      reason: "bad checksum on the last record",
      damage: async (path) => {
        const bytes = await readFile(path);
        bytes[lastStart + FRAME_HEADER_BYTES + 3] ^= 0x04;
        await writeFile(path, bytes);
      },
    },
  ];

  for (const shape of tornShapes) {
    it(`cuts off a ${shape.reason}, says so, and appends correctly afterwards`, async () => {
      const { dir, path } = await walWith(records);
      await shape.damage(path);
      const damagedSize = (await stat(path)).size;

      const lines: string[] = [];
      const reopened = await openOk(dir, { log: (line) => lines.push(line) });
      expect(reopened.records).toEqual(records.slice(0, 3));
      expect(lines).toEqual([
        `wal: ${path}: torn write at the end of the log (${shape.reason}): zeroed from offset ${lastStart} ` +
          `to the end of the file (${damagedSize - lastStart} bytes). They were never fsynced, so no ` +
          "acknowledged write is lost.",
      ]);
      // Zeroed in place, so the file keeps its (preallocated) size.
      const repaired = await readFile(path);
      expect(repaired.length).toBe(damagedSize);
      expect(repaired.subarray(lastStart).every((b) => b === 0)).toBe(true);

      await reopened.wal.append(4, records[3].payload);
      await reopened.wal.append(5, recordAt(5).payload);
      await reopened.wal.close();
      const again: string[] = [];
      const final = await openOk(dir, { log: (line) => again.push(line) });
      expect(final.records).toEqual([...records, recordAt(5)]);
      expect(again).toEqual([]);
      await final.wal.close();
    });
  }
});

describe("WAL: preallocated segments", () => {
  const small = 4096; // segmentBytes for these tests: a few records fill a segment

  it("creates a segment at its full size, zero-filled, and appends without growing it", async () => {
    const dir = await tempDir();
    const { wal } = await openOk(dir, { segmentBytes: small });
    const path = join(dir, walName(0, 0));
    expect((await stat(path)).size).toBe(small);
    await wal.append(1, recordAt(1).payload);
    await wal.append(2, recordAt(2).payload);
    expect((await stat(path)).size).toBe(small);
    await wal.close();
    // The next segment, prepared in the background, is deleted on close.
    expect(await readdir(dir)).toEqual([walName(0, 0)]);

    const bytes = await readFile(path);
    const used = frameStarts([1, 2, 3].map(recordAt))[2];
    expect(bytes.subarray(used).every((b) => b === 0)).toBe(true);
    const lines: string[] = [];
    const reopened = await openOk(dir, { segmentBytes: small, log: (line) => lines.push(line) });
    expect(reopened.records).toEqual([1, 2].map(recordAt));
    expect(lines).toEqual([]); // a zero-filled tail is the normal end of the log, not a torn write
    await reopened.wal.append(3, recordAt(3).payload);
    await reopened.wal.close();
    expect(await replay(dir)).toEqual([1, 2, 3].map(recordAt));
  });

  it("reads zeros after the last record as the end of the log in a file it did not preallocate", async () => {
    const records = [1, 2, 3].map(recordAt);
    const dir = await tempDir();
    const path = await writeSegment(dir, 0, 0, records);
    await appendFile(path, new Uint8Array(4096));
    const size = (await stat(path)).size;
    const lines: string[] = [];
    const { wal, records: got } = await openOk(dir, { log: (line) => lines.push(line) });
    await wal.close();
    expect(got).toEqual(records);
    expect(lines).toEqual([]);
    expect((await stat(path)).size).toBe(size);
  });

  it("cuts a full segment, continuing from the last revision written, and recovers across segments", async () => {
    const dir = await tempDir();
    const lines: string[] = [];
    const { wal } = await openOk(dir, { segmentBytes: small, log: (line) => lines.push(line) });
    const payload = new Uint8Array(1000).fill(7); // 1024-byte frames: 4 fill a segment
    for (let rev = 1; rev <= 9; rev++) await wal.append(rev, payload);
    await wal.close();
    expect((await readdir(dir)).sort()).toEqual([walName(0, 0), walName(1, 4), walName(2, 8)]);
    expect(lines).toEqual([
      `wal: started segment ${join(dir, walName(1, 4))}`,
      `wal: started segment ${join(dir, walName(2, 8))}`,
    ]);
    for (const name of await readdir(dir)) expect((await stat(join(dir, name))).size).toBe(small);
    expect((await replay(dir)).map((r) => r.revision)).toEqual([1, 2, 3, 4, 5, 6, 7, 8, 9]);
  });

  it("deletes a segment that was being prepared when the process stopped", async () => {
    const { dir } = await walWith([1, 2].map(recordAt));
    await writeFile(join(dir, "next.wal.tmp"), new Uint8Array(100));
    const { wal, records } = await openOk(dir);
    await wal.close();
    expect(records.map((r) => r.revision)).toEqual([1, 2]);
    expect(await readdir(dir)).toEqual([walName(0, 0)]);
  });
});

describe("WAL: damage before the end refuses to start", () => {
  const records = [1, 2, 3, 4, 5].map(recordAt);
  const starts = frameStarts(records);

  it("names the file and offset of a bad checksum in the middle, and touches nothing", async () => {
    const { dir, path } = await walWith(records);
    const bytes = await readFile(path);
    bytes[starts[1] + FRAME_HEADER_BYTES + 2] ^= 0x01; // one bit in record 2's body
    await writeFile(path, bytes);

    const err = await openError(dir);
    expect(err).toMatchObject({ reason: "wal: crc mismatch", file: path, offset: starts[1] });
    expect(err.message).toContain(`in file '${path}' at position ${starts[1]}`);
    expect(err.message).toContain(`truncate -s ${starts[1]} '${path}'`);
    expect(err.message).toMatch(/more bytes follow it/);
    expect((await stat(path)).size).toBe(bytes.length);
  });

  it("refuses an invalid length field in the middle", async () => {
    const { dir, path } = await walWith(records);
    const bytes = await readFile(path);
    bytes[starts[2] + 7] = 0x42; // neither 0 nor 0x80|pad in the top byte
    await writeFile(path, bytes);
    expect(await openError(dir)).toMatchObject({
      reason: "wal: invalid record length",
      file: path,
      offset: starts[2],
    });
  });

  it("refuses an invalid length field even on the last record: an aligned length is never torn", async () => {
    const { dir, path } = await walWith(records);
    const bytes = await readFile(path);
    bytes[starts[4] + 7] = 0x42;
    await writeFile(path, bytes);
    const err = await openError(dir);
    expect(err).toMatchObject({ reason: "wal: invalid record length", offset: starts[4] });
    expect(err.message).toMatch(/written whole or not at all/);
  });

  it("refuses a damaged length that points past the end when intact records follow it", async () => {
    // A segment without preallocated zeros after its records, so that the length points past its end.
    const dir = await tempDir();
    const path = await writeSegment(dir, 0, 0, records);
    const bytes = await readFile(path);
    bytes[starts[2] + 1] ^= 0x10; // record 3 now claims 4 KiB more body than the file holds
    await writeFile(path, bytes);
    const err = await openError(dir);
    expect(err).toMatchObject({ reason: "wal: unexpected EOF", offset: starts[2] });
    expect(err.message).toContain(`a valid record that follows this one starts at position ${starts[3]}`);
    expect((await stat(path)).size).toBe(bytes.length); // nothing was truncated
  });

  it("refuses a torn-looking end in a segment that is not the last", async () => {
    const dir = await tempDir();
    const older = await writeSegment(dir, 0, 0, records.slice(0, 3));
    await truncate(older, frameStarts(records)[2] + 20);
    await writeSegment(dir, 1, 3, records.slice(3));
    const err = await openError(dir);
    expect(err).toMatchObject({ reason: "wal: unexpected EOF", file: older, offset: starts[2] });
    expect(err.message).toMatch(/not the last one/);
    expect(err.message).toMatch(/delete the segment files after it/);
  });

  it("refuses a gap in the segment sequence", async () => {
    const dir = await tempDir();
    await writeSegment(dir, 0, 0, records.slice(0, 2));
    await writeSegment(dir, 2, 4, records.slice(3));
    const err = await openError(dir);
    expect(err.reason).toBe("wal: file not found");
    expect(err.message).toMatch(/segment seq 1 is missing/);
  });
});

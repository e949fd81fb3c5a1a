import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { crc32c } from "../../../code/store/pkg/crc.ts";
import { decodeSegment } from "../../../code/store/wal/decoder.ts";
import { WALError } from "../../../code/store/wal/errors.ts";
import { MAX_BODY_BYTES, type WALRecord } from "../../../code/store/wal/record.ts";
import { SnapError } from "../../../code/store/wal/snapshotter.ts";
import { walName } from "../../../code/store/wal/util.ts";
import { type RecoveredWAL, WAL, type WALOptions } from "../../../code/store/wal/wal.ts";
import { decodeFrame, encodeFrame } from "./wal-frame.ts";

/** Records with payloads of 0 to 20 bytes: every amount of padding occurs. */
const records: WALRecord[] = Array.from({ length: 21 }, (_, i) => ({
  revision: i + 2,
  payload: Uint8Array.from({ length: i }, (_, j) => (i * 31 + j) & 0xff),
}));

const text = (revision: number, payload: string): WALRecord => ({
  revision,
  payload: new TextEncoder().encode(payload),
});

/** Records as plain data, so that Buffer and Uint8Array payloads compare equal. */
const plain = (rs: WALRecord[]) => rs.map((r) => ({ revision: r.revision, payload: [...r.payload] }));

/** The body a frame checksums: the revision (8 bytes, little-endian), then the payload. */
function bodyOf(r: WALRecord): Uint8Array {
  const body = new Uint8Array(8 + r.payload.length);
  new DataView(body.buffer).setBigUint64(0, BigInt(r.revision), true);
  body.set(r.payload, 8);
  return body;
}

/** Your encoder, run over several records as the WAL does: each chained from the one before. */
function encodeAll(rs: WALRecord[]): { bytes: Uint8Array; starts: number[]; crcs: number[] } {
  const frames: Uint8Array[] = [];
  const starts: number[] = [];
  const crcs: number[] = [];
  let crc = 0;
  let at = 0;
  for (const r of rs) {
    const frame = encodeFrame(r, crc);
    starts.push(at);
    frames.push(frame.bytes);
    crcs.push(frame.crc);
    at += frame.bytes.length;
    crc = frame.crc;
  }
  return { bytes: new Uint8Array(Buffer.concat(frames)), starts, crcs };
}

function lengthField(frame: Uint8Array): { top: number; low: number } {
  const field = new DataView(frame.buffer, frame.byteOffset).getBigUint64(0, true);
  return { top: Number(field >> 56n), low: Number(field & ((1n << 56n) - 1n)) };
}

describe("encodeFrame: the bytes of one frame", () => {
  it("lays out length, crc, revision, payload and padding, little-endian", () => {
    const r = text(5, "hi");
    const { bytes, crc } = encodeFrame(r, 0);
    const body = bodyOf(r); // 10 bytes; 12 + 10 = 22, so 2 bytes of padding make 24
    expect(crc).toBe(crc32c(body, 0));
    const crcBytes = [crc & 0xff, (crc >>> 8) & 0xff, (crc >>> 16) & 0xff, crc >>> 24];
    expect([...bytes]).toEqual([
      ...[10, 0, 0, 0, 0, 0, 0, 0x82], // length 10; top byte 0x80 | 2 padding bytes
      ...crcBytes,
      ...[5, 0, 0, 0, 0, 0, 0, 0], // revision 5
      ...[0x68, 0x69], // "hi"
      ...[0, 0], // padding
    ]);
  });

  it("makes every frame a multiple of 8 bytes, and records the padding in the length field", () => {
    for (const r of records) {
      const { bytes } = encodeFrame(r, 0);
      const bodyBytes = 8 + r.payload.length;
      const pad = bytes.length - 12 - bodyBytes;
      expect(bytes.length % 8, `payload of ${r.payload.length} bytes`).toBe(0);
      expect(pad).toBeGreaterThanOrEqual(0);
      expect(pad).toBeLessThan(8);
      expect(lengthField(bytes)).toEqual({ low: bodyBytes, top: pad === 0 ? 0 : 0x80 | pad });
      expect([...bytes.subarray(12 + bodyBytes)]).toEqual(new Array(pad).fill(0));
    }
  });

  it("chains each crc from the previous record's", () => {
    const first = encodeFrame(text(2, "first"), 0);
    const second = encodeFrame(text(3, "second"), first.crc);
    expect(second.crc).toBe(crc32c(bodyOf(text(3, "second")), first.crc));
    expect(second.crc).not.toBe(encodeFrame(text(3, "second"), 0).crc);
    expect(new DataView(second.bytes.buffer, second.bytes.byteOffset).getUint32(8, true)).toBe(second.crc);
  });
});

describe("decodeFrame: reading frames back", () => {
  it("reads back a chain of frames, each starting where the one before ended", () => {
    const { bytes, starts, crcs } = encodeAll(records);
    let crc = 0;
    for (const [i, start] of starts.entries()) {
      const frame = decodeFrame(bytes, start, crc);
      if (!frame.ok) throw new Error(`frame ${i} at ${start}: ${JSON.stringify(frame.problem)}`);
      expect(plain([frame.record])).toEqual(plain([records[i]]));
      expect(frame.crc).toBe(crcs[i]);
      expect(frame.end).toBe(starts[i + 1] ?? bytes.length);
      crc = frame.crc;
    }
  });

  it("tells how a frame was cut short: short-length, or short-payload with the crc once it is there", () => {
    const before = encodeFrame(text(2, "before"), 0);
    const last = encodeFrame(text(3, "hello world"), before.crc); // 12 + 19 + 1 padding = 32 bytes
    const offset = before.bytes.length;
    for (let cut = 1; cut < last.bytes.length; cut++) {
      const bytes = new Uint8Array(Buffer.concat([before.bytes, last.bytes.subarray(0, cut)]));
      const got = decodeFrame(bytes, offset, before.crc);
      const want =
        cut < 8
          ? { kind: "short-length", available: cut }
          : {
              kind: "short-payload",
              frameBytes: 32,
              available: cut,
              storedCrc: cut >= 12 ? last.crc : undefined,
            };
      expect(got, `cut after ${cut} bytes`).toEqual({ ok: false, problem: want });
    }
  });

  it("rejects a length field the encoder could not have written: invalid-length", () => {
    const good = encodeFrame(text(7, "payload"), 0).bytes; // body 15, padding 5: top byte 0x85
    const withLength = (field: bigint) => {
      const bytes = good.slice();
      new DataView(bytes.buffer).setBigUint64(0, field, true);
      return bytes;
    };
    const cases: [string, bigint][] = [
      ["zero", 0n],
      ["shorter than a revision", 7n | (0x81n << 56n)],
      ["padding marker missing", 15n],
      ["padding marker disagrees with the length", 15n | (0x83n << 56n)],
      ["beyond the largest record", BigInt(MAX_BODY_BYTES + 8)],
    ];
    for (const [name, field] of cases) {
      const got = decodeFrame(withLength(field), 0, 0);
      expect(got, name).toEqual({
        ok: false,
        problem: { kind: "invalid-length", detail: expect.any(String) },
      });
    }
  });

  it("rejects a body that does not match its crc: crc-mismatch, with where the frame ends", () => {
    const r = text(4, "payload");
    const { bytes, crc } = encodeFrame(r, 0);
    const flipped = bytes.slice();
    flipped[12 + 8 + 2] ^= 0x01; // one bit of the payload
    const damagedBody = flipped.slice(12, 12 + 8 + r.payload.length);
    expect(decodeFrame(flipped, 0, 0)).toEqual({
      ok: false,
      problem: {
        kind: "crc-mismatch",
        storedCrc: crc,
        computedCrc: crc32c(damagedBody, 0),
        end: bytes.length,
      },
    });
    // The right bytes in the wrong place: chained from another crc, they do not check out either.
    expect(decodeFrame(bytes, 0, 12345)).toMatchObject({ ok: false, problem: { kind: "crc-mismatch" } });
  });
});

describe("inside the real WAL", () => {
  const dirs: string[] = [];
  afterEach(async () => {
    await Promise.all(dirs.splice(0).map((dir) => rm(dir, { recursive: true, force: true })));
  });

  // The format is what is tested here, not durability: skip the fsyncs, and preallocate small
  // segments instead of 64 MB ones, to keep the tests fast.
  const options: WALOptions = { log: () => {}, fsync: async () => {}, segmentBytes: 64 * 1024 };

  /** A new, empty log directory, and the path of its first segment. */
  async function newLog(): Promise<{ dir: string; segment: string }> {
    const dir = await mkdtemp(join(tmpdir(), "wal-framing-"));
    dirs.push(dir);
    const { wal } = await openOk(dir);
    await wal.close();
    return { dir, segment: join(dir, walName(0, 0)) };
  }

  async function openOk(dir: string): Promise<RecoveredWAL> {
    const opened = await WAL.open(dir, options);
    if (opened instanceof WALError || opened instanceof SnapError) throw opened;
    return opened;
  }

  /** The real WAL appends the records (concurrently: group commit), then closes. */
  async function writtenByTheWAL(): Promise<{ segment: string; bytes: Uint8Array }> {
    const { dir, segment } = await newLog();
    const { wal } = await openOk(dir);
    await Promise.all(records.map((r) => wal.append(r.revision, r.payload)));
    await wal.close();
    // The segment was preallocated: keep the records, not the zeros after them.
    const all = new Uint8Array(await readFile(segment));
    const real = decodeSegment(segment, all, true, 0);
    if (real instanceof WALError) throw real;
    return { segment, bytes: all.subarray(0, real.validBytes) };
  }

  /** Recovery's segment reader — torn-tail and damage rules included — running on your decoder. */
  const decodeWithYours = (segment: string, bytes: Uint8Array) =>
    decodeSegment(segment, bytes, true, 0, decodeFrame);

  it("the real WAL recovers a log your encoder wrote, and goes on appending after it", async () => {
    const { dir, segment } = await newLog();
    await writeFile(segment, encodeAll(records).bytes);
    const recovered = await openOk(dir);
    expect(plain(recovered.records)).toEqual(plain(records));
    // The real WAL continues the crc chain from your last record.
    await recovered.wal.append(30, new TextEncoder().encode("after yours"));
    await recovered.wal.close();
    const again = await openOk(dir);
    await again.wal.close();
    expect(plain(again.records)).toEqual(plain([...records, text(30, "after yours")]));
  });

  it("the real WAL cuts off a record your encoder wrote that a crash left half-written", async () => {
    const { dir, segment } = await newLog();
    const { bytes, crcs } = encodeAll(records);
    const torn = encodeFrame(text(40, "never acknowledged"), crcs[crcs.length - 1]).bytes.subarray(0, 20);
    await writeFile(segment, Buffer.concat([bytes, torn]));
    const recovered = await openOk(dir);
    await recovered.wal.close();
    expect(plain(recovered.records)).toEqual(plain(records));
    // The torn bytes were zeroed: the file holds your records, then nothing but zeros.
    const after = await readFile(segment);
    expect(Buffer.compare(after.subarray(0, bytes.length), bytes)).toBe(0);
    expect(after.subarray(bytes.length).every((byte) => byte === 0)).toBe(true);
  });

  it("your decoder reads every record the real WAL appended", async () => {
    const { segment, bytes } = await writtenByTheWAL();
    const yours = decodeWithYours(segment, bytes);
    if (yours instanceof WALError) throw yours;
    const real = decodeSegment(segment, bytes, true, 0);
    if (real instanceof WALError) throw real;
    expect(plain(yours.records)).toEqual(plain(records));
    expect(yours.validBytes).toBe(bytes.length);
    expect(yours.tornTail).toBeUndefined();
    expect(yours.crc).toBe(real.crc);
  });

  it("a crash that cut the last record short: recovery on your decoder keeps every whole record", async () => {
    const { segment, bytes } = await writtenByTheWAL();
    const lastStart = bytes.length - encodeFrame(records[records.length - 1], 0).bytes.length;
    for (let cut = lastStart + 1; cut < bytes.length; cut++) {
      const got = decodeWithYours(segment, bytes.subarray(0, cut));
      if (got instanceof WALError) throw new Error(`cut at ${cut}: ${got.message}`);
      expect(got.tornTail, `cut at ${cut}`).toBeDefined();
      expect(got.validBytes).toBe(lastStart);
      expect(got.records).toHaveLength(records.length - 1);
    }
  });

  it("zeros after the records, or a power cut that left zeros: recovery on your decoder keeps the whole records", async () => {
    const { segment, bytes } = await writtenByTheWAL();
    // The file grew, but its last blocks never reached the disk.
    const grown = new Uint8Array(Buffer.concat([bytes, new Uint8Array(4096)]));
    const afterGrowth = decodeWithYours(segment, grown);
    if (afterGrowth instanceof WALError) throw afterGrowth;
    expect(afterGrowth.records).toHaveLength(records.length);
    expect(afterGrowth.validBytes).toBe(bytes.length);
    // The last record's length made it, the end of its body did not.
    const lastStart = bytes.length - encodeFrame(records[records.length - 1], 0).bytes.length;
    const zeroed = bytes.slice();
    zeroed.fill(0, lastStart + 16);
    const afterZeros = decodeWithYours(segment, zeroed);
    if (afterZeros instanceof WALError) throw afterZeros;
    expect(afterZeros.records).toHaveLength(records.length - 1);
    expect(afterZeros.validBytes).toBe(lastStart);
  });

  it("damage before the end stops recovery on your decoder, naming the damaged record's offset", async () => {
    const { segment, bytes } = await writtenByTheWAL();
    const starts = encodeAll(records).starts; // the WAL wrote the same frames, at the same offsets

    const flipped = bytes.slice();
    flipped[starts[5] + 12 + 8 + 1] ^= 0x10; // a bit in record 5's payload
    const crcError = decodeWithYours(segment, flipped);
    expect(crcError).toBeInstanceOf(WALError);
    expect(crcError).toMatchObject({ reason: "wal: crc mismatch", offset: starts[5] });

    const badLength = bytes.slice();
    badLength[starts[7] + 7] = 0x13; // record 7's length field: a top byte no encoder writes
    const lengthError = decodeWithYours(segment, badLength);
    expect(lengthError).toBeInstanceOf(WALError);
    expect(lengthError).toMatchObject({ reason: "wal: invalid record length", offset: starts[7] });
  });
});

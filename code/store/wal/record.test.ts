import { describe, expect, it } from "vitest";
import {
  decodeFrame,
  decodeLengthField,
  encodeFrame,
  encodeLengthField,
  FRAME_HEADER_BYTES,
  MAX_BODY_BYTES,
  paddingFor,
  type WALRecord,
} from "./record.ts";

const text = (s: string) => new TextEncoder().encode(s);

function payload(length: number, seed = 1): Uint8Array {
  return Uint8Array.from({ length }, (_, i) => (seed * 31 + i * 7) & 0xff);
}

/** Frames for `records`, back to back and crc-chained, as one segment holds them. */
function segmentOf(records: WALRecord[]): { bytes: Uint8Array; starts: number[] } {
  const parts: Uint8Array[] = [];
  const starts: number[] = [];
  let crc = 0;
  let offset = 0;
  for (const record of records) {
    const frame = encodeFrame(record, crc);
    starts.push(offset);
    parts.push(frame.bytes);
    offset += frame.bytes.length;
    crc = frame.crc;
  }
  const bytes = new Uint8Array(offset);
  for (const [i, part] of parts.entries()) bytes.set(part, starts[i]);
  return { bytes, starts };
}

describe("frame size", () => {
  it("pads every frame to a multiple of 8 and records the padding in the top byte", () => {
    for (let body = 8; body < 40; body++) {
      const pad = paddingFor(body);
      expect((FRAME_HEADER_BYTES + body + pad) % 8).toBe(0);
      expect(decodeLengthField(encodeLengthField(body))).toEqual({ bodyBytes: body, padBytes: pad });
      const top = Number(encodeLengthField(body) >> 56n);
      expect(top).toBe(pad === 0 ? 0 : 0x80 | pad);
    }
  });

  it("rejects length fields it could not have written", () => {
    expect(decodeLengthField(0n)).toMatch(/shorter than a revision/);
    expect(decodeLengthField(BigInt(MAX_BODY_BYTES + 8))).toMatch(/exceeds/);
    // body 9 needs 3 bytes of padding (12 + 9 + 3 = 24): marker 0x83, not 0x85 or none
    expect(decodeLengthField(9n | (0x85n << 56n))).toMatch(/padding byte 0x85/);
    expect(decodeLengthField(9n)).toMatch(/padding byte 0x0/);
    expect(decodeLengthField(9n | (0x83n << 56n))).toEqual({ bodyBytes: 9, padBytes: 3 });
  });
});

describe("encodeFrame / decodeFrame", () => {
  it("round-trips records of every padding size, including an empty payload", () => {
    for (let length = 0; length <= 17; length++) {
      const record = { revision: 1000 + length, payload: payload(length, length) };
      const { bytes, crc } = encodeFrame(record, 0);
      expect(bytes.length % 8).toBe(0);
      const decoded = decodeFrame(bytes, 0, 0);
      expect(decoded).toEqual({ ok: true, record, crc, end: bytes.length });
    }
  });

  it("decodes a chained run of frames in order", () => {
    const records = [1, 2, 2, 5, 9].map((revision) => ({
      revision,
      payload: payload(revision * 3, revision),
    }));
    const { bytes } = segmentOf(records);
    const out: WALRecord[] = [];
    let offset = 0;
    let crc = 0;
    while (offset < bytes.length) {
      const frame = decodeFrame(bytes, offset, crc);
      if (!frame.ok) throw new Error(`decode failed at ${offset}: ${frame.problem.kind}`);
      out.push(frame.record);
      offset = frame.end;
      crc = frame.crc;
    }
    expect(out).toEqual(records);
  });

  it("detects every single flipped bit in the header and body", () => {
    const record = { revision: 42, payload: text("put /registry/pods/default/web") };
    const { bytes } = encodeFrame(record, 0);
    const framed = FRAME_HEADER_BYTES + 8 + record.payload.length; // the padding carries no data
    let detected = 0;
    for (let bit = 0; bit < framed * 8; bit++) {
      const damaged = bytes.slice();
      damaged[bit >> 3] ^= 1 << (bit & 7);
      if (!decodeFrame(damaged, 0, 0).ok) detected++;
    }
    expect(detected).toBe(framed * 8);
  });

  it("reports a flipped payload bit as a crc mismatch", () => {
    const { bytes } = encodeFrame({ revision: 7, payload: text("value") }, 0);
    bytes[FRAME_HEADER_BYTES + 8] ^= 0x10;
    const decoded = decodeFrame(bytes, 0, 0);
    expect(decoded.ok).toBe(false);
    if (!decoded.ok) expect(decoded.problem.kind).toBe("crc-mismatch");
  });

  it("rejects an intact frame read with the wrong chain value: records only check out in place", () => {
    const { bytes } = encodeFrame({ revision: 3, payload: text("moved") }, 0x1234);
    expect(decodeFrame(bytes, 0, 0x1234).ok).toBe(true);
    expect(decodeFrame(bytes, 0, 0).ok).toBe(false);
  });

  it("tells a file that ends inside the length field from one that ends inside the body", () => {
    const { bytes } = encodeFrame({ revision: 3, payload: payload(40) }, 0);
    const shortLength = decodeFrame(bytes.subarray(0, 5), 0, 0);
    expect(shortLength).toEqual({ ok: false, problem: { kind: "short-length", available: 5 } });

    const noCrc = decodeFrame(bytes.subarray(0, 10), 0, 0);
    expect(noCrc).toEqual({
      ok: false,
      problem: { kind: "short-payload", frameBytes: bytes.length, available: 10, storedCrc: undefined },
    });

    const shortPayload = decodeFrame(bytes.subarray(0, 30), 0, 0);
    expect(shortPayload.ok).toBe(false);
    if (!shortPayload.ok) {
      expect(shortPayload.problem).toMatchObject({ kind: "short-payload", available: 30 });
      expect(shortPayload.problem.kind === "short-payload" && shortPayload.problem.storedCrc).toBeTypeOf(
        "number",
      );
    }
  });
});

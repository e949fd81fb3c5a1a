// Mistake: the padding rounds the body up to 8 bytes (etcd's formula, whose length field is the whole header) and forgets the 4-byte crc, so frames are not 8-byte aligned and the length field's padding marker is not the one recovery expects.
import { crc32c } from "../../../code/store/pkg/crc.ts";
import {
  type DecodedFrame,
  FRAME_ALIGNMENT,
  FRAME_HEADER_BYTES,
  MAX_BODY_BYTES,
  type WALRecord,
} from "../../../code/store/wal/record.ts";

/** Zero bytes after the body. */
function padding(bodyBytes: number): number {
  // The mistake: the 12-byte header (length + crc) is left out of the sum that must be a multiple of 8.
  return (FRAME_ALIGNMENT - (bodyBytes % FRAME_ALIGNMENT)) % FRAME_ALIGNMENT;
}

export function encodeFrame(record: WALRecord, previousCrc: number): { bytes: Uint8Array; crc: number } {
  const bodyBytes = 8 + record.payload.length;
  const pad = padding(bodyBytes);
  const bytes = new Uint8Array(FRAME_HEADER_BYTES + bodyBytes + pad);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(FRAME_HEADER_BYTES, BigInt(record.revision), true);
  bytes.set(record.payload, FRAME_HEADER_BYTES + 8);
  const crc = crc32c(bytes.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + bodyBytes), previousCrc);
  const marker = pad === 0 ? 0n : BigInt(0x80 | pad) << 56n;
  view.setBigUint64(0, BigInt(bodyBytes) | marker, true);
  view.setUint32(8, crc, true);
  return { bytes, crc };
}

export function decodeFrame(bytes: Uint8Array, offset: number, previousCrc: number): DecodedFrame {
  const available = bytes.length - offset;
  if (available < 8) return { ok: false, problem: { kind: "short-length", available } };
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const field = view.getBigUint64(offset, true);
  const bodyBytes = Number(field & ((1n << 56n) - 1n));
  const pad = padding(bodyBytes);
  const expectedTop = pad === 0 ? 0 : 0x80 | pad;
  if (bodyBytes < 8 || bodyBytes > MAX_BODY_BYTES || Number(field >> 56n) !== expectedTop) {
    return { ok: false, problem: { kind: "invalid-length", detail: `length field 0x${field.toString(16)}` } };
  }
  const frameBytes = FRAME_HEADER_BYTES + bodyBytes + pad;
  if (frameBytes > available) {
    const storedCrc = available >= FRAME_HEADER_BYTES ? view.getUint32(offset + 8, true) : undefined;
    return { ok: false, problem: { kind: "short-payload", frameBytes, available, storedCrc } };
  }
  const storedCrc = view.getUint32(offset + 8, true);
  const body = bytes.subarray(offset + FRAME_HEADER_BYTES, offset + FRAME_HEADER_BYTES + bodyBytes);
  const end = offset + frameBytes;
  const computedCrc = crc32c(body, previousCrc);
  if (computedCrc !== storedCrc) {
    return { ok: false, problem: { kind: "crc-mismatch", storedCrc, computedCrc, end } };
  }
  const revision = Number(view.getBigUint64(offset + FRAME_HEADER_BYTES, true));
  return { ok: true, record: { revision, payload: body.slice(8) }, crc: storedCrc, end };
}

/**
 * WAL record framing — how one committed transaction is laid out as bytes in a log segment,
 * and the CRC-32C checksum that proves those bytes are the ones we wrote.
 * Mirrors etcd-io/etcd server/wal/encoder.go.
 *
 * Solves:
 * - after a crash, recovery must tell where one record ends and the next begins, using only the
 *   bytes on disk;
 * - it must notice any damaged record (a flipped bit, a half-written record, zeros where data
 *   never reached the disk) instead of handing wrong data to the store;
 * - it must notice a record that is intact but in the wrong place (moved, duplicated, or left over
 *   from an older write), which a per-record checksum alone cannot see.
 *
 * One frame (all integers little-endian):
 *
 *   offset  size  field
 *   0       8     length field: the low 56 bits hold N, the body length; when padding is
 *                 needed, the top byte is 0x80 | padBytes (etcd's encoding)
 *   8       4     crc: CRC-32C of the body, chained from the previous record's crc
 *   12      N     body: [8 bytes revision][payload — the store's opaque transaction bytes]
 *   12+N    pad   0–7 zero bytes, so that the whole frame is a multiple of 8 bytes long
 *
 * Invariants:
 * - every frame starts at a file offset that is a multiple of 8 (segments start empty and every
 *   frame's size is a multiple of 8), so the 8-byte length field never straddles a disk sector:
 *   after a power cut it holds either what we wrote or what was there before (zeros), never half
 *   of each. A length field that is neither is damage, not a torn write.
 * - crc(record k) = crc32c(body k, seeded with crc(record k-1)); the first record of a segment is
 *   seeded with 0. So a record only checks out in the exact position it was written in.
 * - N >= 8 (a body always holds a revision), so no valid frame begins with a zero length field.
 *
 * What etcd does differently: its body is a protobuf `walpb.Record` {type, crc, data} holding raft
 * entries, hard state, metadata and snapshot markers; the crc lives inside that protobuf; and the
 * chain continues across segments (each new segment opens with a crcType record carrying the
 * previous segment's last crc). We frame only store transactions, keep the crc outside the body,
 * and restart the chain at 0 in each segment. The checksum is CRC-32C (pkg/crc.ts).
 *
 * @upstream etcd-io/etcd server/wal/encoder.go (encoder, encodeFrameSize)
 * @upstream etcd-io/etcd server/wal/decoder.go (decoder, decodeFrameSize)
 * @chapter 01-etcd-watch
 */
import { crc32c } from "../pkg/crc.ts";

/** One record as the store sees it: the main revision of a write transaction and its bytes. */
export interface WALRecord {
  revision: number;
  payload: Uint8Array;
}

/** Bytes before the body: the length field and the crc. */
export const FRAME_HEADER_BYTES = 12;
/** Every frame, and so every frame start, is a multiple of this. */
export const FRAME_ALIGNMENT = 8;
/** The body starts with the revision. */
const REVISION_BYTES = 8;
/**
 * Largest body we accept. A larger length field can only be damage. (etcd instead bounds a record
 * by the bytes left in the file; a fixed bound also catches a flipped high bit in the length.)
 */
export const MAX_BODY_BYTES = 64 * 1024 * 1024;

const PADDING_MARKER = 0x80;

// #region frame-size
/** How many zero bytes follow a body of `bodyBytes` so the frame ends on an 8-byte boundary. */
export function paddingFor(bodyBytes: number): number {
  return (FRAME_ALIGNMENT - ((FRAME_HEADER_BYTES + bodyBytes) % FRAME_ALIGNMENT)) % FRAME_ALIGNMENT;
}

/** The 64-bit length field: the body length, plus etcd's padding marker in the top byte. */
export function encodeLengthField(bodyBytes: number): bigint {
  const padBytes = paddingFor(bodyBytes);
  const marker = padBytes === 0 ? 0n : BigInt(PADDING_MARKER | padBytes) << 56n;
  return BigInt(bodyBytes) | marker;
}

/**
 * Reads a length field back, or explains why it cannot be one we wrote. The padding is stored
 * even though it follows from the length: a top byte that disagrees with the length is one more
 * way to see damage.
 */
export function decodeLengthField(field: bigint): { bodyBytes: number; padBytes: number } | string {
  const top = Number(field >> 56n);
  const low = field & ((1n << 56n) - 1n);
  if (low < BigInt(REVISION_BYTES)) return `body length ${low} is shorter than a revision`;
  if (low > BigInt(MAX_BODY_BYTES)) return `body length ${low} exceeds the ${MAX_BODY_BYTES}-byte limit`;
  const bodyBytes = Number(low);
  const padBytes = paddingFor(bodyBytes);
  const expectedTop = padBytes === 0 ? 0 : PADDING_MARKER | padBytes;
  if (top !== expectedTop) {
    return `padding byte 0x${top.toString(16)} does not match body length ${bodyBytes} (expected 0x${expectedTop.toString(16)})`;
  }
  return { bodyBytes, padBytes };
}
// #endregion frame-size

// #region encode
/**
 * Builds one frame. `previousCrc` is the crc of the record before it in the same segment (0 for
 * the first); the returned `crc` is what the next record chains from.
 */
export function encodeFrame(record: WALRecord, previousCrc: number): { bytes: Uint8Array; crc: number } {
  const bodyBytes = REVISION_BYTES + record.payload.length;
  const padBytes = paddingFor(bodyBytes);
  const bytes = new Uint8Array(FRAME_HEADER_BYTES + bodyBytes + padBytes); // zero-filled: the padding
  const view = new DataView(bytes.buffer);

  view.setBigUint64(FRAME_HEADER_BYTES, BigInt(record.revision), true);
  bytes.set(record.payload, FRAME_HEADER_BYTES + REVISION_BYTES);
  const body = bytes.subarray(FRAME_HEADER_BYTES, FRAME_HEADER_BYTES + bodyBytes);
  const crc = crc32c(body, previousCrc);

  view.setBigUint64(0, encodeLengthField(bodyBytes), true);
  view.setUint32(8, crc, true);
  return { bytes, crc };
}
// #endregion encode

// #region decode
/**
 * What can be wrong with the bytes at an offset. Each has a different meaning at the log's tail
 * (see decoder.ts, `classifyDamage`):
 * - `short-length`: fewer than 8 bytes left — the file ends inside a length field.
 * - `invalid-length`: a full length field that we could not have written.
 * - `short-payload`: a sensible length, but the file ends before the frame does. `storedCrc` is
 *   set when the crc field itself made it to disk.
 * - `crc-mismatch`: the whole frame is there, but its body is not what was checksummed.
 */
export type FrameProblem =
  | { kind: "short-length"; available: number }
  | { kind: "invalid-length"; detail: string }
  | { kind: "short-payload"; frameBytes: number; available: number; storedCrc?: number }
  | { kind: "crc-mismatch"; storedCrc: number; computedCrc: number; end: number };

export type DecodedFrame =
  | { ok: true; record: WALRecord; crc: number; end: number }
  | { ok: false; problem: FrameProblem };

/**
 * Decodes the frame that starts at `offset` (which must be below `bytes.length`), checking its
 * crc against the chain value `previousCrc`. On success `end` is where the next frame starts.
 */
export function decodeFrame(bytes: Uint8Array, offset: number, previousCrc: number): DecodedFrame {
  const available = bytes.length - offset;
  if (available < 8) return { ok: false, problem: { kind: "short-length", available } };

  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const size = decodeLengthField(view.getBigUint64(offset, true));
  if (typeof size === "string") return { ok: false, problem: { kind: "invalid-length", detail: size } };

  const frameBytes = FRAME_HEADER_BYTES + size.bodyBytes + size.padBytes;
  if (frameBytes > available) {
    const storedCrc = available >= FRAME_HEADER_BYTES ? view.getUint32(offset + 8, true) : undefined;
    return { ok: false, problem: { kind: "short-payload", frameBytes, available, storedCrc } };
  }

  const storedCrc = view.getUint32(offset + 8, true);
  const bodyStart = offset + FRAME_HEADER_BYTES;
  const body = bytes.subarray(bodyStart, bodyStart + size.bodyBytes);
  const computedCrc = crc32c(body, previousCrc);
  const end = offset + frameBytes;
  if (computedCrc !== storedCrc) {
    return { ok: false, problem: { kind: "crc-mismatch", storedCrc, computedCrc, end } };
  }

  const revision = Number(view.getBigUint64(bodyStart, true));
  // Copy the payload out so the caller may drop the (possibly large) segment buffer.
  const payload = body.slice(REVISION_BYTES);
  return { ok: true, record: { revision, payload }, crc: storedCrc, end };
}
// #endregion decode

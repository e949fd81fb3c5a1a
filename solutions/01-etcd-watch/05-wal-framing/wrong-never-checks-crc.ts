// Mistake: the decoder reads the stored crc but never compares it with the body, so a damaged record is handed to the store as if it were intact.
import {
  type DecodedFrame,
  FRAME_HEADER_BYTES,
  decodeFrame as realDecode,
} from "../../../code/store/wal/record.ts";

export { encodeFrame } from "../../../code/store/wal/record.ts";

export function decodeFrame(bytes: Uint8Array, offset: number, previousCrc: number): DecodedFrame {
  const decoded = realDecode(bytes, offset, previousCrc);
  if (decoded.ok || decoded.problem.kind !== "crc-mismatch") return decoded;
  // The mistake: a mismatch is ignored and the body is handed over as it stands, damage and all.
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const bodyBytes = Number(view.getBigUint64(offset, true) & ((1n << 56n) - 1n));
  const bodyStart = offset + FRAME_HEADER_BYTES;
  const revision = Number(view.getBigUint64(bodyStart, true));
  const payload = bytes.slice(bodyStart + 8, bodyStart + bodyBytes);
  return {
    ok: true,
    record: { revision, payload },
    crc: decoded.problem.storedCrc,
    end: decoded.problem.end,
  };
}

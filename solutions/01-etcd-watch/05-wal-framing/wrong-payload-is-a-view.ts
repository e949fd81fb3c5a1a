// Mistake: the decoded record's payload is a view into the segment's bytes (subarray), not a copy. Plausible because a view costs nothing and the bytes look read-only; but the record then lives only as long as the buffer is left alone — whoever reads the segment may reuse or zero-fill it (recovery zero-fills a torn tail), and the record the store was handed changes under it.
import {
  type DecodedFrame,
  FRAME_HEADER_BYTES,
  decodeFrame as realDecode,
} from "../../../code/store/wal/record.ts";

export { encodeFrame } from "../../../code/store/wal/record.ts";

export function decodeFrame(bytes: Uint8Array, offset: number, previousCrc: number): DecodedFrame {
  const frame = realDecode(bytes, offset, previousCrc);
  if (!frame.ok) return frame;
  // The mistake: subarray() shares the caller's bytes; slice() would copy them.
  const start = offset + FRAME_HEADER_BYTES + 8;
  const payload = bytes.subarray(start, start + frame.record.payload.length);
  return { ...frame, record: { ...frame.record, payload } };
}

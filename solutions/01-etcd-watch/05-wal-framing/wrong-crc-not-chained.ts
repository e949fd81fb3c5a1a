// Mistake: each record's crc covers only its own body (seeded with 0), not chained from the previous record's — the writer and reader agree with each other, but not with the real WAL.
import {
  type DecodedFrame,
  decodeFrame as realDecode,
  encodeFrame as realEncode,
  type WALRecord,
} from "../../../code/store/wal/record.ts";

// The chain value is dropped: every record is checksummed as if it were the first of its segment.
export function encodeFrame(record: WALRecord, _previousCrc: number): { bytes: Uint8Array; crc: number } {
  return realEncode(record, 0);
}

export function decodeFrame(bytes: Uint8Array, offset: number, _previousCrc: number): DecodedFrame {
  return realDecode(bytes, offset, 0);
}

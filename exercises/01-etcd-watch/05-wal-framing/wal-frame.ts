/**
 * Exercise: the write-ahead log's record frame — length, padding and a chained CRC-32C.
 *
 * Every committed transaction is appended to the log as one frame; after a crash, recovery reads
 * the frames back and must tell a record a crash cut short from damage. You write both directions:
 * the encoder the WAL appends with, and the decoder recovery reads with. README.md has the layout
 * and the outcomes the decoder must tell apart.
 *
 * You may use `crc32c(bytes, previous)` from code/store/pkg/crc.ts (CRC-32C, chained from
 * `previous`), and from code/store/wal/record.ts the constants FRAME_HEADER_BYTES, FRAME_ALIGNMENT
 * and MAX_BODY_BYTES, and the types below. The length field, the padding and the checks are yours to write.
 */
import type { DecodedFrame, WALRecord } from "../../../code/store/wal/record.ts";

/**
 * One frame for `record`, chained from `previousCrc` (the crc of the record before it in the
 * segment, 0 for the first). Returns the bytes to append and the crc the next record chains from.
 */
export function encodeFrame(record: WALRecord, previousCrc: number): { bytes: Uint8Array; crc: number } {
  throw new Error(
    `TODO: encodeFrame — frame revision ${record.revision} (${record.payload.length} payload bytes), chained from crc ${previousCrc}`,
  );
}

/**
 * Decodes the frame that starts at `offset` (below `bytes.length`), checking its crc against the
 * chain value `previousCrc`: the record, its crc and where the next frame starts — or what is
 * wrong with the bytes there.
 */
export function decodeFrame(bytes: Uint8Array, offset: number, previousCrc: number): DecodedFrame {
  throw new Error(
    `TODO: decodeFrame — the frame at offset ${offset} of ${bytes.length} bytes, chained from crc ${previousCrc}`,
  );
}

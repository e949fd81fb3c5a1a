/**
 * Decoder — reading a segment's records back, and telling a torn write from damage.
 * Mirrors etcd-io/etcd server/wal/decoder.go.
 *
 * Solves:
 * - on start, recovery needs every record of every segment, in order, as far as the bytes on disk
 *   can be trusted;
 * - at the first bad frame it must decide: a **torn tail** — the end of the write a crash
 *   interrupted, never fsynced, never acknowledged, safe to cut off (repair.ts) — or
 *   **corruption**, which it must not paper over: it stops the start with the file, the byte
 *   offset and what an operator can do.
 *
 * Invariants:
 * - only the last segment can end in a torn write: a segment is complete and fsynced before the
 *   next one is started;
 * - zeros where the next frame would start are the end of a segment's records, never damage (no
 *   frame starts with a zero length — record.ts);
 * - revisions never decrease along the log; a record that goes back is refused even when its
 *   checksum is valid.
 *
 * What etcd does differently: its decoder reads the segments as one stream of protobuf records
 * and returns io.ErrUnexpectedEOF for a torn one; it also treats a record containing an all-zero
 * 512-byte sector as torn even when data follows it (`isTornEntry`), which we refuse (see
 * `classifyDamage`). We read each segment into memory.
 *
 * @upstream etcd-io/etcd server/wal/decoder.go (decoder, decodeRecord, isTornEntry)
 * @chapter 01-etcd-watch
 */
import { ZEROS } from "../pkg/fileutil.ts";
import { WALError, type WALErrorReason } from "./errors.ts";
import {
  decodeFrame,
  FRAME_ALIGNMENT,
  FRAME_HEADER_BYTES,
  type FrameProblem,
  type WALRecord,
} from "./record.ts";

/** What one segment holds, as far as it can be trusted. */
export interface SegmentContents {
  records: WALRecord[];
  /** Length of the prefix made of whole, valid records; appending continues here. */
  validBytes: number;
  /** The last valid record's crc (0 if none): the next record chains from it. */
  crc: number;
  /** Set when the segment ends in a torn write, to be cut off at `validBytes`. */
  tornTail?: string;
}

const NOT_THE_LAST_SEGMENT: DamageVerdict = {
  torn: false,
  why:
    "in a segment that is not the last one. A segment is complete and fsynced before the next one is " +
    "created, so this cannot be a torn write",
};

// #region decode-segment
/**
 * Reads every record in one segment. `isLast` says whether this is the segment that was being
 * appended to when the process stopped — the only place a torn write can be.
 * `previousRevision` is the revision the segment continues from.
 */
export function decodeSegment(
  path: string,
  bytes: Uint8Array,
  isLast: boolean,
  previousRevision: number,
  // Always decodeFrame in the WAL; the course's wal-framing exercise passes the learner's.
  decode: typeof decodeFrame = decodeFrame,
): SegmentContents | WALError {
  const records: WALRecord[] = [];
  let offset = 0;
  let crc = 0;
  let revision = previousRevision;
  while (offset < bytes.length) {
    // Zeros where the next record would start: the unused, preallocated rest of the segment —
    // the normal end of the log, not damage (etcd's decoder reads a zero record as io.EOF).
    if (isZeroFrom(bytes, offset)) break;
    const frame = decode(bytes, offset, crc);
    if (!frame.ok) {
      const verdict = isLast ? classifyDamage(bytes, offset, frame.problem) : NOT_THE_LAST_SEGMENT;
      if (verdict.torn) return { records, validBytes: offset, crc, tornTail: verdict.reason };
      return damageError(path, offset, frame.problem, verdict.why, isLast);
    }
    if (frame.record.revision < revision) {
      return new WALError(
        "wal: revision out of order",
        `in file '${path}' at position ${offset}: record at revision ${frame.record.revision} follows ` +
          `revision ${revision}. The checksums are valid, so the file was written this way: refusing to start.`,
        path,
        offset,
      );
    }
    records.push(frame.record);
    revision = frame.record.revision;
    crc = frame.crc;
    offset = frame.end;
  }
  return { records, validBytes: offset, crc };
}
// #endregion decode-segment

// #region torn-tail
export type DamageVerdict = { torn: true; reason: string } | { torn: false; why: string };

/**
 * Damage was found at `offset` in the last segment. Is it a torn write — the unfinished end of
 * the write a crash interrupted, which we may cut off — or corruption, which we must not paper
 * over?
 *
 * Why only the tail can be torn: a batch is written after everything before it was fsynced, and
 * acknowledged only after its own fsync. So a crash can only interrupt the newest write, whose
 * bytes sit at the very end of the last segment and were never acknowledged. `kill -9` leaves a
 * prefix of that write (the OS keeps what it was given); a power cut can also leave zeros where
 * blocks never reached the disk. Damage with intact data after it is not that shape: the data
 * after it was written later, so the damaged bytes had been written earlier — dropping them
 * could lose acknowledged writes.
 */
export function classifyDamage(bytes: Uint8Array, offset: number, problem: FrameProblem): DamageVerdict {
  // The file grew but its last blocks were never written: they read back as zeros. No frame
  // starts with zeros (a body is at least 8 bytes long).
  if (isZeroFrom(bytes, offset)) return { torn: true, reason: "zero-filled tail" };

  switch (problem.kind) {
    case "short-length":
      return { torn: true, reason: "short length" };
    case "short-payload": {
      // A torn record, or a damaged length field that points past the end of the file? In the
      // second case the records after it are still there, and the next one chains from this
      // record's crc — look for it before dropping anything.
      const next =
        problem.storedCrc === undefined ? undefined : findChainedFrame(bytes, offset, problem.storedCrc);
      if (next !== undefined) {
        return {
          torn: false,
          why: `yet a valid record that follows this one starts at position ${next}, so the length field is damaged`,
        };
      }
      return { torn: true, reason: "short payload" };
    }
    case "crc-mismatch":
      if (isZeroFrom(bytes, problem.end)) return { torn: true, reason: "bad checksum on the last record" };
      return {
        torn: false,
        why: `and ${bytes.length - problem.end} more bytes follow it, so it is not the last record`,
      };
    case "invalid-length":
      return {
        torn: false,
        why:
          "and records are 8-byte aligned, so a length field lies within one disk sector and is written " +
          "whole or not at all: an invalid one is damage, not an interrupted write",
      };
  }
}

/** Whether every byte from `offset` on is zero; compares 1 MiB at a time (a segment is 64 MB). */
export function isZeroFrom(bytes: Uint8Array, offset: number): boolean {
  // Most calls are at a record's start: a non-zero length field answers at once.
  for (let i = offset; i < Math.min(offset + 8, bytes.length); i++) if (bytes[i] !== 0) return false;
  for (let at = offset; at < bytes.length; at += ZEROS.length) {
    const chunk = bytes.subarray(at, Math.min(at + ZEROS.length, bytes.length));
    if (Buffer.compare(chunk, ZEROS.subarray(0, chunk.length)) !== 0) return false;
  }
  return true;
}

/** The offset of a valid frame after `offset` whose crc chains from `crc`, if there is one. */
function findChainedFrame(bytes: Uint8Array, offset: number, crc: number): number | undefined {
  for (let at = offset + FRAME_ALIGNMENT; at + FRAME_HEADER_BYTES <= bytes.length; at += FRAME_ALIGNMENT) {
    if (decodeFrame(bytes, at, crc).ok) return at;
  }
  return undefined;
}
// #endregion torn-tail

function damageError(
  path: string,
  offset: number,
  problem: FrameProblem,
  why: string,
  isLast: boolean,
): WALError {
  const { reason, what } = describeProblem(problem);
  const laterSegments = isLast ? "" : ", delete the segment files after it,";
  return new WALError(
    reason,
    `in file '${path}' at position ${offset}: ${what}, ${why}. Refusing to start: dropping this part of ` +
      "the log could lose acknowledged writes. To recover, restore the data directory from a backup; or, " +
      `accepting the loss of every record from position ${offset} on, truncate the file ` +
      `(truncate -s ${offset} '${path}')${laterSegments} and start again.`,
    path,
    offset,
  );
}

function describeProblem(problem: FrameProblem): { reason: WALErrorReason; what: string } {
  switch (problem.kind) {
    case "short-length":
      return {
        reason: "wal: unexpected EOF",
        what: `the file ends ${problem.available} bytes into a length field`,
      };
    case "short-payload":
      return {
        reason: "wal: unexpected EOF",
        what: `a ${problem.frameBytes}-byte record starts here but only ${problem.available} bytes are left`,
      };
    case "invalid-length":
      return {
        reason: "wal: invalid record length",
        what: `the record's length field is invalid (${problem.detail})`,
      };
    case "crc-mismatch":
      return {
        reason: "wal: crc mismatch",
        what:
          `the record's checksum does not match its contents (stored 0x${problem.storedCrc.toString(16)}, ` +
          `computed 0x${problem.computedCrc.toString(16)})`,
      };
  }
}

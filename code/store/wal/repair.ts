/**
 * Repair — cutting off the torn write at the end of the log, so appending can resume.
 *
 * Solves: after a crash, the last segment may end in a write that was never fsynced (decoder.ts
 * decides that it is one). New records must not land in front of its leftover bytes — the next
 * recovery would take them for damage — and the segment must keep its preallocated size. So the
 * torn bytes are overwritten with zeros, fsynced, and the repair is logged.
 *
 * Invariants:
 * - only bytes after the last valid record are touched, and only when the decoder called them a
 *   torn tail: no acknowledged record is ever overwritten;
 * - after a repair, zeros run from the last valid record to the end of the file.
 *
 * What etcd does differently: `Repair` truncates the file at the last valid record and keeps a
 * copy of the damaged file as `.broken`; we zero instead of truncating (the segment stays at its
 * preallocated size) and keep no copy.
 *
 * @upstream etcd-io/etcd server/wal/repair.go (Repair)
 * @upstream etcd-io/etcd client/pkg/fileutil/fileutil.go (ZeroToEnd)
 * @chapter 01-etcd-watch
 */
import type { FileHandle } from "node:fs/promises";
import { type Fsync, writeZeros, ZEROS } from "../pkg/fileutil.ts";

/** A torn write found at the end of the last segment (see decoder.ts). */
export interface TornTail {
  /** What made it a torn write ("short payload", "zero-filled tail", …). */
  reason: string;
  /** Where the valid records end: appending continues here. */
  validBytes: number;
  /** Where the non-zero bytes end: beyond it the file is zeros already. */
  dataBytes: number;
  fileBytes: number;
}

/** The torn tail of a segment whose records end at `validBytes`. */
export function tornTail(bytes: Uint8Array, validBytes: number, reason: string): TornTail {
  return { reason, validBytes, dataBytes: endOfData(bytes), fileBytes: bytes.length };
}

// #region repair
/** Zeroes the torn bytes, makes that durable, and reports it. */
export async function repair(
  file: FileHandle,
  path: string,
  tail: TornTail,
  fsync: Fsync,
  log: (line: string) => void,
): Promise<void> {
  await writeZeros(file, tail.validBytes, tail.dataBytes); // past dataBytes it is zeros already
  await fsync(file, path);
  log(
    `wal: ${path}: torn write at the end of the log (${tail.reason}): zeroed from offset ` +
      `${tail.validBytes} to the end of the file (${tail.fileBytes - tail.validBytes} bytes). They were ` +
      "never fsynced, so no acknowledged write is lost.",
  );
}
// #endregion repair

/** The length of `bytes` without its zero-filled tail. */
function endOfData(bytes: Uint8Array): number {
  let end = bytes.length;
  while (end > 0) {
    const start = Math.max(0, end - ZEROS.length);
    if (Buffer.compare(bytes.subarray(start, end), ZEROS.subarray(0, end - start)) !== 0) break;
    end = start;
  }
  while (end > 0 && bytes[end - 1] === 0) end--;
  return end;
}

/**
 * WALError — everything the write-ahead log refuses, as a value with etcd's reason first.
 *
 * Solves: a caller must tell "the disk is damaged at this offset" from "the WAL is closed" without
 * parsing text, and an operator reading the message must learn which file, which byte and what to
 * do about it.
 *
 * Invariants:
 * - `reason` is etcd's wording where etcd has one (`wal: crc mismatch`), and the message starts
 *   with it; damage on disk also carries `file` and `offset`.
 *
 * @upstream etcd-io/etcd server/wal/wal.go (ErrFileNotFound, ErrCRCMismatch, ErrSnapshotMismatch, ...)
 * @upstream etcd-io/etcd server/wal/decoder.go (io.ErrUnexpectedEOF on a torn record)
 * @chapter 01-etcd-watch
 */

export type WALErrorReason =
  | "wal: crc mismatch"
  | "wal: invalid record length"
  | "wal: invalid record"
  | "wal: unexpected EOF"
  | "wal: revision out of order"
  | "wal: file not found"
  | "wal: snapshot mismatch"
  | "wal: snapshot in progress"
  | "wal: write failed"
  | "wal: closed";

/**
 * Everything the WAL refuses, with the reason first (etcd's wording where etcd has one) and, for
 * damage on disk, the file, the byte offset and what an operator can do about it.
 */
export class WALError extends Error {
  override readonly name = "WALError";
  constructor(
    readonly reason: WALErrorReason,
    detail: string,
    readonly file?: string,
    readonly offset?: number,
    options?: { cause?: unknown },
  ) {
    super(`${reason}: ${detail}`, options);
  }
}

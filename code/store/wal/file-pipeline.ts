/**
 * FilePipeline — the next WAL segment, preallocated in the background before the log needs it.
 * Mirrors etcd-io/etcd server/wal/file_pipeline.go.
 *
 * Solves:
 * - an fdatasync after appending to a growing file must also commit its new size and blocks,
 *   which roughly doubles its cost: so a segment is created at its full size, zero-filled, and
 *   appends write into blocks already allocated;
 * - writing 64 MB of zeros takes long enough that a cut waiting for it would stall every append
 *   queued behind it: so the next segment is prepared ahead of need, while the current one fills.
 *
 * Invariants:
 * - at most one segment is being prepared, as `next.wal.tmp`; it holds no records, so recovery
 *   may delete it;
 * - a segment gets its real name (`<seq>-<revision>.wal`) only once fully written and fsynced, and
 *   the directory is fsynced before anything is written to it under that name.
 *
 * @upstream etcd-io/etcd server/wal/file_pipeline.go (filePipeline, Open, alloc)
 * @chapter 01-etcd-watch
 */
import type { FileHandle } from "node:fs/promises";
import { link, open, unlink } from "node:fs/promises";
import { join } from "node:path";
import { type Fsync, fsyncDir, writeZeros } from "../pkg/fileutil.ts";
import { walName } from "./util.ts";

/** The next segment, preallocated ahead of need; renamed to its real name when the log is cut. */
export const PREPARED_SEGMENT = "next.wal.tmp";

/**
 * The segment being appended to. `size` and `crc` describe what is fsynced in it (the file itself
 * is longer: the rest is preallocated zeros).
 */
export interface Segment {
  seq: number;
  path: string;
  file: FileHandle;
  size: number;
  crc: number;
}

// #region file-pipeline
/**
 * Prepares the next segment ahead of need, as etcd's filePipeline does: writing 64 MB of zeros
 * takes long enough that a cut waiting for it would stall every append queued behind the cut.
 * At most one segment is prepared at a time, in the background, as `next.wal.tmp`.
 */
export class FilePipeline {
  private next: Promise<string> | undefined;

  constructor(
    private readonly dir: string,
    readonly segmentBytes: number,
    private readonly fsync: Fsync,
  ) {}

  /** Starts preparing the next segment, unless one is prepared or being prepared. */
  prepare(): void {
    if (this.next) return;
    this.next = this.alloc();
    this.next.catch(() => {}); // reported by the `open` that awaits it
  }

  /**
   * Gives the prepared segment its name `<seq>-<revision>.wal` and opens it, then starts
   * preparing the one after it. The new name's directory entry must survive a power cut before
   * any record written to it is acknowledged: fsync the directory.
   */
  async open(seq: number, revision: number): Promise<Segment> {
    this.prepare();
    const next = this.next!;
    this.next = undefined;
    const prepared = await next;
    const path = join(this.dir, walName(seq, revision));
    await link(prepared, path); // fails if the name exists: never reuse a name — that would be a bug
    await unlink(prepared);
    await fsyncDir(this.dir, this.fsync);
    const file = await open(path, "r+");
    this.prepare();
    return { seq, path, file, size: 0, crc: 0 };
  }

  /** Waits for a segment being prepared and deletes it. */
  async close(): Promise<void> {
    const next = this.next;
    this.next = undefined;
    if (next === undefined) return;
    // A failed preparation is of no use either way; the next open deletes what it left.
    const prepared = await next.catch(() => undefined);
    if (prepared !== undefined) await unlink(prepared);
  }

  /**
   * Writes the whole file with zeros and fsyncs it. Writing — not ftruncate, which leaves a
   * hole — is what makes the file system allocate the blocks now (Node has no fallocate(2)).
   */
  private async alloc(): Promise<string> {
    const path = join(this.dir, PREPARED_SEGMENT);
    const file = await open(path, "w");
    try {
      await writeZeros(file, 0, this.segmentBytes);
      await this.fsync(file, path);
    } finally {
      await file.close();
    }
    return path;
  }
}

// #endregion file-pipeline

/**
 * WAL — the write-ahead log that makes the store's writes survive a crash.
 * Mirrors etcd-io/etcd server/wal/wal.go.
 *
 * Solves:
 * - a write acknowledged to a client must survive `kill -9` and power loss: its record is written
 *   and fsynced before the promise returned by `append` resolves;
 * - fsync is slow (a millisecond or more on real disks), and one fsync per write would cap the
 *   store at about one write per fsync. Group commit: appends that arrive while a write+fsync is
 *   in flight wait together and share the next one;
 * - on start, the store needs its state back: `WAL.open` returns the newest snapshot and every
 *   record after it, in append order (decoder.ts reads them); a write torn by the crash is cut
 *   off (repair.ts), and damage anywhere else stops the start with the file and byte offset,
 *   instead of silently losing data;
 * - an fdatasync after appending to a growing file must also commit its new size and blocks,
 *   which roughly doubles its cost: segments are created at their full size (SEGMENT_SIZE_BYTES,
 *   zero-filled), the next one is prepared in the background (file-pipeline.ts), and a full
 *   segment is cut;
 * - the log must not grow forever: `saveSnapshot` starts a new segment, writes the snapshot, and
 *   deletes the segments and snapshots the new snapshot covers.
 *
 * Invariants:
 * - records are written in the order `append` was called; an append's promise resolves only after
 *   its record, and every record appended before it, were fsynced.
 * - at most one write+fsync is in flight (operations run one at a time from `queue`), and at most
 *   one batch is open (`openBatch`, collecting appends for the next write).
 * - revisions never decrease along the log (equal ones are allowed: a record need not bump the
 *   revision).
 * - segment `<seq>-<rev>.wal` continues the log from the state at revision `rev`; the segments
 *   in use have consecutive seqs.
 * - only the last segment can end in a torn write: a segment is complete and fsynced before the
 *   next one is started.
 * - zeros where the next frame would start are the end of a segment's records, never damage (no
 *   frame starts with a zero length); a torn tail is overwritten with zeros, so the zeros that
 *   follow the last record always run to the end of the file.
 *
 * Threading: one JavaScript thread; the promises interleave only at `await`s. The WAL keeps a
 * reference to each payload until it is written, so callers must not modify a payload after
 * appending it.
 *
 * What etcd does differently: etcd logs raft entries, not transactions, and batches through raft
 * — everything proposed while the previous `Ready` is being saved is saved by the next `WAL.Save`
 * with one fdatasync (ours too: `fdatasync` below). A segment is named after the raft index of
 * its first entry (ours: the revision it continues from, with the snapshot of the same seq beside
 * it when a snapshot cut it). etcd preallocates with fallocate(2); Node has none, so ours writes
 * the zeros. A snapshot is also recorded inside the WAL as a snapshot record. etcd writes
 * through a 4 KiB page-aligned buffer, flocks its files so that a second process cannot open
 * them (ours: a lock file, data-dir-lock.ts), creates a new WAL directory atomically (a `.tmp`
 * directory renamed into place), chains the crc across segments, and deletes old segments in a
 * background purge that keeps 5. etcd stops with `lg.Fatal` on a failed fsync; we reject every
 * later append.
 *
 * @upstream etcd-io/etcd server/wal/wal.go (WAL, Create, Open, ReadAll, Save, cut, sync, SegmentSizeBytes)
 * @upstream etcd-io/etcd server/etcdserver/storage.go (storage.SaveSnap, Release: snapshot, then purge)
 * @chapter 01-etcd-watch
 */
import { mkdir, open, readdir, readFile, unlink } from "node:fs/promises";
import { join } from "node:path";
import { defaultFsync, type Fsync, fdatasync, writeAllSync } from "../pkg/fileutil.ts";
import { decodeSegment } from "./decoder.ts";
import { WALError } from "./errors.ts";
import { FilePipeline, PREPARED_SEGMENT, type Segment } from "./file-pipeline.ts";
import { encodeFrame, FRAME_HEADER_BYTES, MAX_BODY_BYTES, paddingFor, type WALRecord } from "./record.ts";
import { repair, type TornTail, tornTail } from "./repair.ts";
import { SnapError, type Snapshot, Snapshotter } from "./snapshotter.ts";
import { parseWALName } from "./util.ts";

export interface WALOptions {
  /**
   * Makes written bytes durable; tests inject one to count calls. Default: fdatasync(2) for the
   * records appended to a segment, fsync(2) for snapshots and directories.
   */
  fsync?: Fsync;
  /** Where repairs and file removals are reported. Default: stderr. */
  log?: (line: string) => void;
  /** The size each segment is preallocated to, and cut at when full. Default: SEGMENT_SIZE_BYTES. */
  segmentBytes?: number;
}

/**
 * Segments are created at this size, zero-filled (etcd: SegmentSizeBytes, 64 MB). An append then
 * writes into blocks the file system has already allocated and never changes the file's size, so
 * its fdatasync flushes only the data — not the size and block-allocation metadata that an
 * append to a growing file makes it commit too.
 */
export const SEGMENT_SIZE_BYTES = 64 * 1024 * 1024;

/** What `WAL.open` recovered: the newest snapshot (if any) and every record after it, in order. */
export interface RecoveredWAL {
  wal: WAL;
  snapshot: Snapshot | undefined;
  records: WALRecord[];
}

interface PendingAppend {
  record: WALRecord;
  resolve: () => void;
  reject: (err: WALError) => void;
}

export class WAL {
  /** Disk operations (a batch's write+fsync, a segment cut, close), run one after another. */
  private queue: Promise<void> = Promise.resolve();
  /** The batch that new appends join; it closes when its write starts. */
  private openBatch: PendingAppend[] | undefined;
  /** Set once a write or fsync failed: what is on disk is then unknown, so nothing more is written. */
  private failure: WALError | undefined;
  private closed = false;
  private snapshotting = false;
  /** The revision of the last record written and fsynced: a segment cut when full continues from it. */
  private writtenRev: number;

  private constructor(
    readonly dir: string,
    private segment: Segment,
    private lastRev: number,
    private readonly snapshotter: Snapshotter,
    private readonly fsync: Fsync,
    /** What makes a batch durable: `fdatasync` unless a test injected its own `fsync`. */
    private readonly syncRecords: Fsync,
    private readonly log: (line: string) => void,
    private readonly pipeline: FilePipeline,
  ) {
    this.writtenRev = lastRev;
    // The first cut should not wait for 64 MB of zeros: prepare its segment now.
    pipeline.prepare();
  }

  /** The revision of the last record appended (durable or not), or of the snapshot if none since. */
  get lastRevision(): number {
    return this.lastRev;
  }

  // #region group-commit
  /**
   * Appends one committed transaction. The promise resolves once the record is on disk — only
   * then may the store acknowledge the write to its client. It rejects with a WALError when the
   * record will not be made durable. (A rejection rather than an error value on purpose: a
   * caller that forgot to check a resolved value would acknowledge a lost write.)
   *
   * The record joins the open batch, or opens one and queues its write. A batch stays open until
   * its write starts, so every append that arrives meanwhile — while the previous batch's
   * write+fsync is in flight, or in the same tick — rides along: N concurrent appends cost one or
   * two fsyncs, not N. (Waiting for the end of the event loop's turn before the first write, so
   * that all the requests of one network read share it, made batches larger but answers slower
   * in the store benchmark: an idle disk is best put to work at once.)
   */
  append(revision: number, payload: Uint8Array): Promise<void> {
    const refusal = this.refusal() ?? invalidRecord(revision, payload);
    if (refusal) return Promise.reject(refusal);
    if (revision < this.lastRev) {
      return Promise.reject(
        new WALError(
          "wal: revision out of order",
          `cannot append revision ${revision} after revision ${this.lastRev}: revisions never go back`,
        ),
      );
    }
    this.lastRev = revision;

    return new Promise<void>((resolve, reject) => {
      let batch = this.openBatch;
      if (batch === undefined) {
        const opened: PendingAppend[] = [];
        this.openBatch = batch = opened;
        void this.enqueue(() => this.flush(opened));
      }
      batch.push({ record: { revision, payload }, resolve, reject });
    });
  }

  /** Writes one batch with a single write and a single fsync, then acknowledges all of it. */
  private async flush(batch: PendingAppend[]): Promise<void> {
    // Close the batch: appends from now on go into the next one, and share the next fsync.
    if (this.openBatch === batch) this.openBatch = undefined;
    if (this.failure) {
      for (const pending of batch) pending.reject(this.failure);
      return;
    }

    try {
      // A full segment is cut, as etcd's does, so the batch is written into preallocated space.
      // The new segment continues from the last revision already in this one.
      if (this.segment.size > 0 && this.segment.size + batchBytes(batch) > this.pipeline.segmentBytes) {
        await this.startSegment(this.segment.seq + 1, this.writtenRev);
      }
    } catch (err) {
      this.failure = new WALError(
        "wal: write failed",
        `starting a new segment after the full ${this.segment.path} failed (${String(err)}). This WAL accepts ` +
          "no more writes. Restart the server: recovery keeps every record that is intact on disk.",
        this.segment.path,
        this.segment.size,
        { cause: err },
      );
      for (const pending of batch) pending.reject(this.failure);
      return;
    }

    const segment = this.segment;
    let crc = segment.crc;
    const frames: Uint8Array[] = [];
    for (const pending of batch) {
      const frame = encodeFrame(pending.record, crc);
      frames.push(frame.bytes);
      crc = frame.crc;
    }
    const bytes = Buffer.concat(frames);

    try {
      // One write for the whole batch: its records land in the file in append order. It is
      // synchronous: write() only copies the bytes into the OS page cache, which takes
      // microseconds, while sending it to libuv's thread pool would cost a round trip through
      // another thread and the event loop. Only the fsync waits for the disk, so only the fsync
      // runs in the background — as etcd's WAL.Save writes, then syncs, in its raft loop.
      writeAllSync(segment.file.fd, bytes, segment.size);
      // The bytes in the page cache are lost in a power cut. They are durable once fsync
      // returns — not before, so no one is acknowledged before it does.
      await this.syncRecords(segment.file, segment.path);
    } catch (err) {
      // After a failed fsync, Linux may have dropped the dirty pages and will not report it
      // again; retrying could acknowledge data that is gone. Stop writing altogether.
      this.failure = new WALError(
        "wal: write failed",
        `writing to ${segment.path} failed (${String(err)}). What reached the disk is unknown, so this WAL ` +
          "accepts no more writes. Restart the server: recovery keeps every record that is intact on disk.",
        segment.path,
        segment.size,
        { cause: err },
      );
      for (const pending of batch) pending.reject(this.failure);
      return;
    }
    segment.size += bytes.length;
    segment.crc = crc;
    this.writtenRev = batch[batch.length - 1].record.revision;
    for (const pending of batch) pending.resolve();
  }
  // #endregion group-commit

  /** Runs `op` after every operation queued before it. A failed op does not block later ones. */
  private enqueue<T>(op: () => Promise<T>): Promise<T> {
    const result = this.queue.then(op);
    this.queue = result.then(
      () => undefined,
      () => undefined,
    );
    return result;
  }

  private refusal(): WALError | undefined {
    if (this.closed) return new WALError("wal: closed", `the WAL in ${this.dir} is closed`);
    return this.failure;
  }

  // #region snapshot
  /**
   * Saves a snapshot of the store at `revision` and deletes the log it makes unnecessary.
   * `revision` must be the last appended revision: the payload must include every record
   * appended so far, because the records after this call are all that recovery replays on it.
   *
   * The order is what makes every crash point safe:
   * 1. cut: records appended from now on go to a new segment `<seq>-<revision>.wal`. A crash
   *    here leaves the old snapshot and all segments — recovery replays them all.
   * 2. write `<seq>-<revision>.snap` atomically (snapshotter.ts). A crash before its rename is
   *    durable is the same as case 1.
   * 3. delete the older segments and snapshots. A crash midway leaves files that recovery
   *    ignores (they are older than the newest snapshot) and deletes.
   * Appends keep flowing into the new segment while the snapshot is being written.
   */
  async saveSnapshot(revision: number, payload: Uint8Array): Promise<void> {
    const refusal = this.refusal();
    if (refusal) throw refusal;
    if (revision !== this.lastRev) {
      throw new WALError(
        "wal: snapshot mismatch",
        `snapshot at revision ${revision}, but the last appended record is at revision ${this.lastRev}; ` +
          "a snapshot must include every record appended before it",
      );
    }
    if (this.snapshotting) {
      throw new WALError("wal: snapshot in progress", "wait for the previous saveSnapshot to finish");
    }
    this.snapshotting = true;
    try {
      const segment = await this.cut(revision);
      await this.snapshotter.save(segment.seq, { revision, payload });
      const names = await readdir(this.dir);
      await removeSegmentsBefore(this.dir, segment.seq, names, this.log);
      await this.snapshotter.removeOlderThan(segment.seq, names);
    } finally {
      this.snapshotting = false;
    }
  }

  /**
   * Starts a new segment. Runs in the queue, so every batch appended before the cut has been
   * written and fsynced to the old segment by then — the old segment is complete, which is why a
   * non-last segment can never end in a torn write.
   */
  private cut(revision: number): Promise<Segment> {
    // Appends made after this line must land in the new segment: they open a new batch, which
    // is queued behind the cut.
    this.openBatch = undefined;
    return this.enqueue(async () => {
      if (this.failure) throw this.failure;
      return this.startSegment(this.segment.seq + 1, revision);
    });
  }

  /** Switches appending to a new segment (run from the queue, after the old one is fsynced). */
  private async startSegment(seq: number, revision: number): Promise<Segment> {
    const next = await this.pipeline.take(seq, revision);
    await this.segment.file.close();
    this.segment = next;
    this.log(`wal: started segment ${next.path}`);
    return next;
  }
  // #endregion snapshot

  /** Waits for every append made so far to finish, then closes the segment file. */
  async close(): Promise<void> {
    if (this.closed) return;
    this.closed = true;
    await this.enqueue(() => this.segment.file.close());
    await this.pipeline.close();
  }

  // #region recovery
  /**
   * Opens (or creates) the log in `dir` and recovers it: the newest snapshot, then every record
   * in the segments that follow it. A torn tail is truncated and reported through `log`; any
   * other damage is returned as a WALError or SnapError naming the file and the byte offset —
   * the caller must not start serving. (Failures of the file system itself, such as EACCES,
   * are thrown.)
   */
  static async open(dir: string, options: WALOptions = {}): Promise<RecoveredWAL | WALError | SnapError> {
    const fsync = options.fsync ?? defaultFsync;
    const log = options.log ?? ((line: string) => console.error(line));
    await mkdir(dir, { recursive: true });
    const snapshotter = new Snapshotter(dir, fsync, log);

    const pipeline = new FilePipeline(dir, options.segmentBytes ?? SEGMENT_SIZE_BYTES, fsync);
    const names = (await readdir(dir)).sort();
    await snapshotter.removeTemps(names);
    // A segment being prepared when the process stopped holds no records.
    if (names.includes(PREPARED_SEGMENT)) await unlink(join(dir, PREPARED_SEGMENT));
    const snapshot = await snapshotter.loadNewest(names);
    if (snapshot instanceof SnapError) return snapshot;
    const segments = names
      .map((name) => ({ name, parsed: parseWALName(name) }))
      .filter((entry) => entry.parsed !== undefined)
      .map((entry) => ({ path: join(dir, entry.name), ...entry.parsed! }))
      .sort((a, b) => a.seq - b.seq);

    if (segments.length === 0 && snapshot === undefined) {
      // A new, empty store.
      const first = await pipeline.take(0, 0);
      const wal = new WAL(dir, first, 0, snapshotter, fsync, options.fsync ?? fdatasync, log, pipeline);
      return { wal, snapshot: undefined, records: [] };
    }

    // The snapshot at seq S covers everything before segment S: read S and what follows it.
    const startSeq = snapshot?.seq ?? 0;
    const live = segments.filter((segment) => segment.seq >= startSeq);
    const missing = findMissingSegment(live, startSeq, snapshot?.path);
    if (missing) return new WALError("wal: file not found", missing, dir);

    const records: WALRecord[] = [];
    let lastRevision = snapshot?.revision ?? 0;
    let tail: { validBytes: number; crc: number; torn?: TornTail } = { validBytes: 0, crc: 0 };
    for (const [i, segment] of live.entries()) {
      const isLast = i === live.length - 1;
      const bytes = new Uint8Array(await readFile(segment.path));
      const contents = decodeSegment(segment.path, bytes, isLast, lastRevision);
      if (contents instanceof WALError) return contents;
      for (const record of contents.records) records.push(record);
      lastRevision = records.at(-1)?.revision ?? lastRevision;
      tail = {
        validBytes: contents.validBytes,
        crc: contents.crc,
        torn:
          contents.tornTail === undefined
            ? undefined
            : tornTail(bytes, contents.validBytes, contents.tornTail),
      };
    }

    // Finish what an interrupted saveSnapshot started.
    await removeSegmentsBefore(dir, startSeq, names, log);
    await snapshotter.removeOlderThan(startSeq, names);

    // Appending continues in the last segment, right after its last valid record. A torn write
    // there is zeroed first, so new records do not land in front of leftover garbage — which the
    // next recovery would take for damage — and the file keeps its preallocated size (etcd: wal.Repair
    // and fileutil.ZeroToEnd).
    const last = live[live.length - 1];
    const file = await open(last.path, "r+");
    if (tail.torn) await repair(file, last.path, tail.torn, fsync, log);

    const segment: Segment = { seq: last.seq, path: last.path, file, size: tail.validBytes, crc: tail.crc };
    const wal = new WAL(
      dir,
      segment,
      lastRevision,
      snapshotter,
      fsync,
      options.fsync ?? fdatasync,
      log,
      pipeline,
    );
    const recovered = snapshot && { revision: snapshot.revision, payload: snapshot.payload };
    return { wal, snapshot: recovered, records };
  }
  // #endregion recovery
}

/** Checks that the segments to replay start at `startSeq` and have no gaps. */
function findMissingSegment(
  live: { seq: number; path: string }[],
  startSeq: number,
  snapshotPath: string | undefined,
): string | undefined {
  const needed = snapshotPath
    ? `snapshot ${snapshotPath} is continued by segment seq ${startSeq}`
    : "with no snapshot, the log must start at segment seq 0";
  if (live[0]?.seq !== startSeq) {
    return `${needed}, but it is missing. Refusing to start: restore the data directory from a backup.`;
  }
  for (let i = 1; i < live.length; i++) {
    if (live[i].seq !== live[i - 1].seq + 1) {
      return (
        `segment seq ${live[i - 1].seq + 1} is missing between ${live[i - 1].path} and ${live[i].path}. ` +
        "Refusing to start: restore the data directory from a backup."
      );
    }
  }
  return undefined;
}

/**
 * Deletes segments older than `seq`, whose records the snapshot at `seq` includes. Losing these
 * unlinks to a power cut is harmless: recovery ignores and deletes them again.
 */
async function removeSegmentsBefore(
  dir: string,
  seq: number,
  names: string[],
  log: (line: string) => void,
): Promise<void> {
  for (const name of names) {
    const parsed = parseWALName(name);
    if (!parsed || parsed.seq >= seq) continue;
    await unlink(join(dir, name));
    log(`wal: removed ${join(dir, name)}, covered by a snapshot`);
  }
}

/**
 * A record the log could write but never read back is refused up front: a frame recovery rejects
 * would stop the next start.
 */
function invalidRecord(revision: number, payload: Uint8Array): WALError | undefined {
  if (!Number.isSafeInteger(revision) || revision < 0) {
    return new WALError("wal: invalid record", `revision ${revision} is not a non-negative integer`);
  }
  if (8 + payload.length > MAX_BODY_BYTES) {
    return new WALError(
      "wal: invalid record",
      `a ${payload.length}-byte payload exceeds the ${MAX_BODY_BYTES - 8}-byte limit of one record`,
    );
  }
  return undefined;
}

/** The bytes a batch's frames take in the segment. */
function batchBytes(batch: PendingAppend[]): number {
  let total = 0;
  for (const pending of batch) {
    const body = 8 + pending.record.payload.length; // the revision, then the payload
    total += FRAME_HEADER_BYTES + body + paddingFor(body);
  }
  return total;
}

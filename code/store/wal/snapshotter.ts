/**
 * Snapshotter — writes the store's state at one revision to a file, atomically, and reads the
 * newest one back on start. Mirrors etcd's server/etcdserver/api/snap/snapshotter.go.
 *
 * Solves:
 * - the write-ahead log grows with every write; replaying it from the beginning on every start
 *   gets slower forever. A snapshot holds the state up to revision R, so the log before R can
 *   be deleted (the WAL does that once the snapshot is safely on disk — see wal.ts).
 * - a crash while a snapshot is being written must leave either the old snapshot or the complete
 *   new one — never a half-written file under a snapshot's name.
 *
 * Invariants:
 * - a file named `*.snap` was complete and fsynced before it got that name (written as
 *   `*.snap.tmp`, fsynced, renamed, and the directory fsynced). So a `.snap` file that fails
 *   its checksum is disk damage, not an interrupted save, and recovery refuses it.
 * - a snapshot named `<seq>-<rev>.snap` holds the state after every record that was appended
 *   before WAL segment `<seq>-<rev>.wal` was started: the two names pair up.
 * - `*.snap.tmp` files are leftovers of an interrupted save and are always safe to delete.
 *
 * File format (little-endian):
 *   [8 bytes revision][8 bytes payload length][4 bytes CRC-32C of the first 16 bytes + payload]
 *   [payload — the store's opaque state bytes]
 *
 * What etcd does differently: `Snapshotter.save` writes `<term>-<index>.snap` in place with
 * `WriteAndSyncFile` (no temp file; a broken file is renamed `.broken` at load time and an older
 * snapshot is tried), the file is a protobuf {crc, data}, and snapshots live in their own
 * `member/snap` directory beside `member/wal`. In etcd v3 the key-value data itself is in the
 * bbolt file `member/snap/db`, not in `.snap` files; the WAL replays raft entries onto it. Old
 * snapshots and segments are purged in the background, keeping the newest 5 of each.
 *
 * @upstream etcd-io/etcd server/etcdserver/api/snap/snapshotter.go (Snapshotter, save, Load, Read)
 * @upstream etcd-io/etcd pkg/ioutil/util.go (WriteAndSyncFile)
 * @chapter 01-etcd-watch
 */
import { open, readFile, rename, unlink } from "node:fs/promises";
import { join } from "node:path";
import { crc32c } from "../pkg/crc.ts";
import { defaultFsync, type Fsync, fsyncDir } from "../pkg/fileutil.ts";
import { dataFileName, parseDataFileName } from "./util.ts";

/** The store's state at one revision, as opaque bytes. */
export interface Snapshot {
  revision: number;
  payload: Uint8Array;
}

/** A snapshot as found on disk. `seq` pairs it with the WAL segment that continues after it. */
export interface SnapshotFile extends Snapshot {
  seq: number;
  path: string;
}

export type SnapErrorReason = "snap: crc mismatch" | "snap: empty snapshot";

/** A snapshot file that cannot be trusted. Carries the upstream reason as its message prefix. */
export class SnapError extends Error {
  override readonly name = "SnapError";
  constructor(
    readonly reason: SnapErrorReason,
    readonly file: string,
    readonly detail: string,
  ) {
    super(`${reason}: ${detail}`);
  }
}

// #region file-names
const SNAP_SUFFIX = ".snap";
const TEMP_SUFFIX = ".tmp";

export function snapshotName(seq: number, revision: number): string {
  return dataFileName(seq, revision, SNAP_SUFFIX);
}
// #endregion file-names

const HEADER_BYTES = 20;

export function encodeSnapshot(snapshot: Snapshot): Uint8Array {
  const bytes = new Uint8Array(HEADER_BYTES + snapshot.payload.length);
  const view = new DataView(bytes.buffer);
  view.setBigUint64(0, BigInt(snapshot.revision), true);
  view.setBigUint64(8, BigInt(snapshot.payload.length), true);
  bytes.set(snapshot.payload, HEADER_BYTES);
  // The checksum covers the header too: a flipped bit in the revision matters as much as one in
  // the payload.
  const crc = crc32c(snapshot.payload, crc32c(bytes.subarray(0, 16)));
  view.setUint32(16, crc, true);
  return bytes;
}

export function decodeSnapshot(bytes: Uint8Array, file: string): Snapshot | SnapError {
  if (bytes.length < HEADER_BYTES) {
    return new SnapError(
      "snap: empty snapshot",
      file,
      `${file} is ${bytes.length} bytes, shorter than a header`,
    );
  }
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  const payloadBytes = view.getBigUint64(8, true);
  if (payloadBytes !== BigInt(bytes.length - HEADER_BYTES)) {
    return new SnapError(
      "snap: crc mismatch",
      file,
      `${file} holds ${bytes.length - HEADER_BYTES} payload bytes but its header says ${payloadBytes}`,
    );
  }
  const payload = bytes.subarray(HEADER_BYTES);
  const crc = crc32c(payload, crc32c(bytes.subarray(0, 16)));
  if (crc !== view.getUint32(16, true)) {
    return new SnapError("snap: crc mismatch", file, `${file} does not match its checksum`);
  }
  return { revision: Number(view.getBigUint64(0, true)), payload: payload.slice() };
}

export class Snapshotter {
  constructor(
    readonly dir: string,
    private readonly fsync: Fsync = defaultFsync,
    private readonly log: (line: string) => void = console.error,
  ) {}

  // #region save
  /**
   * Writes the snapshot so that, whatever moment a crash hits, the directory holds either no file
   * under the final name or the complete one:
   * 1. write `<name>.tmp` and fsync it — the bytes are on disk, under a name nobody trusts.
   *    Without this fsync the rename could reach the disk before the data, and a power cut
   *    would leave an empty or partial file under the final name;
   * 2. rename it to `<name>` — rename replaces a directory entry in one step;
   * 3. fsync the directory — the new name itself survives a power cut.
   */
  async save(seq: number, snapshot: Snapshot): Promise<string> {
    const path = join(this.dir, snapshotName(seq, snapshot.revision));
    const temp = path + TEMP_SUFFIX;
    const file = await open(temp, "w");
    try {
      await file.writeFile(encodeSnapshot(snapshot));
      await this.fsync(file, temp);
    } catch (err) {
      await file.close();
      await unlink(temp).catch(() => {});
      throw err;
    }
    await file.close();
    await rename(temp, path);
    await fsyncDir(this.dir, this.fsync);
    return path;
  }
  // #endregion save

  /**
   * Loads the newest snapshot (highest seq) from `names`, the directory's listing: undefined when
   * there is none, a SnapError when the newest one is damaged. (Falling back to an older snapshot
   * would be wrong: the log segments it needs may already be deleted.)
   */
  async loadNewest(names: string[]): Promise<SnapshotFile | undefined | SnapError> {
    const found = names
      .map((name) => ({ name, parsed: parseDataFileName(name, SNAP_SUFFIX) }))
      .filter((entry) => entry.parsed !== undefined)
      .sort((a, b) => b.parsed!.seq - a.parsed!.seq);
    const newest = found[0];
    if (!newest) return undefined;

    const path = join(this.dir, newest.name);
    const decoded = decodeSnapshot(new Uint8Array(await readFile(path)), path);
    const refuse = (reason: SnapErrorReason, detail: string) =>
      new SnapError(
        reason,
        path,
        `${detail}. A .snap file only gets its name once it is complete, so this is damage on disk, ` +
          "not an interrupted save. Refusing to start: restore the data directory from a backup.",
      );
    if (decoded instanceof SnapError) return refuse(decoded.reason, decoded.detail);
    if (decoded.revision !== newest.parsed!.revision) {
      return refuse(
        "snap: crc mismatch",
        `${path} holds revision ${decoded.revision} but is named for revision ${newest.parsed!.revision}`,
      );
    }
    return { ...decoded, seq: newest.parsed!.seq, path };
  }

  /** Deletes `.snap.tmp` leftovers of saves that a crash interrupted. */
  async removeTemps(names: string[]): Promise<void> {
    for (const name of names) {
      if (!name.endsWith(SNAP_SUFFIX + TEMP_SUFFIX)) continue;
      await unlink(join(this.dir, name));
      this.log(`snap: removed ${join(this.dir, name)}, left over from an interrupted snapshot`);
    }
  }

  /** Deletes snapshots older than `seq`: the snapshot at `seq` supersedes them. */
  async removeOlderThan(seq: number, names: string[]): Promise<void> {
    for (const name of names) {
      const parsed = parseDataFileName(name, SNAP_SUFFIX);
      if (!parsed || parsed.seq >= seq) continue;
      await unlink(join(this.dir, name));
      this.log(`snap: removed ${join(this.dir, name)}, superseded by a newer snapshot`);
    }
  }
}

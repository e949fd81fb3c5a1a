/**
 * File utilities — making bytes durable, and writing them whole.
 * Mirrors etcd-io/etcd client/pkg/fileutil/ (sync_linux.go, preallocate.go).
 *
 * Solves:
 * - the WAL and the snapshotter must know when bytes survive a power cut: `fsync` for a file's
 *   contents, `fdatasync` where the data and the size are enough, and an fsync of the directory
 *   for a name just created or renamed;
 * - Node's writes may write less than asked: `writeAll` / `writeAllSync` loop until every byte is
 *   at its position; `writeZeros` fills a range, which is how a segment is preallocated (Node has
 *   no fallocate(2)) and how a torn tail is wiped.
 *
 * Invariants:
 * - every function here returns only once all of its bytes were handed to the OS (and, for the
 *   fsyncs, to the disk); none retries a failed fsync — after one, what is on disk is unknown.
 *
 * @upstream etcd-io/etcd client/pkg/fileutil/sync_linux.go (Fsync, Fdatasync)
 * @upstream etcd-io/etcd client/pkg/fileutil/preallocate.go (Preallocate)
 * @upstream etcd-io/etcd client/pkg/fileutil/fileutil.go (ZeroToEnd)
 * @chapter 01-etcd-watch
 */
import { writeSync } from "node:fs";
import type { FileHandle } from "node:fs/promises";
import { open } from "node:fs/promises";

/**
 * Makes a file's (or a directory's) contents durable. Injectable so that tests can count calls
 * and see their order; the default is fsync(2).
 */
export type Fsync = (file: FileHandle, path: string) => Promise<void>;

export const defaultFsync: Fsync = (file) => file.sync();

/**
 * fdatasync(2), as etcd's WAL.sync: it flushes the data and the metadata needed to read it back
 * (the file's size, which every append grows), but not the timestamps fsync(2) would also write.
 * A batch is as durable either way, and costs less disk time — which every client waiting in
 * the batch pays.
 */
export const fdatasync: Fsync = (file) => file.datasync();

// #region fsync-dir
/**
 * Makes the directory's list of names durable. fsync on a file covers its contents, not the
 * directory entry that names it: after a power cut, a file created or renamed without this can
 * vanish or come back under its old name. We rely on it twice — a renamed snapshot must be
 * findable before we delete the log it replaces, and a new WAL segment must be findable before
 * we acknowledge writes stored in it.
 */
export async function fsyncDir(dir: string, fsync: Fsync): Promise<void> {
  // Windows cannot open a directory as a file; there, NTFS journals the rename itself.
  if (process.platform === "win32") return;
  const handle = await open(dir, "r");
  try {
    await fsync(handle, dir);
  } finally {
    await handle.close();
  }
}
// #endregion fsync-dir

/** 1 MiB of zeros: what writeZeros writes, and what readers compare a zero-filled tail against. */
export const ZEROS = new Uint8Array(1 << 20);

/** Writes zeros over [from, to) in 1 MiB writes. */
export async function writeZeros(file: FileHandle, from: number, to: number): Promise<void> {
  for (let at = from; at < to; at += ZEROS.length) {
    await writeAll(file, ZEROS.subarray(0, Math.min(ZEROS.length, to - at)), at);
  }
}

/** writeSync may write less than asked; loop until all of `bytes` is at `position`. */
export function writeAllSync(fd: number, bytes: Uint8Array, position: number): void {
  let done = 0;
  while (done < bytes.length) done += writeSync(fd, bytes, done, bytes.length - done, position + done);
}

/** FileHandle.write may write less than asked; loop until all of `bytes` is at `position`. */
export async function writeAll(file: FileHandle, bytes: Uint8Array, position: number): Promise<void> {
  let done = 0;
  while (done < bytes.length) {
    const { bytesWritten } = await file.write(bytes, done, bytes.length - done, position + done);
    done += bytesWritten;
  }
}

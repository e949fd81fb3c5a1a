/**
 * DataDirLock — one member per data directory: a second `etcd --data-dir D` refuses to start while
 * another process uses D.
 *
 * Solves: two members writing the same WAL would interleave their records, and each would delete
 * the other's segments after a snapshot — the directory would be destroyed, not merely stale. The
 * second start must fail at once, saying which directory and who holds it, and a member killed
 * with `kill -9` must not leave a lock behind that keeps the next start out.
 *
 * How etcd does it: the operating system's advisory locks. Its WAL opens every segment it will
 * write with `fileutil.TryLockFile` (flock(2), LOCK_EX|LOCK_NB) and its bbolt backend flocks the
 * db file. The kernel drops a flock when the process dies, however it dies, so there is never a
 * stale lock. etcd opens the backend first, and that open *waits* for the lock, logging after
 * 10 seconds "db file is flocked by another process, or taking too long" (3.4: `another etcd
 * process is using "…/member/snap/db" and holds the file lock`); we refuse at once instead.
 *
 * Ours, because Node has no flock: a lock file, `<data-dir>/member/lock`, put in place with
 * link(2) — which, like O_EXCL, lets exactly one creator win, and the file appears whole — holding
 * the owner's pid and its start time (field 22 of /proc/<pid>/stat, in clock ticks since boot).
 * A file whose owner is gone — no such pid, or a pid reused by a process started at another
 * time — is stale, and is taken over.
 *
 * Invariants:
 * - while `acquire` has returned a lock and its `release` has not run, the lock file holds that
 *   lock's owner line, and no other `acquire` on the directory succeeds — from this process or
 *   another on this machine;
 * - `release` deletes the file only if it still holds this lock's owner line.
 *
 * Weaker than flock, honestly: the liveness check is per machine (a data directory on a network
 * file system shared by two hosts is not protected); without /proc the start time is not
 * compared, so a recycled pid would make a stale lock look held (the error names the pid to check);
 * and two processes taking over the same stale lock in the same instant could, in a narrow window,
 * both succeed — a flock cannot go stale, so etcd has no such window.
 *
 * @upstream etcd-io/etcd client/pkg/fileutil/lock_flock.go (flockTryLockFile)
 * @upstream etcd-io/etcd server/wal/wal.go (openWALFiles: TryLockFile)
 * @upstream etcd-io/etcd server/etcdserver/backend.go (openBackend: "db file is flocked by another process")
 * @chapter 01-etcd-watch
 */
import { readFileSync } from "node:fs";
import { link, mkdir, readFile, unlink, writeFile } from "node:fs/promises";
import { join } from "node:path";

/** The directory is in use, or the lock file cannot be made; the message is the whole sentence. */
export class DataDirLockError extends Error {
  override readonly name = "DataDirLockError";
}

export interface DataDirLock {
  /** The lock file's path. */
  readonly path: string;
  /** Deletes the lock file (if it is still ours). Safe to call twice. */
  release(): Promise<void>;
}

/** Where the lock lives: next to the WAL, inside the member directory. */
export function lockPath(dataDir: string): string {
  return join(dataDir, "member", "lock");
}

/** Locks held by this process, by path: a second server in the same process is refused too. */
const heldHere = new Set<string>();
let tmpSeq = 0;

// #region acquire
/**
 * Takes the data directory for this process, or says who has it. Tries twice: a stale lock is
 * deleted and the create retried once; losing that race to another starter means it is in use.
 */
export async function acquireDataDirLock(dataDir: string): Promise<DataDirLock | DataDirLockError> {
  const path = lockPath(dataDir);
  const owner = ownerLine(process.pid);
  try {
    await mkdir(join(dataDir, "member"), { recursive: true });
    for (let attempt = 0; attempt < 2; attempt++) {
      // The owner line goes into a file of our own first, which link(2) then puts in place — or
      // fails with EEXIST, atomically: the lock file never exists without its owner line.
      const tmp = `${path}.${process.pid}.${++tmpSeq}.tmp`;
      await writeFile(tmp, owner, { mode: 0o600 });
      try {
        await link(tmp, path);
        heldHere.add(path);
        return newLock(path, owner);
      } catch (err) {
        if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
      } finally {
        await unlink(tmp).catch(() => {});
      }
      const text = await readFile(path, "utf8").catch(() => "");
      const holder = parseOwner(text);
      if (holder && isAlive(holder, path)) return inUse(dataDir, holder);
      // Stale: its owner died without releasing it (kill -9, power loss). Only the same text may
      // go, in case a starter that saw the same stale file has replaced it meanwhile.
      if ((await readFile(path, "utf8").catch(() => undefined)) === text) await unlink(path).catch(() => {});
    }
    const holder = parseOwner(await readFile(path, "utf8").catch(() => ""));
    return inUse(dataDir, holder ?? { pid: 0 });
  } catch (err) {
    return new DataDirLockError(`cannot open the data directory ${dataDir}: ${(err as Error).message}`);
  }
}
// #endregion acquire

function newLock(path: string, owner: string): DataDirLock {
  let released = false;
  return {
    path,
    async release() {
      if (released) return;
      released = true;
      heldHere.delete(path);
      const now = await readFile(path, "utf8").catch(() => undefined);
      if (now === owner) await unlink(path).catch(() => {});
    },
  };
}

function inUse(dataDir: string, holder: Owner): DataDirLockError {
  const who = holder.pid > 0 ? `another etcd process (pid ${holder.pid})` : "another etcd process";
  return new DataDirLockError(
    `the data directory ${dataDir} is in use by ${who}: only one member may use a data directory at a time`,
  );
}

interface Owner {
  pid: number;
  /** Clock ticks after boot when the process started; absent without /proc. */
  start?: string;
}

/** "pid <n> start <ticks>\n" — readable by a person looking at the directory. */
function ownerLine(pid: number): string {
  const start = startTime(pid);
  return start === undefined ? `pid ${pid}\n` : `pid ${pid} start ${start}\n`;
}

function parseOwner(text: string): Owner | undefined {
  const m = /^pid (\d+)(?: start (\d+))?\n$/.exec(text);
  if (!m) return undefined; // not written by us (it appears whole, see acquire): stale
  return { pid: Number(m[1]), start: m[2] };
}

/** Whether the process that wrote the lock at `path` is still running. */
function isAlive(holder: Owner, path: string): boolean {
  // Our own pid: held if this process holds it; otherwise left by an earlier process that had
  // our pid (a container restarted often starts its first process under the same pid).
  if (holder.pid === process.pid) return heldHere.has(path);
  try {
    process.kill(holder.pid, 0); // signal 0: only checks that the pid exists
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "EPERM") return false; // ESRCH: no such process
  }
  const start = startTime(holder.pid);
  // A pid recycled by a process that started at another time is not the owner.
  return start === undefined || holder.start === undefined || start === holder.start;
}

/** Field 22 of /proc/<pid>/stat (after the parenthesised command name, which may hold spaces). */
function startTime(pid: number): string | undefined {
  try {
    const stat = readFileSync(`/proc/${pid}/stat`, "utf8");
    return stat.slice(stat.lastIndexOf(")") + 2).split(" ")[19];
  } catch {
    return undefined;
  }
}

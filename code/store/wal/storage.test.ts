import type { FileHandle } from "node:fs/promises";
import { mkdtemp, open as openFile, readdir, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import { type Answer, EtcdServer } from "../etcdserver/server.ts";
import type { RequestOp } from "../etcdserverpb/rpc.ts";
import { ErrCompacted } from "../mvcc/kvstore-txn.ts";
import type { Event, KeyValue } from "../mvccpb/kv.ts";
import { toBytes, toText } from "../pkg/bytes.ts";
import { FakeClock } from "../pkg/clock.ts";
import type { Logger } from "../pkg/log.ts";
import { EtcdError } from "../rpctypes/error.ts";
import type { WALError } from "./errors.ts";
import { encodeFrame } from "./record.ts";
import { StorageError, type StorageOptions } from "./storage.ts";
import { encodeCommit } from "./storage-format.ts";
import { WAL } from "./wal.ts";

const b = toBytes;
const everything = { key: new Uint8Array([0]), rangeEnd: new Uint8Array([0]) };

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

async function tempDir(): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), "storage-"));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

/** Opens a durable server on `dir` (closed after the test) and returns it with its log lines. */
async function open(dir: string, opts: Partial<StorageOptions> & { clock?: FakeClock } = {}) {
  const lines: string[] = [];
  const logger: Logger = (level, msg, fields) =>
    lines.push(`${level} ${msg} ${JSON.stringify(fields ?? {})}`);
  const s = await EtcdServer.open({ clock: opts.clock ?? new FakeClock(), logger, ...opts, dir });
  if (!(s instanceof EtcdServer)) throw s;
  cleanups.push(() => s.close());
  return { s, lines };
}

/** The answer, awaited; an error answer fails the test. */
async function must<T>(answer: Answer<T>): Promise<T> {
  const resp = await answer;
  if (resp instanceof EtcdError) throw resp;
  return resp;
}

const put = (key: string, value: string, lease = 0): RequestOp => ({
  requestPut: { key: b(key), value: b(value), lease },
});

function kvText(kv: KeyValue) {
  return [toText(kv.key), toText(kv.value), kv.createRevision, kv.modRevision, kv.version, kv.lease];
}

/**
 * Everything a client can observe: the revisions, every key at every revision still readable,
 * that reads below the compaction fail, and the leases with their TTLs and keys.
 */
async function observe(s: EtcdServer) {
  const rev = s.kv.rev();
  const compactRev = s.kv.compactRev();
  const history: unknown[] = [];
  for (let r = Math.max(compactRev, 1); r <= rev; r++) {
    const res = await must(s.range({ ...everything, revision: r }));
    history.push([r, res.header.revision, res.kvs.map(kvText)]);
  }
  const below = compactRev > 1 ? s.range({ ...everything, revision: compactRev - 1 }) : undefined;
  const leases: unknown[] = [];
  for (const { ID } of (await must(s.leaseLeases())).leases) {
    const ttl = await must(s.leaseTimeToLive({ ID, keys: true }));
    leases.push([ID, ttl.grantedTTL, ttl.TTL, ttl.keys.map(toText)]);
  }
  return {
    rev,
    head: s.kv.head(),
    compactRev,
    history,
    below: below instanceof EtcdError ? below.message : "no compaction",
    leases: leases.sort(),
  };
}

/** A history with every kind of commit: puts, txns, deletes, leases granted and revoked, compaction. */
async function writeHistory(s: EtcdServer): Promise<void> {
  await must(s.put({ key: b("a"), value: b("1") }));
  await must(s.put({ key: b("b"), value: b("1") }));
  await must(s.put({ key: b("a"), value: b("2") }));
  await must(
    s.txn({
      compare: [{ key: b("a"), target: "VALUE", result: "EQUAL", value: b("2") }],
      success: [put("c", "1"), put("d", "1"), { requestDeleteRange: { key: b("b") } }],
    }),
  );
  const l1 = await must(s.leaseGrant({ ID: 100, TTL: 30 }));
  await must(s.put({ key: b("e"), value: b("1"), lease: l1.ID }));
  await must(s.put({ key: b("f"), value: b("1"), lease: l1.ID }));
  const l2 = await must(s.leaseGrant({ ID: 200, TTL: 60 }));
  await must(s.put({ key: b("g"), value: b("\u00ff\u0000binary"), lease: l2.ID }));
  await must(s.put({ key: b("a"), value: b("3") }));
  await must(s.compact({ revision: s.kv.rev() - 2 }));
  await must(s.leaseRevoke({ ID: l1.ID })); // deletes e and f at one revision
  await must(s.leaseGrant({ ID: 300, TTL: 5 }));
  await must(s.leaseRevoke({ ID: 300 })); // a lease without keys: no revision
  await must(s.deleteRange({ key: b("c"), rangeEnd: b("e") }));
  await must(s.put({ key: b("c"), value: b("again") })); // a new generation: version 1 again
  await must(s.put({ key: b("h"), value: b("1"), lease: l2.ID }));
  await must(s.put({ key: b("h"), value: b("2"), ignoreLease: true }));
  // A txn whose compare fails writes nothing and takes no revision.
  await must(s.txn({ compare: [{ key: b("a"), target: "VERSION", result: "EQUAL", version: 99 }] }));
}

describe("storage: restart", () => {
  for (const snapshotCount of [10_000, 3]) {
    const how = snapshotCount === 3 ? "from snapshots and the log after them" : "from the log alone";
    it(`recovers keys, revisions, versions, compaction and leases exactly, ${how}`, async () => {
      const dir = await tempDir();
      const first = await open(dir, { snapshotCount });
      await writeHistory(first.s);
      const before = await observe(first.s);
      expect(before.rev).toBe(14);
      expect(before.leases).toEqual([[200, 60, 60, ["g", "h"]]]);
      await first.s.close();

      const snaps = (await readdir(dir)).filter((n) => n.endsWith(".snap"));
      expect(snaps.length).toBe(snapshotCount === 3 ? 1 : 0);

      const second = await open(dir, { snapshotCount });
      expect(await observe(second.s)).toEqual(before);
      const recovered = second.lines.find((l) => l.includes("recovered the store"));
      expect(recovered).toContain('"current-revision":14');

      // It goes on from there: the next write takes the next revision, and leases still expire.
      expect((await must(second.s.put({ key: b("z"), value: b("1") }))).header.revision).toBe(15);
    });
  }

  it("restarts leases with their full TTL, and logs their expiry like any revoke", async () => {
    const dir = await tempDir();
    const clock = new FakeClock();
    const first = await open(dir, { clock });
    const lease = await must(first.s.leaseGrant({ TTL: 10 }));
    await must(first.s.put({ key: b("/leader"), value: b("me"), lease: lease.ID }));
    clock.advance(8_000);
    await first.s.close();

    // After a restart nobody has had a chance to renew yet: the TTL starts over (etcd: Promote).
    const restarted = new FakeClock();
    const second = await open(dir, { clock: restarted });
    expect((await must(second.s.leaseTimeToLive({ ID: lease.ID }))).TTL).toBe(10);
    restarted.advance(9_000);
    expect((await must(second.s.range({ key: b("/leader") }))).kvs).toHaveLength(1);
    restarted.advance(2_000); // past the TTL, and past the next 500 ms expiry check
    await must(second.s.leaseLeases()); // waits for the revoke to be durable
    expect((await must(second.s.range({ key: b("/leader") }))).kvs).toHaveLength(0);
    const rev = second.s.kv.rev();
    await second.s.close();

    const third = await open(dir);
    expect(third.s.kv.rev()).toBe(rev);
    expect((await must(third.s.range({ key: b("/leader") }))).kvs).toHaveLength(0);
    expect((await must(third.s.leaseLeases())).leases).toEqual([]);
  });
});

/** Every event a watch from `startRevision` receives, once it has caught up. */
function watchAll(s: EtcdServer, startRevision: number): unknown[] {
  const ws = s.watch();
  ws.watch({ ...everything, startRevision });
  while (s.kv.syncWatchers() > 0) {
    // one catch-up round per call; a long history takes several
  }
  const events = ws
    .drain()
    .flatMap((r) => r.events)
    .map((ev: Event) => [ev.type, ...kvText(ev.kv)]);
  ws.close();
  return events;
}

describe("storage: watching from before a restart", () => {
  for (const snapshotCount of [10_000, 3]) {
    it(`replays the same history after the restart (snapshot count ${snapshotCount})`, async () => {
      const dir = await tempDir();
      const first = await open(dir, { snapshotCount });
      for (let i = 1; i <= 5; i++) await must(first.s.put({ key: b(`k${i % 2}`), value: b(`${i}`) }));
      await must(first.s.deleteRange({ key: b("k0") }));
      await must(first.s.compact({ revision: 3 }));
      await must(first.s.txn({ success: [put("k0", "x"), put("k2", "y")] }));
      const before = watchAll(first.s, 3);
      // the puts and the delete from revision 3 on, then the txn's two puts
      expect(before.map((e) => (e as unknown[]).slice(0, 4))).toEqual([
        ["PUT", "k0", "2", 3],
        ["PUT", "k1", "3", 2],
        ["PUT", "k0", "4", 3],
        ["PUT", "k1", "5", 2],
        ["DELETE", "k0", "", 0],
        ["PUT", "k0", "x", 8],
        ["PUT", "k2", "y", 8],
      ]);
      await first.s.close();

      const second = await open(dir, { snapshotCount });
      expect(watchAll(second.s, 3)).toEqual(before);
      // History below the compaction is gone before and after, as in etcd.
      const ws = second.s.watch();
      ws.watch({ ...everything, startRevision: 2 });
      second.s.kv.syncWatchers();
      expect(ws.drain().find((r) => r.canceled)?.compactRevision).toBe(3);
    });
  }
});

describe("storage: a torn write at the end of the log", () => {
  it("is cut off at restart; every acknowledged write is there, and the log goes on", async () => {
    const dir = await tempDir();
    const first = await open(dir);
    for (let i = 1; i <= 5; i++) await must(first.s.put({ key: b(`k${i}`), value: b(`${i}`) }));
    const before = await observe(first.s);
    await first.s.close();

    // The first 20 bytes of a record that was being written when the power went.
    const segment = (await readdir(dir))
      .filter((n) => n.endsWith(".wal"))
      .sort()
      .at(-1)!;
    const torn = encodeFrame({ revision: 7, payload: encodeCommit({ type: "txn", rev: 7, changes: [] }) }, 0);
    // Where the next record would go: segments are preallocated, so that is right after the last
    // record (frames are 8-byte aligned, and each payload here ends in its value, a non-zero digit).
    const path = join(dir, segment);
    const end = (await readFile(path)).findLastIndex((byte) => byte !== 0) + 1;
    const file = await openFile(path, "r+");
    await file.write(torn.bytes, 0, 20, Math.ceil(end / 8) * 8);
    await file.close();

    const second = await open(dir);
    expect(second.lines.some((l) => l.includes("torn write at the end of the log"))).toBe(true);
    expect(await observe(second.s)).toEqual(before);
    await must(second.s.put({ key: b("k6"), value: b("6") }));
    await second.s.close();

    const third = await open(dir);
    expect((await must(third.s.range({ key: b("k6") }))).kvs.map(kvText)).toEqual([["k6", "6", 7, 7, 1, 0]]);
  });
});

/** An fsync that the test can hold: while held, nothing becomes durable. */
function gatedDisk() {
  let held: (() => void)[] | undefined;
  let waiting = 0;
  return {
    fsync: async (file: FileHandle) => {
      if (held) {
        waiting++;
        await new Promise<void>((resolve) => held!.push(resolve));
      }
      await file.sync();
    },
    hold: () => {
      held = [];
    },
    release: () => {
      const gate = held;
      held = undefined;
      for (const resolve of gate ?? []) resolve();
    },
    waiting: () => waiting,
  };
}

/** Polls until `check` holds; a test waits for a condition, never for a fixed time. */
async function until(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setImmediate(resolve));
  }
}

describe("storage: nobody sees a write before it is on disk", () => {
  it("answers, publishes to reads and notifies watchers only after the fsync", async () => {
    const dir = await tempDir();
    const disk = gatedDisk();
    const { s } = await open(dir, { fsync: disk.fsync });
    cleanups.push(async () => disk.release()); // runs before the close: a held fsync would block it
    await must(s.put({ key: b("k"), value: b("1") })); // revision 2
    const ws = s.watch();
    ws.watch({ key: b("k") });
    ws.drain(); // the `created` response

    disk.hold();
    let answered = false;
    const answer = Promise.resolve(s.put({ key: b("k"), value: b("2") })).then((r) => {
      answered = true;
      return r;
    });
    // A compare-and-swap on the new value decides on it (the newest state)…
    let swapped = false;
    const swap = Promise.resolve(
      s.txn({
        compare: [{ key: b("k"), target: "VALUE", result: "EQUAL", value: b("2") }],
        success: [put("k", "3")],
      }),
    ).then((r) => {
      swapped = true;
      return r;
    });
    await until(() => disk.waiting() > 0, "the write to reach the fsync");
    expect([answered, swapped]).toEqual([false, false]); // the write is at the disk: nobody is answered,
    const read = await must(s.range({ key: b("k") }));
    expect([read.header.revision, toText(read.kvs[0].value)]).toEqual([2, "1"]); // reads see the old state,
    expect(ws.drain()).toEqual([]); // and watchers have heard nothing.
    expect(s.kv.head()).toBe(4); // (both writes are committed, in order, waiting for the disk)

    disk.release();
    expect((await must(answer)).header.revision).toBe(3);
    expect((await must(swap)).succeeded).toBe(true);
    expect(toText((await must(s.range({ key: b("k") }))).kvs[0].value)).toBe("3");
    expect(ws.drain().flatMap((r) => r.events.map((ev) => [ev.kv.modRevision, toText(ev.kv.value)]))).toEqual(
      [
        [3, "2"],
        [4, "3"],
      ],
    );
  });

  it("refuses to answer once the WAL failed, and never publishes what it could not write", async () => {
    const dir = await tempDir();
    let broken = false;
    const fatal: WALError[] = [];
    const { s } = await open(dir, {
      fsync: async (file) => {
        if (broken) throw Object.assign(new Error("EIO: i/o error, fsync"), { code: "EIO" });
        await file.sync();
      },
      onFatal: (err) => fatal.push(err),
    });
    await must(s.put({ key: b("k"), value: b("1") }));
    broken = true;
    await expect(Promise.resolve(s.put({ key: b("k"), value: b("2") }))).rejects.toThrow(
      /^wal: write failed/,
    );
    expect(fatal.map((e) => e.reason)).toEqual(["wal: write failed"]);
    const read = await must(s.range({ key: b("k") }));
    expect([read.header.revision, toText(read.kvs[0].value)]).toEqual([2, "1"]);
  });
});

describe("storage: a compaction is a commit too", () => {
  it("takes effect only once it is on disk, and a snapshot taken meanwhile keeps it", async () => {
    const dir = await tempDir();
    const disk = gatedDisk();
    // The compaction is the 4th record: the snapshot is encoded right after it, before its fsync.
    const { s } = await open(dir, { fsync: disk.fsync, snapshotCount: 3 });
    cleanups.push(async () => disk.release());
    for (let i = 1; i <= 3; i++) await must(s.put({ key: b("k"), value: b(`${i}`) })); // revisions 2..4

    disk.hold();
    let answered = false;
    const answer = Promise.resolve(s.compact({ revision: 4 })).then((r) => {
      answered = true;
      return r;
    });
    await until(() => disk.waiting() > 0, "the compaction to reach the fsync");
    expect(answered).toBe(false);
    // Not carried out yet: a crash now would undo it, so nobody may see it.
    expect(toText((await must(s.range({ key: b("k"), revision: 2 }))).kvs[0].value)).toBe("1");
    expect(s.kv.compactRev()).toBe(-1);
    expect(s.kv.backend.all()).toHaveLength(3);
    // But the next compaction is judged against it already, as etcd applies them in order.
    expect(s.compact({ revision: 3 })).toBe(ErrCompacted);

    disk.release();
    expect((await must(answer)).header.revision).toBe(4);
    expect(s.range({ key: b("k"), revision: 3 })).toBe(ErrCompacted);
    expect(s.kv.compactRev()).toBe(4);
    expect(s.kv.backend.all()).toHaveLength(1);
    const before = await observe(s);
    await s.close();

    expect((await readdir(dir)).filter((n) => n.endsWith(".snap"))).toHaveLength(1);
    const second = await open(dir);
    expect(await observe(second.s)).toEqual(before);
    expect(second.s.kv.backend.all()).toHaveLength(1); // the snapshot's history below 4 is gone
  });
});

describe("storage: snapshots bound the log", () => {
  it("saves a snapshot every snapshotCount records and deletes the log it covers", async () => {
    const dir = await tempDir();
    const first = await open(dir, { snapshotCount: 10 });
    const count = (prefix: string) => first.lines.filter((l) => l.startsWith(prefix)).length;
    for (let i = 0; i < 35; i++) {
      await must(first.s.put({ key: b(`k${i % 4}`), value: b(`${i}`) }));
      // Only one snapshot is saved at a time: one that is due while another is still being
      // written waits for a later record. On a busy machine the next ten writes can outrun a
      // snapshot (it fsyncs a file and a directory and takes a new 64 MB segment), so the test
      // lets each one finish to count one snapshot per ten records.
      await until(
        () => count("info saved snapshot") === count("info triggering snapshot"),
        "the snapshot",
        30_000,
      );
    }
    await first.s.close();
    expect(first.lines.filter((l) => l.startsWith("info saved snapshot"))).toHaveLength(3);
    const names = (await readdir(dir)).sort();
    // One snapshot, and the one segment that continues after it: the older ones are gone.
    expect(names.filter((n) => n.endsWith(".snap"))).toHaveLength(1);
    expect(names.filter((n) => n.endsWith(".wal"))).toHaveLength(1);

    const second = await open(dir, { snapshotCount: 10 });
    const recovered = second.lines.find((l) => l.includes("recovered the store"))!;
    // Which revision the last snapshot holds depends on how writes fell into fsync batches (a
    // snapshot is taken after a batch that crosses the count); what must hold is that the snapshot
    // plus the log after it give every write, and that log is shorter than snapshotCount.
    const snapshotRevision = Number(/"snapshot-revision":(\d+)/.exec(recovered)?.[1]);
    const replayed = Number(/"records-replayed":(\d+)/.exec(recovered)?.[1]);
    expect(snapshotRevision).toBeGreaterThanOrEqual(34);
    expect(snapshotRevision - 1 + replayed).toBe(35);
    expect(replayed).toBeLessThan(10);
    expect(second.s.kv.rev()).toBe(36);
  });
});

describe("storage: a data directory that does not add up", () => {
  async function logWith(dir: string, payloads: Uint8Array[]): Promise<void> {
    const opened = await WAL.open(dir, { log: () => {} });
    if (opened instanceof Error) throw opened;
    for (const [i, payload] of payloads.entries()) await opened.wal.append(i + 2, payload);
    await opened.wal.close();
  }

  it("refuses a record that does not reproduce what it recorded", async () => {
    const dir = await tempDir();
    const wrong: KeyValue = {
      key: b("k"),
      value: b("v"),
      createRevision: 2,
      modRevision: 2,
      version: 5,
      lease: 0,
    };
    await logWith(dir, [encodeCommit({ type: "txn", rev: 2, changes: [wrong] })]);
    const s = await EtcdServer.open({ dir, logger: () => {} });
    expect(s).toBeInstanceOf(StorageError);
    expect((s as StorageError).message).toMatch(
      /^storage: record does not apply: WAL record 1 of 1 after the snapshot \(txn at revision 2\): change 0 differs: replay made "k" \(create 2, mod 2, version 1, lease 0\), the record has "k" \(create 2, mod 2, version 5, lease 0\)\./,
    );
  });

  it("refuses a put with a lease the log never granted, and a format it does not know", async () => {
    const dir = await tempDir();
    const leased: KeyValue = {
      key: b("k"),
      value: b("v"),
      createRevision: 2,
      modRevision: 2,
      version: 1,
      lease: 7,
    };
    await logWith(dir, [encodeCommit({ type: "txn", rev: 2, changes: [leased] })]);
    expect(((await EtcdServer.open({ dir, logger: () => {} })) as Error).message).toContain(
      "it puts a key with lease 7, which does not exist",
    );

    const newer = await tempDir();
    await logWith(newer, [b('{"v":2,"type":"txn","rev":2,"changes":[]}')]);
    const s = await EtcdServer.open({ dir: newer, logger: () => {} });
    expect(s).toBeInstanceOf(StorageError);
    expect((s as StorageError).reason).toBe("storage: unsupported version");
  });
});

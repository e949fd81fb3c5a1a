// Chapter 1's demo, run as a learner runs it (with --once, so it exits): the key lines of each
// step must appear, in order — history before live events, the compacted error for a read and for
// a watch, the lease's keys deleted together, the torn tail cut off and the damage refused.
import { beforeAll, describe, expect, it } from "vitest";
import { lineOf, runDemoToEnd } from "../demo-process.ts";

describe("npm run chapter -- 1 --once", () => {
  let out: { code: number | null; stdout: string; stderr: string };
  let lines: string[];

  beforeAll(async () => {
    out = await runDemoToEnd("01-etcd-watch", ["--once"], {}, 55_000);
    lines = out.stdout.split("\n");
  }, 60_000);

  it("runs every step and exits 0", () => {
    expect(out.code, out.stderr + out.stdout.slice(-2000)).toBe(0);
    for (const n of [1, 2, 3, 4, 5, 6, 7]) expect(out.stdout).toMatch(new RegExp(`^${n}\\. `, "m"));
  });

  it("gives each write the next revision, and a failed txn none", () => {
    expect(out.stdout).toMatch(
      /rev 2 {2}put \/registry\/pods\/default\/web .*create_revision=2 mod_revision=2 version=1/,
    );
    expect(out.stdout).toMatch(
      /rev 4 {2}put \/registry\/pods\/default\/web .*create_revision=2 mod_revision=4 version=2/,
    );
    expect(out.stdout).toMatch(/the same txn again → FAILURE \(the key exists; no revision taken: still 5\)/);
    expect(out.stdout).toMatch(/a second writer with the same mod_revision = 4 → FAILURE/);
    expect(out.stdout).toMatch(
      /rev 8 {2}put \/registry\/pods\/default\/db .*create_revision=8 mod_revision=8 version=1/,
    );
  });

  it("catches a watcher up from history, then delivers live events", () => {
    const unsynced = lineOf(lines, /starts in the unsynced group/);
    const history = lineOf(lines, /catch-up from history/, unsynced);
    const synced = lineOf(lines, /moved to the synced group/, history);
    const live = lineOf(lines, /live: pushed as the write committed/, synced);
    expect(
      [unsynced, history, synced, live].every((i) => i >= 0),
      out.stdout,
    ).toBe(true);
    const replayed = lines.slice(history + 1, synced).join("\n");
    expect(replayed).toMatch(/rev {2}2 {2}PUT {4}\/registry\/pods\/default\/web/);
    expect(replayed).toMatch(/rev {2}7 {2}DELETE \/registry\/pods\/default\/db/);
    expect(lines[live + 1]).toMatch(/rev {2}9 {2}PUT/);
    const txn = lineOf(lines, /one txn, one revision, one response \(2 events/, live);
    expect(txn).toBeGreaterThan(live);
  });

  it("refuses a read and a watch below the compaction revision", () => {
    expect(out.stdout).toMatch(
      /get --prefix \/registry\/pods\/ --rev 3 {2}→ {2}Error: etcdserver: mvcc: required revision has been compacted/,
    );
    expect(out.stdout).toMatch(
      /watch --rev 3 {2}→ {2}canceled, compact_revision=8; .*required revision has been compacted/,
    );
  });

  it("deletes an expired lease's keys in one revision, seen by the watch", () => {
    const expired = lineOf(lines, /the lease expired and was revoked: 2 DELETE events in one response/);
    expect(expired, out.stdout).toBeGreaterThan(0);
    expect(lines[expired + 1]).toMatch(/rev 13 {2}DELETE \/registry\/events\/default\/web\.1/);
    expect(lines[expired + 2]).toMatch(/rev 13 {2}DELETE \/registry\/events\/default\/web\.2/);
    expect(out.stdout).toMatch(/get --prefix \/registry\/events\/ {2}→ {2}0 keys/);
  });

  it("brings a durable server back after a restart", () => {
    expect(out.stdout).toMatch(/open the directory again → revision 5, keys a, c/);
  });

  it("cuts off a torn tail and refuses damage in the middle of the log", () => {
    expect(out.stdout).toMatch(/10 appends at once: 1 fsync /);
    expect(out.stdout).toMatch(/restart → 20 records recovered/);
    expect(out.stdout).toMatch(/restart → refused: wal: crc mismatch at position 160/);
  });
});

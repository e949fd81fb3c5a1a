// The whole etcd command, killed with SIGKILL under load: every write it acknowledged over gRPC
// must be there after a restart, with the revision it was acknowledged at, and no transaction may
// come back half applied. (wal-crash.test.ts does the same for the WAL alone.)
import { type ChildProcess, spawn } from "node:child_process";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";
import { Etcd3 } from "etcd3";
import { afterEach, describe, expect, it } from "vitest";

const repoRoot = fileURLToPath(new URL("../../../", import.meta.url));
const etcdCommand = join(repoRoot, "code/cmd/etcd.ts");

const cleanups: (() => Promise<void>)[] = [];
afterEach(async () => {
  for (const cleanup of cleanups.splice(0).reverse()) await cleanup();
});

interface Member {
  child: ChildProcess;
  client: Etcd3;
  exited: Promise<NodeJS.Signals | null>;
  stderr: () => string;
}

/**
 * Starts `etcd --data-dir dataDir` on a free port and connects a client once it serves. The
 * command runs in this node process with tsx as a loader (`--import tsx`): tsx's own CLI would run
 * it in a child process, and SIGKILL, which cannot be passed on, would then kill only the CLI.
 */
async function startMember(dataDir: string): Promise<Member> {
  const child = spawn(
    process.execPath,
    [
      "--import",
      "tsx",
      etcdCommand,
      `--data-dir=${dataDir}`,
      "--listen-client-urls=http://127.0.0.1:0",
      "--advertise-client-urls=http://127.0.0.1:0",
      // Small, so that kills also land while a snapshot is being saved.
      "--snapshot-count=200",
    ],
    { cwd: repoRoot, stdio: ["ignore", "ignore", "pipe"] },
  );
  const exited = new Promise<NodeJS.Signals | null>((resolve) =>
    child.on("close", (_, signal) => resolve(signal)),
  );
  cleanups.push(async () => {
    if (child.exitCode === null && child.signalCode === null) child.kill("SIGKILL");
    await exited;
  });
  let stderr = "";
  const address = await new Promise<string>((resolve, reject) => {
    child.stderr!.setEncoding("utf8").on("data", (chunk: string) => {
      stderr += chunk;
      const bound = /"address":"([^"]+)"/.exec(stderr);
      if (bound) resolve(bound[1]);
    });
    child.on("close", () => reject(new Error(`etcd exited before serving:\n${stderr}`)));
  });
  const client = new Etcd3({ hosts: `http://${address}` });
  cleanups.push(async () => client.close());
  return { child, client, exited, stderr: () => stderr };
}

/** One write the load sent: a put of one key, or a txn putting three. */
interface Attempt {
  keys: string[];
  value: string;
  /** The revision in the answer; undefined if no answer came. */
  ackedAt?: number;
}

/**
 * Writes from `workers` concurrent callers until `acks` writes were acknowledged, then kills the
 * member with SIGKILL, in the middle of the load. Returns every write attempted.
 */
async function loadAndKill(member: Member, round: number, workers: number, acks: number): Promise<Attempt[]> {
  const attempts: Attempt[] = [];
  let acked = 0;
  let killed = false;
  let killing: Promise<void> | undefined;
  const kill = async () => {
    killed = true;
    member.child.kill("SIGKILL");
    expect(await member.exited).toBe("SIGKILL");
    // Ends the calls still waiting for an answer; no call of this round may reach the restarted member.
    member.client.close();
  };
  const worker = async () => {
    while (!killed) {
      const n = attempts.length;
      const isTxn = n % 3 === 2;
      const keys = isTxn ? ["a", "b", "c"].map((k) => `crash/${round}/t${n}/${k}`) : [`crash/${round}/p${n}`];
      const attempt: Attempt = { keys, value: `${round}.${n}` };
      attempts.push(attempt);
      const value = Buffer.from(attempt.value);
      try {
        const resp = isTxn
          ? await member.client.kv.txn({
              success: keys.map((k) => ({ request_put: { key: Buffer.from(k), value } })),
            })
          : await member.client.kv.put({ key: Buffer.from(keys[0]), value });
        attempt.ackedAt = Number(resp.header.revision);
        acked++;
      } catch {
        return; // the member is gone: this write may or may not have made it to disk
      }
      if (acked >= acks) killing ??= kill();
    }
  };
  await Promise.all(Array.from({ length: workers }, worker));
  await (killing ?? kill());
  return attempts;
}

/**
 * Checks the restarted member against what one round attempted: each acknowledged write is there
 * at its revision; nothing else is there but whole writes that were attempted; and the writes
 * present are exactly the revisions firstRev..(current revision) — a prefix of the commit order.
 */
async function check(member: Member, round: number, attempts: Attempt[], firstRev: number) {
  const resp = await member.client.getAll().prefix(`crash/${round}/`).exec();
  const current = Number(resp.header.revision);
  const found = new Map(resp.kvs.map((kv) => [kv.key.toString(), kv]));
  const revisions = new Set<number>();
  let recovered = 0;
  for (const attempt of attempts) {
    const present = attempt.keys.map((k) => found.get(k)).filter((kv) => kv !== undefined);
    // A transaction's puts are all there or none: never half of one.
    expect(present.length === 0 || present.length === attempt.keys.length, `${attempt.keys}`).toBe(true);
    for (const kv of present) {
      expect(kv.value.toString()).toBe(attempt.value);
      expect([kv.version, kv.create_revision]).toEqual(["1", kv.mod_revision]);
    }
    const at = new Set(present.map((kv) => Number(kv.mod_revision)));
    expect(at.size).toBeLessThanOrEqual(1);
    if (attempt.ackedAt !== undefined) {
      expect([...at], `acknowledged ${attempt.keys} at ${attempt.ackedAt}`).toEqual([attempt.ackedAt]);
    }
    if (present.length > 0) {
      recovered++;
      for (const rev of at) {
        expect(revisions.has(rev), `two writes at revision ${rev}`).toBe(false);
        revisions.add(rev);
      }
    }
    for (const k of attempt.keys) found.delete(k);
  }
  expect([...found.keys()], "keys nobody wrote").toEqual([]);
  const expected = Array.from({ length: current - firstRev + 1 }, (_, i) => firstRev + i);
  expect([...revisions].sort((x, y) => x - y)).toEqual(expected);
  return { current, recovered };
}

describe("etcd --data-dir: kill -9", () => {
  it("keeps every acknowledged write, at its revision, and no half transaction, across two kills", async () => {
    const dir = await mkdtemp(join(tmpdir(), "etcd-crash-"));
    cleanups.push(() => rm(dir, { recursive: true, force: true }));
    const dataDir = join(dir, "default.etcd");

    let member = await startMember(dataDir);
    const rounds: Attempt[][] = [];
    let firstRev = 2;
    for (let round = 1; round <= 2; round++) {
      const attempts = await loadAndKill(member, round, 32, 400);
      rounds.push(attempts);
      member = await startMember(dataDir);
      expect(member.stderr()).toContain('"msg":"recovered the store from the data directory"');

      const acked = attempts.filter((a) => a.ackedAt !== undefined).length;
      const { current, recovered } = await check(member, round, attempts, firstRev);
      console.info(
        `round ${round}: ${attempts.length} writes sent, ${acked} acknowledged, ${recovered} recovered ` +
          `(${recovered - acked} durable but unanswered); revisions ${firstRev}..${current}`,
      );
      expect(recovered).toBeGreaterThanOrEqual(acked);
      firstRev = current + 1;
    }
    // The first round's writes survived the second crash as well.
    const all = await member.client.getAll().prefix("crash/1/").keys();
    expect(all.length).toBeGreaterThan(0);
    for (const a of rounds[0].filter((a) => a.ackedAt !== undefined)) {
      for (const k of a.keys) expect(all).toContain(k);
    }
  });
});

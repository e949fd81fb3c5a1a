/**
 * Chapter 1's demo — the store at work: revisions, ranges, a txn, a watch that catches up from
 * history and then goes live, compaction, a lease expiring, a restart from the data directory,
 * and the write-ahead log surviving a torn write.
 *
 * Solves: a learner who has read how the store works should *see* each promise kept, with the
 * numbers on screen —
 * - every write gets the next revision; a key's create_revision, mod_revision and version follow;
 * - a conditional write (txn) succeeds or fails as a whole, at one revision or none;
 * - a watch from an old revision first replays history (unsynced), then receives writes as they
 *   commit (synced);
 * - after compaction, old reads and watches fail with etcd's own error;
 * - an expired lease deletes its keys in one revision, which watchers see;
 * - a durable server comes back from its data directory with the same revision and keys; its
 *   log shares fsyncs among concurrent writes, cuts off a torn tail and refuses mid-log damage.
 *
 * Everything runs in this process on the real code/store classes. The store is also served over
 * etcd's gRPC API on a loopback port, so the real `etcdctl` can look at the same data; the demo
 * then keeps serving until Ctrl-C.
 *
 * Usage: npm run chapter -- 1 [--once] [--port N]
 *   --once     exit after the demo instead of serving (also: CHAPTER_ONCE=1); tests use it
 *   --port N   serve gRPC on 127.0.0.1:N (default: a free port)
 *
 * @upstream none — course demo
 * @chapter 01-etcd-watch
 */
import { mkdtemp, readdir, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { EmbedError, type Etcd, startEtcd } from "../../code/store/embed/etcd.ts";
import { EtcdServer } from "../../code/store/etcdserver/server.ts";
import type { WatchResponse } from "../../code/store/etcdserverpb/rpc.ts";
import { prefixEnd } from "../../code/store/mvcc/index.ts";
import type { WatchStream } from "../../code/store/mvcc/watcher.ts";
import type { Event, KeyValue } from "../../code/store/mvccpb/kv.ts";
import { toBytes, toText } from "../../code/store/pkg/bytes.ts";
import { EtcdError } from "../../code/store/rpctypes/error.ts";
import { WALError } from "../../code/store/wal/errors.ts";
import { encodeFrame } from "../../code/store/wal/record.ts";
import { WAL } from "../../code/store/wal/wal.ts";
import {
  answer,
  bold,
  cyan,
  dim,
  green,
  heading,
  note,
  red,
  runDemo,
  runTool,
  say,
  servingDemoFlags,
  sleep,
  step,
  stopOnInterrupt,
  within,
  yellow,
} from "../demo.ts";

const { once, port } = servingDemoFlags("npm run chapter -- 1", "gRPC");

// ─── printing ────────────────────────────────────────────────────────────────────────────────

function kvLine(kv: KeyValue): string {
  const value = toText(kv.value);
  return (
    `${toText(kv.key).padEnd(30)} ${JSON.stringify(value).padEnd(16)} ` +
    dim(`create_revision=${kv.createRevision} mod_revision=${kv.modRevision} version=${kv.version}`)
  );
}

function eventLine(ev: Event): string {
  const type = ev.type === "PUT" ? green("PUT   ") : red("DELETE");
  const value = ev.type === "PUT" ? ` = ${JSON.stringify(toText(ev.kv.value))}` : "";
  return `rev ${String(ev.kv.modRevision).padStart(2)}  ${type} ${toText(ev.kv.key)}${value}`;
}

/** The text an etcd client shows for an error value (etcdctl prints "Error: " before it). */
function errorText(err: EtcdError): string {
  return err.grpcMessage;
}

function must<T>(result: T | EtcdError, what: string): T {
  if (result instanceof EtcdError) throw new Error(`${what}: ${result.message}`);
  return result;
}

// ─── the demo ────────────────────────────────────────────────────────────────────────────────

const k = toBytes;
const web = "/registry/pods/default/web";
const db = "/registry/pods/default/db";
const node1 = "/registry/nodes/node-1";
const pods = "/registry/pods/";

async function main(): Promise<void> {
  heading("etcd: MVCC and watch — chapter 1's store at work");

  step("Start the store");
  const started = await startEtcd({
    name: "default",
    dataDir: "",
    inMemory: true,
    listenClientURLs: [`http://127.0.0.1:${port}`],
    advertiseClientURLs: [`http://127.0.0.1:${port}`],
  });
  let served: Etcd | undefined;
  let server: EtcdServer;
  if (started instanceof EmbedError) {
    say(yellow(`could not serve gRPC (${started.message}); running in process only`));
    server = new EtcdServer();
  } else {
    served = started;
    server = started.server;
    say(`serving etcd's gRPC API on ${cyan(started.clientAddresses[0])} (in memory)`);
  }
  say(`an empty store is at revision ${server.kv.rev()}: etcd's first write gets revision 2`);

  await writes(server);
  await reads(server);
  await watchFromThePast(server);
  await compaction(server);
  await lease(server);
  await durability();

  if (!served) return;
  await tryEtcdctl(served.clientAddresses[0]);
  if (once) {
    await served.close();
    return;
  }
  say(bold("Serving until Ctrl-C."));
  stopOnInterrupt(async () => {
    await served.close();
    console.log("stopped.");
  });
  await new Promise(() => {});
}

async function writes(server: EtcdServer): Promise<void> {
  step("Writes: each one takes the next revision");
  const put = async (key: string, value: string) => {
    const r = must(await server.put({ key: k(key), value: k(value) }), "put");
    const got = must(await server.range({ key: k(key) }), "get");
    say(`rev ${r.header.revision}  put ${kvLine(got.kvs[0])}`);
  };
  await put(web, "web v1");
  await put(db, "db v1");
  await put(web, "web v2");
  note("web was updated: its create_revision stays 2, mod_revision moves, version counts the changes");

  // The API server's create: "put, but only if the key does not exist" (mod_revision = 0).
  const create = async () =>
    must(
      await server.txn({
        compare: [{ target: "MOD", result: "EQUAL", key: k(node1), modRevision: 0 }],
        success: [{ requestPut: { key: k(node1), value: k("node-1") } }],
      }),
      "txn",
    );
  const first = await create();
  say(
    `rev ${first.header.revision}  txn if mod_revision(${node1}) = 0 then put → ` +
      green(first.succeeded ? "SUCCESS" : "FAILURE"),
  );
  const again = await create();
  say(
    `        the same txn again → ${yellow(again.succeeded ? "SUCCESS" : "FAILURE")} ` +
      dim(`(the key exists; no revision taken: still ${again.header.revision})`),
  );

  // The API server's update: "put, but only if nobody wrote since I read it" (mod_revision = rv).
  const read = must(await server.range({ key: k(web) }), "get").kvs[0];
  const update = async (value: string) =>
    must(
      await server.txn({
        compare: [{ target: "MOD", result: "EQUAL", key: k(web), modRevision: read.modRevision }],
        success: [{ requestPut: { key: k(web), value: k(value) } }],
        failure: [{ requestRange: { key: k(web) } }],
      }),
      "txn",
    );
  const u1 = await update("web v3");
  say(
    `rev ${u1.header.revision}  txn if mod_revision(web) = ${read.modRevision} then put "web v3" → ` +
      green(u1.succeeded ? "SUCCESS" : "FAILURE"),
  );
  const u2 = await update("web v3 (stale)");
  const current = u2.responses[0]?.responseRange?.kvs[0];
  say(
    `        a second writer with the same mod_revision = ${read.modRevision} → ` +
      yellow(u2.succeeded ? "SUCCESS" : "FAILURE") +
      dim(` (the failure branch read mod_revision=${current?.modRevision}: a 409 Conflict in chapter 2)`),
  );

  const del = must(await server.deleteRange({ key: k(db) }), "delete");
  say(
    `rev ${del.header.revision}  delete ${db} ${dim(`(deleted=${del.deleted}: a tombstone ends its generation)`)}`,
  );
  await put(db, "db v2");
  note("db was created again: a new generation, so create_revision and version start over");
}

async function reads(server: EtcdServer): Promise<void> {
  step("Reads: ranges, prefixes, limits and the past");
  const end = prefixEnd(k(pods));
  say(`--prefix ${pods} is the range [${pods}, ${toText(end)}) ${dim("(last byte + 1: '/' → '0')")}`);
  const now = must(await server.range({ key: k(pods), rangeEnd: end }), "range");
  say(`now (revision ${now.header.revision}): count=${now.count}`);
  for (const kv of now.kvs) say(`  ${kvLine(kv)}`);

  const limited = must(await server.range({ key: k(pods), rangeEnd: end, limit: 1 }), "range");
  say(
    `with limit=1: ${limited.kvs.length} kv, count=${limited.count}, more=${limited.more} ` +
      dim("(count is every match; more says the limit cut the answer)"),
  );

  const past = must(await server.range({ key: k(pods), rangeEnd: end, revision: 3 }), "range");
  say(`at revision 3 (the past): count=${past.count}`);
  for (const kv of past.kvs) say(`  ${kvLine(kv)}`);
  const gone = must(await server.range({ key: k(db), revision: 7 }), "range");
  say(`${db} at revision 7: ${gone.count} keys ${dim("(it was deleted at 7, re-created at 8)")}`);
  note(`the header revision is always the current one (${past.header.revision}), whatever revision was read`);
}

async function watchFromThePast(server: EtcdServer): Promise<void> {
  step("Watch from an old revision: catch up from history, then live");
  const ws = server.watch();
  const startRevision = 2;
  const current = server.kv.rev();
  const id = ws.watch({ key: k(pods), rangeEnd: prefixEnd(k(pods)), startRevision });
  if (id instanceof EtcdError) throw new Error(`watch: ${id.message}`);
  const created = await within(2000, ws.next(), "the created response");
  say(
    `watch --prefix ${pods} --rev ${startRevision}  →  created=${created?.created}, watch id ${id} ` +
      dim(`(current revision ${current})`),
  );
  say(
    `the watcher starts in the ${cyan("unsynced")} group (${startRevision} ≤ ${current}): ` +
      `unsynced=${server.kv.unsynced.size}, synced=${server.kv.synced.size}`,
  );

  const history = await within(2000, ws.next(), "the catch-up response");
  printResponse(history, `catch-up from history: syncWatchers read revisions ${startRevision}..${current}`);
  say(
    `caught up: the watcher moved to the ${cyan("synced")} group ` +
      `(unsynced=${server.kv.unsynced.size}, synced=${server.kv.synced.size})`,
  );

  must(await server.put({ key: k(web), value: k("web v4") }), "put");
  printResponse(await within(2000, ws.next(), "a live event"), "live: pushed as the write committed");
  must(
    await server.txn({
      success: [{ requestPut: { key: k(web), value: k("web v5") } }, { requestDeleteRange: { key: k(db) } }],
    }),
    "txn",
  );
  printResponse(await within(2000, ws.next(), "a live txn"), "live: one txn, one revision, one response");
  ws.close();
}

function printResponse(r: WatchResponse | undefined, label: string): void {
  if (!r) throw new Error("the watch stream closed unexpectedly");
  const n = r.events.length;
  say(`${answer(label)} ${dim(`(${n} event${n === 1 ? "" : "s"}, header revision ${r.header.revision})`)}`);
  for (const ev of r.events) say(`    ${eventLine(ev)}`);
}

async function compaction(server: EtcdServer): Promise<void> {
  step("Compaction: history before a revision is dropped");
  const at = 8;
  const before = server.kv.backend.size;
  must(await server.compact({ revision: at }), "compact");
  say(
    `compact ${at}: backend records ${before} → ${server.kv.backend.size} ` +
      dim(`(each key keeps only its value as of ${at}, plus everything after)`),
  );

  const old = await server.range({ key: k(pods), rangeEnd: prefixEnd(k(pods)), revision: 3 });
  say(`get --prefix ${pods} --rev 3  →  ${old instanceof EtcdError ? red(`Error: ${errorText(old)}`) : "?"}`);
  const atCompaction = must(
    await server.range({ key: k(pods), rangeEnd: prefixEnd(k(pods)), revision: at }),
    "range",
  );
  say(
    `get --prefix ${pods} --rev ${at}  →  ${atCompaction.count} keys ${dim("(reading at the compaction revision still works)")}`,
  );

  const ws = server.watch();
  ws.watch({ key: k(pods), rangeEnd: prefixEnd(k(pods)), startRevision: 3 });
  await within(2000, ws.next(), "the created response");
  const canceled = await within(2000, ws.next(), "the compacted response");
  if (canceled?.canceled && canceled.compactRevision > 0) {
    say(
      `watch --rev 3  →  ${red(`canceled, compact_revision=${canceled.compactRevision}`)}; ` +
        `clients report it as ${red(`"etcdserver: mvcc: required revision has been compacted"`)}`,
    );
  } else {
    say(yellow(`watch --rev 3 was not canceled: ${JSON.stringify(canceled)}`));
  }
  ws.close();
  note(`the client must read the current state again and watch from there; in chapter 2 the API`);
  note(`server turns this error into 410 Gone ("Expired"), and informers relist`);
}

async function lease(server: EtcdServer): Promise<void> {
  step("Leases: keys that vanish when nobody renews them");
  const t0 = performance.now();
  const at = () => dim(`+${((performance.now() - t0) / 1000).toFixed(1)} s`);
  const granted = must(await server.leaseGrant({ TTL: 2 }), "lease grant");
  say(`${at()}  lease grant 2  →  lease ${granted.ID.toString(16)}, TTL ${granted.TTL} s`);

  const events = ["/registry/events/default/web.1", "/registry/events/default/web.2"];
  for (const key of events) {
    const r = must(await server.put({ key: k(key), value: k("event"), lease: granted.ID }), "put");
    say(`${at()}  rev ${r.header.revision}  put --lease ${granted.ID.toString(16)} ${key}`);
  }
  const ws: WatchStream = server.watch();
  ws.watch({ key: k("/registry/events/"), rangeEnd: prefixEnd(k("/registry/events/")) });
  await within(2000, ws.next(), "the created response");
  say(`${at()}  watch --prefix /registry/events/ (from now)`);

  await sleep(1000);
  const kept = must(await server.leaseKeepAlive({ ID: granted.ID }), "keep-alive");
  say(`${at()}  keep-alive  →  TTL ${kept.TTL} s again`);
  say(`${at()}  no more keep-alives…`);

  const deleted = await within(5000, ws.next(), "the lease's DELETE events");
  if (!deleted) throw new Error("the watch stream closed unexpectedly");
  say(
    `${at()}  ${answer(`the lease expired and was revoked: ${deleted.events.length} DELETE events `)}` +
      `in one response, at one revision`,
  );
  for (const ev of deleted.events) say(`    ${eventLine(ev)}`);
  const left = must(
    await server.range({ key: k("/registry/events/"), rangeEnd: prefixEnd(k("/registry/events/")) }),
    "range",
  );
  say(`${at()}  get --prefix /registry/events/  →  ${left.count} keys`);
  ws.close();
}

async function durability(): Promise<void> {
  step("Durability: the write-ahead log (in a temporary directory)");
  await restart();
  note("the log underneath, driven directly:");
  const dir = await mkdtemp(join(tmpdir(), "ch1-wal-"));
  let fsyncs = 0;
  const fsync = async (file: { sync(): Promise<void> }, path: string) => {
    if (path.endsWith(".wal")) fsyncs++;
    await file.sync();
  };
  const logged: string[] = [];
  // 1 MiB segments instead of the default 64 MB: the demo reads and rewrites the whole file.
  const options = { fsync, log: (line: string) => logged.push(line), segmentBytes: 1 << 20 };
  const payload = (rev: number) => toBytes(`txn at revision ${rev}`);
  try {
    const opened = await WAL.open(dir, options);
    if (opened instanceof Error) throw opened;
    const { wal } = opened;

    fsyncs = 0;
    for (let rev = 2; rev <= 11; rev++) await wal.append(rev, payload(rev));
    say(`10 appends, each awaited before the next: ${fsyncs} fsyncs`);
    fsyncs = 0;
    await Promise.all(Array.from({ length: 10 }, (_, i) => wal.append(12 + i, payload(12 + i))));
    say(
      `10 appends at once: ${fsyncs} fsync${fsyncs === 1 ? "" : "s"} ${dim("(group commit: they share one write and one fsync)")}`,
    );
    await wal.close();

    const segment = join(dir, (await readdir(dir)).find((n) => n.endsWith(".wal"))!);
    // A crash in the middle of the next write: only the first 20 bytes of its frame reached the
    // file, right after the 20 records (the rest of the preallocated segment is zeros).
    const torn = encodeFrame({ revision: 22, payload: payload(22) }, 0).bytes.subarray(0, 20);
    const written = new Uint8Array(await readFile(segment));
    written.set(torn, frameOffset(written, 20));
    await writeFile(segment, written);
    const reopened = await WAL.open(dir, options);
    if (reopened instanceof Error) throw reopened;
    say(
      `crash mid-write (20 bytes of a frame at the end), restart → ${green(`${reopened.records.length} records recovered`)}`,
    );
    for (const line of logged.filter((l) => l.includes("torn write"))) note(line.replace(dir, "<dir>"));
    await reopened.wal.close();

    // Damage in the middle: flip one byte inside the 5th record's body.
    const bytes = new Uint8Array(await readFile(segment));
    const offset = frameOffset(bytes, 4) + 12 + 8;
    bytes[offset] ^= 0xff;
    await writeFile(segment, bytes);
    const refused = await WAL.open(dir, options);
    if (refused instanceof WALError) {
      say(
        `one flipped byte in the 5th record, restart → ${red(`refused: ${refused.reason}`)} at position ${refused.offset}`,
      );
      note(
        "records follow the damage, so it is not a torn write: dropping it could lose acknowledged writes",
      );
    } else {
      say(yellow("the damaged log was not refused"));
      if (!(refused instanceof Error)) await refused.wal.close();
    }
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A durable server (as `etcd --data-dir` runs): writes, a restart, and the same store again. */
async function restart(): Promise<void> {
  const dir = await mkdtemp(join(tmpdir(), "ch1-data-"));
  try {
    const first = await EtcdServer.open({ dir });
    if (!(first instanceof EtcdServer)) throw first;
    for (const name of ["a", "b", "c"]) {
      must(await first.put({ key: k(`/registry/configmaps/default/${name}`), value: k(name) }), "put");
    }
    must(await first.deleteRange({ key: k("/registry/configmaps/default/b") }), "delete");
    const before = first.kv.rev();
    await first.close();

    const second = await EtcdServer.open({ dir });
    if (!(second instanceof EtcdServer)) throw second;
    const prefix = k("/registry/configmaps/");
    const back = must(await second.range({ key: prefix, rangeEnd: prefixEnd(prefix) }), "range");
    const keys = back.kvs.map((kv) => toText(kv.key).split("/").pop()).join(", ");
    say(
      `a durable server: 3 puts and a delete (revision ${before}), close, open the directory again → ` +
        green(`revision ${second.kv.rev()}, keys ${keys}`),
    );
    await second.close();
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** Where the n-th frame (0-based) starts: each frame is 12 bytes + body + padding to 8. */
function frameOffset(bytes: Uint8Array, n: number): number {
  const view = new DataView(bytes.buffer, bytes.byteOffset, bytes.byteLength);
  let offset = 0;
  for (let i = 0; i < n; i++) {
    const body = Number(view.getBigUint64(offset, true) & 0xffffffffffffffn);
    offset += 12 + body + ((8 - ((12 + body) % 8)) % 8);
  }
  return offset;
}

async function tryEtcdctl(endpoint: string): Promise<void> {
  step("Now with the real etcdctl");
  const cmd = `ETCDCTL_API=3 etcdctl --endpoints=${endpoint}`;
  const commands = [
    `${cmd} get --prefix /registry`,
    `${cmd} get --prefix /registry -w json`,
    `${cmd} get ${web} --rev=8`,
    `${cmd} get ${web} --rev=3          # compacted`,
    `${cmd} watch --prefix /registry/pods/ --rev=8`,
    `${cmd} put ${web} "web v6"         # in another terminal, while the watch runs`,
    `${cmd} lease grant 10`,
    `${cmd} endpoint status -w table`,
  ];
  for (const c of commands) say(cyan(c));

  const env = { ...process.env, ETCDCTL_API: "3" };
  const found = await runTool("etcdctl", ["version"], { env }).catch(() => undefined);
  if (found === undefined) {
    note("etcdctl is not installed (optional: Debian/Ubuntu package etcd-client)");
    return;
  }
  say(`${dim("$")} etcdctl get --prefix /registry --keys-only`);
  const out = await runTool(
    "etcdctl",
    [`--endpoints=${endpoint}`, "get", "--prefix", "/registry", "--keys-only"],
    {
      env,
    },
  );
  for (const line of out.split("\n").filter((l) => l !== "")) say(`  ${line}`);
}

runDemo(main);

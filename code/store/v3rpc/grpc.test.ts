// The gRPC server against two real clients: the `etcd3` npm client (what a Node program would
// use) and a plain gRPC client built from our .proto (to send exactly the messages a test needs:
// watch ids, progress requests, malformed and oversized requests).
import * as grpc from "@grpc/grpc-js";
import { Etcd3 } from "etcd3";
import { afterAll, afterEach, beforeAll, describe, expect, it } from "vitest";
import { type Etcd, startEtcd } from "../embed/etcd.ts";
import { etcdserverpb } from "../etcdserverpb/rpc-pb.ts";

let etcd: Etcd;
let endpoint: string;

beforeAll(async () => {
  const started = await startEtcd({
    name: "default",
    dataDir: "",
    inMemory: true,
    listenClientURLs: ["http://127.0.0.1:0"],
    advertiseClientURLs: ["http://127.0.0.1:0"],
    progressNotifyInterval: 50,
  });
  if (started instanceof Error) throw started;
  etcd = started;
  endpoint = etcd.clientAddresses[0];
});

afterAll(async () => {
  await etcd?.close();
});

/** Polls until `check` holds; a test waits for a condition, never for a fixed time. */
async function waitFor(check: () => boolean, what: string, timeoutMs = 5000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 5));
  }
}

describe("the etcd3 npm client", () => {
  let client: Etcd3;
  beforeAll(() => {
    client = new Etcd3({ hosts: endpoint });
  });
  afterAll(() => client.close());

  it("puts, gets, lists a prefix and deletes", async () => {
    await client.put("e3/a").value("1");
    await client.put("e3/b").value("2");
    expect(await client.get("e3/a").string()).toBe("1");
    expect(await client.getAll().prefix("e3/").strings()).toEqual({ "e3/a": "1", "e3/b": "2" });
    expect(await client.getAll().prefix("e3/").limit(1).keys()).toEqual(["e3/a"]);
    await client.delete().key("e3/a");
    expect(await client.get("e3/a").string()).toBeNull();
  });

  it("runs a compare-and-swap transaction", async () => {
    await client.put("e3/cas").value("old");
    const won = await client
      .if("e3/cas", "Value", "==", "old")
      .then(client.put("e3/cas").value("new"))
      .commit();
    const lost = await client
      .if("e3/cas", "Value", "==", "old")
      .then(client.put("e3/cas").value("x"))
      .commit();
    expect([won.succeeded, lost.succeeded]).toEqual([true, false]);
    expect(await client.get("e3/cas").string()).toBe("new");
  });

  it("watches a prefix, with previous values", async () => {
    const watcher = await client.watch().prefix("e3w/").withPreviousKV().create();
    const seen: string[] = [];
    watcher.on("put", (kv, prev) => seen.push(`put ${kv.key} ${kv.value} prev=${prev?.value ?? "-"}`));
    watcher.on("delete", (kv, prev) => seen.push(`delete ${kv.key} prev=${prev?.value ?? "-"}`));
    await client.put("e3w/k").value("1");
    await client.put("e3w/k").value("2");
    await client.delete().key("e3w/k");
    await waitFor(() => seen.length === 3, "three events");
    expect(seen).toEqual(["put e3w/k 1 prev=-", "put e3w/k 2 prev=1", "delete e3w/k prev=2"]);
    await watcher.cancel();
  });

  it("grants, keeps alive and revokes a lease; its keys go with it", async () => {
    const lease = client.lease(30, { autoKeepAlive: false });
    const id = await lease.grant();
    await lease.put("e3/leased").value("v");
    const ka = await lease.keepaliveOnce();
    expect(ka.TTL).toBe("30");
    const ttl = await client.leaseClient.leaseTimeToLive({ ID: id, keys: true });
    expect(ttl.grantedTTL).toBe("30");
    expect(ttl.keys.map(String)).toEqual(["e3/leased"]);
    await lease.revoke();
    expect(await client.get("e3/leased").string()).toBeNull();
    expect((await client.leaseClient.leaseTimeToLive({ ID: id })).TTL).toBe("-1");
  });

  it("reads the member's status and the member list with etcd's ids", async () => {
    const status = await client.maintenance.status();
    expect(status.header.cluster_id).toBe("14841639068965178418"); // cdf818194e3a8c32
    expect(status.header.member_id).toBe("10276657743932975437"); // 8e9e05c52164694d
    expect(status.leader).toBe(status.header.member_id);
    expect(status.version).toBe("3.5.17");
    const members = await client.cluster.memberList({});
    expect(members.members.map((m) => [m.name, m.clientURLs])).toEqual([["default", [`http://${endpoint}`]]]);
  });

  it("gets etcd's errors: compacted, future revision", async () => {
    await client.put("e3/rev").value("1");
    const { header } = await client.kv.range({ key: Buffer.from("e3/rev") });
    const rev = Number(header.revision);
    await client.kv.compact({ revision: rev });
    await expect(
      client
        .get("e3/rev")
        .revision(rev - 1)
        .string(),
    ).rejects.toThrow("etcdserver: mvcc: required revision has been compacted");
    await expect(
      client
        .get("e3/rev")
        .revision(rev + 100)
        .string(),
    ).rejects.toThrow("etcdserver: mvcc: required revision is a future revision");
  });

  it("refuses a write over 1.5 MiB with etcd's error", async () => {
    const big = Buffer.alloc(1.6 * 1024 * 1024, "a");
    await expect(client.put("e3/big").value(big)).rejects.toThrow("etcdserver: request is too large");
    // A large read is not a write: no 1.5 MiB limit (only gRPC's own).
    expect(await client.get(Buffer.alloc(1.6 * 1024 * 1024, "k")).string()).toBeNull();
    expect(await client.get("e3/big").string()).toBeNull();
  });
});

// #region raw client
const pkg = { etcdserverpb: etcdserverpb() };

// biome-ignore lint/suspicious/noExplicitAny: messages as decoded by proto-loader
type Msg = any;

/** A Watch stream that collects every response, so a test can wait for the ones it expects. */
function openWatch(client: grpc.Client) {
  const call = (client as unknown as { watch(): grpc.ClientDuplexStream<Msg, Msg> }).watch();
  const responses: Msg[] = [];
  call.on("data", (r: Msg) => responses.push(r));
  call.on("error", () => {}); // cancelled at the end of each test
  return {
    responses,
    send: (req: Msg) => call.write(req),
    async next(pred: (r: Msg) => boolean, what: string): Promise<Msg> {
      await waitFor(() => responses.some(pred), what);
      const i = responses.findIndex(pred);
      return responses.splice(i, 1)[0];
    },
    close: () => call.cancel(),
  };
}

function unaryCall(client: grpc.Client, method: string, req: Msg): Promise<Msg> {
  return new Promise((resolve, reject) => {
    (client as unknown as Record<string, (r: Msg, cb: (e: Error | null, v: Msg) => void) => void>)[method](
      req,
      (err, resp) => (err ? reject(err) : resolve(resp)),
    );
  });
}

const key = (s: string) => Buffer.from(s);
// #endregion raw client

describe("the Watch stream on the wire", () => {
  let watchClient: grpc.Client;
  let kvClient: grpc.Client;
  const opened: { close(): void }[] = [];
  const watch = () => {
    const w = openWatch(watchClient);
    opened.push(w);
    return w;
  };
  beforeAll(() => {
    watchClient = new pkg.etcdserverpb.Watch(endpoint, grpc.credentials.createInsecure());
    kvClient = new pkg.etcdserverpb.KV(endpoint, grpc.credentials.createInsecure());
  });
  afterEach(() => {
    for (const w of opened.splice(0)) w.close();
  });
  afterAll(() => {
    watchClient.close();
    kvClient.close();
  });

  it("numbers watches per stream from 0, takes a client's id, refuses a duplicate", async () => {
    const a = watch();
    for (let i = 0; i < 3; i++) a.send({ createRequest: { key: key(`ids/${i}`) } });
    a.send({ createRequest: { key: key("ids/x"), watchId: 7 } });
    a.send({ createRequest: { key: key("ids/y"), watchId: 7 } });
    const created = [];
    for (let i = 0; i < 5; i++) created.push(await a.next((r) => r.created, "created"));
    expect(created.map((r) => [r.watchId, r.canceled])).toEqual([
      [0, false],
      [1, false],
      [2, false],
      [7, false],
      [-1, true],
    ]);
    expect(created[4].cancelReason).toBe("mvcc: duplicate watch ID provided on the WatchStream");

    const b = watch();
    b.send({ createRequest: { key: key("ids/0") } });
    expect((await b.next((r) => r.created, "created on a second stream")).watchId).toBe(0);
  });

  it("sends events in one response per revision, and a canceled response on cancel", async () => {
    const w = watch();
    w.send({ createRequest: { key: key("ev/"), rangeEnd: key("ev0") } });
    const { watchId } = await w.next((r) => r.created, "created");
    const txn = await unaryCall(kvClient, "txn", {
      success: [
        { requestPut: { key: key("ev/a"), value: key("1") } },
        { requestPut: { key: key("ev/b"), value: key("2") } },
      ],
    });
    const ev = await w.next((r) => r.events.length > 0, "events");
    expect(ev.watchId).toBe(watchId);
    expect(ev.events.map((e: Msg) => [e.type, String(e.kv.key), e.kv.modRevision])).toEqual([
      ["PUT", "ev/a", txn.header.revision],
      ["PUT", "ev/b", txn.header.revision],
    ]);
    w.send({ cancelRequest: { watchId } });
    expect(await w.next((r) => r.canceled, "canceled")).toMatchObject({
      watchId,
      canceled: true,
      created: false,
    });
  });

  it("answers a progress request with the current revision (watch id -1)", async () => {
    const w = watch();
    w.send({ createRequest: { key: key("prog/") } });
    await w.next((r) => r.created, "created");
    const put = await unaryCall(kvClient, "put", { key: key("elsewhere"), value: key("v") });
    w.send({ progressRequest: {} });
    const p = await w.next((r) => r.watchId === -1, "progress");
    expect(p.events).toEqual([]);
    expect(p.header.revision).toBe(put.header.revision);
  });

  it("sends progress notifications to an idle progress_notify watch", async () => {
    const w = watch();
    w.send({ createRequest: { key: key("idle/"), progressNotify: true } });
    const { watchId } = await w.next((r) => r.created, "created");
    const p = await w.next(
      (r) => r.watchId === watchId && r.events.length === 0 && !r.created,
      "progress notify",
    );
    expect(p.header.revision).toBe(etcd.server.kv.rev());
  });

  it("cancels a watch from a compacted revision, with compact_revision and a reason", async () => {
    await unaryCall(kvClient, "put", { key: key("cmp/a"), value: key("1") });
    const put = await unaryCall(kvClient, "put", { key: key("cmp/a"), value: key("2") });
    await unaryCall(kvClient, "compact", { revision: put.header.revision });
    const w = watch();
    w.send({ createRequest: { key: key("cmp/a"), startRevision: put.header.revision - 1 } });
    const created = await w.next((r) => r.created, "created");
    expect(created.canceled).toBe(false);
    const canceled = await w.next((r) => r.canceled, "canceled");
    expect(canceled).toMatchObject({
      watchId: created.watchId,
      compactRevision: put.header.revision,
      cancelReason: "etcdserver: mvcc: required revision has been compacted",
    });
  });

  it("ends a stream's watches when the client goes away", async () => {
    const w = watch();
    w.send({ createRequest: { key: key("gone/") } });
    await w.next((r) => r.created, "created");
    const before = etcd.server.kv.synced.size;
    w.close();
    await waitFor(() => etcd.server.kv.synced.size === before - 1, "the watcher to be removed");
  });
});

describe("bad input never crashes the server", () => {
  let kvClient: grpc.Client;
  beforeAll(() => {
    kvClient = new pkg.etcdserverpb.KV(endpoint, grpc.credentials.createInsecure());
  });
  afterAll(() => kvClient.close());

  it("answers bytes that are not a protobuf message with an error", async () => {
    const garbage = await new Promise<grpc.ServiceError>((resolve) => {
      kvClient.makeUnaryRequest(
        "/etcdserverpb.KV/Range",
        (b: Buffer) => b,
        (b: Buffer) => b,
        Buffer.from([0xff, 0xff, 0xff, 0xff, 0x0f]),
        (err) => resolve(err as grpc.ServiceError),
      );
    });
    expect(garbage.code).toBe(grpc.status.INTERNAL);
    expect((await unaryCall(kvClient, "range", { key: key("still/alive") })).kvs).toEqual([]);
  });

  it("refuses a message over 2 MiB (1.5 MiB + gRPC overhead) at the gRPC layer", async () => {
    const huge = Buffer.alloc(2.2 * 1024 * 1024, "a");
    await expect(unaryCall(kvClient, "put", { key: key("huge"), value: huge })).rejects.toMatchObject({
      code: grpc.status.RESOURCE_EXHAUSTED,
      details: expect.stringContaining("larger than max"),
    });
  });

  it("answers an empty key with InvalidArgument, as etcd", async () => {
    await expect(unaryCall(kvClient, "put", { key: Buffer.alloc(0), value: key("v") })).rejects.toMatchObject(
      {
        code: grpc.status.INVALID_ARGUMENT,
        details: "etcdserver: key is not provided",
      },
    );
  });

  it("answers values a client should not send (unknown enums, negative limits) without crashing", async () => {
    await unaryCall(kvClient, "put", { key: key("odd/a"), value: key("1") });
    const r = await unaryCall(kvClient, "range", {
      key: key("odd/"),
      rangeEnd: key("odd0"),
      limit: -3,
      sortTarget: 42,
    });
    expect(r.kvs.map((kv: Msg) => String(kv.key))).toEqual(["odd/a"]);
  });

  it("turns an exception inside a handler into Internal and keeps serving", async () => {
    const original = etcd.server.range;
    etcd.server.range = () => {
      throw new Error("boom");
    };
    try {
      await expect(unaryCall(kvClient, "range", { key: key("x") })).rejects.toMatchObject({
        code: grpc.status.INTERNAL,
        details: "Range: boom",
      });
    } finally {
      etcd.server.range = original;
    }
    expect((await unaryCall(kvClient, "range", { key: key("x") })).kvs).toEqual([]);
  });
});

describe("without the :authority mending (mendAuthority: false)", () => {
  it("serves on gRPC's own listener; a client with a host:port authority works as before", async () => {
    const plain = await startEtcd({
      name: "plain",
      dataDir: "",
      inMemory: true,
      listenClientURLs: ["http://127.0.0.1:0"],
      advertiseClientURLs: ["http://127.0.0.1:0"],
      mendAuthority: false,
    });
    if (plain instanceof Error) throw plain;
    const client = new Etcd3({ hosts: plain.clientAddresses[0] });
    try {
      await client.put("plain/a").value("1");
      expect(await client.get("plain/a").string()).toBe("1");
    } finally {
      client.close();
      await plain.close();
    }
  });
});

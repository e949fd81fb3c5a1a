import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../../code/api/meta.ts";
import { isStatusError, type StatusError } from "../../../code/apiserver/errors.ts";
import { type EtcdClient, InProcessEtcdClient } from "../../../code/apiserver/storage/etcd-client.ts";
import { Etcd3Store } from "../../../code/apiserver/storage/etcd3-store.ts";
import type { StorageWatchEvent, Watch } from "../../../code/apiserver/storage/interfaces.ts";
import { everything } from "../../../code/apiserver/storage/selection-predicate.ts";
import { EtcdServer } from "../../../code/store/etcdserver/server.ts";
import type { TxnRequest } from "../../../code/store/etcdserverpb/rpc.ts";
import { guaranteedUpdate } from "./guaranteed-update.ts";

const gr = { group: "", resource: "configmaps" };
const key = (name: string) => `/registry/configmaps/default/${name}`;
const text = (b: Uint8Array) => new TextDecoder().decode(b);

/**
 * The real client, counting what reaches etcd. More than `maxTxns` txns is a loop that cannot
 * end (retrying with a stale revision): the txn then fails loudly instead of hanging the test.
 */
class CountingClient implements EtcdClient {
  txns = 0;
  failedTxns = 0;
  constructor(
    private readonly inner: EtcdClient,
    private readonly maxTxns = 500,
  ) {}
  range(r: Parameters<EtcdClient["range"]>[0]) {
    return this.inner.range(r);
  }
  async txn(r: TxnRequest) {
    if (++this.txns > this.maxTxns)
      throw new Error(`more than ${this.maxTxns} txns: a retry loop that never re-reads?`);
    const resp = await this.inner.txn(r);
    if (!resp.succeeded) this.failedTxns++;
    return resp;
  }
  compact(rev: number) {
    return this.inner.compact(rev);
  }
  watch(r: Parameters<EtcdClient["watch"]>[0]) {
    return this.inner.watch(r);
  }
  close() {
    return this.inner.close();
  }
}

let server: EtcdServer;
let client: CountingClient;
/** The course's real store on the same etcd: creates, reads, deletes and watches around your updates. */
let store: Etcd3Store;

beforeEach(() => {
  server = new EtcdServer();
  client = new CountingClient(new InProcessEtcdClient(server));
  store = new Etcd3Store({ client: new InProcessEtcdClient(server), groupResource: gr });
});

afterEach(async () => {
  await store.close();
  await server.close();
});

function configMap(name: string, data: Record<string, string>, uid = `uid-${name}`): KubeObject {
  return { apiVersion: "v1", kind: "ConfigMap", metadata: { name, namespace: "default", uid }, data };
}

const dataOf = (o: KubeObject | undefined) => (o as { data?: Record<string, string> } | undefined)?.data;

async function rejection(p: Promise<unknown>): Promise<StatusError> {
  const e = await p.then(
    () => undefined,
    (err: unknown) => err,
  );
  if (!isStatusError(e))
    throw new Error(`expected a Status error, got ${e === undefined ? "success" : String(e)}`);
  return e;
}

const tick = () => new Promise((r) => setImmediate(r));

describe("guaranteedUpdate on a real etcd client", () => {
  it("reads, calls tryUpdate with the current object, writes, and returns it at its new resourceVersion", async () => {
    const created = await store.create(key("cfg"), configMap("cfg", { a: "1" }));
    const seen: (KubeObject | undefined)[] = [];
    const updated = await guaranteedUpdate(client, gr, key("cfg"), {}, (cur) => {
      seen.push(structuredClone(cur));
      return { ...(cur as KubeObject), data: { a: "2" } };
    });
    expect(seen).toHaveLength(1);
    expect(dataOf(seen[0])).toEqual({ a: "1" });
    expect(seen[0]?.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(dataOf(updated)).toEqual({ a: "2" });
    expect(Number(updated.metadata.resourceVersion)).toBeGreaterThan(
      Number(created.metadata.resourceVersion),
    );
    expect(updated.metadata.resourceVersion).toBe(await store.currentResourceVersion());
    const stored = await store.get(key("cfg"));
    expect(stored).toEqual(updated);
  });

  it("stores the object without its resourceVersion (etcd's mod_revision is the resourceVersion)", async () => {
    await store.create(key("cfg"), configMap("cfg", { a: "1" }));
    await guaranteedUpdate(client, gr, key("cfg"), {}, (cur) => ({
      ...(cur as KubeObject),
      data: { a: "2" },
    }));
    const raw = await client.range({ key: new TextEncoder().encode(key("cfg")) });
    const stored = JSON.parse(text(raw.kvs[0].value)) as KubeObject;
    expect(stored.metadata.resourceVersion).toBeUndefined();
    expect(dataOf(stored)).toEqual({ a: "2" });
  });

  it("5 writers × 8 increments, all racing: the counter ends at exactly 40 — no update lost", async () => {
    const start = await store.create(key("counter"), configMap("counter", { n: "0" }));
    const increment = () =>
      guaranteedUpdate(client, gr, key("counter"), {}, async (cur) => {
        const obj = cur as KubeObject;
        await tick(); // every writer reads before anyone writes: the races are real
        return { ...obj, data: { n: String(Number(dataOf(obj)?.n) + 1) } };
      });
    const writers = Array.from({ length: 5 }, async () => {
      for (let i = 0; i < 8; i++) await increment();
    });
    await Promise.all(writers);
    const end = await store.get(key("counter"));
    expect(dataOf(end)?.n).toBe("40");
    expect(client.failedTxns).toBeGreaterThan(0); // races were lost, and retried
    // 40 successful writes and nothing else: one revision each.
    expect(Number(end?.metadata.resourceVersion) - Number(start.metadata.resourceVersion)).toBe(40);
    expect(client.txns - client.failedTxns).toBe(40);
  });

  it("a write that lands between the read and the write makes tryUpdate run again, on the new object", async () => {
    await store.create(key("cfg"), configMap("cfg", { a: "1" }));
    const seen: string[] = [];
    const updated = await guaranteedUpdate(client, gr, key("cfg"), {}, async (cur) => {
      const obj = cur as KubeObject;
      seen.push(dataOf(obj)?.a ?? "");
      // Another API server writes while we think: only the first try meets it.
      if (seen.length === 1) {
        await store.guaranteedUpdate(key("cfg"), {}, (c) => ({ ...(c as KubeObject), data: { a: "other" } }));
      }
      return { ...obj, data: { ...dataOf(obj), b: "mine" } };
    });
    expect(seen).toEqual(["1", "other"]);
    expect(dataOf(updated)).toEqual({ a: "other", b: "mine" });
    expect(dataOf(await store.get(key("cfg")))).toEqual({ a: "other", b: "mine" });
  });

  it("a delete and re-create between the read and the write is a lost race too (the key's version starts again; its mod_revision does not)", async () => {
    await store.create(key("cfg"), configMap("cfg", { owner: "old" }, "uid-1"));
    const seen: string[] = [];
    const updated = await guaranteedUpdate(client, gr, key("cfg"), {}, async (cur) => {
      const obj = cur as KubeObject;
      seen.push(obj.metadata.uid ?? "");
      if (seen.length === 1) {
        await store.delete(key("cfg"));
        await store.create(key("cfg"), configMap("cfg", { owner: "new" }, "uid-2"));
      }
      return { ...obj, data: { ...dataOf(obj), touched: "yes" } };
    });
    expect(seen).toEqual(["uid-1", "uid-2"]);
    expect(updated.metadata.uid).toBe("uid-2");
    expect(dataOf(await store.get(key("cfg")))).toEqual({ owner: "new", touched: "yes" });
  });

  it("an update that changes nothing writes nothing: same resourceVersion, no new revision, no watch event", async () => {
    const created = await store.create(key("cfg"), configMap("cfg", { a: "1" }));
    const before = await store.currentResourceVersion();
    const w = await store.watch(key("cfg"), {
      resourceVersion: created.metadata.resourceVersion,
      predicate: everything,
      recursive: false,
    });
    const same = await guaranteedUpdate(client, gr, key("cfg"), {}, (cur) => cur as KubeObject);
    expect(same.metadata.resourceVersion).toBe(created.metadata.resourceVersion);
    expect(dataOf(same)).toEqual({ a: "1" });
    expect(await store.currentResourceVersion()).toBe(before);
    expect(client.txns).toBe(0);
    // The first event the watch sees is the next real change, not the no-op.
    await store.guaranteedUpdate(key("cfg"), {}, (c) => ({ ...(c as KubeObject), data: { a: "2" } }));
    const first = await nextEvent(w);
    expect(first.type).toBe("MODIFIED");
    expect(dataOf(first.object)).toEqual({ a: "2" });
    w.stop();
  });

  it("an update made by changing the object it was given, in place, is still written", async () => {
    await store.create(key("cfg"), configMap("cfg", { a: "1" }));
    const updated = await guaranteedUpdate(client, gr, key("cfg"), {}, (cur) => {
      const obj = cur as KubeObject & { data: Record<string, string> };
      obj.data.a = "2"; // Go update functions change the copy they are given, then return it
      return obj;
    });
    expect(dataOf(updated)).toEqual({ a: "2" });
    expect(dataOf(await store.get(key("cfg")))).toEqual({ a: "2" });
  });

  it("a tryUpdate that throws aborts the update with its error; nothing is written", async () => {
    await store.create(key("cfg"), configMap("cfg", { a: "1" }));
    const before = await store.currentResourceVersion();
    const refused = new Error("admission says no");
    await expect(
      guaranteedUpdate(client, gr, key("cfg"), {}, () => {
        throw refused;
      }),
    ).rejects.toBe(refused);
    expect(await store.currentResourceVersion()).toBe(before);
  });
});

describe("guaranteedUpdate: missing objects and preconditions", () => {
  it("a missing object is 404 NotFound, and tryUpdate is never called", async () => {
    let calls = 0;
    const err = await rejection(
      guaranteedUpdate(client, gr, key("nope"), {}, (cur) => {
        calls++;
        return cur as KubeObject;
      }),
    );
    expect(err.status).toMatchObject({
      code: 404,
      reason: "NotFound",
      message: 'configmaps "nope" not found',
    });
    expect(calls).toBe(0);
  });

  it("with ignoreNotFound, tryUpdate gets undefined and its object is created", async () => {
    const seen: (KubeObject | undefined)[] = [];
    const created = await guaranteedUpdate(client, gr, key("fresh"), { ignoreNotFound: true }, (cur) => {
      seen.push(cur);
      return configMap("fresh", { a: "1" });
    });
    expect(seen).toEqual([undefined]);
    expect(dataOf(created)).toEqual({ a: "1" });
    expect(await store.get(key("fresh"))).toEqual(created);
  });

  it("with ignoreNotFound, an object created by someone else meanwhile is a lost race: tryUpdate runs again on it", async () => {
    const seen: (string | undefined)[] = [];
    const result = await guaranteedUpdate(client, gr, key("fresh"), { ignoreNotFound: true }, async (cur) => {
      seen.push(dataOf(cur)?.a);
      if (seen.length === 1) await store.create(key("fresh"), configMap("fresh", { a: "theirs" }));
      return cur ? { ...cur, data: { ...dataOf(cur), b: "mine" } } : configMap("fresh", { a: "mine" });
    });
    expect(seen).toEqual([undefined, "theirs"]);
    expect(dataOf(result)).toEqual({ a: "theirs", b: "mine" });
  });

  it("an object deleted during the race is 404 NotFound on the retry", async () => {
    await store.create(key("cfg"), configMap("cfg", { a: "1" }));
    const err = await rejection(
      guaranteedUpdate(client, gr, key("cfg"), {}, async (cur) => {
        await store.delete(key("cfg"));
        return { ...(cur as KubeObject), data: { a: "2" } };
      }),
    );
    expect(err.status).toMatchObject({
      code: 404,
      reason: "NotFound",
      message: 'configmaps "cfg" not found',
    });
    expect(await store.get(key("cfg"), { ignoreNotFound: true })).toBeUndefined();
  });

  it("a uid or resourceVersion precondition that does not hold is 409 Conflict, in upstream's words", async () => {
    const created = await store.create(key("cfg"), configMap("cfg", { a: "1" }, "uid-1"));
    const update = (cur: KubeObject | undefined) => ({ ...(cur as KubeObject), data: { a: "2" } });
    const uid = await rejection(
      guaranteedUpdate(client, gr, key("cfg"), { preconditions: { uid: "uid-9" } }, update),
    );
    expect(uid.status).toMatchObject({
      code: 409,
      reason: "Conflict",
      message:
        'Operation cannot be fulfilled on configmaps "cfg": StorageError: invalid object, Code: 4, Key: /registry/configmaps/default/cfg, ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: uid-9, UID in object meta: uid-1',
    });
    const rv = await rejection(
      guaranteedUpdate(client, gr, key("cfg"), { preconditions: { resourceVersion: "1" } }, update),
    );
    expect(rv.status.message).toContain(
      `Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${created.metadata.resourceVersion}`,
    );
    expect(client.txns).toBe(0);
    // Preconditions that hold: the update goes through.
    const ok = await guaranteedUpdate(
      client,
      gr,
      key("cfg"),
      { preconditions: { uid: "uid-1", resourceVersion: created.metadata.resourceVersion } },
      update,
    );
    expect(dataOf(ok)).toEqual({ a: "2" });
  });

  it("preconditions are checked on every try: a uid precondition fails once the object was replaced", async () => {
    await store.create(key("cfg"), configMap("cfg", { a: "1" }, "uid-1"));
    const err = await rejection(
      guaranteedUpdate(client, gr, key("cfg"), { preconditions: { uid: "uid-1" } }, async (cur) => {
        if (cur?.metadata.uid === "uid-1") {
          await store.delete(key("cfg"));
          await store.create(key("cfg"), configMap("cfg", { a: "replacement" }, "uid-2"));
        }
        return { ...(cur as KubeObject), data: { a: "2" } };
      }),
    );
    expect(err.status).toMatchObject({ code: 409, reason: "Conflict" });
    expect(err.status.message).toContain("UID in precondition: uid-1, UID in object meta: uid-2");
    expect(dataOf(await store.get(key("cfg")))).toEqual({ a: "replacement" });
  });
});

/** The next event of a watch (the watch stays open). */
async function nextEvent(w: Watch): Promise<StorageWatchEvent> {
  const it = w[Symbol.asyncIterator]();
  const r = await it.next();
  if (r.done) throw new Error("the watch ended");
  return r.value;
}

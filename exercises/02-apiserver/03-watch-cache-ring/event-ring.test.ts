import { afterEach, beforeEach, describe, expect, it } from "vitest";
import type { KubeObject } from "../../../code/api/meta.ts";
import { isStatusError } from "../../../code/apiserver/errors.ts";
import { InProcessEtcdClient } from "../../../code/apiserver/storage/etcd-client.ts";
import { Etcd3Store } from "../../../code/apiserver/storage/etcd3-store.ts";
import { everything } from "../../../code/apiserver/storage/selection-predicate.ts";
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";
import { EtcdServer } from "../../../code/store/etcdserver/server.ts";
import { EventRing } from "./event-ring.ts";

function ev(rv: number, name = "cfg", type: WatchCacheEvent["type"] = "MODIFIED"): WatchCacheEvent {
  return {
    type,
    key: `/registry/configmaps/default/${name}`,
    object: { metadata: { name, namespace: "default", resourceVersion: String(rv) } },
    resourceVersion: rv,
  };
}

function ring(capacity: number, listRv: number, ...rvs: number[]): EventRing {
  const r = new EventRing(capacity, listRv);
  for (const rv of rvs) r.add(ev(rv));
  return r;
}

/** The resourceVersions a resume from `rv` is sent — or the 410's message. */
function since(r: EventRing, rv: number): number[] | string {
  try {
    return r.getAllEventsSince(rv).map((e) => e.resourceVersion);
  } catch (e) {
    if (isStatusError(e)) return `${e.status.code} reason=${e.status.reason}: ${e.status.message}`;
    throw e;
  }
}

const expired = (rv: number, oldest: number) =>
  `410 reason=Expired: too old resource version: ${rv} (${oldest})`;

describe("EventRing before it is full", () => {
  it("a resume is sent every event after its resourceVersion, oldest first — never the event at it", () => {
    const r = ring(3, 10, 12, 15, 16);
    expect(since(r, 12)).toEqual([15, 16]);
    expect(since(r, 15)).toEqual([16]);
    expect(since(r, 13)).toEqual([15, 16]);
  });

  it("nothing is forgotten since the list: every resourceVersion from the list's on is served", () => {
    // The first change of this resource came at 12; revisions 11 belonged to other resources.
    const r = ring(3, 10, 12, 15, 16);
    expect(since(r, 10)).toEqual([12, 15, 16]);
    expect(since(r, 11)).toEqual([12, 15, 16]);
  });

  it("a resume from the newest resourceVersion, or a later one, is sent nothing (yet)", () => {
    const r = ring(3, 10, 12, 15, 16);
    expect(since(r, 16)).toEqual([]);
    expect(since(r, 40)).toEqual([]);
  });

  it("an empty ring serves its list's resourceVersion, and nothing older", () => {
    const r = ring(3, 10);
    expect(since(r, 10)).toEqual([]);
    expect(since(r, 9)).toBe(expired(9, 10));
  });

  it("a resourceVersion before the list is 410 Gone, reason Expired: the ring never knew what happened then", () => {
    const r = ring(3, 10, 12, 15);
    expect(since(r, 9)).toBe(expired(9, 10));
    expect(since(r, 1)).toBe(expired(1, 10));
  });

  it("the 410 is a StatusError as kube-apiserver sends it", () => {
    const r = ring(3, 10, 12);
    let err: unknown;
    try {
      r.getAllEventsSince(5);
    } catch (e) {
      err = e;
    }
    expect(isStatusError(err)).toBe(true);
    expect((err as { status: unknown }).status).toMatchObject({
      kind: "Status",
      status: "Failure",
      code: 410,
      reason: "Expired",
      message: "too old resource version: 5 (10)",
    });
  });
});

describe("EventRing once full", () => {
  it("forgets the oldest event; the oldest servable resourceVersion is then the oldest kept one's, minus one", () => {
    const r = ring(3, 10, 12, 15, 16, 20); // 12 is forgotten: 15, 16, 20 are kept
    expect(since(r, 14)).toEqual([15, 16, 20]);
    expect(since(r, 15)).toEqual([16, 20]);
    expect(since(r, 13)).toBe(expired(13, 14));
    expect(since(r, 12)).toBe(expired(12, 14));
    expect(since(r, 10)).toBe(expired(10, 14));
  });

  it("the boundary, on consecutive revisions: oldest − 1 is served, oldest − 2 is 410", () => {
    const r = ring(2, 1, 2, 3, 4); // 3 and 4 kept
    expect(since(r, 2)).toEqual([3, 4]);
    expect(since(r, 1)).toBe(expired(1, 2));
    expect(since(r, 4)).toEqual([]);
  });

  it("after going round many times, holds exactly the last `capacity` events, oldest first", () => {
    const rvs = Array.from({ length: 30 }, (_, i) => 101 + i); // 101 … 130
    const r = ring(4, 100, ...rvs);
    expect(since(r, 126)).toEqual([127, 128, 129, 130]);
    expect(since(r, 128)).toEqual([129, 130]);
    expect(since(r, 125)).toBe(expired(125, 126));
    expect(since(r, 100)).toBe(expired(100, 126));
  });

  it("returns the events themselves, in the order they came", () => {
    const r = new EventRing(3, 1);
    const events = [
      ev(2, "a", "ADDED"),
      ev(3, "b", "ADDED"),
      ev(4, "a"),
      ev(5, "b", "DELETED"),
      ev(6, "c", "ADDED"),
    ];
    for (const e of events) r.add(e);
    expect(
      r.getAllEventsSince(3).map((e) => `${e.type} ${e.key.split("/").pop()}@${e.resourceVersion}`),
    ).toEqual(["MODIFIED a@4", "DELETED b@5", "ADDED c@6"]);
  });
});

describe("EventRing fed by a real etcd watch, as the Cacher feeds it", () => {
  const gr = { group: "", resource: "configmaps" };
  const prefix = "/registry/configmaps";
  let server: EtcdServer;
  let store: Etcd3Store;

  beforeEach(() => {
    server = new EtcdServer();
    store = new Etcd3Store({ client: new InProcessEtcdClient(server), groupResource: gr });
  });

  afterEach(async () => {
    await store.close();
    await server.close();
  });

  it("a resume from any resourceVersion gets every later change, or a 410 naming the oldest it could have had", async () => {
    const cm = (name: string, n: number): KubeObject => ({
      apiVersion: "v1",
      kind: "ConfigMap",
      metadata: { name, namespace: "default" },
      data: { n: String(n) },
    });
    await store.create(`${prefix}/default/before`, cm("before", 0));
    // The Cacher's reflector: list, then watch from the list's resourceVersion into the ring.
    const list = await store.getList(prefix, { predicate: everything, recursive: true });
    const listRv = Number(list.resourceVersion);
    const capacity = 5;
    const r = new EventRing(capacity, listRv);
    const w = await store.watch(prefix, {
      resourceVersion: list.resourceVersion,
      predicate: everything,
      recursive: true,
    });

    // 12 changes to configmaps, with other resources' writes between them: revisions have gaps.
    const other = new Etcd3Store({
      client: new InProcessEtcdClient(server),
      groupResource: { group: "", resource: "secrets" },
    });
    for (let i = 0; i < 12; i++) {
      const name = `cm-${i % 3}`;
      const k = `${prefix}/default/${name}`;
      if (i < 3) await store.create(k, cm(name, i));
      else if (i === 7) await store.delete(k);
      else if (i === 10) await store.create(k, cm(name, i));
      else await store.guaranteedUpdate(k, {}, (cur) => ({ ...(cur as KubeObject), data: { n: String(i) } }));
      if (i % 2 === 0) await other.create(`/registry/secrets/default/s-${i}`, cm(`s-${i}`, i));
    }
    const fed: WatchCacheEvent[] = [];
    const it = w[Symbol.asyncIterator]();
    while (fed.length < 12) {
      const next = await it.next();
      if (next.done) throw new Error("the watch ended");
      const { type, object } = next.value;
      if (type !== "ADDED" && type !== "MODIFIED" && type !== "DELETED") continue;
      const event: WatchCacheEvent = {
        type,
        key: `${prefix}/${object.metadata.namespace}/${object.metadata.name}`,
        object,
        resourceVersion: Number(object.metadata.resourceVersion),
      };
      fed.push(event);
      r.add(event);
    }
    w.stop();

    // What must come out: everything after rv from the last `capacity` events, once the ring has
    // forgotten any; before that, everything since the list.
    const kept = fed.slice(-capacity);
    const oldestServable = kept[0].resourceVersion - 1;
    const newest = fed[fed.length - 1].resourceVersion;
    expect(oldestServable).toBeGreaterThan(listRv + 1); // the ring has really wrapped
    for (let rv = 1; rv <= newest + 1; rv++) {
      const want =
        rv < oldestServable
          ? expired(rv, oldestServable)
          : fed.filter((e) => e.resourceVersion > rv).map((e) => e.resourceVersion);
      expect(since(r, rv), `resume from ${rv}`).toEqual(want);
    }
    await other.close();
  });
});

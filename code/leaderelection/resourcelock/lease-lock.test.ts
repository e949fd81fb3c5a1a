/**
 * LeaseLock against a real API server: the record in a Lease's spec, MicroTime on the wire, the
 * read resourceVersion on every update (a stale one is refused with 409), and the lock's names.
 */
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { type APIServer, startAPIServer } from "../../apiserver/server.ts";
import { isConflict, isNotFound } from "../../client/errors.ts";
import { type Clientset, newForConfig } from "../../client/kubernetes/clientset.ts";
import { checkLockType, type LeaderElectionRecord } from "./interface.ts";
import {
  formatMicroTime,
  LeaseLock,
  leaderElectionRecordToLeaseSpec,
  leaseSpecToLeaderElectionRecord,
  parseMicroTime,
} from "./lease-lock.ts";

const t0 = Date.UTC(2026, 11, 2, 1, 2, 3, 456);
const record = (over: Partial<LeaderElectionRecord> = {}): LeaderElectionRecord => ({
  holderIdentity: "host-1_6b1f",
  leaseDurationSeconds: 15,
  acquireTime: t0,
  renewTime: t0 + 2000,
  leaderTransitions: 2,
  ...over,
});

describe("LeaderElectionRecord ↔ LeaseSpec", () => {
  it("writes MicroTime with six fractional digits, in UTC", () => {
    expect(formatMicroTime(t0)).toBe("2026-12-02T01:02:03.456000Z");
    expect(parseMicroTime("2026-12-02T01:02:03.456789Z")).toBe(t0);
    expect(parseMicroTime(undefined)).toBe(0);
  });

  it("round-trips, with every field written", () => {
    const spec = leaderElectionRecordToLeaseSpec(record());
    expect(spec).toEqual({
      holderIdentity: "host-1_6b1f",
      leaseDurationSeconds: 15,
      acquireTime: "2026-12-02T01:02:03.456000Z",
      renewTime: "2026-12-02T01:02:05.456000Z",
      leaseTransitions: 2,
    });
    expect(leaseSpecToLeaderElectionRecord(spec)).toEqual(record());
  });

  it("reads absent fields as zero values (a Lease someone made by hand)", () => {
    expect(leaseSpecToLeaderElectionRecord({})).toEqual({
      holderIdentity: "",
      leaseDurationSeconds: 0,
      acquireTime: 0,
      renewTime: 0,
      leaderTransitions: 0,
    });
  });
});

describe("resourcelock.New's lock types", () => {
  it("takes leases, and names the removed ones with upstream's texts", () => {
    expect(checkLockType("leases")).toBeUndefined();
    expect(checkLockType("endpoints")?.message).toBe("endpoints lock is removed, migrate to leases");
    expect(checkLockType("configmapsleases")?.message).toBe(
      "configmapsleases lock is removed, migrated to leases",
    );
    expect(checkLockType("etcd")?.message).toBe("Invalid lock-type etcd");
  });
});

describe("LeaseLock against the API server", () => {
  let server: APIServer;
  let client: Clientset;
  const events: string[] = [];
  const lock = (identity: string) =>
    new LeaseLock({
      leaseMeta: { namespace: "kube-system", name: "kube-scheduler" },
      client: client.coordinationV1,
      lockConfig: {
        identity,
        eventRecorder: (o, type, reason, msg) =>
          events.push(`${o.kind} ${o.metadata.name} ${type} ${reason}: ${msg}`),
      },
    });

  beforeAll(async () => {
    server = await startAPIServer({ insecurePort: 0, compactionIntervalMs: 0 });
    client = newForConfig({ host: server.url, qps: -1 });
  });
  afterAll(async () => {
    client?.closeIdleConnections();
    await server?.close();
  });

  it("describes itself as namespace/name and knows its identity", () => {
    expect(lock("a").describe()).toBe("kube-system/kube-scheduler");
    expect(lock("a").identity()).toBe("a");
  });

  it("refuses to update before it has read or created (no resourceVersion to send)", async () => {
    await expect(lock("a").update(record())).rejects.toThrow(
      "lease not initialized, call get or create first",
    );
  });

  it("gets 404 before the Lease exists, creates it, and reads back what it wrote", async () => {
    const a = lock("a");
    await expect(a.get()).rejects.toSatisfy(isNotFound);
    await a.create(record({ holderIdentity: "a" }));
    const lease = await client.coordinationV1.leases("kube-system").get("kube-scheduler");
    expect(lease.spec?.acquireTime).toBe("2026-12-02T01:02:03.456000Z");
    const got = await lock("b").get();
    expect(got.record).toEqual(record({ holderIdentity: "a" }));
    // The bytes the elector compares: json.Marshal of the record, times at whole seconds.
    expect(JSON.parse(got.raw)).toMatchObject({
      acquireTime: "2026-12-02T01:02:03Z",
      renewTime: "2026-12-02T01:02:05Z",
    });
  });

  it("sends the resourceVersion it read: of two locks that read the same version, the second update gets 409", async () => {
    const a = lock("a");
    const b = lock("b");
    await a.get();
    await b.get();
    await a.update(record({ holderIdentity: "a", renewTime: t0 + 4000 }));
    const err = await b.update(record({ holderIdentity: "b" })).catch((e) => e);
    expect(isConflict(err)).toBe(true);
    expect(
      (await client.coordinationV1.leases("kube-system").get("kube-scheduler")).spec?.holderIdentity,
    ).toBe("a");
    // After a fresh read b's update goes through: the version it sends is current again.
    await b.get();
    await b.update(record({ holderIdentity: "b" }));
    // And a's next update (its version is now stale) is refused in turn.
    expect(isConflict(await a.update(record({ holderIdentity: "a" })).catch((e) => e))).toBe(true);
  });

  it("records events on the Lease as '<identity> <message>'", async () => {
    const a = lock("a");
    a.recordEvent("became leader"); // nothing read yet: no object to attach it to
    await a.get();
    a.recordEvent("became leader");
    expect(events).toEqual(["Lease kube-scheduler Normal LeaderElection: a became leader"]);
  });
});

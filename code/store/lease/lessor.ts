/**
 * Lessor — leases: keys that disappear unless someone keeps renewing them.
 *
 * Solves:
 * - a client that dies must not leave its keys behind forever (a kubelet's heartbeat, a leader's
 *   lock, an apiserver's endpoint): it grants a lease with a TTL, attaches keys to it and renews
 *   it (keepAlive); if the renewals stop, the lease expires and its keys are deleted;
 * - the deletion must look like any other: all keys of one lease are deleted in ONE write
 *   transaction, so watchers get their DELETE events together, at one revision.
 *
 * Invariants:
 * - a key is attached to at most one lease: `itemMap[key] = id` exactly when the lease `id` lists
 *   the key (the latest put of the key named that lease, and no delete came after);
 * - a lease's TTL is never below `minLeaseTTL` (etcd: 1.5 election timeouts, rounded up to whole
 *   seconds — 2 s with default settings), so a lease cannot expire before a new leader could
 *   have taken over its renewals;
 * - expiry runs on the injected clock: the expiry loop checks every 500 ms (as etcd's runLoop)
 *   and revokes expired leases, at most `revokeLimit` per check.
 *
 * @upstream etcd-io/etcd server/lease/lessor.go (lessor, Lease, RangeDeleter, TxnDelete, Grant, Revoke, Renew, revokeExpiredLeases)
 * @upstream etcd-io/etcd server/etcdserver/v3_server.go (LeaseGrant's id choice, LeaseTimeToLive)
 * @upstream etcd-io/etcd pkg/idutil/id.go (Generator)
 * @chapter 01-etcd-watch
 */

import { compareBytes, mapKey } from "../pkg/bytes.ts";
import { type Clock, realClock, type Timer } from "../pkg/clock.ts";
import { EtcdError } from "../rpctypes/error.ts";

/** The id meaning "no lease" (a key put without one). */
export const NoLease = 0;
/** The largest TTL etcd grants, in seconds. */
export const MaxLeaseTTL = 9_000_000_000;

// etcd's lessor says "lease not found"; its gRPC layer turns that into the text below, which is
// what every etcd client shows. We use the client's text, since no other ever leaves the server.
export const ErrLeaseNotFound = new EtcdError("NotFound", "etcdserver: requested lease not found");
export const ErrLeaseExists = new EtcdError("FailedPrecondition", "etcdserver: lease already exists");
export const ErrLeaseTTLTooLarge = new EtcdError("OutOfRange", "etcdserver: too large lease TTL");

export class Lease {
  /** Milliseconds on the lessor's clock when the lease runs out. */
  expiry = 0;
  private readonly items = new Map<string, Uint8Array>();

  constructor(
    readonly id: number,
    /** The granted TTL in seconds (after raising it to the minimum). */
    readonly ttl: number,
  ) {}

  /** Attached keys in byte order: every member must delete them in the same order. */
  keys(): Uint8Array[] {
    return [...this.items.values()].sort(compareBytes);
  }

  /** @internal lessor bookkeeping */
  setItem(key: Uint8Array): void {
    this.items.set(mapKey(key), key);
  }
  /** @internal lessor bookkeeping */
  deleteItem(key: Uint8Array): void {
    this.items.delete(mapKey(key));
  }
}

export interface LessorOptions {
  clock?: Clock;
  /** Seconds; shorter TTLs are raised to this. etcd's default works out to 2. */
  minLeaseTTL?: number;
  /** How often expired leases are looked for, in ms (etcd: 500). */
  revokeInterval?: number;
  /** At most this many revocations per check (etcd: leaseRevokeRate / 2 = 500). */
  revokeLimit?: number;
}

export interface TimeToLive {
  id: number;
  /** Whole seconds left (truncated, as etcd's int64(Remaining().Seconds())). */
  ttl: number;
  grantedTTL: number;
  keys: Uint8Array[];
}

// #region range-deleter
/** What the lessor changed in a write transaction: a lease granted, or a lease revoked. */
export type LeaseChange = { kind: "grant"; id: number; ttl: number } | { kind: "revoke"; id: number };

/**
 * A write transaction that may only delete: what the lessor gets to revoke a lease's keys. It
 * carries the lessor's own change (`leaseChange`), which commits with it. The store's TxnWrite
 * is one; the lessor knows only this much of it, so leases do not depend on the store (etcd
 * defines TxnDelete here for the same reason: mvcc imports lease, not the other way round).
 */
export interface TxnDelete {
  deleteRange(key: Uint8Array, rangeEnd: Uint8Array | undefined): { deleted: number; rev: number };
  leaseChange?: LeaseChange;
  end(): void;
}

/** Opens a TxnDelete: the store hands the lessor one, so expiry goes through normal writes. */
export type RangeDeleter = () => TxnDelete;
// #endregion range-deleter

export class Lessor {
  readonly minLeaseTTL: number;
  private readonly clock: Clock;
  private readonly leaseMap = new Map<number, Lease>();
  /** key (as mapKey) → lease id; see the invariants. */
  private readonly itemMap = new Map<string, number>();
  private rangeDeleter?: RangeDeleter;
  private readonly revokeInterval: number;
  private readonly revokeLimit: number;
  private timer?: Timer;
  private lastID = 0;

  constructor(opts: LessorOptions = {}) {
    this.clock = opts.clock ?? realClock;
    this.minLeaseTTL = opts.minLeaseTTL ?? 2;
    this.revokeInterval = opts.revokeInterval ?? 500;
    this.revokeLimit = opts.revokeLimit ?? 500;
    this.scheduleExpiryCheck();
  }

  setRangeDeleter(rd: RangeDeleter): void {
    this.rangeDeleter = rd;
  }

  // #region grant
  /**
   * Grants a lease of `ttl` seconds, expiring `ttl` seconds from now. id 0 asks for a fresh id
   * (etcd's server picks it before the lessor sees the request; we do both here).
   */
  grant(id: number, ttl: number): Lease | EtcdError {
    if (id === NoLease) id = this.nextID();
    if (ttl > MaxLeaseTTL) return ErrLeaseTTLTooLarge;
    if (this.leaseMap.has(id)) return ErrLeaseExists;
    const lease = new Lease(id, Math.max(ttl, this.minLeaseTTL));
    this.refresh(lease);
    this.leaseMap.set(id, lease);
    // The grant changes no key, but it commits like a write — so that a durable store logs it in
    // order with the writes around it (etcd persists it to the backend's lease bucket).
    const txn = this.rangeDeleter?.();
    if (txn) {
      txn.leaseChange = { kind: "grant", id, ttl: lease.ttl };
      txn.end();
    }
    return lease;
  }

  /**
   * A new positive id, unused. Like etcd's idutil.Generator — milliseconds since the epoch
   * shifted left 8 bits, then counting up — but without the member-id prefix in the top 16 bits,
   * so ids stay below 2^53 and survive as JavaScript numbers.
   */
  private nextID(): number {
    this.lastID = Math.max(this.lastID + 1, Math.floor(this.clock.now()) * 256 + 1);
    while (this.leaseMap.has(this.lastID)) this.lastID++;
    return this.lastID;
  }

  private refresh(lease: Lease): void {
    lease.expiry = this.clock.now() + lease.ttl * 1000;
  }
  // #endregion grant

  // #region revoke
  /**
   * Revokes a lease: deletes its keys in one write transaction (one revision, one watch
   * response), then forgets the lease.
   */
  revoke(id: number): EtcdError | undefined {
    const lease = this.leaseMap.get(id);
    if (!lease) return ErrLeaseNotFound;
    const txn = this.rangeDeleter?.();
    // Each delete detaches its key (mvcc/kvstore-txn.ts), so the lease must still exist meanwhile.
    for (const key of lease.keys()) txn?.deleteRange(key, undefined);
    this.leaseMap.delete(id);
    // The lease goes in the same commit as its keys. etcd: "lease deletion needs to be in the same
    // backend transaction with the kv deletion. Or we might end up with not executing the revoke
    // or not deleting the keys if etcdserver fails in between."
    if (txn) txn.leaseChange = { kind: "revoke", id };
    txn?.end();
    return undefined;
  }
  // #endregion revoke

  // #region renew
  /** keepAlive: restarts the lease's full TTL; returns that TTL in seconds. */
  renew(id: number): number | EtcdError {
    const lease = this.leaseMap.get(id);
    if (!lease) return ErrLeaseNotFound;
    if (this.remainingMs(lease) <= 0) {
      // Too late: etcd makes the caller wait for the revocation, then says "not found". We
      // revoke now, so the keys never outlive a refused renewal.
      this.revoke(id);
      return ErrLeaseNotFound;
    }
    this.refresh(lease);
    return lease.ttl;
  }
  // #endregion renew

  lookup(id: number): Lease | undefined {
    return this.leaseMap.get(id);
  }

  /** All leases, the soonest to expire first. */
  leases(): Lease[] {
    return [...this.leaseMap.values()].sort((a, b) => a.expiry - b.expiry);
  }

  timeToLive(id: number, opts: { keys?: boolean } = {}): TimeToLive | EtcdError {
    const lease = this.leaseMap.get(id);
    if (!lease) return ErrLeaseNotFound;
    return {
      id,
      ttl: Math.trunc(this.remainingMs(lease) / 1000),
      grantedTTL: lease.ttl,
      keys: opts.keys ? lease.keys() : [],
    };
  }

  remainingMs(lease: Lease): number {
    return lease.expiry - this.clock.now();
  }

  // #region attach
  attach(id: number, key: Uint8Array): EtcdError | undefined {
    const lease = this.leaseMap.get(id);
    if (!lease) return ErrLeaseNotFound;
    lease.setItem(key);
    this.itemMap.set(mapKey(key), id);
    return undefined;
  }

  detach(id: number, key: Uint8Array): EtcdError | undefined {
    const lease = this.leaseMap.get(id);
    if (!lease) return ErrLeaseNotFound;
    lease.deleteItem(key);
    this.itemMap.delete(mapKey(key));
    return undefined;
  }

  /** The lease a key is attached to, or NoLease. */
  getLease(key: Uint8Array): number {
    return this.itemMap.get(mapKey(key)) ?? NoLease;
  }
  // #endregion attach

  // #region expiry
  /**
   * Revokes the leases whose time is up, soonest first, at most revokeLimit of them.
   * Returns the ids revoked. Runs from the expiry loop; tests may call it directly.
   * Cost: a scan of every lease, O(n log n); etcd keeps a min-heap by expiry
   * (LeaseExpiredNotifier, lease_queue.go) and pops only the expired ones.
   */
  revokeExpiredLeases(): number[] {
    const expired = this.leases()
      .filter((l) => this.remainingMs(l) <= 0)
      .slice(0, this.revokeLimit);
    for (const l of expired) this.revoke(l.id);
    return expired.map((l) => l.id);
  }

  private scheduleExpiryCheck(): void {
    this.timer = this.clock.setTimer(this.revokeInterval, () => {
      this.revokeExpiredLeases();
      this.scheduleExpiryCheck();
    });
  }
  // #endregion expiry

  /** Stops the expiry loop. */
  stop(): void {
    this.timer?.cancel();
    this.timer = undefined;
  }
}

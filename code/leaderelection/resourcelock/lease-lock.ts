/**
 * LeaseLock — the election record kept in a coordination.k8s.io/v1 Lease, read and written
 * through the typed client of chapter 4.
 * Mirrors client-go tools/leaderelection/resourcelock/leaselock.go (LeaseLock,
 * LeaseSpecToLeaderElectionRecord, LeaderElectionRecordToLeaseSpec).
 *
 * @upstream kubernetes/client-go tools/leaderelection/resourcelock/leaselock.go (LeaseLock, Get, Create, Update, RecordEvent, Describe, Identity, LeaseSpecToLeaderElectionRecord, LeaderElectionRecordToLeaseSpec)
 * @upstream kubernetes/client-go tools/leaderelection/resourcelock/interface.go (NewFromKubeconfig)
 * @upstream kubernetes/apimachinery pkg/apis/meta/v1/micro_time.go (MicroTime, RFC3339Micro)
 * @upstream kubernetes/apimachinery pkg/apis/meta/v1/time.go (Time.MarshalJSON)
 * @chapter 06-leader-election
 *
 * Solves: two candidates that both read "nobody holds it" must not both become leader. The lock
 * keeps the Lease it last read and sends it back whole, resourceVersion included, so the API
 * server's optimistic concurrency picks exactly one: the second writer gets 409 Conflict.
 *
 * Invariants:
 * - `lease` is the object the server last returned to us (get, create or update); `update` sends
 *   it with the new spec, so its resourceVersion is the one we read;
 * - `update` before any `get` or `create` fails without a request: there is no resourceVersion
 *   to send, and a PUT without one would overwrite whatever is there;
 * - times in the Lease are MicroTime (`2026-12-02T01:02:03.456000Z`); the `raw` record the
 *   elector compares has them at whole seconds, as metav1.Time marshals them upstream.
 */
import type { Lease, LeaseSpec } from "../../api/coordination.ts";
import { newForConfig } from "../../client/kubernetes/clientset.ts";
import type { ResourceClient } from "../../client/kubernetes/resource.ts";
import { type Config, defaultKubernetesUserAgent } from "../../client/rest/config.ts";
import {
  checkLockType,
  type Interface,
  type LeaderElectionRecord,
  type ObservedLock,
  type ResourceLockConfig,
  ResourceLockError,
} from "./interface.ts";

/** coordinationv1client.LeasesGetter: `clientset.coordinationV1` has this shape. */
export interface LeasesGetter {
  leases(namespace: string): ResourceClient<Lease>;
}

// #region microtime
/** metav1.MicroTime's wire form: RFC 3339 with six fractional digits, in UTC. */
export function formatMicroTime(ms: number): string {
  // toISOString gives milliseconds (`.456Z`); our clock has no finer grain, so pad to micros.
  return new Date(ms).toISOString().replace(/\.(\d{3})Z$/, ".$1000Z");
}

/** Milliseconds since the epoch of a MicroTime (or any RFC 3339 time); 0 when absent. */
export function parseMicroTime(s: string | undefined): number {
  if (!s) return 0;
  const ms = Date.parse(s);
  return Number.isNaN(ms) ? 0 : ms;
}

/** metav1.Time's JSON: RFC 3339 at whole seconds (the zero time is `null`). */
function rfc3339Seconds(ms: number): string | null {
  if (ms === 0) return null;
  return new Date(Math.floor(ms / 1000) * 1000).toISOString().replace(/\.\d{3}Z$/, "Z");
}
// #endregion microtime

// #region conversion
/** LeaseSpecToLeaderElectionRecord: absent fields read as zero values. */
export function leaseSpecToLeaderElectionRecord(spec: LeaseSpec | undefined): LeaderElectionRecord {
  return {
    holderIdentity: spec?.holderIdentity ?? "",
    leaseDurationSeconds: spec?.leaseDurationSeconds ?? 0,
    acquireTime: parseMicroTime(spec?.acquireTime),
    renewTime: parseMicroTime(spec?.renewTime),
    leaderTransitions: spec?.leaseTransitions ?? 0,
  };
}

/** LeaderElectionRecordToLeaseSpec: every field is written, an empty holder too. */
export function leaderElectionRecordToLeaseSpec(r: LeaderElectionRecord): LeaseSpec {
  return {
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: formatMicroTime(r.acquireTime),
    renewTime: formatMicroTime(r.renewTime),
    leaseTransitions: r.leaderTransitions,
  };
}

/**
 * The record's bytes as upstream's Get makes them (json.Marshal of LeaderElectionRecord): field
 * order fixed, times at whole seconds. Two renewals in the same second give the same bytes —
 * harmless at the default 2 s retry period, and one reason upstream's durations are whole seconds.
 */
export function rawRecord(r: LeaderElectionRecord): string {
  return JSON.stringify({
    holderIdentity: r.holderIdentity,
    leaseDurationSeconds: r.leaseDurationSeconds,
    acquireTime: rfc3339Seconds(r.acquireTime),
    renewTime: rfc3339Seconds(r.renewTime),
    leaderTransitions: r.leaderTransitions,
    strategy: "",
    preferredHolder: "",
  });
}
// #endregion conversion

export interface LeaseLockOptions {
  /** The Lease's namespace and name: `kube-system`, `kube-scheduler`. */
  leaseMeta: { namespace: string; name: string };
  /** `clientset.coordinationV1`. */
  client: LeasesGetter;
  lockConfig: ResourceLockConfig;
}

// #region lease-lock
export class LeaseLock implements Interface {
  readonly leaseMeta: { namespace: string; name: string };
  readonly client: LeasesGetter;
  readonly lockConfig: ResourceLockConfig;
  /** The Lease as the server last returned it to us; its resourceVersion goes with the next update. */
  private lease: Lease | undefined;

  constructor(opts: LeaseLockOptions) {
    this.leaseMeta = opts.leaseMeta;
    this.client = opts.client;
    this.lockConfig = opts.lockConfig;
  }

  private leases(): ResourceClient<Lease> {
    return this.client.leases(this.leaseMeta.namespace);
  }

  async get(signal?: AbortSignal): Promise<ObservedLock> {
    this.lease = await this.leases().get(this.leaseMeta.name, { signal });
    const record = leaseSpecToLeaderElectionRecord(this.lease.spec);
    return { record, raw: rawRecord(record) };
  }

  async create(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    this.lease = await this.leases().create(
      {
        apiVersion: "coordination.k8s.io/v1",
        kind: "Lease",
        metadata: { name: this.leaseMeta.name, namespace: this.leaseMeta.namespace },
        spec: leaderElectionRecordToLeaseSpec(record),
      },
      { signal },
    );
  }

  async update(record: LeaderElectionRecord, signal?: AbortSignal): Promise<void> {
    if (!this.lease) throw new ResourceLockError("lease not initialized, call get or create first");
    // The whole object goes back, metadata.resourceVersion as read: that is the precondition the
    // server checks, and a 409 here means someone wrote the Lease since we looked.
    const next: Lease = { ...this.lease, spec: leaderElectionRecordToLeaseSpec(record) };
    this.lease = await this.leases().update(next, { signal });
  }

  recordEvent(message: string): void {
    const recorder = this.lockConfig.eventRecorder;
    if (!recorder || !this.lease) return;
    const subject: Lease = {
      apiVersion: "coordination.k8s.io/v1",
      kind: "Lease",
      metadata: this.lease.metadata,
    };
    recorder(subject, "Normal", "LeaderElection", `${this.lockConfig.identity} ${message}`);
  }

  describe(): string {
    return `${this.leaseMeta.namespace}/${this.leaseMeta.name}`;
  }

  identity(): string {
    return this.lockConfig.identity;
  }
}
// #endregion lease-lock

/**
 * resourcelock.New + NewFromKubeconfig: a lock of `lockType` on its own clientset, whose request
 * timeout is max(1 s, renewDeadline / 2) so that one hung request cannot use up a whole renew
 * deadline, and whose user agent is the default one plus `/leader-election` (rest.AddUserAgent).
 */
export function newLockFromConfig(
  lockType: string,
  namespace: string,
  name: string,
  lockConfig: ResourceLockConfig,
  config: Config,
  renewDeadlineMs: number,
): LeaseLock {
  const bad = checkLockType(lockType);
  if (bad) throw bad;
  const client = newForConfig({
    ...config,
    timeout: Math.max(1000, renewDeadlineMs / 2),
    userAgent: `${defaultKubernetesUserAgent()}/leader-election`,
  });
  return new LeaseLock({ leaseMeta: { namespace, name }, client: client.coordinationV1, lockConfig });
}

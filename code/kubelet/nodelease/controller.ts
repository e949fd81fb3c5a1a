/**
 * The node Lease controller — the kubelet's heartbeat: `kube-node-lease/<node>`, its renewTime
 * moved forward every quarter of its duration (40 s → every 10 s).
 * Mirrors kubernetes/kubernetes staging/src/k8s.io/component-helpers/apimachinery/lease/controller.go,
 * as the kubelet configures it (pkg/kubelet/kubelet.go, pkg/kubelet/util/nodelease.go).
 *
 * Solves:
 * - the node lifecycle controller must tell a dead kubelet from a quiet one; the Node's status is
 *   large and written rarely (kubelet-node-status.ts), so the kubelet proves it is alive with a
 *   tiny object it rewrites often;
 * - a renewal costs one PUT and no GET: the controller keeps the Lease it last wrote and updates
 *   from it, falling back to GET (and create) only when that fails;
 * - deleting the Node deletes its Lease: the Lease's ownerReference names the Node (by uid, so
 *   the kubelet sets it as soon as it can read its Node, and keeps trying on every renewal).
 *
 * Invariants:
 * - name and holderIdentity are the node's name; leaseDurationSeconds is rewritten on every
 *   renewal (a changed --node-lease-duration-seconds takes effect);
 * - a renewal tries an update up to maxUpdateRetries (5) times at once; a conflict re-reads the
 *   Lease first; after that, the next try is the next period;
 * - ensuring the Lease exists retries until it works, waiting 200 ms, 400 ms, … up to 7 s;
 * - a Lease is never created without its ownerReference (the Node must be readable first).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/component-helpers/apimachinery/lease/controller.go (NewController, controller.Run, sync, backoffEnsureLease, ensureLease, retryUpdateLease, newLease, maxUpdateRetries, maxBackoff)
 * @upstream kubernetes/kubernetes pkg/kubelet/util/nodelease.go (SetNodeOwnerFunc)
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet.go (nodeLeaseRenewIntervalFraction)
 * @chapter 07-kubelet
 */

import type { Lease } from "../../api/coordination.ts";
import { isConflict, isNotFound } from "../../client/errors.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { type Clock, sleep } from "../../client/util/clock.ts";
import { jitterUntil } from "../../client/util/wait/jitter-until.ts";
import { formatMicroTime } from "../../leaderelection/resourcelock/lease-lock.ts";

/** Where node leases live (v1.NamespaceNodeLease). */
export const namespaceNodeLease = "kube-node-lease";
/** The renew interval as a fraction of the lease duration (kubelet.go). */
export const nodeLeaseRenewIntervalFraction = 0.25;
/** Immediate update retries per renewal. */
export const maxUpdateRetries = 5;
/** The longest wait of backoffEnsureLease. */
export const maxBackoffMs = 7000;

export interface NodeLeaseOptions {
  client: Clientset;
  clock: Clock;
  nodeName: string;
  /** --node-lease-duration-seconds (40). */
  leaseDurationSeconds?: number;
  /** Default: leaseDurationSeconds × 0.25. */
  renewIntervalMs?: number;
  /** Called when a renewal's update fails again after its first retry (kubelet: closes connections). */
  onRepeatedHeartbeatFailure?: () => void;
  log?: (line: string) => void;
  random?: () => number;
}

export interface NodeLeaseController {
  /** The Lease last created or updated, if any. */
  latestLease(): Lease | undefined;
  /** Stops renewing; resolves once the current renewal has returned. */
  stop(): Promise<void>;
}

const errText = (err: unknown) => JSON.stringify(err instanceof Error ? err.message : String(err));

/** Starts the controller (upstream: `go kl.nodeLeaseController.Run(ctx)` in Kubelet.Run). */
export function startNodeLeaseController(o: NodeLeaseOptions): NodeLeaseController {
  const leaseDurationSeconds = o.leaseDurationSeconds ?? 40;
  const renewIntervalMs = o.renewIntervalMs ?? leaseDurationSeconds * 1000 * nodeLeaseRenewIntervalFraction;
  const leases = o.client.coordinationV1.leases(namespaceNodeLease);
  const log = o.log ?? (() => {});
  const abort = new AbortController();
  const signal = abort.signal;
  let latest: Lease | undefined;

  // #region new-lease
  /** SetNodeOwnerFunc: the Node as owner, by uid — read from the API server until it answers. */
  async function setNodeOwner(lease: Lease): Promise<void> {
    if ((lease.metadata.ownerReferences ?? []).length > 0) return;
    try {
      const node = await o.client.coreV1.nodes().get(o.nodeName, { signal });
      lease.metadata.ownerReferences = [
        { apiVersion: "v1", kind: "Node", name: o.nodeName, uid: node.metadata.uid as string },
      ];
    } catch (err) {
      log(
        `"Failed to get node when trying to set owner ref to the node lease" err=${errText(err)} node="${o.nodeName}"`,
      );
      throw err;
    }
  }

  /** newLease: a fresh Lease (base undefined) or a copy of base, renewed now. */
  async function newLease(base: Lease | undefined): Promise<Lease> {
    const lease: Lease = base
      ? structuredClone(base)
      : {
          apiVersion: "coordination.k8s.io/v1",
          kind: "Lease",
          metadata: { name: o.nodeName, namespace: namespaceNodeLease },
          spec: { holderIdentity: o.nodeName },
        };
    lease.spec = { ...lease.spec, leaseDurationSeconds, renewTime: formatMicroTime(o.clock.now()) };
    await setNodeOwner(lease);
    return lease;
  }
  // #endregion new-lease

  /** ensureLease: GET, or create if missing; `created` tells which. Undefined lease: try next period. */
  async function ensureLease(): Promise<{ lease?: Lease; created: boolean }> {
    try {
      return { lease: await leases.get(o.nodeName, { signal }), created: false };
    } catch (err) {
      if (!isNotFound(err)) throw err;
    }
    let toCreate: Lease;
    try {
      toCreate = await newLease(undefined);
    } catch {
      // Without its owner the Lease is not created now; the next period tries again.
      return { created: false };
    }
    return { lease: await leases.create(toCreate, { signal }), created: true };
  }

  /** backoffEnsureLease: ensureLease until it answers, 200 ms doubling to 7 s between tries. */
  async function backoffEnsureLease(): Promise<{ lease?: Lease; created: boolean }> {
    let wait = 100;
    while (!signal.aborted) {
      try {
        return await ensureLease();
      } catch (err) {
        if (signal.aborted) break; // stopped mid-request: not a failure to report
        wait = Math.min(2 * wait, maxBackoffMs);
        log(`"Failed to ensure lease exists, will retry" err=${errText(err)} interval="${wait}ms"`);
        await sleep(o.clock, wait, signal);
      }
    }
    return { created: false };
  }

  // #region lease-renew
  /** retryUpdateLease: PUT the renewed Lease, up to 5 tries; a conflict re-reads it first. */
  async function retryUpdateLease(base: Lease | undefined): Promise<void> {
    for (let i = 0; i < maxUpdateRetries && !signal.aborted; i++) {
      let toUpdate: Lease | undefined;
      try {
        toUpdate = await newLease(base);
      } catch (err) {
        log(`"Failed to prepare lease" err=${errText(err)}`);
      }
      if (toUpdate) {
        try {
          latest = await leases.update(toUpdate, { signal });
          return;
        } catch (err) {
          if (signal.aborted) return;
          log(`"Failed to update lease" err=${errText(err)}`);
          // Someone else wrote it (or it was recreated): start from the server's copy.
          if (isConflict(err)) {
            base = (await backoffEnsureLease()).lease;
            continue;
          }
        }
      }
      if (i > 0) o.onRepeatedHeartbeatFailure?.();
    }
    throw new Error(`failed ${maxUpdateRetries} attempts to update lease`);
  }

  /** sync: one renewal — from the Lease last written if we have it, else from the server's. */
  async function sync(): Promise<void> {
    if (latest) {
      try {
        await retryUpdateLease(latest);
        return;
      } catch (err) {
        log(`"failed to update lease using latest lease, fallback to ensure lease" err=${errText(err)}`);
      }
    }
    const { lease, created } = await backoffEnsureLease();
    latest = lease;
    // A Lease just created is already renewed.
    if (!created && lease) {
      try {
        await retryUpdateLease(lease);
      } catch (err) {
        log(`"Will retry updating lease" err=${errText(err)} interval="${renewIntervalMs}ms"`);
      }
    }
  }
  // #endregion lease-renew

  const done = jitterUntil(sync, renewIntervalMs, 0.04, true, { clock: o.clock, signal, random: o.random });
  return {
    latestLease: () => latest,
    async stop() {
      abort.abort();
      await done;
    },
  };
}

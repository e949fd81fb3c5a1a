/**
 * Lease events — the recorder both control-plane binaries give their Lease lock, so the election
 * leaves core/v1 Events on the Lease ("<identity> became leader", "<identity> stopped leading")
 * that `kubectl describe lease` lists. Mirrors kubernetes/kubernetes cmd/kube-scheduler/app/options/options.go.
 *
 * Solves: both binaries need the same two things — a recorder whose events name a Lease, and a
 * bounded flush on shutdown, so "stopped leading" is written when the API server is there and a
 * stop never hangs when it is not.
 *
 * Invariants:
 * - the flush waits at most `withinMs` (2 s), then drops what is still queued.
 *
 * @upstream kubernetes/kubernetes cmd/kube-scheduler/app/options/options.go (Config: the legacy event recorder given to the lock)
 * @upstream kubernetes/kubernetes cmd/kube-controller-manager/app/controllermanager.go (leaderElectAndRun: EventRecorder in the ResourceLockConfig)
 * @chapter 06-leader-election
 */
import type { Clientset } from "../../client/kubernetes/clientset.ts";
import { type CorrelatingEventRecorder, newEventRecorder } from "../../controllers/event-recorder.ts";

/** A recorder reporting as `component` about Leases. */
export function newLeaseEventRecorder(client: Clientset, component: string): CorrelatingEventRecorder {
  return newEventRecorder(client, component, { group: "coordination.k8s.io", version: "v1", kind: "Lease" });
}

/** Writes what is queued, for `withinMs` at most: a shutdown must not wait on an absent API server. */
export async function flushLeaseEvents(recorder: CorrelatingEventRecorder, withinMs = 2_000): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  await Promise.race([recorder.flush(), new Promise((r) => (timer = setTimeout(r, withinMs)))]);
  clearTimeout(timer);
}

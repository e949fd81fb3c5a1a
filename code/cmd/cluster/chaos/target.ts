/**
 * ChaosTarget — what the chaos runner needs from a running cluster: its components, and the four
 * ways to break one (kill -9, SIGSTOP/SIGCONT, restart, a partition from the API server).
 * No upstream counterpart: upstream's disruption framework (test/e2e/chaosmonkey/chaosmonkey.go)
 * runs one Disruption function against a cluster it reaches through the e2e framework; ours names
 * the processes instead, since every component is a process on this machine.
 *
 * The first seven members are chapter 8's contract (the cluster launcher implements them); the
 * optional ones let the runner see more when a target can give it, and it degrades without them:
 * - `leaderIdentity(name)`: the identity a scheduler or controller-manager process elects with
 *   (`<hostname>_<uuid>`, logged as `"Leader election candidate" identity=…`), so the runner can
 *   tell which process holds a Lease — all candidates share the hostname;
 * - `audit()`: the API server's audit events (every incarnation), so "never two leaders acting"
 *   can be judged on who wrote, not only on the Lease;
 * - `kubeletRootDirs()`: where each kubelet's runtime keeps its container records;
 * - `newClient()`: a clientset with its own connections, for the observers.
 *
 * @upstream none — test tooling (kubernetes/kubernetes test/e2e/chaosmonkey/chaosmonkey.go: Disruption, Test, Interface)
 * @chapter 08-cluster
 */
import type { Event as AuditEvent } from "../../../apiserver/audit/event.ts";
import type { Clientset } from "../../../client/kubernetes/clientset.ts";
import { processStartToken } from "../../../kubelet/runtime/process-state.ts";

export interface ChaosComponent {
  /** "etcd", "kube-apiserver", "kube-scheduler-1", "kubelet-node-1", … */
  name: string;
  kind: string;
  pid: number;
}

// #region chaos-target
export interface ChaosTarget {
  components(): ChaosComponent[];
  /** SIGKILL; resolves once the process is gone. */
  kill(name: string): Promise<void>;
  /** SIGSTOP. */
  pause(name: string): Promise<void>;
  /** SIGCONT. */
  resume(name: string): Promise<void>;
  /** Starts it again with the same args, port and data dir (stopping it first if it runs). */
  restart(name: string): Promise<void>;
  /** Its traffic to the API server (the API server's: to etcd) through a FaultProxy: drop, or pass. */
  partition(name: string, on: boolean): Promise<void>;
  admin: Clientset;

  leaderIdentity?(name: string): string | undefined;
  audit?(): AuditEvent[];
  kubeletRootDirs?(): { node: string; rootDir: string }[];
  newClient?(): Clientset;
}
// #endregion chaos-target

/** The control plane: at most one of these is faulted at a time unless a flag says otherwise. */
export const controlPlaneKinds = new Set([
  "etcd",
  "kube-apiserver",
  "kube-scheduler",
  "kube-controller-manager",
]);

/**
 * True iff the process `pid` runs: it exists and is not a zombie (a killed container waits to be
 * reaped by init for a moment; it no longer runs). A SIGSTOPped process runs.
 */
export function isAlive(pid: number): boolean {
  return pid > 0 && processStartToken(pid) !== undefined;
}

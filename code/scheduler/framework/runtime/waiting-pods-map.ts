/**
 * WaitingPods — pods a Permit plugin told to wait: each waits for every such plugin to allow
 * it, is rejected by any one of them, or is rejected when a plugin's timeout passes.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/runtime/waiting_pods_map.go (waitingPodsMap, waitingPod, newWaitingPod, Allow, Reject, GetPendingPlugins)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/interface.go (WaitingPod)
 * @chapter 05-scheduler
 *
 * Solves: gang scheduling — "bind none of these pods until all of them have a node" — needs a
 * pod to keep its reserved node while other pods are scheduled. The scheduling cycle cannot
 * block, so the pod waits here and its binding cycle (already asynchronous) awaits the verdict.
 *
 * Invariants:
 * - a waiting pod's promise settles exactly once: Success when the last pending plugin allows,
 *   Unschedulable (with the rejecting plugin) on the first reject or timeout; later calls are
 *   ignored.
 * - timeouts run on the injected clock; a settled pod's timers are stopped.
 */
import type { Pod } from "../../../api/core.ts";
import type { Clock, Timer } from "../../../client/util/clock.ts";
import { Code, newStatus, type Status } from "../status.ts";

/** Go's time.Duration %v for whole milliseconds: "10s", "1.5s", "15m0s", "250ms". */
export function goDuration(ms: number): string {
  if (ms < 1000) return `${ms}ms`;
  const h = Math.floor(ms / 3_600_000);
  const m = Math.floor((ms % 3_600_000) / 60_000);
  const s = (ms % 60_000) / 1000;
  if (h > 0) return `${h}h${m}m${s}s`;
  if (m > 0) return `${m}m${s}s`;
  return `${s}s`;
}

// #region waiting-pod
export class WaitingPod {
  private readonly pendingPlugins = new Map<string, Timer>();
  private settled = false;
  private resolve!: (s: Status | undefined) => void;
  /** Settles with the verdict: undefined (Success) or an Unschedulable status. */
  readonly done: Promise<Status | undefined>;

  constructor(
    readonly pod: Pod,
    pluginsMaxWait: Map<string, number>,
    clock: Clock,
  ) {
    this.done = new Promise((r) => {
      this.resolve = r;
    });
    for (const [plugin, wait] of pluginsMaxWait) {
      const timer = clock.afterFunc(wait, () =>
        this.reject(plugin, `rejected due to timeout after waiting ${goDuration(wait)} at plugin ${plugin}`),
      );
      this.pendingPlugins.set(plugin, timer);
    }
  }

  getPendingPlugins(): string[] {
    return [...this.pendingPlugins.keys()];
  }

  /** Allow: this plugin is satisfied; the pod goes on when no plugin is pending. */
  allow(pluginName: string): void {
    if (this.settled) return;
    this.pendingPlugins.get(pluginName)?.stop();
    this.pendingPlugins.delete(pluginName);
    if (this.pendingPlugins.size > 0) return;
    this.settle(undefined);
  }

  reject(pluginName: string, msg: string): void {
    if (this.settled) return;
    this.settle(newStatus(Code.Unschedulable, msg).withPlugin(pluginName));
  }

  private settle(s: Status | undefined): void {
    this.settled = true;
    for (const t of this.pendingPlugins.values()) t.stop();
    this.resolve(s);
  }
}
// #endregion waiting-pod

export class WaitingPodsMap {
  private readonly pods = new Map<string, WaitingPod>();
  add(uid: string, wp: WaitingPod): void {
    this.pods.set(uid, wp);
  }
  remove(uid: string): void {
    this.pods.delete(uid);
  }
  get(uid: string): WaitingPod | undefined {
    return this.pods.get(uid);
  }
  iterate(fn: (wp: WaitingPod) => void): void {
    for (const wp of this.pods.values()) fn(wp);
  }
}

/**
 * DefaultBinder — the Bind plugin: tell the API server which node the pod goes to by creating
 * its `pods/binding` subresource.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/defaultbinder/default_binder.go (DefaultBinder, Bind)
 * @chapter 05-scheduler
 *
 * Solves: the scheduler decides, the API server records; binding through a subresource (not an
 * update of spec.nodeName) lets the server refuse a second binding of the same pod.
 *
 * Invariants: the plugin does no I/O of its own; the `BindFunc` it is given does (a client's
 * `pods/binding` create in the scheduler, a fake in tests), and its error becomes an Error status.
 */
import type { Pod } from "../../../api/core.ts";
import type { CycleState } from "../../framework/cycle-state.ts";
import type { BindPlugin } from "../../framework/interface.ts";
import { asStatus, type Status } from "../../framework/status.ts";

export const Name = "DefaultBinder";

/** Creates the Binding {metadata: pod's ns/name/uid, target: {kind: Node, name}}. */
export type BindFunc = (pod: Pod, nodeName: string) => Promise<void>;

// #region bind
export class DefaultBinder implements BindPlugin {
  constructor(private readonly bindFn: BindFunc) {}
  name(): string {
    return Name;
  }
  async bind(_state: CycleState, pod: Pod, nodeName: string): Promise<Status | undefined> {
    try {
      await this.bindFn(pod, nodeName);
      return undefined;
    } catch (e) {
      return asStatus(e instanceof Error ? e : new Error(String(e)));
    }
  }
}
// #endregion bind

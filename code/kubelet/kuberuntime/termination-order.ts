/**
 * Termination ordering — when a pod with sidecars stops, its sidecars outlive its app containers:
 * each sidecar's SIGTERM waits until every app container (and every sidecar started after it)
 * has exited, within the grace period.
 * Mirrors kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_termination_order.go.
 *
 * Solves: a sidecar (a proxy, a log shipper) serves the app containers; stopping it first would
 * cut the app off while it is still draining. Sidecars are stopped in the reverse of the order
 * they were started, after the apps.
 *
 * Invariants:
 * - only containers that are running are waited for: one already stopped counts as exited;
 * - the wait is bounded by the container's grace period; what it took is taken off that grace
 *   (in whole seconds, rounded down), as the preStop hook's time is;
 * - app containers wait for nothing.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/kuberuntime/kuberuntime_termination_order.go (terminationOrdering, newTerminationOrdering, waitForTurn, containerTerminated)
 * @chapter 07-kubelet
 */

import type { Pod } from "../../api/core.ts";
import { type Clock, sleep } from "../../client/util/clock.ts";
import { isRestartableInitContainer } from "../container/helpers.ts";

interface Gate {
  done: Promise<void>;
  open: () => void;
}

function gate(): Gate {
  let open = () => {};
  const done = new Promise<void>((r) => {
    open = r;
  });
  return { done, open };
}

export class TerminationOrdering {
  private readonly terminated = new Map<string, Gate>();
  private readonly prereqs = new Map<string, Promise<void>[]>();

  constructor(
    pod: Pod,
    runningContainerNames: string[],
    private readonly clock: Clock,
  ) {
    const running = new Set(runningContainerNames);
    const add = (name: string): Gate => {
      const g = gate();
      this.terminated.set(name, g);
      if (!running.has(name)) g.open(); // not running: nothing waits on it
      return g;
    };
    const mains = pod.spec.containers.map((c) => add(c.name).done);
    let laterSidecar: string | undefined;
    for (const ic of [...(pod.spec.initContainers ?? [])].reverse()) {
      add(ic.name);
      if (!isRestartableInitContainer(ic)) continue;
      const waits = [...mains];
      if (laterSidecar) waits.push(this.terminated.get(laterSidecar)!.done);
      this.prereqs.set(ic.name, waits);
      laterSidecar = ic.name;
    }
  }

  /** Waits until the containers `name` must outlive have exited, or `gracePeriod` s; returns the seconds waited. */
  async waitForTurn(name: string, gracePeriod: number): Promise<number> {
    const waits = this.prereqs.get(name);
    if (!waits || waits.length === 0) return 0;
    const start = this.clock.now();
    const abort = new AbortController();
    await Promise.race([Promise.all(waits), sleep(this.clock, gracePeriod * 1000, abort.signal)]);
    abort.abort();
    return (this.clock.now() - start) / 1000;
  }

  containerTerminated(name: string): void {
    this.terminated.get(name)?.open();
  }
}

/**
 * SchedulingGates — the PreEnqueue plugin that keeps a pod with `spec.schedulingGates` out of
 * activeQ until every gate is removed.
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/plugins/schedulinggates/scheduling_gates.go (SchedulingGates, PreEnqueue, EventsToRegister, isSchedulableAfterUpdatePodSchedulingGatesEliminated)
 * @chapter 05-scheduler
 *
 * Solves: a controller (a quota manager, a batch queue) creates pods it does not want scheduled
 * yet. Gated pods never reach a scheduling cycle, so they cost no Filter work and get no
 * FailedScheduling events; the only event that can free them is their own update.
 *
 * Invariants: a pod with at least one gate is rejected UnschedulableAndUnresolvable with
 * "waiting for scheduling gates: [a b]"; the hint queues the pod only when the update that
 * arrived is for this very pod and leaves it with no gates.
 */
import type { Pod } from "../../../api/core.ts";
import { ActionType, type ClusterEventWithHint, QueueingHint } from "../../framework/events.ts";
import type { EnqueueExtensions, PreEnqueuePlugin } from "../../framework/interface.ts";
import { Code, newStatus, type Status } from "../../framework/status.ts";

export const Name = "SchedulingGates";

export class SchedulingGates implements PreEnqueuePlugin, EnqueueExtensions {
  name(): string {
    return Name;
  }

  // #region pre-enqueue
  preEnqueue(pod: Pod): Status | undefined {
    const gates = pod.spec.schedulingGates ?? [];
    if (gates.length === 0) return undefined;
    // Go prints a []string as [a b].
    return newStatus(
      Code.UnschedulableAndUnresolvable,
      `waiting for scheduling gates: [${gates.map((g) => g.name).join(" ")}]`,
    );
  }
  // #endregion pre-enqueue

  eventsToRegister(): ClusterEventWithHint[] {
    return [
      {
        event: { resource: "Pod", actionType: ActionType.UpdatePodSchedulingGatesEliminated },
        queueingHintFn: (pod, _old, newObj) => {
          const updated = newObj as Pod;
          if (updated.metadata.uid !== pod.metadata.uid) return QueueingHint.QueueSkip;
          return (updated.spec.schedulingGates?.length ?? 0) === 0
            ? QueueingHint.Queue
            : QueueingHint.QueueSkip;
        },
      },
    ];
  }
}

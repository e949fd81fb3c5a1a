/**
 * buildQueueingHintMap — from a profile's plugins to the queue's table of "which plugin cares
 * about which event, with which hint".
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/scheduler.go (buildQueueingHintMap, defaultQueueingHintFn)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/runtime/framework.go (fillEventToPluginMap)
 * @chapter 05-scheduler
 *
 * Solves: the queue must ask only the plugins that rejected a pod, and only about events they
 * registered. A plugin that registers nothing (no EnqueueExtensions) may be undone by anything,
 * so it gets the wildcard event — slower, but never strands a pod.
 *
 * Invariants: an event registered without a hint function gets `defaultQueueingHintFn` (always
 * Queue); with hints disabled every registered hint is replaced by it.
 */
import {
  ActionType,
  type ClusterEvent,
  type ClusterEventWithHint,
  eventLabel,
  QueueingHint,
  type QueueingHintFn,
} from "../../framework/events.ts";
import type { EnqueueExtensions, Plugin } from "../../framework/interface.ts";

/** A plugin's hint for one registered event. */
export interface QueueingHintFunction {
  pluginName: string;
  queueingHintFn: QueueingHintFn;
}
/** Per profile (schedulerName): the registered events, each with the hints of the plugins that registered it. */
export type QueueingHintMapPerProfile = Map<string, { event: ClusterEvent; hints: QueueingHintFunction[] }[]>;

export const defaultQueueingHintFn: QueueingHintFn = () => QueueingHint.Queue;

const wildcard: ClusterEvent = { resource: "*", actionType: ActionType.All };

const hasEvents = (p: Plugin): p is EnqueueExtensions =>
  typeof (p as Partial<EnqueueExtensions>).eventsToRegister === "function";

// #region build
/** Per profile name, the plugins that can reject a pod (PreEnqueue, PreFilter, Filter, Reserve, Permit). */
export function buildQueueingHintMap(
  profiles: Map<string, Plugin[]>,
  queueingHintsEnabled = true,
): QueueingHintMapPerProfile {
  const out: QueueingHintMapPerProfile = new Map();
  for (const [profile, plugins] of profiles) {
    const byEvent = new Map<
      string,
      { event: ClusterEvent; hints: { pluginName: string; queueingHintFn: QueueingHintFn }[] }
    >();
    for (const pl of plugins) {
      const registered: ClusterEventWithHint[] = hasEvents(pl)
        ? pl.eventsToRegister()
        : [{ event: wildcard }];
      for (const { event, queueingHintFn } of registered) {
        const key = `${event.resource}/${event.actionType}/${eventLabel(event)}`;
        let entry = byEvent.get(key);
        if (!entry) {
          entry = { event, hints: [] };
          byEvent.set(key, entry);
        }
        entry.hints.push({
          pluginName: pl.name(),
          queueingHintFn: queueingHintsEnabled && queueingHintFn ? queueingHintFn : defaultQueueingHintFn,
        });
      }
    }
    out.set(profile, [...byEvent.values()]);
  }
  return out;
}
// #endregion build

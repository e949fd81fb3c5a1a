// The reference answer is the course's own code: newWatcherBatch and addToBatch in
// code/store/mvcc/watcher-group.ts (regions add-to-batch and event-batch), which the WatchableStore
// calls for catch-up and live events.

import type { Watcher } from "../../../code/store/mvcc/watcher.ts";
import {
  addToBatch,
  type EventBatch,
  type WatcherBatch,
  type WatcherGroup,
} from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";

export { newWatcherBatch } from "../../../code/store/mvcc/watcher-group.ts";

/** The two steps of the batch loop that a recorded mistake may swap (each wrong-*.ts swaps one). */
export interface BatchSteps {
  /** Whether watcher `w` still needs `ev` ("don't double notify": from its minRev on). */
  needs(w: Watcher, ev: Event): boolean;
  /** Adds `ev` to one watcher's batch unless it is full; a full batch records moreRev. */
  add(eb: EventBatch, ev: Event, maxRevs: number): void;
}

export const reference: BatchSteps = {
  needs: (w, ev) => ev.kv.modRevision >= w.minRev,
  add: addToBatch,
};

/** newWatcherBatch's loop, written out from its steps, so a mistake is the one step it changes. */
export function newWatcherBatchWith(steps: BatchSteps) {
  return (wg: WatcherGroup, evs: Event[], maxRevs: number): WatcherBatch => {
    const wb: WatcherBatch = new Map();
    for (const ev of evs) {
      for (const w of wg.watcherSetByKey(ev.kv.key)) {
        if (!steps.needs(w, ev)) continue;
        let eb = wb.get(w);
        if (!eb) {
          eb = { evs: [], revs: 0, moreRev: 0 };
          wb.set(w, eb);
        }
        steps.add(eb, ev, maxRevs);
      }
    }
    return wb;
  };
}

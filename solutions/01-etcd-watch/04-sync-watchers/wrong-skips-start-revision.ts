// Mistake: the event at a watcher's minRev is skipped — "minRev is the last revision it has seen" — so the first event it needs is lost.

import { addToBatch, type WatcherBatch, type WatcherGroup } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";

export function newWatcherBatch(wg: WatcherGroup, evs: Event[], maxRevs: number): WatcherBatch {
  const wb: WatcherBatch = new Map();
  for (const ev of evs) {
    for (const w of wg.watcherSetByKey(ev.kv.key)) {
      // The mistake: `<=` where `<` belongs. minRev is the first revision the watcher still needs.
      if (ev.kv.modRevision <= w.minRev) continue;
      let eb = wb.get(w);
      if (!eb) {
        eb = { evs: [], revs: 0, moreRev: 0 };
        wb.set(w, eb);
      }
      addToBatch(eb, ev, maxRevs);
    }
  }
  return wb;
}

// Mistake: every event of the history read is handed to every watcher on its key — but the read starts at the lowest minRev of the whole group, so a watcher that started later gets events twice or from before its start.

import { addToBatch, type WatcherBatch, type WatcherGroup } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";

export function newWatcherBatch(wg: WatcherGroup, evs: Event[], maxRevs: number): WatcherBatch {
  const wb: WatcherBatch = new Map();
  for (const ev of evs) {
    // The mistake: no `ev.kv.modRevision < w.minRev` check ("don't double notify").
    for (const w of wg.watcherSetByKey(ev.kv.key)) {
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

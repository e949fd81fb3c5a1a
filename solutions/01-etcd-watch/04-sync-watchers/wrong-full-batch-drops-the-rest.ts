// Mistake: a full batch silently drops the revisions that do not fit, without moreRev — so the store believes the watcher is caught up and moves it to synced before the last revisions were ever sent.

import type { EventBatch, WatcherBatch, WatcherGroup } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";

function add(eb: EventBatch, ev: Event, maxRevs: number): void {
  const last = eb.evs[eb.evs.length - 1];
  const newRevision = !last || ev.kv.modRevision > last.kv.modRevision;
  // The mistake: full means "stop adding" — but nobody is told where the rest starts (moreRev stays 0).
  if (newRevision && eb.revs === maxRevs) return;
  if (newRevision) eb.revs++;
  eb.evs.push(ev);
}

export function newWatcherBatch(wg: WatcherGroup, evs: Event[], maxRevs: number): WatcherBatch {
  const wb: WatcherBatch = new Map();
  for (const ev of evs) {
    for (const w of wg.watcherSetByKey(ev.kv.key)) {
      if (ev.kv.modRevision < w.minRev) continue;
      let eb = wb.get(w);
      if (!eb) {
        eb = { evs: [], revs: 0, moreRev: 0 };
        wb.set(w, eb);
      }
      add(eb, ev, maxRevs);
    }
  }
  return wb;
}

// Mistake: the batch limit counts events instead of revisions, so a batch can end in the middle of a transaction — which is then split across two responses, and its first part sent twice.

import type { EventBatch, WatcherBatch, WatcherGroup } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";

function add(eb: EventBatch, ev: Event, maxRevs: number): void {
  if (eb.moreRev !== 0) return; // already full
  // The mistake: "maxRevs events", wherever that falls.
  if (eb.evs.length === maxRevs) {
    eb.moreRev = ev.kv.modRevision;
    return;
  }
  const last = eb.evs[eb.evs.length - 1];
  if (!last || ev.kv.modRevision > last.kv.modRevision) eb.revs++;
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

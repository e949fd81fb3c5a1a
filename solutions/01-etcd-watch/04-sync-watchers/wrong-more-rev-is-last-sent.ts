// Mistake: moreRev is set to the last revision that fitted instead of the first one left out, so the next round starts one revision early and sends it again.

import type { EventBatch, WatcherBatch, WatcherGroup } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";

function add(eb: EventBatch, ev: Event, maxRevs: number): void {
  if (eb.moreRev !== 0) return; // already full
  const last = eb.evs[eb.evs.length - 1];
  if (last && ev.kv.modRevision > last.kv.modRevision && eb.revs === maxRevs) {
    // The mistake: "we got as far as this revision" — but the store resumes *at* moreRev.
    eb.moreRev = last.kv.modRevision;
    return;
  }
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

// Mistake: the revisions are counted once for the whole round, not per watcher. Plausible because
// the history read for the round is one list of events, and "at most maxRevs revisions" sounds
// like a limit on that read; but a watcher that starts late in the history is then cut off after
// fewer revisions than it was allowed (or none), because other watchers' revisions used up its budget.
import type { WatcherBatch, WatcherGroup } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";

export function newWatcherBatch(wg: WatcherGroup, evs: Event[], maxRevs: number): WatcherBatch {
  const wb: WatcherBatch = new Map();
  // The mistake: one count of revisions seen, shared by every watcher's batch.
  let revs = 0;
  let lastRev = 0;
  let moreRev = 0;
  for (const ev of evs) {
    if (ev.kv.modRevision > lastRev) {
      if (revs === maxRevs) {
        moreRev = ev.kv.modRevision;
        break;
      }
      revs++;
      lastRev = ev.kv.modRevision;
    }
    for (const w of wg.watcherSetByKey(ev.kv.key)) {
      if (ev.kv.modRevision < w.minRev) continue;
      let eb = wb.get(w);
      if (!eb) {
        eb = { evs: [], revs: 0, moreRev: 0 };
        wb.set(w, eb);
      }
      const last = eb.evs[eb.evs.length - 1];
      if (!last || ev.kv.modRevision > last.kv.modRevision) eb.revs++;
      eb.evs.push(ev);
    }
  }
  if (moreRev !== 0) for (const eb of wb.values()) eb.moreRev = moreRev;
  return wb;
}

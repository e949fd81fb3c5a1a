// Mistake: the batch counts as full once it holds `maxRevs` revisions minus one — the check is
// `revs + 1 >= maxRevs` where etcd's is "this revision would be number maxRevs + 1". Plausible
// because off-by-one limits look alike; but every catch-up response then carries one revision
// fewer than etcd's, and a watcher far behind needs more rounds to catch up.
import type { EventBatch, WatcherBatch, WatcherGroup } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";

function add(eb: EventBatch, ev: Event, maxRevs: number): void {
  if (eb.moreRev !== 0) return; // already full
  const last = eb.evs[eb.evs.length - 1];
  const newRevision = !last || ev.kv.modRevision > last.kv.modRevision;
  // The mistake: one revision too early.
  if (newRevision && eb.revs + 1 >= maxRevs && last) {
    eb.moreRev = ev.kv.modRevision;
    return;
  }
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

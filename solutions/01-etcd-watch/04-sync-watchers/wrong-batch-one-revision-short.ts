// Mistake: the batch counts as full once it holds `maxRevs` revisions minus one — the check is
// `revs + 1 >= maxRevs` where etcd's is "this revision would be number maxRevs + 1". Plausible
// because off-by-one limits look alike; but every catch-up response then carries one revision
// fewer than etcd's, and a watcher far behind needs more rounds to catch up.
import type { EventBatch } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";
import { newWatcherBatchWith, reference } from "./watcher-batch.ts";

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

export const newWatcherBatch = newWatcherBatchWith({ ...reference, add });

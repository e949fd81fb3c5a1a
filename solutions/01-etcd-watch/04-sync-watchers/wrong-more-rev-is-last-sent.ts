// Mistake: moreRev is set to the last revision that fitted instead of the first one left out, so the next round starts one revision early and sends it again.
import type { EventBatch } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";
import { newWatcherBatchWith, reference } from "./watcher-batch.ts";

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

export const newWatcherBatch = newWatcherBatchWith({ ...reference, add });

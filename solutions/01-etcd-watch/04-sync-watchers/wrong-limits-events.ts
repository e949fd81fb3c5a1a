// Mistake: the batch limit counts events instead of revisions, so a batch can end in the middle of a transaction — which is then split across two responses, and its first part sent twice.
import type { EventBatch } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";
import { newWatcherBatchWith, reference } from "./watcher-batch.ts";

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

export const newWatcherBatch = newWatcherBatchWith({ ...reference, add });

// Mistake: a full batch silently drops the revisions that do not fit, without moreRev — so the store believes the watcher is caught up and moves it to synced before the last revisions were ever sent.
import type { EventBatch } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";
import { newWatcherBatchWith, reference } from "./watcher-batch.ts";

function add(eb: EventBatch, ev: Event, maxRevs: number): void {
  const last = eb.evs[eb.evs.length - 1];
  const newRevision = !last || ev.kv.modRevision > last.kv.modRevision;
  // The mistake: full means "stop adding" — but nobody is told where the rest starts (moreRev stays 0).
  if (newRevision && eb.revs === maxRevs) return;
  if (newRevision) eb.revs++;
  eb.evs.push(ev);
}

export const newWatcherBatch = newWatcherBatchWith({ ...reference, add });

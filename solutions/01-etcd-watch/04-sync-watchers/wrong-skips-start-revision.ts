// Mistake: the event at a watcher's minRev is skipped — "minRev is the last revision it has seen" — so the first event it needs is lost.
import { newWatcherBatchWith, reference } from "./watcher-batch.ts";

export const newWatcherBatch = newWatcherBatchWith({
  ...reference,
  // The mistake: `>` where `>=` belongs. minRev is the first revision the watcher still needs.
  needs: (w, ev) => ev.kv.modRevision > w.minRev,
});

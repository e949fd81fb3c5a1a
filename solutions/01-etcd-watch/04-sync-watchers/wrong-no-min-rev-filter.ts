// Mistake: every event of the history read is handed to every watcher on its key — but the read starts at the lowest minRev of the whole group, so a watcher that started later gets events twice or from before its start.
import { newWatcherBatchWith, reference } from "./watcher-batch.ts";

export const newWatcherBatch = newWatcherBatchWith({
  ...reference,
  // The mistake: no `ev.kv.modRevision < w.minRev` check ("don't double notify").
  needs: () => true,
});

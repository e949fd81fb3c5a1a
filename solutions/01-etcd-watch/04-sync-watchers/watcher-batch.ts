// The reference answer is the course's own code: newWatcherBatch and addToBatch in
// code/store/mvcc/watcher-group.ts (regions add-to-batch and event-batch), which the WatchableStore
// calls for catch-up and live events.
export { newWatcherBatch } from "../../../code/store/mvcc/watcher-group.ts";

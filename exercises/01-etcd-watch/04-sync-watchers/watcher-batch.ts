/**
 * Exercise: which events each watcher gets — for a watcher catching up, and for live writes.
 *
 * The WatchableStore calls this function in two places (code/store/mvcc/watchable-store.ts):
 * - syncWatchers(), with the unsynced watchers it chose and the history it read for them (every
 *   event from the lowest minRev among them up to the current revision);
 * - notify(), with the synced watchers and the events of the revision that just committed.
 * It sends each watcher its batch in one response, sets its minRev from the batch, and moves a
 * caught-up watcher to the synced group. README.md has the rules.
 *
 * From code/store/mvcc/watcher-group.ts: `WatcherGroup` (`wg.watcherSetByKey(key)` gives the watchers
 * whose key or range holds `key`), `EventBatch` and `WatcherBatch` (a Map from watcher to its batch).
 */

import type { WatcherBatch, WatcherGroup } from "../../../code/store/mvcc/watcher-group.ts";
import type { Event } from "../../../code/store/mvccpb/kv.ts";

/**
 * For each watcher of the group that must be sent something: its events, in revision order, from
 * its minRev on — at most maxRevs distinct revisions, never part of one — and where the rest starts.
 */
export function newWatcherBatch(wg: WatcherGroup, evs: Event[], maxRevs: number): WatcherBatch {
  throw new Error(
    `TODO: newWatcherBatch — share ${evs.length} events among ${wg.size} watchers, ≤ ${maxRevs} revisions each`,
  );
}

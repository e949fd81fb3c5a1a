/**
 * slowStartBatch — make `count` calls in batches of 1, 2, 4, 8, …, and stop after the first
 * batch that has a failure.
 * Mirrors kubernetes/kubernetes pkg/controller/replicaset/replica_set.go (slowStartBatch).
 *
 * Solves:
 * - a ReplicaSet scaled to 500 in a namespace whose quota allows 0 more pods would send 500
 *   creates that all fail the same way (and 500 warning events). Starting with one call and
 *   doubling only after a batch fully succeeds, it sends 1 and stops;
 * - when everything works, batches grow fast: 500 pods take 9 round trips, not 500.
 *
 * Invariants:
 * - batch sizes are min(initial, count), then min(2 × previous, remaining);
 * - the calls of one batch run concurrently; the next batch starts only after the whole batch
 *   has settled;
 * - `successes` counts calls that resolved; after a failing batch no further call is made, and
 *   `error` is one of that batch's errors.
 *
 * @upstream kubernetes/kubernetes pkg/controller/replicaset/replica_set.go (slowStartBatch)
 * @chapter 04-informers
 */

export interface SlowStartResult {
  successes: number;
  error?: unknown;
}

// #region slow-start-batch
export async function slowStartBatch(
  count: number,
  initialBatchSize: number,
  fn: () => Promise<void>,
): Promise<SlowStartResult> {
  let remaining = count;
  let successes = 0;
  for (let batch = Math.min(remaining, initialBatchSize); batch > 0; batch = Math.min(2 * batch, remaining)) {
    const results = await Promise.allSettled(Array.from({ length: batch }, () => fn()));
    const failed = results.filter((r): r is PromiseRejectedResult => r.status === "rejected");
    successes += batch - failed.length;
    if (failed.length > 0) return { successes, error: failed[0].reason };
    remaining -= batch;
  }
  return { successes };
}
// #endregion slow-start-batch

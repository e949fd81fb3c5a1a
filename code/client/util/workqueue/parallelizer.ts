/**
 * ParallelizeUntil — runs N independent pieces of work on a few workers until all are done or
 * the signal aborts.
 *
 * Solves:
 * - a controller that must act on many objects at once (the scheduler scoring nodes, the garbage
 *   collector deleting dependents) wants some concurrency, not one promise per object: at most
 *   `workers` pieces run at a time, each piece is started once, and an abort stops new pieces.
 *
 * Invariants:
 * - every piece index in [0, pieces) is started at most once, exactly once when nothing aborts;
 * - at most `workers` pieces (or chunks of `chunkSize` pieces) run at the same time;
 * - after `signal` aborts no new piece starts; the promise resolves when the running ones end.
 *
 * @upstream kubernetes/client-go util/workqueue/parallelizer.go (ParallelizeUntil, DoWorkPieceFunc, WithChunkSize)
 * @chapter 04-informers
 */

export type DoWorkPieceFunc = (piece: number) => Promise<void> | void;

export interface ParallelizeOptions {
  /** Hands pieces out in chunks of this many (for many small pieces); 1 when absent. */
  chunkSize?: number;
}

// #region parallelize-until
export async function parallelizeUntil(
  signal: AbortSignal | undefined,
  workers: number,
  pieces: number,
  doWorkPiece: DoWorkPieceFunc,
  opts: ParallelizeOptions = {},
): Promise<void> {
  if (pieces <= 0) return;
  const chunkSize = Math.max(1, opts.chunkSize ?? 1);
  const chunks = Math.ceil(pieces / chunkSize);
  // The next chunk to hand out: a shared counter plays upstream's pre-filled channel.
  let next = 0;
  const worker = async () => {
    while (next < chunks) {
      const chunk = next++;
      const end = Math.min(pieces, (chunk + 1) * chunkSize);
      for (let p = chunk * chunkSize; p < end; p++) {
        if (signal?.aborted) return;
        await doWorkPiece(p);
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(workers, chunks) }, worker));
}
// #endregion parallelize-until

/**
 * Exercise: the workqueue's three sets — add, get and done.
 *
 * `queue` is the order keys are handed out in, `dirty` every key that needs processing,
 * `processing` every key a worker holds. A key is never handed to two workers at once, an add
 * while a key is being processed is kept for one more round, and duplicates collapse.
 * README.md has the rules.
 */

export class WorkQueue {
  /** The order keys are handed out in. Every key here is dirty and not being processed. */
  private readonly queue: string[] = [];
  /** Every key that needs processing. */
  private readonly dirty = new Set<string>();
  /** Every key a worker holds (it may be dirty too: added again meanwhile). */
  private readonly processing = new Set<string>();

  /** Marks `key` as needing processing. */
  add(key: string): void {
    throw new Error(`TODO: add(${key}) — queue ${this.queue.length}, dirty ${this.dirty.size}`);
  }

  /** Hands out the next key (it is now being processed), or undefined if none can be. */
  get(): string | undefined {
    throw new Error(`TODO: get() — processing ${this.processing.size}`);
  }

  /** The worker is finished with `key`; if it was added meanwhile, it goes back in the queue. */
  done(key: string): void {
    throw new Error(`TODO: done(${key})`);
  }

  /** How many keys wait to be handed out. */
  len(): number {
    return this.queue.length;
  }
}

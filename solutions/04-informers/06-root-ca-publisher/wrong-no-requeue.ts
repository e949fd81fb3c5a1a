// Mistake: a failed sync is dropped — the worker logs the error, forgets the key and moves on.
// Plausible: "the next event will fix it". But nothing may ever change that namespace again:
// one 500 from an API server in a rolling restart leaves it without its ConfigMap for good, and
// every pod there fails to verify the API server. Upstream requeues with addRateLimited.
import { Publisher as Correct } from "./publisher.ts";

export * from "./publisher.ts";

export class Publisher extends Correct {
  protected override async processNextWorkItem(): Promise<boolean> {
    const got = await this.queue.get();
    if (got.shutdown) return false;
    try {
      await this.syncNamespace(got.item);
    } catch (err) {
      console.warn(`syncing ${got.item} failed: ${String(err)}`);
    } finally {
      this.queue.forget(got.item);
      this.queue.done(got.item);
    }
    return true;
  }
}

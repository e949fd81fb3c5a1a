// Mistake: `done` is called only after a failure (where the key is requeued), not after a
// success. Plausible: "done" reads like "finished with errors handled". But until `done`, the
// key stays in the queue's processing set: a later add only marks it dirty, and it is never
// handed out again. The first sync of each namespace works; every later change to it is lost.
import { Publisher as Correct } from "./publisher.ts";

export * from "./publisher.ts";

export class Publisher extends Correct {
  protected override async processNextWorkItem(): Promise<boolean> {
    const got = await this.queue.get();
    if (got.shutdown) return false;
    try {
      await this.syncNamespace(got.item);
      this.queue.forget(got.item);
    } catch {
      this.queue.addRateLimited(got.item);
      this.queue.done(got.item);
    }
    return true;
  }
}

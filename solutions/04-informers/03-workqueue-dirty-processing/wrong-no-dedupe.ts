// Mistake: add pushes every key it is given (unless a worker holds it), dirty or not. Plausible
// because a queue normally keeps every message; but ten events for one pod then make ten rounds of
// the same reconcile — the queue's first promise is that duplicates collapse.
import { WorkQueue as Reference } from "./queue.ts";

export class WorkQueue extends Reference {
  override add(key: string): void {
    this.dirty.add(key);
    if (this.processing.has(key)) return;
    this.queue.push(key);
  }
}

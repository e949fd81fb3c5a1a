// Mistake: get moves the key to processing but leaves it dirty. Plausible because the key has not
// been processed yet when it is handed out; but done then always sees it dirty and queues it again,
// so every key is reconciled forever, whether or not anything changed.
import { WorkQueue as Reference } from "./queue.ts";

export class WorkQueue extends Reference {
  override get(): string | undefined {
    const key = this.queue.shift();
    if (key === undefined) return undefined;
    this.processing.add(key);
    return key;
  }
}

// Mistake: add ignores a key a worker holds, as if it were a duplicate. Plausible because the key
// is "already being handled"; but the worker may have read the object before this change, and with
// no dirty mark done cannot know to look again: the change is never reconciled.
import { WorkQueue as Reference } from "./queue.ts";

export class WorkQueue extends Reference {
  override add(key: string): void {
    if (this.dirty.has(key) || this.processing.has(key)) return;
    this.dirty.add(key);
    this.queue.push(key);
  }
}

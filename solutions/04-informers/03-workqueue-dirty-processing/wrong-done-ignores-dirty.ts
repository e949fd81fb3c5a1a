// Mistake: done only lets go of the key; it never looks at dirty. Plausible because "done" sounds
// like the end of the story; but an add that came while the worker was busy is then lost — the
// worker had read the old state, and nothing will look at the new one.
import { WorkQueue as Reference } from "./queue.ts";

export class WorkQueue extends Reference {
  override done(key: string): void {
    this.processing.delete(key);
  }
}

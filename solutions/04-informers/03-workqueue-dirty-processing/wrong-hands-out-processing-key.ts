// Mistake: add pushes a key on the queue whenever it is not dirty, without asking whether a worker
// holds it. Plausible because the key was taken off the queue, so it "is not there"; but a second
// worker then gets it and two reconciles of one object race each other's writes.
import { WorkQueue as Reference } from "./queue.ts";

export class WorkQueue extends Reference {
  override add(key: string): void {
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    this.queue.push(key);
  }
}

// The reference answer. The course's own workqueue does the same in
// code/client/util/workqueue/queue.ts (region three-sets), for every controller of chapters 4–8;
// there `get` also waits for a key and the queue can shut down.
//
// A recorded mistake next to this file (wrong-*.ts) is this class with one method done wrong: it
// extends WorkQueue and overrides that method.

export class WorkQueue {
  protected readonly queue: string[] = [];
  protected readonly dirty = new Set<string>();
  protected readonly processing = new Set<string>();

  add(key: string): void {
    // Already waiting, or already marked for one more round: that round covers this add too.
    if (this.dirty.has(key)) return;
    this.dirty.add(key);
    // Held by a worker: done() queues it; a second worker must not get it now.
    if (this.processing.has(key)) return;
    this.queue.push(key);
  }

  get(): string | undefined {
    const key = this.queue.shift();
    if (key === undefined) return undefined;
    this.processing.add(key);
    // No longer dirty: an add from now on means "changed while processing — look again".
    this.dirty.delete(key);
    return key;
  }

  done(key: string): void {
    this.processing.delete(key);
    if (this.dirty.has(key)) this.queue.push(key);
  }

  len(): number {
    return this.queue.length;
  }
}

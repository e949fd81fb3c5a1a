// The reference answer, written out in the steps README.md names. The course's own watch cache
// keeps the same ring — WatchCache in code/apiserver/storage/watch-cache.ts (regions process-event
// and events-since), which every Cacher replays client watches from.
//
// Each rule of getAllEventsSince is a protected method; a recorded mistake next to this file
// (wrong-*.ts) is this class with one of them done wrong: `class EventRing extends Answer`.
import type { StatusError } from "../../../code/apiserver/errors.ts";
import { tooOldResourceVersion } from "../../../code/apiserver/storage/errors.ts";
import type { WatchCacheEvent } from "../../../code/apiserver/storage/watch-cache.ts";

export class EventRing {
  protected readonly ring: (WatchCacheEvent | undefined)[];
  /** Events ever forgotten; the oldest kept is in slot startIndex % capacity. */
  protected startIndex = 0;
  /** Events ever added; the next goes in slot endIndex % capacity. */
  protected endIndex = 0;

  constructor(
    readonly capacity: number,
    readonly listResourceVersion: number,
  ) {
    this.ring = new Array(capacity);
  }

  add(event: WatchCacheEvent): void {
    if (this.endIndex - this.startIndex === this.capacity) {
      this.ring[this.startIndex % this.capacity] = undefined; // let the forgotten object go
      this.startIndex++;
    }
    this.ring[this.endIndex % this.capacity] = event;
    this.endIndex++;
  }

  getAllEventsSince(rv: number): WatchCacheEvent[] {
    const oldestServable = this.oldestServable();
    if (this.tooOld(rv, oldestServable)) throw this.expired(rv, oldestServable);
    return this.kept().filter((ev) => this.isAfter(ev, rv));
  }

  /**
   * The oldest resourceVersion a client may resume from. Revisions are etcd's, shared by every
   * resource, so only the counters can tell that nothing was forgotten since the list.
   */
  protected oldestServable(): number {
    if (this.startIndex === 0) return this.listResourceVersion;
    return (this.ring[this.startIndex % this.capacity] as WatchCacheEvent).resourceVersion - 1;
  }

  /** The ring no longer holds every change after `rv`. */
  protected tooOld(rv: number, oldestServable: number): boolean {
    return rv < oldestServable;
  }

  /** kube-apiserver's 410: `too old resource version: <rv> (<oldest servable>)`. */
  protected expired(rv: number, oldestServable: number): StatusError {
    return tooOldResourceVersion(rv, oldestServable);
  }

  /** The events kept, oldest first: from slot startIndex round to the newest. */
  protected kept(): WatchCacheEvent[] {
    const events: WatchCacheEvent[] = [];
    for (let i = this.startIndex; i < this.endIndex; i++) {
      events.push(this.ring[i % this.capacity] as WatchCacheEvent);
    }
    return events;
  }

  /** Whether the client resuming from `rv` still needs `ev`: `rv` is the last change it has seen. */
  protected isAfter(ev: WatchCacheEvent, rv: number): boolean {
    return ev.resourceVersion > rv;
  }
}

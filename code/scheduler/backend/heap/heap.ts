/**
 * Heap — a binary heap of keyed items: the smallest by a less function on top, and any item
 * found, updated or removed by its key in O(log n).
 *
 * @upstream kubernetes/kubernetes pkg/scheduler/backend/heap/heap.go (Heap, data, KeyFunc, AddOrUpdate, Delete, Peek, Pop, Get, List)
 * @chapter 05-scheduler
 *
 * Solves: activeQ must hand out the highest-priority pod first (a priority queue), and
 * backoffQ the pod whose backoff ends first; both must also update or delete one pod when an
 * informer event names it, without scanning every pod.
 *
 * Invariants:
 * - `items[i]` is never less than its parent `items[(i - 1) >> 1]` (by `less`).
 * - `index.get(key(items[i])) === i` for every i: the key index follows every swap.
 * - one item per key: adding an existing key replaces that item and re-sifts it.
 */

export type KeyFunc<T> = (item: T) => string;

export class Heap<T> {
  private readonly items: T[] = [];
  private readonly index = new Map<string, number>();

  constructor(
    private readonly keyFunc: KeyFunc<T>,
    private readonly less: (a: T, b: T) => boolean,
  ) {}

  // #region add-or-update
  /** AddOrUpdate: inserts the item, or replaces the item with the same key and re-sifts it. */
  addOrUpdate(item: T): void {
    const key = this.keyFunc(item);
    const at = this.index.get(key);
    if (at !== undefined) {
      this.items[at] = item;
      this.fix(at);
      return;
    }
    this.items.push(item);
    this.index.set(key, this.items.length - 1);
    this.up(this.items.length - 1);
  }
  // #endregion add-or-update

  /** Delete: removes the item with this item's key; false if there is none. */
  delete(item: T): boolean {
    const at = this.index.get(this.keyFunc(item));
    if (at === undefined) return false;
    this.removeAt(at);
    return true;
  }

  peek(): T | undefined {
    return this.items[0];
  }

  pop(): T | undefined {
    if (this.items.length === 0) return undefined;
    return this.removeAt(0);
  }

  get(item: T): T | undefined {
    return this.getByKey(this.keyFunc(item));
  }

  getByKey(key: string): T | undefined {
    const at = this.index.get(key);
    return at === undefined ? undefined : this.items[at];
  }

  has(item: T): boolean {
    return this.index.has(this.keyFunc(item));
  }

  /** Every item, in no particular order. */
  list(): T[] {
    return [...this.items];
  }

  len(): number {
    return this.items.length;
  }

  private removeAt(at: number): T {
    const item = this.items[at];
    const last = this.items.length - 1;
    this.swap(at, last);
    this.items.pop();
    this.index.delete(this.keyFunc(item));
    if (at < this.items.length) this.fix(at);
    return item;
  }

  // #region sift
  private fix(i: number): void {
    if (!this.down(i)) this.up(i);
  }

  private up(i: number): void {
    while (i > 0) {
      const parent = (i - 1) >> 1;
      if (!this.less(this.items[i], this.items[parent])) break;
      this.swap(i, parent);
      i = parent;
    }
  }

  /** Sifts down; returns whether the item moved. */
  private down(i0: number): boolean {
    let i = i0;
    const n = this.items.length;
    for (;;) {
      const l = 2 * i + 1;
      if (l >= n) break;
      let child = l;
      if (l + 1 < n && this.less(this.items[l + 1], this.items[l])) child = l + 1;
      if (!this.less(this.items[child], this.items[i])) break;
      this.swap(i, child);
      i = child;
    }
    return i > i0;
  }
  // #endregion sift

  private swap(i: number, j: number): void {
    if (i === j) return;
    const a = this.items[i];
    const b = this.items[j];
    this.items[i] = b;
    this.items[j] = a;
    this.index.set(this.keyFunc(b), i);
    this.index.set(this.keyFunc(a), j);
  }
}

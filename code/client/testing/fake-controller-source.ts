/**
 * FakeControllerSource — an in-memory API server for one resource: a ListerWatcher whose
 * objects, resourceVersions, pages, watches, compactions and failures a test controls.
 * Mirrors kubernetes/client-go tools/cache/testing/fake_controller_source.go (FakeControllerSource: Add,
 * Modify, Delete, List, Watch, Shutdown), extended with what a fault test needs: pagination with
 * continue tokens, compaction that makes old resourceVersions answer 410, bookmarks, dropped
 * watches and injected errors.
 *
 * Solves:
 * - the reflector's hard cases (a page token expiring between pages, a watch dropped mid-stream,
 *   a resourceVersion compacted away, a server that refuses) must be reproducible in a
 *   millisecond, without a server and without sleeping.
 *
 * Invariants:
 * - every add / modify / delete bumps the source's resourceVersion by one and stamps it on the
 *   object; the change is logged, so a watch from resourceVersion R replays exactly the changes
 *   after R, then follows new ones, in order;
 * - after `compact()` a watch from, or a continue token of, a resourceVersion older than the
 *   compaction answers 410 Expired, as the API server does after etcd compacts;
 * - a list page is served from the snapshot at the first page's resourceVersion, so paging is
 *   consistent even while writes continue (as the API server's continue tokens are);
 * - with a clock, a watch ends cleanly after its `timeoutSeconds`, as the server's timeout does;
 * - objects go in and come out as copies: a test or a cache mutating one cannot change another.
 *
 * What upstream's fake does differently: it ignores list options and never answers 410; label
 * and field selectors are ignored here too (a test wanting one filters its own source).
 *
 * @upstream kubernetes/client-go tools/cache/testing/fake_controller_source.go (FakeControllerSource, Add, Modify, Delete, List, Watch, Shutdown)
 * @chapter 04-informers
 */

import type { KubeList, KubeObject, Status, WatchEvent } from "../../api/meta.ts";
import { StatusError } from "../errors.ts";
import type { ListerWatcher, ListOptions, Watch } from "../tools/cache/listwatch.ts";
import { metaNamespaceKeyFunc } from "../tools/cache/store.ts";
import type { Clock, Timer } from "../util/clock.ts";

interface Change<T> {
  rv: number;
  type: "ADDED" | "MODIFIED" | "DELETED";
  key: string;
  obj: T;
}

/** 410 Expired, worded as the API server words it for a compacted resourceVersion. */
export function expiredError(message: string): StatusError {
  return new StatusError(expiredStatus(message));
}

function expiredStatus(message: string): Status {
  return {
    kind: "Status",
    apiVersion: "v1",
    metadata: {},
    status: "Failure",
    message,
    reason: "Expired",
    code: 410,
  };
}

const clone = <T>(o: T): T => structuredClone(o);

// #region fake-watch
/** One open watch: a buffer of events that the source pushes into and the reflector iterates. */
class FakeWatch<T extends KubeObject> implements Watch<T> {
  private buffer: WatchEvent<T>[] = [];
  private ended = false;
  private wake?: () => void;
  /** The server-side timeout's timer, if the source has a clock. */
  deadline?: Timer;

  constructor(
    readonly opts: ListOptions,
    private readonly onStop: (w: FakeWatch<T>) => void,
  ) {}

  push(ev: WatchEvent<T>): void {
    if (this.ended) return;
    this.buffer.push(ev);
    this.wake?.();
  }

  /** Ends the stream: events already buffered are still delivered, then the iteration ends. */
  end(): void {
    this.deadline?.stop();
    this.ended = true;
    this.onStop(this);
    this.wake?.();
  }

  /** Ends the stream and discards what was not delivered (watch.Interface Stop). */
  stop(): void {
    this.buffer = [];
    this.end();
  }

  get open(): boolean {
    return !this.ended;
  }

  async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
    for (;;) {
      const ev = this.buffer.shift();
      if (ev) {
        yield ev;
        continue;
      }
      if (this.ended) return;
      await new Promise<void>((resolve) => {
        this.wake = resolve;
      });
      this.wake = undefined;
    }
  }
}
// #endregion fake-watch

export interface FakeControllerSourceOptions {
  /** The kind and apiVersion stamped on lists and bookmarks. */
  kind?: string;
  apiVersion?: string;
  /** With a clock, a watch ends after its timeoutSeconds, as the API server ends it. */
  clock?: Clock;
}

export class FakeControllerSource<T extends KubeObject = KubeObject> implements ListerWatcher<T> {
  private rv = 0;
  // State at `compactedRV`, plus every change since: enough to rebuild the state at any
  // resourceVersion not compacted away.
  private base = new Map<string, T>();
  private log: Change<T>[] = [];
  private compactedRV = 0;
  private current = new Map<string, T>();
  private watches = new Set<FakeWatch<T>>();
  private listFailures: StatusError[] = [];
  private watchFailures: StatusError[] = [];
  /** Every list and watch call's options, in order — for asserting what the reflector asked. */
  readonly listCalls: ListOptions[] = [];
  readonly watchCalls: ListOptions[] = [];
  /** Whether a watch from a compacted resourceVersion rejects (true) or opens and sends an ERROR event (false, as the API server does). */
  expireWatchByRejecting = false;

  constructor(private readonly opts: FakeControllerSourceOptions = {}) {}

  // #region writes
  add(obj: T): T {
    return this.change("ADDED", obj);
  }

  modify(obj: T): T {
    return this.change("MODIFIED", obj);
  }

  delete(obj: T): T {
    return this.change("DELETED", obj);
  }

  private change(type: Change<T>["type"], input: T): T {
    const key = metaNamespaceKeyFunc(input);
    if (type === "ADDED" && this.current.has(key)) throw new Error(`fake source: ${key} already exists`);
    if (type !== "ADDED" && !this.current.has(key)) throw new Error(`fake source: ${key} not found`);
    const obj = clone(type === "DELETED" ? this.current.get(key)! : input);
    this.rv++;
    obj.metadata.resourceVersion = String(this.rv);
    if (type === "DELETED") this.current.delete(key);
    else this.current.set(key, obj);
    this.log.push({ rv: this.rv, type, key, obj });
    for (const w of this.watches) w.push({ type, object: clone(obj) });
    return clone(obj);
  }
  // #endregion writes

  /** The current objects, sorted by key (what a fresh list returns). */
  items(): T[] {
    return [...this.current.entries()].sort(([a], [b]) => (a < b ? -1 : 1)).map(([, o]) => clone(o));
  }

  get resourceVersion(): string {
    return String(this.rv);
  }

  // #region faults
  /** Forgets history up to the current resourceVersion: older watches and tokens get 410. */
  compact(): void {
    for (const c of this.log) {
      if (c.type === "DELETED") this.base.delete(c.key);
      else this.base.set(c.key, c.obj);
    }
    this.log = [];
    this.compactedRV = this.rv;
  }

  /** Ends every open watch as a dropped connection does: the stream just stops. */
  dropWatches(): void {
    for (const w of [...this.watches]) w.end();
  }

  /** Ends every open watch with an ERROR event carrying 410 Expired (the watch cache's "too old"). */
  expireWatches(): void {
    for (const w of [...this.watches]) {
      w.push({
        type: "ERROR",
        object: expiredStatus("The resourceVersion for the provided watch is too old."),
      });
      w.end();
    }
  }

  /** Sends a BOOKMARK at the current resourceVersion to the watches that asked for bookmarks. */
  bookmark(): void {
    for (const w of this.watches) {
      if (!w.opts.allowWatchBookmarks) continue;
      const object = {
        kind: this.opts.kind ?? "",
        apiVersion: this.opts.apiVersion ?? "",
        metadata: { resourceVersion: String(this.rv) },
      } as unknown as T;
      w.push({ type: "BOOKMARK", object });
    }
  }

  /** The next list call rejects with `err`. */
  failNextList(err: StatusError): void {
    this.listFailures.push(err);
  }

  /** The next watch call rejects with `err`. */
  failNextWatch(err: StatusError): void {
    this.watchFailures.push(err);
  }

  /** How many watches are open now. */
  openWatches(): number {
    return this.watches.size;
  }
  // #endregion faults

  private stateAt(rv: number): Map<string, T> {
    const state = new Map(this.base);
    for (const c of this.log) {
      if (c.rv > rv) break;
      if (c.type === "DELETED") state.delete(c.key);
      else state.set(c.key, c.obj);
    }
    return state;
  }

  // #region list
  async list(opts: ListOptions): Promise<KubeList<T>> {
    this.listCalls.push({ ...opts });
    const failure = this.listFailures.shift();
    if (failure) throw failure;
    let at = this.rv;
    let after = "";
    if (opts.continue) {
      const token = JSON.parse(Buffer.from(opts.continue, "base64url").toString()) as {
        rv: number;
        start: string;
      };
      if (token.rv < this.compactedRV) {
        throw expiredError(
          "The provided continue parameter is too old to display a consistent list result. You can start a new list without the continue parameter, or use the continue token in this response to retrieve the remainder of the results. Continuing with the provided token results in an inconsistent list - objects that were created, modified, or deleted between the time the first chunk was returned and now may show up in the list.",
        );
      }
      at = token.rv;
      after = token.start;
    }
    const sorted = [...this.stateAt(at).entries()]
      .filter(([k]) => k > after)
      .sort(([a], [b]) => (a < b ? -1 : 1));
    const limit = opts.limit && opts.limit > 0 ? opts.limit : sorted.length;
    const page = sorted.slice(0, limit);
    const more = sorted.length > limit;
    return {
      kind: `${this.opts.kind ?? ""}List`,
      apiVersion: this.opts.apiVersion ?? "",
      metadata: {
        resourceVersion: String(at),
        ...(more
          ? {
              continue: Buffer.from(JSON.stringify({ rv: at, start: page[page.length - 1][0] })).toString(
                "base64url",
              ),
            }
          : {}),
      },
      items: page.map(([, o]) => clone(o)),
    };
  }
  // #endregion list

  // #region watch
  async watch(opts: ListOptions): Promise<Watch<T>> {
    this.watchCalls.push({ ...opts });
    const failure = this.watchFailures.shift();
    if (failure) throw failure;
    const w = new FakeWatch<T>(opts, (x) => this.watches.delete(x));
    const from = opts.resourceVersion;
    if (from === undefined || from === "" || from === "0") {
      // No position: start with the current state as ADDED events, then follow.
      for (const o of this.items()) w.push({ type: "ADDED", object: o });
    } else {
      const rv = Number(from);
      if (rv < this.compactedRV) {
        const err = expiredError(`too old resource version: ${rv} (${this.compactedRV})`);
        if (this.expireWatchByRejecting) throw err;
        w.push({ type: "ERROR", object: err.status });
        w.end();
        return w;
      }
      for (const c of this.log) if (c.rv > rv) w.push({ type: c.type, object: clone(c.obj) });
    }
    this.watches.add(w);
    if (this.opts.clock && opts.timeoutSeconds) {
      w.deadline = this.opts.clock.afterFunc(opts.timeoutSeconds * 1000, () => w.end());
    }
    return w;
  }
  // #endregion watch
}

/**
 * Storage conformance suite — the tests every storage backend must pass, ours and a real etcd's.
 * It runs against our store in process, our store over gRPC, and a real etcd. Upstream's
 * equivalent: k8s.io/apiserver pkg/storage/testing/store_tests.go and watcher_tests.go.
 *
 * Solves:
 * - "works on our store" is not "works on etcd": the same tests run against a real etcd prove
 *   the storage layer relies only on what etcd actually does (revisions, txn compares,
 *   compaction, progress notify), and our store proves it does the same;
 * - each test gets its own key prefix, so one backend (one etcd process) serves the whole suite.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/testing/store_tests.go (RunTestCreate, RunTestGet, RunTestList, RunTestListContinuation, RunTestGuaranteedUpdate, RunTestConditionalDelete)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/storage/testing/watcher_tests.go (RunTestWatch, RunTestWatchFromZero, RunTestWatchError)
 * @chapter 02-apiserver
 */
import { afterAll, beforeAll, expect, it } from "vitest";
import type { KubeObject } from "../../api/meta.ts";
import { isStatusError, type StatusError } from "../errors.ts";
import type { StorageBackend } from "../storage/factory.ts";
import type { Interface, StorageWatchEvent, Watch } from "../storage/interfaces.ts";
import { everything, newSelectionPredicate } from "../storage/selection-predicate.ts";

const pods = { group: "", resource: "pods" };

export function pod(
  name: string,
  labels: Record<string, string> = {},
  extra: Record<string, unknown> = {},
): KubeObject {
  return {
    apiVersion: "v1",
    kind: "Pod",
    metadata: { name, namespace: "default", uid: `uid-${name}`, labels },
    ...extra,
  };
}

/** The StatusError a promise rejects with (fails the test if it resolves). */
export async function statusOf(p: Promise<unknown>): Promise<StatusError> {
  try {
    await p;
  } catch (e) {
    if (isStatusError(e)) return e;
    throw e;
  }
  throw new Error("expected a StatusError, got success");
}

/** The next `n` events of a watch, or fails after `timeoutMs`. */
export async function nextEvents(w: Watch, n: number, timeoutMs = 3000): Promise<StorageWatchEvent[]> {
  const out: StorageWatchEvent[] = [];
  if (n === 0) return out;
  const it = iterators.get(w) ?? w[Symbol.asyncIterator]();
  iterators.set(w, it);
  const deadline = Date.now() + timeoutMs;
  while (out.length < n) {
    const left = deadline - Date.now();
    let timer: ReturnType<typeof setTimeout> | undefined;
    const r = await Promise.race([
      it.next(),
      new Promise<"timeout">((resolve) => {
        timer = setTimeout(() => resolve("timeout"), Math.max(left, 0));
      }),
    ]);
    clearTimeout(timer);
    if (r === "timeout")
      throw new Error(`timed out waiting for event ${out.length + 1} of ${n}: got ${summary(out)}`);
    if (r.done) throw new Error(`watch ended after ${summary(out)}`);
    out.push(r.value);
  }
  return out;
}

/** Whether the watch has ended (reads no further than one event; fails if one arrives). */
export async function watchEnded(w: Watch, timeoutMs = 2000): Promise<boolean> {
  const it = iterators.get(w) ?? w[Symbol.asyncIterator]();
  iterators.set(w, it);
  let timer: ReturnType<typeof setTimeout> | undefined;
  const r = await Promise.race([
    it.next(),
    new Promise<"timeout">((resolve) => {
      timer = setTimeout(() => resolve("timeout"), timeoutMs);
    }),
  ]);
  clearTimeout(timer);
  if (r === "timeout") return false;
  if (!r.done) throw new Error(`expected the end of the watch, got ${summary([r.value])}`);
  return true;
}

const iterators = new WeakMap<Watch, AsyncIterator<StorageWatchEvent>>();

export function summary(events: StorageWatchEvent[]): string {
  return `[${events.map((e) => `${e.type} ${e.object.metadata?.name ?? ""}@${e.object.metadata?.resourceVersion ?? (e.object as { message?: string }).message}`).join(", ")}]`;
}

export interface SuiteBackend {
  backend: StorageBackend;
  /** Compacts the backend's etcd at `revision`. */
  compact(revision: number): Promise<void>;
  close(): Promise<void>;
}

// #region suite
/** Registers the suite's tests (call inside a describe). */
export function runStorageSuite(start: () => Promise<SuiteBackend>): void {
  let b: SuiteBackend;
  let n = 0;
  beforeAll(async () => {
    b = await start();
  }, 30_000);
  afterAll(async () => {
    await b?.close();
  });
  /** A fresh resource prefix per test: `/registry/t<n>/pods`, keys `…/default/<name>`. */
  const fresh = (): { s: Interface; prefix: string; key: (name: string) => string } => {
    const prefix = `/registry/t${++n}-${Date.now()}/pods`;
    return {
      s: b.backend.forResource(prefix, { groupResource: pods }),
      prefix,
      key: (name) => `${prefix}/default/${name}`,
    };
  };

  it("create stores an object once; a second create is AlreadyExists", async () => {
    const { s, key } = fresh();
    const created = await s.create(key("web"), pod("web"));
    expect(Number(created.metadata.resourceVersion)).toBeGreaterThan(0);
    const err = await statusOf(s.create(key("web"), pod("web")));
    expect(err.status).toMatchObject({
      code: 409,
      reason: "AlreadyExists",
      message: 'pods "web" already exists',
    });
    const withRV = pod("db");
    withRV.metadata.resourceVersion = "5";
    const bad = await statusOf(s.create(key("db"), withRV));
    expect(bad.status).toMatchObject({
      code: 500,
      message: "resourceVersion should not be set on objects to be created",
    });
  });

  it("get returns what create returned; a missing key is NotFound", async () => {
    const { s, key } = fresh();
    const created = await s.create(key("web"), pod("web", { app: "web" }));
    expect(await s.get(key("web"))).toEqual(created);
    const err = await statusOf(s.get(key("nope")));
    expect(err.status).toMatchObject({ code: 404, reason: "NotFound", message: 'pods "nope" not found' });
    expect(await s.get(key("nope"), { ignoreNotFound: true })).toBeUndefined();
    const future = Number(created.metadata.resourceVersion) + 1000;
    const tooLarge = await statusOf(s.get(key("web"), { resourceVersion: String(future) }));
    expect(tooLarge.status.code).toBe(504);
    expect(tooLarge.status.message).toMatch(
      new RegExp(`^Timeout: Too large resource version: ${future}, current: \\d+$`),
    );
  });

  it("guaranteedUpdate retries when it loses a race, and skips a write that changes nothing", async () => {
    const { s, key } = fresh();
    await s.create(key("web"), pod("web", {}, { count: 0 }));
    let calls = 0;
    let release!: () => void;
    const gate = new Promise<void>((r) => {
      release = r;
    });
    // The first update reads, then waits while a second update commits: its txn must fail and retry.
    const slow = s.guaranteedUpdate(key("web"), {}, async (cur) => {
      calls++;
      if (calls === 1) await gate;
      return { ...(cur as KubeObject), count: (cur?.count as number) + 1 };
    });
    await new Promise((r) => setTimeout(r, 20));
    const fast = await s.guaranteedUpdate(key("web"), {}, (cur) => ({ ...(cur as KubeObject), count: 10 }));
    release();
    const final = await slow;
    expect(calls).toBe(2);
    expect(final.count).toBe(11);
    expect(Number(final.metadata.resourceVersion)).toBeGreaterThan(Number(fast.metadata.resourceVersion));

    const same = await s.guaranteedUpdate(key("web"), {}, (cur) => cur as KubeObject);
    expect(same.metadata.resourceVersion).toBe(final.metadata.resourceVersion);

    const missing = await statusOf(s.guaranteedUpdate(key("nope"), {}, (cur) => cur as KubeObject));
    expect(missing.status.reason).toBe("NotFound");
    const upserted = await s.guaranteedUpdate(key("new"), { ignoreNotFound: true }, (cur) => {
      expect(cur).toBeUndefined();
      return pod("new");
    });
    expect((await s.get(key("new")))?.metadata.resourceVersion).toBe(upserted.metadata.resourceVersion);
  });

  it("guaranteedUpdate from a cached first guess: a stale guess is never what decides", async () => {
    const { s, key } = fresh();
    const v1 = await s.create(key("web"), pod("web", {}, { count: 0 }));
    const v2 = await s.guaranteedUpdate(key("web"), {}, (cur) => ({ ...(cur as KubeObject), count: 1 }));
    const stale = Object.freeze(structuredClone(v1)); // the watch cache's copy, one write behind

    // A write computed from the stale guess loses its txn and is redone from etcd's answer.
    const seen: unknown[] = [];
    const v3 = await s.guaranteedUpdate(key("web"), { cachedExistingObject: stale }, (cur) => {
      seen.push(cur?.count);
      return { ...(cur as KubeObject), count: (cur?.count as number) + 10 };
    });
    expect(seen).toEqual([0, 1]);
    expect(v3.count).toBe(11);

    // A refusal of the stale guess is asked again of the current object (which it accepts).
    const v4 = await s.guaranteedUpdate(key("web"), { cachedExistingObject: stale }, (cur) => {
      if (cur?.count === 0) throw new Error("refused the stale object");
      return { ...(cur as KubeObject), count: 12 };
    });
    expect(v4.count).toBe(12);
    // ... and a refusal of the current object stands.
    await expect(
      s.guaranteedUpdate(key("web"), { cachedExistingObject: structuredClone(v4) }, () => {
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");

    // A no-op against the stale guess is not a no-op against etcd: it is written.
    const v5 = await s.guaranteedUpdate(key("web"), { cachedExistingObject: stale }, (cur) => ({
      ...(cur as KubeObject),
      count: 0,
    }));
    expect(v5.count).toBe(0);
    expect(Number(v5.metadata.resourceVersion)).toBeGreaterThan(Number(v4.metadata.resourceVersion));
    expect((await s.get(key("web")))?.count).toBe(0);
    // A no-op against a current guess writes nothing.
    const v6 = await s.guaranteedUpdate(
      key("web"),
      { cachedExistingObject: structuredClone(v5) },
      (cur) => cur!,
    );
    expect(v6.metadata.resourceVersion).toBe(v5.metadata.resourceVersion);
    expect(v2.count).toBe(1);
  });

  it("preconditions: a UID or resourceVersion that does not match is a Conflict", async () => {
    const { s, key } = fresh();
    const created = await s.create(key("web"), pod("web"));
    const uidErr = await statusOf(
      s.guaranteedUpdate(key("web"), { preconditions: { uid: "other" } }, (cur) => cur as KubeObject),
    );
    expect(uidErr.status).toMatchObject({
      code: 409,
      reason: "Conflict",
      message:
        `Operation cannot be fulfilled on pods "web": StorageError: invalid object, Code: 4, Key: ${key("web")}, ` +
        "ResourceVersion: 0, AdditionalErrorMsg: Precondition failed: UID in precondition: other, UID in object meta: uid-web",
    });
    const rvErr = await statusOf(s.delete(key("web"), { resourceVersion: "1" }));
    expect(rvErr.status.message).toContain(
      `Precondition failed: ResourceVersion in precondition: 1, ResourceVersion in object meta: ${created.metadata.resourceVersion}`,
    );
    const deleted = await s.delete(key("web"), {
      uid: "uid-web",
      resourceVersion: created.metadata.resourceVersion,
    });
    expect(deleted.metadata.name).toBe("web");
    expect(Number(deleted.metadata.resourceVersion)).toBeGreaterThan(
      Number(created.metadata.resourceVersion),
    );
    expect((await statusOf(s.get(key("web")))).status.reason).toBe("NotFound");
    expect((await statusOf(s.delete(key("web")))).status.reason).toBe("NotFound");
  });

  it("delete runs validateDeletion on the current object and aborts if it throws", async () => {
    const { s, key } = fresh();
    await s.create(key("web"), pod("web"));
    const seen: string[] = [];
    await expect(
      s.delete(key("web"), undefined, (cur) => {
        seen.push(cur.metadata.name as string);
        throw new Error("refused");
      }),
    ).rejects.toThrow("refused");
    expect(seen).toEqual(["web"]);
    expect(await s.get(key("web"))).toBeDefined();
  });

  it("lists in pages, every page at the first page's revision, with upstream's continue tokens", async () => {
    const { s, prefix, key } = fresh();
    for (const name of ["a", "b", "c", "d", "e"]) await s.create(key(name), pod(name));
    const first = await s.getList(prefix, { predicate: everything, recursive: true, limit: 2 });
    expect(first.items.map((o) => o.metadata.name)).toEqual(["a", "b"]);
    expect(first.remainingItemCount).toBe(3);
    const token = JSON.parse(Buffer.from(first.continue as string, "base64url").toString());
    expect(token).toEqual({
      v: "meta.k8s.io/v1",
      rv: Number(first.resourceVersion),
      start: "default/b\u0000",
    });

    // A write after the first page is not part of this list.
    await s.create(key("bb"), pod("bb"));
    await s.delete(key("c"));
    const second = await s.getList(prefix, {
      predicate: everything,
      recursive: true,
      limit: 2,
      continue: first.continue,
    });
    expect(second.items.map((o) => o.metadata.name)).toEqual(["c", "d"]);
    expect(second.resourceVersion).toBe(first.resourceVersion);
    expect(second.remainingItemCount).toBe(1);
    const third = await s.getList(prefix, {
      predicate: everything,
      recursive: true,
      limit: 2,
      continue: second.continue,
    });
    expect(third.items.map((o) => o.metadata.name)).toEqual(["e"]);
    expect(third.continue).toBeUndefined();
    expect(third.remainingItemCount).toBeUndefined();

    const all = await s.getList(prefix, { predicate: everything, recursive: true });
    expect(all.items.map((o) => o.metadata.name)).toEqual(["a", "b", "bb", "d", "e"]);
    const bad = await statusOf(s.getList(prefix, { predicate: everything, recursive: true, continue: "!!" }));
    expect(bad.status).toMatchObject({ code: 400, reason: "BadRequest" });
    expect(bad.status.message).toMatch(/^invalid continue token: continue key is not valid/);
  });

  it("fills a filtered page by reading on, and reports no remainingItemCount", async () => {
    const { s, prefix, key } = fresh();
    for (let i = 0; i < 9; i++)
      await s.create(key(`p${i}`), pod(`p${i}`, { app: i % 3 === 0 ? "web" : "db" }));
    const predicate = newSelectionPredicate("app=web", "");
    const page = await s.getList(prefix, { predicate, recursive: true, limit: 2 });
    expect(page.items.map((o) => o.metadata.name)).toEqual(["p0", "p3"]);
    expect(page.remainingItemCount).toBeUndefined();
    const rest = await s.getList(prefix, { predicate, recursive: true, limit: 2, continue: page.continue });
    expect(rest.items.map((o) => o.metadata.name)).toEqual(["p6"]);
    const byName = newSelectionPredicate("", "metadata.name!=p0");
    const named = await s.getList(prefix, { predicate: byName, recursive: true });
    expect(named.items).toHaveLength(8);
  });

  it("a continue token whose revision was compacted is 410 Gone, reason Expired with a fresh token", async () => {
    const { s, prefix, key } = fresh();
    for (const name of ["a", "b", "c"]) await s.create(key(name), pod(name));
    const first = await s.getList(prefix, { predicate: everything, recursive: true, limit: 1 });
    const later = await s.create(key("d"), pod("d"));
    await b.compact(Number(later.metadata.resourceVersion));
    const err = await statusOf(
      s.getList(prefix, { predicate: everything, recursive: true, limit: 1, continue: first.continue }),
    );
    expect(err.status).toMatchObject({
      code: 410,
      reason: "Expired",
      message:
        "The provided continue parameter is too old to display a consistent list result. You can start a new list " +
        "without the continue parameter, or use the continue token in this response to retrieve the remainder of the " +
        "results. Continuing with the provided token results in an inconsistent list - objects that were created, " +
        "modified, or deleted between the time the first chunk was returned and now may show up in the list.",
    });
    const fresher = err.status.metadata.continue as string;
    expect(JSON.parse(Buffer.from(fresher, "base64url").toString()).rv).toBe(-1);
    const rest = await s.getList(prefix, { predicate: everything, recursive: true, continue: fresher });
    expect(rest.items.map((o) => o.metadata.name)).toEqual(["b", "c", "d"]);
  });

  it("resourceVersion semantics: Exact reads the past, NotOlderThan refuses the future, compacted is 410", async () => {
    const { s, prefix, key } = fresh();
    const a = await s.create(key("a"), pod("a"));
    const rvA = a.metadata.resourceVersion as string;
    await s.create(key("b"), pod("b"));
    const exact = await s.getList(prefix, {
      predicate: everything,
      recursive: true,
      resourceVersion: rvA,
      resourceVersionMatch: "Exact",
    });
    expect(exact.items.map((o) => o.metadata.name)).toEqual(["a"]);
    expect(exact.resourceVersion).toBe(rvA);
    const latest = await s.getList(prefix, {
      predicate: everything,
      recursive: true,
      resourceVersion: rvA,
      resourceVersionMatch: "NotOlderThan",
    });
    expect(latest.items).toHaveLength(2);
    expect(Number(latest.resourceVersion)).toBeGreaterThan(Number(rvA));
    // Legacy: a resourceVersion without a limit is "not older than"; with a limit, exact.
    const legacy = await s.getList(prefix, { predicate: everything, recursive: true, resourceVersion: rvA });
    expect(legacy.items).toHaveLength(2);
    const legacyPaged = await s.getList(prefix, {
      predicate: everything,
      recursive: true,
      resourceVersion: rvA,
      limit: 5,
    });
    expect(legacyPaged.items).toHaveLength(1);
    const any = await s.getList(prefix, { predicate: everything, recursive: true, resourceVersion: "0" });
    expect(any.items).toHaveLength(2);

    const current = Number(await s.currentResourceVersion());
    const future = await statusOf(
      s.getList(prefix, {
        predicate: everything,
        recursive: true,
        resourceVersion: String(current + 100),
        resourceVersionMatch: "NotOlderThan",
      }),
    );
    expect(future.status).toMatchObject({ code: 504, reason: "Timeout" });
    expect(future.status.details?.causes?.[0]).toEqual({
      reason: "ResourceVersionTooLarge",
      message: "Too large resource version",
    });
    const badRV = await statusOf(
      s.getList(prefix, { predicate: everything, recursive: true, resourceVersion: "abc" }),
    );
    expect(badRV.status).toMatchObject({ code: 400, reason: "BadRequest" });

    await b.compact(current);
    const gone = await statusOf(
      s.getList(prefix, {
        predicate: everything,
        recursive: true,
        resourceVersion: rvA,
        resourceVersionMatch: "Exact",
      }),
    );
    expect(gone.status).toMatchObject({
      code: 410,
      reason: "Expired",
      message: "The resourceVersion for the provided list is too old.",
    });
  });

  it("watch from N sends every later change as ADDED, MODIFIED, DELETED", async () => {
    const { s, prefix, key } = fresh();
    const a = await s.create(key("a"), pod("a"));
    const w = await s.watch(prefix, {
      resourceVersion: a.metadata.resourceVersion,
      predicate: everything,
      recursive: true,
    });
    const b1 = await s.create(key("b"), pod("b"));
    const a2 = await s.guaranteedUpdate(key("a"), {}, (cur) => ({ ...(cur as KubeObject), spec: { x: 1 } }));
    await s.delete(key("b"));
    const events = await nextEvents(w, 3);
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      "ADDED b",
      "MODIFIED a",
      "DELETED b",
    ]);
    expect(events[0].object).toEqual(b1);
    expect(events[1].object).toEqual(a2);
    expect(Number(events[2].object.metadata.resourceVersion)).toBeGreaterThan(
      Number(a2.metadata.resourceVersion),
    );
    w.stop();

    // A watch on one key sees only that key.
    const one = await s.watch(key("a"), {
      resourceVersion: a2.metadata.resourceVersion,
      predicate: everything,
      recursive: false,
    });
    await s.create(key("c"), pod("c"));
    await s.delete(key("a"));
    expect((await nextEvents(one, 1)).map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      "DELETED a",
    ]);
    one.stop();
  });

  it("watch from 0 starts with the current state as ADDED events", async () => {
    const { s, prefix, key } = fresh();
    await s.create(key("a"), pod("a"));
    await s.create(key("b"), pod("b"));
    const w = await s.watch(prefix, { resourceVersion: "0", predicate: everything, recursive: true });
    await s.create(key("c"), pod("c"));
    const events = await nextEvents(w, 3);
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      "ADDED a",
      "ADDED b",
      "ADDED c",
    ]);
    w.stop();
  });

  it("watch with a selector: an object entering it is ADDED, one leaving it DELETED", async () => {
    const { s, prefix, key } = fresh();
    const a = await s.create(key("a"), pod("a", { app: "db" }));
    const predicate = newSelectionPredicate("app=web", "");
    const w = await s.watch(prefix, {
      resourceVersion: a.metadata.resourceVersion,
      predicate,
      recursive: true,
    });
    const relabel = (app: string) => (cur: KubeObject | undefined) => {
      const o = structuredClone(cur as KubeObject);
      o.metadata.labels = { app };
      return o;
    };
    await s.guaranteedUpdate(key("a"), {}, relabel("web"));
    await s.guaranteedUpdate(key("a"), {}, (cur) => ({ ...(cur as KubeObject), spec: { n: 1 } }));
    const left = await s.guaranteedUpdate(key("a"), {}, relabel("db"));
    await s.create(key("other"), pod("other", { app: "db" }));
    await s.create(key("z"), pod("z", { app: "web" }));
    const events = await nextEvents(w, 4);
    expect(events.map((e) => `${e.type} ${e.object.metadata.name}`)).toEqual([
      "ADDED a",
      "MODIFIED a",
      "DELETED a",
      "ADDED z",
    ]);
    // The DELETED object is the one that matched (label web), at the revision it stopped matching.
    expect(events[2].object.metadata.labels).toEqual({ app: "web" });
    expect(events[2].object.metadata.resourceVersion).toBe(left.metadata.resourceVersion);
    w.stop();
  });

  it("watch from a compacted resourceVersion is one ERROR event: 410 Gone, reason Expired", async () => {
    const { s, prefix, key } = fresh();
    const a = await s.create(key("a"), pod("a"));
    await s.create(key("b"), pod("b"));
    const c = await s.create(key("c"), pod("c"));
    await b.compact(Number(c.metadata.resourceVersion));
    const w = await s.watch(prefix, {
      resourceVersion: a.metadata.resourceVersion,
      predicate: everything,
      recursive: true,
    });
    const [ev] = await nextEvents(w, 1);
    expect(ev.type).toBe("ERROR");
    expect(ev.object).toMatchObject({ kind: "Status", code: 410, reason: "Expired" });
    expect(await watchEnded(w)).toBe(true);
  });

  it("sends BOOKMARK events carrying the store's revision when asked", async () => {
    const { s, prefix, key } = fresh();
    const a = await s.create(key("a"), pod("a"));
    const w = await s.watch(prefix, {
      resourceVersion: a.metadata.resourceVersion,
      predicate: everything,
      recursive: true,
      allowWatchBookmarks: true,
    });
    // A write elsewhere moves the store's revision on; this watch has no event to show for it,
    // so only a bookmark can tell it how far the stream has got.
    const elsewhere = await fresh().s.create(`/registry/elsewhere-${n}/default/x`, pod("x"));
    const target = Number(elsewhere.metadata.resourceVersion);
    let seen = 0;
    for (let i = 0; i < 20 && seen < target; i++) {
      const [ev] = await nextEvents(w, 1, 5000);
      expect(ev.type).toBe("BOOKMARK");
      expect(ev.object.metadata.name).toBeUndefined();
      const rv = Number(ev.object.metadata.resourceVersion);
      expect(rv).toBeGreaterThanOrEqual(Math.max(seen, Number(a.metadata.resourceVersion)));
      seen = rv;
    }
    expect(seen).toBeGreaterThanOrEqual(target);
    w.stop();
  });

  it("the watch cache serves rv=0 lists and watches with the same answers", async () => {
    const { prefix, key } = fresh();
    const cached = b.backend.forResource(prefix, { cache: true, groupResource: pods });
    const a = await cached.create(key("a"), pod("a"));
    const w = await cached.watch(prefix, { resourceVersion: "0", predicate: everything, recursive: true });
    const [added] = await nextEvents(w, 1);
    expect(added).toMatchObject({ type: "ADDED", object: { metadata: { name: "a" } } });
    const list = await cached.getList(prefix, {
      predicate: everything,
      recursive: true,
      resourceVersion: a.metadata.resourceVersion,
    });
    expect(list.items).toEqual([a]);
    w.stop();
  });
}
// #endregion suite

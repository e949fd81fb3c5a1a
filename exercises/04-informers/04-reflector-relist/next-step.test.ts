import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../../code/testing/random.ts";
import { nextStep, type Outcome, type ReflectorState, type Step } from "./next-step.ts";

// After a list at 100, events and a bookmark moved the position to 250.
const watching: ReflectorState = { listResourceVersion: "100", lastSyncResourceVersion: "250" };
const fresh: ReflectorState = { listResourceVersion: "", lastSyncResourceVersion: "" };

const list = (resourceVersion: string, backoff: boolean): Step => ({
  action: "list",
  resourceVersion,
  backoff,
});
const watch = (resourceVersion: string, backoff: boolean): Step => ({
  action: "watch",
  resourceVersion,
  backoff,
});

describe("lists", () => {
  it.each<[string, ReflectorState, Outcome, Step]>([
    ["the first list is at 0", fresh, { type: "start" }, list("0", false)],
    [
      "a list is followed by a watch from its resourceVersion",
      fresh,
      { type: "listed", resourceVersion: "100" },
      watch("100", false),
    ],
    [
      'a 410 on a list at the last seen resourceVersion lists at ""',
      watching,
      { type: "list-failed", resourceVersion: "250", code: 410 },
      list("", false),
    ],
    [
      "a 500 on a list backs off and lists at the same resourceVersion",
      watching,
      { type: "list-failed", resourceVersion: "250", code: 500 },
      list("250", true),
    ],
    [
      'a failed list at "" stays at ""',
      watching,
      { type: "list-failed", resourceVersion: "", code: 503 },
      list("", true),
    ],
  ])("%s", (_name, state, outcome, want) => {
    expect(nextStep(state, outcome)).toEqual(want);
  });
});

describe("a watch that ends", () => {
  it.each<[string, Outcome, Step]>([
    [
      "a timeout resumes from the last seen resourceVersion",
      { type: "watch-closed", durationMs: 300_000, events: 12 },
      watch("250", false),
    ],
    [
      "a quiet watch (bookmarks only count as events) resumes",
      { type: "watch-closed", durationMs: 420_000, events: 0 },
      watch("250", false),
    ],
    [
      "a short watch with events resumes",
      { type: "watch-closed", durationMs: 200, events: 3 },
      watch("250", false),
    ],
    [
      "a watch under a second with no event is an error: relist",
      { type: "watch-closed", durationMs: 999, events: 0 },
      list("250", true),
    ],
    [
      "exactly a second is not very short",
      { type: "watch-closed", durationMs: 1000, events: 0 },
      watch("250", false),
    ],
  ])("%s", (_name, outcome, want) => {
    expect(nextStep(watching, outcome)).toEqual(want);
  });
});

describe("a watch that fails", () => {
  it.each<[string, Outcome, Step]>([
    [
      "a refused watch with 410 relists at the last seen resourceVersion",
      { type: "watch-refused", code: 410 },
      list("250", true),
    ],
    [
      "an ERROR event with 410 relists at the last seen resourceVersion",
      { type: "watch-error-event", code: 410 },
      list("250", true),
    ],
    [
      "a 429 on the watch call backs off and watches again",
      { type: "watch-refused", code: 429 },
      watch("250", true),
    ],
    [
      "a 429 ERROR event backs off and watches again",
      { type: "watch-error-event", code: 429 },
      watch("250", true),
    ],
    [
      "no answer (connection refused) backs off and watches again",
      { type: "watch-refused", code: 0 },
      watch("250", true),
    ],
    [
      "a 500 on the watch call relists after a backoff",
      { type: "watch-refused", code: 500 },
      list("250", true),
    ],
    [
      "a 500 ERROR event relists after a backoff",
      { type: "watch-error-event", code: 500 },
      list("250", true),
    ],
  ])("%s", (_name, outcome, want) => {
    expect(nextStep(watching, outcome)).toEqual(want);
  });
});

// A small server (objects, an event history that gets compacted) and a reflector loop driven by
// nextStep. Watches drop, time out, get 429s, see bookmarks and compactions; the cache built
// through the decisions must end equal to the server, and lists must stay rare.
describe("a reflector loop driven by nextStep", () => {
  interface Ev {
    type: "ADDED" | "MODIFIED" | "DELETED";
    key: string;
    value: number;
    rv: number;
  }

  function simulate(seed: number) {
    const rand = mulberry32(seed);
    const pick = (n: number) => Math.floor(rand() * n);
    const server = new Map<string, number>();
    const history: Ev[] = [];
    let rv = 0;
    let compactedBelow = 0; // watches and lists at a resourceVersion below this answer 410
    const mutate = () => {
      const key = `k${pick(8)}`;
      rv++;
      if (server.has(key) && pick(3) === 0) {
        server.delete(key);
        history.push({ type: "DELETED", key, value: 0, rv });
      } else {
        const type = server.has(key) ? "MODIFIED" : "ADDED";
        server.set(key, rv);
        history.push({ type, key, value: rv, rv });
      }
    };

    const cache = new Map<string, number>();
    const state: ReflectorState = { listResourceVersion: "", lastSyncResourceVersion: "" };
    const counts = { lists: 0, compactions: 0, injectedFailures: 0, shortWatches: 0 };
    let outcome: Outcome = { type: "start" };
    let faults = true;
    const tooOld = (v: string) => v !== "" && v !== "0" && Number(v) < compactedBelow;

    const step = () => {
      const s = nextStep(state, outcome);
      if (s.action === "list") {
        counts.lists++;
        if (tooOld(s.resourceVersion))
          outcome = { type: "list-failed", resourceVersion: s.resourceVersion, code: 410 };
        else if (faults && pick(12) === 0) {
          counts.injectedFailures++;
          outcome = { type: "list-failed", resourceVersion: s.resourceVersion, code: 500 };
        } else {
          cache.clear();
          for (const [k, v] of server) cache.set(k, v);
          state.listResourceVersion = String(rv);
          state.lastSyncResourceVersion = String(rv);
          outcome = { type: "listed", resourceVersion: String(rv) };
        }
        return;
      }
      if (tooOld(s.resourceVersion)) {
        outcome =
          pick(2) === 0 ? { type: "watch-refused", code: 410 } : { type: "watch-error-event", code: 410 };
        return;
      }
      if (faults && pick(8) === 0) {
        outcome = { type: "watch-refused", code: pick(2) === 0 ? 429 : 0 };
        return;
      }
      if (faults && pick(10) === 0) {
        counts.shortWatches++; // a proxy cut the stream at once
        outcome = { type: "watch-closed", durationMs: 50, events: 0 };
        return;
      }
      const from = Number(s.resourceVersion);
      const pending = history.filter((e) => e.rv > from);
      const n = faults ? pick(pending.length + 1) : pending.length; // a drop cuts the stream anywhere
      let events = 0;
      for (const e of pending.slice(0, n)) {
        if (e.type === "DELETED") cache.delete(e.key);
        else cache.set(e.key, e.value);
        state.lastSyncResourceVersion = String(e.rv);
        events++;
      }
      if (n === pending.length && pick(2) === 0) {
        // A bookmark: nothing changed, but the position moves to the server's newest.
        state.lastSyncResourceVersion = String(rv);
        events++;
      }
      if (faults && pick(20) === 0) {
        outcome = { type: "watch-error-event", code: 429 };
        return;
      }
      outcome = { type: "watch-closed", durationMs: 60_000 + pick(300_000), events };
    };

    for (let i = 0; i < 400; i++) {
      for (let m = pick(3); m > 0; m--) mutate();
      if (pick(40) === 0) {
        // etcd compacts everything but the last few revisions
        compactedBelow = Math.max(compactedBelow, rv - pick(3));
        counts.compactions++;
      }
      step();
    }
    faults = false;
    for (let i = 0; i < 10; i++) step();
    return { server, cache, counts };
  }

  it("keeps the cache equal to the server, relisting only for compactions and failures", () => {
    for (let seed = 1; seed <= 20; seed++) {
      const { server, cache, counts } = simulate(seed);
      const msg = `seed ${seed}: ${JSON.stringify(counts)}`;
      expect([...cache].sort(), msg).toEqual([...server].sort());
      // The first list; per compaction at most a relist at the last seen resourceVersion and one
      // at ""; one per injected failure and per very short watch. Clean ends and 429s add none.
      const allowed = 1 + 2 * counts.compactions + counts.injectedFailures + counts.shortWatches;
      expect(counts.lists, msg).toBeLessThanOrEqual(allowed);
    }
  });
});

import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../../code/testing/random.ts";
import { WorkQueue } from "./queue.ts";

describe("add and get", () => {
  it("hands keys out first in, first out", () => {
    const q = new WorkQueue();
    q.add("default/a");
    q.add("default/b");
    expect(q.get()).toBe("default/a");
    expect(q.get()).toBe("default/b");
    expect(q.get()).toBeUndefined();
  });

  it("collapses duplicates: a key added twice before it is taken is handed out once", () => {
    const q = new WorkQueue();
    q.add("a");
    q.add("b");
    q.add("a");
    expect(q.len()).toBe(2);
    expect([q.get(), q.get(), q.get()]).toEqual(["a", "b", undefined]);
  });
});

describe("processing", () => {
  it("never hands out a key a worker holds", () => {
    const q = new WorkQueue();
    q.add("a");
    expect(q.get()).toBe("a");
    q.add("a");
    expect(q.len()).toBe(0);
    expect(q.get()).toBeUndefined();
  });

  it("keeps an add made during processing, and queues the key again on done", () => {
    const q = new WorkQueue();
    q.add("a");
    q.get();
    q.add("a");
    q.done("a");
    expect(q.get()).toBe("a");
  });

  it("collapses several adds during processing into one more round", () => {
    const q = new WorkQueue();
    q.add("a");
    q.get();
    q.add("a");
    q.add("a");
    q.done("a");
    expect(q.len()).toBe(1);
    expect(q.get()).toBe("a");
    q.done("a");
    expect(q.get()).toBeUndefined();
  });

  it("forgets a key on done when nobody added it meanwhile", () => {
    const q = new WorkQueue();
    q.add("a");
    q.get();
    q.done("a");
    expect(q.get()).toBeUndefined();
    q.add("a");
    expect(q.get()).toBe("a");
  });

  it("lets other keys through while one is being processed", () => {
    const q = new WorkQueue();
    q.add("a");
    q.get();
    q.add("a");
    q.add("b");
    expect(q.get()).toBe("b");
    q.done("a");
    expect(q.get()).toBe("a");
  });
});

describe("many workers, random schedules", () => {
  // Each seed is one schedule; a failure names its seed, and the same seed replays it.
  for (const seed of [1, 2, 3, 4, 5, 6, 7, 8, 9, 10]) {
    it(`never two workers on a key, no add lost, no round without an add (seed ${seed})`, () => {
      const rand = mulberry32(seed);
      const q = new WorkQueue();
      const keys = ["a", "b", "c", "d"];
      const held = new Set<string>();
      // Per key: added since it was last handed out?
      const pending = new Map<string, boolean>();
      for (let step = 0; step < 400; step++) {
        const r = rand();
        if (r < 0.45) {
          const key = keys[Math.floor(rand() * keys.length)];
          q.add(key);
          pending.set(key, true);
        } else if (r < 0.75) {
          const key = q.get();
          if (key === undefined) continue;
          expect(held.has(key), `${key} handed out while a worker holds it`).toBe(false);
          expect(pending.get(key), `${key} handed out though nobody added it since`).toBe(true);
          held.add(key);
          pending.set(key, false);
        } else if (held.size > 0) {
          const list = [...held];
          const key = list[Math.floor(rand() * list.length)];
          held.delete(key);
          q.done(key);
        }
      }
      // Finish everything still held, then take what is left: every pending add gets its round.
      for (const key of [...held]) q.done(key);
      held.clear();
      for (let key = q.get(); key !== undefined; key = q.get()) {
        expect(held.has(key)).toBe(false);
        pending.set(key, false);
        held.add(key);
      }
      for (const key of keys) expect(pending.get(key) ?? false, `an add of ${key} was lost`).toBe(false);
    });
  }
});

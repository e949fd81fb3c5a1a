import { describe, expect, it } from "vitest";
import { mulberry32 } from "../../../testing/random.ts";
import { Heap } from "./heap.ts";

interface Item {
  key: string;
  v: number;
}
const newHeap = () =>
  new Heap<Item>(
    (i) => i.key,
    (a, b) => a.v < b.v,
  );

describe("Heap", () => {
  it("pops in less order and keeps one item per key", () => {
    const h = newHeap();
    for (const [key, v] of [
      ["a", 5],
      ["b", 1],
      ["c", 3],
      ["a", 0],
    ] as const)
      h.addOrUpdate({ key, v });
    expect(h.len()).toBe(3);
    expect(h.peek()?.key).toBe("a");
    expect([h.pop(), h.pop(), h.pop(), h.pop()].map((i) => i?.key)).toEqual(["a", "b", "c", undefined]);
  });

  it("deletes and updates by key", () => {
    const h = newHeap();
    for (let i = 0; i < 10; i++) h.addOrUpdate({ key: `k${i}`, v: i });
    expect(h.delete({ key: "k0", v: 0 })).toBe(true);
    expect(h.delete({ key: "k0", v: 0 })).toBe(false);
    h.addOrUpdate({ key: "k9", v: -1 });
    expect(h.get({ key: "k9", v: 0 })?.v).toBe(-1);
    expect(h.has({ key: "k5", v: 0 })).toBe(true);
    const out: string[] = [];
    for (let x = h.pop(); x; x = h.pop()) out.push(x.key);
    expect(out).toEqual(["k9", "k1", "k2", "k3", "k4", "k5", "k6", "k7", "k8"]);
  });

  it("stays a heap through random adds, updates and deletes", () => {
    const seed = 1401;
    const rand = mulberry32(seed);
    const h = newHeap();
    const model = new Map<string, number>();
    for (let step = 0; step < 2000; step++) {
      const key = `k${Math.floor(rand() * 50)}`;
      if (rand() < 0.7) {
        const v = Math.floor(rand() * 1000);
        h.addOrUpdate({ key, v });
        model.set(key, v);
      } else {
        expect(h.delete({ key, v: 0 }), `seed ${seed}`).toBe(model.delete(key));
      }
    }
    const out: number[] = [];
    for (let x = h.pop(); x; x = h.pop()) out.push(x.v);
    expect(out, `seed ${seed}`).toEqual([...model.values()].sort((a, b) => a - b));
  });
});

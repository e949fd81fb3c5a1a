import { describe, expect, it } from "vitest";
import { type CPUProfile, categorizeProfile, summarizeProfile } from "./cpu-profile.ts";

const frame = (functionName: string, url = "") => ({ functionName, url });

describe("summarizeProfile", () => {
  it("shares of the busy time by self and inclusive time, idle left out, recursion counted once", () => {
    // root → main → (encode → encode), main → parse; and idle.
    const p: CPUProfile = {
      nodes: [
        { id: 1, callFrame: frame("(root)"), children: [2, 6] },
        { id: 2, callFrame: frame("main", "file:///x/a/main.ts"), children: [3, 5] },
        { id: 3, callFrame: frame("encode", "file:///x/b/enc.ts"), children: [4] },
        { id: 4, callFrame: frame("encode", "file:///x/b/enc.ts") },
        { id: 5, callFrame: frame("parse") },
        { id: 6, callFrame: frame("(idle)") },
      ],
      // 10 µs main, 20 + 30 encode, 40 parse, 100 idle: busy 100 µs.
      samples: [2, 3, 4, 5, 6],
      timeDeltas: [10, 20, 30, 40, 100],
    };
    const s = summarizeProfile(p, 3);
    expect(s.self).toEqual([
      { name: "encode b/enc.ts", share: 50 },
      { name: "parse", share: 40 },
      { name: "main a/main.ts", share: 10 },
    ]);
    // encode (20 + 30) once, not twice for its recursive call; main holds everything.
    expect(s.inclusive).toEqual([
      { name: "main a/main.ts", share: 100 },
      { name: "encode b/enc.ts", share: 50 },
      { name: "parse", share: 40 },
    ]);
    expect(s.busyMs).toBe(0);
  });
});

describe("categorizeProfile", () => {
  it("gives each sample to the first rule one of its frames matches, the leaf-only rules by the leaf", () => {
    // root → handler → writev (30 µs), root → handler → encode (20), root → store (40), root → gc (10).
    const p: CPUProfile = {
      nodes: [
        { id: 1, callFrame: frame("(root)"), children: [2, 5, 6] },
        { id: 2, callFrame: frame("handler", "file:///x/handlers/create.ts"), children: [3, 4] },
        { id: 3, callFrame: frame("writev") },
        { id: 4, callFrame: frame("encode", "file:///x/enc.ts") },
        { id: 5, callFrame: frame("put", "file:///x/store/kv.ts") },
        { id: 6, callFrame: frame("(garbage collector)") },
      ],
      samples: [3, 4, 5, 6],
      timeDeltas: [30, 20, 40, 10],
    };
    const shares = categorizeProfile(p, [
      { name: "socket writes", leaf: true, test: (f) => f === "writev" },
      // A leaf-only rule does not match a stack that only passes through the name.
      { name: "never", leaf: true, test: (f) => f === "handler" },
      { name: "store", test: (_f, url) => url.includes("/store/") },
      { name: "handlers", test: (_f, url) => url.includes("/handlers/") },
    ]);
    expect(shares).toEqual([
      { name: "store", share: 40 },
      { name: "socket writes", share: 30 },
      { name: "handlers", share: 20 },
      { name: "other", share: 10 },
    ]);
  });
});

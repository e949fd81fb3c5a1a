import { EventEmitter } from "node:events";
import { describe, expect, it } from "vitest";
import { goSignalString, setupSignalHandler } from "./signal.ts";

describe("setupSignalHandler", () => {
  it("settles on the first SIGINT or SIGTERM and exits 1 on the second", async () => {
    for (const [first, second] of [
      ["SIGINT", "SIGINT"],
      ["SIGTERM", "SIGINT"],
      ["SIGINT", "SIGTERM"],
    ] as const) {
      const source = new EventEmitter();
      const exits: number[] = [];
      const handler = setupSignalHandler({ source, exit: (code) => exits.push(code) });
      source.emit(first, first);
      expect(await handler.received).toBe(first);
      expect(exits).toEqual([]);
      source.emit(second, second);
      expect(exits).toEqual([1]);
      handler.stop();
    }
  });

  it("does not settle before a signal", async () => {
    const handler = setupSignalHandler({ source: new EventEmitter(), exit: () => {} });
    const settled = await Promise.race([handler.received.then(() => true), Promise.resolve(false)]);
    expect(settled).toBe(false);
    handler.stop();
  });

  it("leaves no listener behind once stopped", () => {
    const source = new EventEmitter();
    const handler = setupSignalHandler({ source, exit: () => {} });
    expect(source.listenerCount("SIGINT") + source.listenerCount("SIGTERM")).toBe(2);
    handler.stop();
    expect(source.listenerCount("SIGINT") + source.listenerCount("SIGTERM")).toBe(0);
  });

  it("listens on process by default, and lets go of it", () => {
    const before = process.listenerCount("SIGINT") + process.listenerCount("SIGTERM");
    const handler = setupSignalHandler({ exit: () => {} });
    expect(process.listenerCount("SIGINT") + process.listenerCount("SIGTERM")).toBe(before + 2);
    handler.stop();
    expect(process.listenerCount("SIGINT") + process.listenerCount("SIGTERM")).toBe(before);
  });
});

describe("goSignalString", () => {
  it("names signals as Go's os.Signal prints them", () => {
    expect(goSignalString("SIGTERM")).toBe("terminated");
    expect(goSignalString("SIGINT")).toBe("interrupt");
    expect(goSignalString("SIGUSR1")).toBe("SIGUSR1");
  });
});

// The watch response writer: lines pushed in one turn of the event loop leave in one write, in
// order, and a full socket is reported (backedUp) until it drains.
import { EventEmitter } from "node:events";
import type { ServerResponse } from "node:http";
import { describe, expect, it } from "vitest";
import { WatchResponseWriter } from "./watch.ts";

/** A response whose socket accepts everything, or (full) reports each write as over its limit. */
class FakeResponse extends EventEmitter {
  writes: string[] = [];
  destroyed = false;
  writableNeedDrain = false;
  full = false;
  write(chunk: Buffer | string): boolean {
    this.writes.push(chunk.toString());
    this.writableNeedDrain = this.full;
    return !this.full;
  }
}

const turn = () => new Promise((resolve) => setImmediate(resolve));

describe("WatchResponseWriter", () => {
  it("writes the lines of one turn together, once, in order", async () => {
    const res = new FakeResponse();
    const out = new WatchResponseWriter(res as unknown as ServerResponse);
    out.push(Buffer.from('{"type":"ADDED"}\n'));
    out.push('{"type":"MODIFIED"}\n');
    out.push(Buffer.from('{"type":"DELETED"}\n'));
    expect(res.writes).toEqual([]); // nothing until the turn ends
    await turn();
    expect(res.writes).toEqual(['{"type":"ADDED"}\n{"type":"MODIFIED"}\n{"type":"DELETED"}\n']);
    out.push('{"type":"BOOKMARK"}\n');
    await turn();
    expect(res.writes).toHaveLength(2);
  });

  it("reports a full socket until it drains", async () => {
    const res = new FakeResponse();
    const out = new WatchResponseWriter(res as unknown as ServerResponse);
    res.full = true;
    out.push("a\n");
    await turn();
    expect(out.backedUp).toBe(true);
    let drained = false;
    const waiting = out.drained().then(() => {
      drained = true;
    });
    await turn();
    expect(drained).toBe(false);
    res.full = false;
    res.writableNeedDrain = false;
    res.emit("drain");
    await waiting;
    expect(out.backedUp).toBe(false);

    // A socket that drained before anyone waited does not leave the watch waiting for ever.
    res.full = true;
    out.push("b\n");
    await turn();
    res.writableNeedDrain = false;
    res.emit("drain");
    await out.drained();
    expect(out.backedUp).toBe(false);
  });
});

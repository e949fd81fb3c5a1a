import { describe, expect, it } from "vitest";
import type { KubeObject, WatchEvent } from "../../../api/meta.ts";
import type { ListerWatcher, Watch } from "../../../client/tools/cache/listwatch.ts";
import { WatchTraffic } from "./watch-traffic.ts";

/** A ListerWatcher whose every watch yields `events`, then ends. */
function fakeSource(events: WatchEvent[]): ListerWatcher {
  return {
    list: async () => ({ metadata: { resourceVersion: "1" }, items: [] }),
    watch: async (): Promise<Watch> => ({
      stop() {},
      async *[Symbol.asyncIterator]() {
        yield* events;
      },
    }),
  };
}

const pod = (name: string): KubeObject => ({ metadata: { name, namespace: "default" } });

describe("WatchTraffic", () => {
  it("counts the events the watch yields, by type, and the lists and watches opened", async () => {
    let t = 10_000;
    const traffic = new WatchTraffic(() => t, 5);
    const lw = traffic.instrument(
      "pods",
      fakeSource([
        { type: "ADDED", object: pod("a") },
        { type: "MODIFIED", object: pod("a") },
        { type: "BOOKMARK", object: pod("") },
      ]),
    );
    await lw.list({});
    const seen: string[] = [];
    for await (const ev of await lw.watch({})) seen.push(ev.type);
    expect(seen).toEqual(["ADDED", "MODIFIED", "BOOKMARK"]);
    // The current second is not in the rate yet.
    expect(traffic.snapshot().pods).toEqual({
      perSecond: 0,
      total: 3,
      byType: { ADDED: 1, MODIFIED: 1, BOOKMARK: 1 },
      lists: 1,
      watches: 1,
    });
    t += 1000;
    expect(traffic.snapshot().pods?.perSecond).toBeCloseTo(3 / 5);
    // Out of the 5 s window: the rate falls back to 0, the totals stay.
    t += 6000;
    expect(traffic.snapshot().pods).toMatchObject({ perSecond: 0, total: 3 });
  });

  it("lists a resource before its first event, at zero", () => {
    const traffic = new WatchTraffic(() => 0);
    traffic.instrument("nodes", fakeSource([]));
    expect(traffic.snapshot()).toEqual({
      nodes: { perSecond: 0, total: 0, byType: {}, lists: 0, watches: 0 },
    });
  });
});

import { describe, expect, it } from "vitest";
import type { KubeObject } from "../../../api/meta.ts";
import type { Store } from "../../registry/store.ts";
import type { StorageWatchEvent, Watch } from "../../storage/interfaces.ts";
import { Graph } from "./graph.ts";
import { podHandlers, StoreInformer } from "./graph-populator.ts";

const pod = (name: string, nodeName: string, secret: string): KubeObject => ({
  apiVersion: "v1",
  kind: "Pod",
  metadata: { namespace: "default", name, uid: `uid-${name}` },
  spec: { nodeName, volumes: [{ name: "v", secret: { secretName: secret } }] },
});

/** A store whose lists answer from `items` and whose watches the test feeds and ends. */
function fakeStore(items: KubeObject[]) {
  const feeds: { push(e: StorageWatchEvent | null): void }[] = [];
  let lists = 0;
  const store = {
    list: async () => {
      lists++;
      return { items: [...items], resourceVersion: String(lists) };
    },
    watch: async (): Promise<Watch> => {
      const queue: (StorageWatchEvent | null)[] = [];
      let wake: (() => void) | undefined;
      let stopped = false;
      feeds.push({
        push(e) {
          queue.push(e);
          wake?.();
        },
      });
      return {
        stop() {
          stopped = true;
          wake?.();
        },
        async *[Symbol.asyncIterator]() {
          while (!stopped) {
            const e = queue.shift();
            if (e === null) return; // the watch ended (a compaction, a restart)
            if (e) yield e;
            else await new Promise<void>((r) => (wake = r));
          }
        },
      };
    },
  };
  return { store: store as unknown as Store, feeds, lists: () => lists };
}

async function until(check: () => boolean): Promise<void> {
  for (let i = 0; i < 200 && !check(); i++) await new Promise((r) => setTimeout(r, 5));
  expect(check()).toBe(true);
}

describe("the graph populator's informer", () => {
  it("lists, follows the watch, and after the watch ends lists again and drops what is gone", async () => {
    const g = new Graph();
    const items = [pod("a", "node-a", "sa"), pod("b", "node-b", "sb")];
    const { store, feeds, lists } = fakeStore(items);
    const informer = new StoreInformer(store, podHandlers(g));
    void informer.run();
    try {
      await informer.synced;
      expect(g.hasPathFrom("node-a", "secret", "default", "sa").found).toBe(true);
      await until(() => feeds.length === 1);

      // A watched delete reaches the graph.
      feeds[0].push({ type: "DELETED", object: items[1] });
      await until(() => !g.hasPathFrom("node-b", "secret", "default", "sb").found);

      // Missed while no watch ran: pod a deleted, pod c added. The relist catches both.
      items.length = 0;
      items.push(pod("c", "node-a", "sc"));
      feeds[0].push(null);
      await until(() => lists() === 2);
      await until(() => g.hasPathFrom("node-a", "secret", "default", "sc").found);
      expect(g.hasPathFrom("node-a", "secret", "default", "sa").found).toBe(false);
      expect(g.describe()).toEqual(["node:node-a", "pod:default/c", "secret:default/sc"]);
    } finally {
      informer.stop();
    }
  });
});

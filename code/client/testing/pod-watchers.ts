/**
 * Pod watchers for the bind benchmark (code/apiserver/testing/bind.bench.ts) — K informers of
 * this library watching every pod of one namespace, in a process of their own, counting what the
 * benchmark asks about: events handled, lists (a relist is every list after an informer's
 * first), watches opened, watches that ended with an ERROR event (a 410 Expired among them).
 *
 * Solves: the benchmark's question "does a keeping-up client's watch ever get closed?" needs
 * clients that do keep up: real informers (reflector, DeltaFIFO, indexer) on a thread that does
 * nothing else, so that what falls behind is the server, not them. The benchmark lives under
 * code/apiserver/ and may not import code/client/; it starts this file as a child process.
 *
 * Invariants: every counter only grows; a "stats" line on stdin is answered by one JSON line on
 * stdout; stdin closing stops the informers and the process.
 *
 * @upstream kubernetes/client-go tools/cache/reflector.go (ListAndWatch: the lists and watches counted here)
 * @upstream kubernetes/client-go tools/cache/shared_informer.go (sharedIndexInformer: the informers run)
 * @chapter 05-scheduler
 *
 * Usage: `pod-watchers.ts <url> <namespace> <informers>`; prints `{"ready":true}` once every
 * informer has synced.
 */
import type { KubeObject } from "../../api/meta.ts";
import { newForConfig } from "../kubernetes/clientset.ts";
import { type ListerWatcher, newFilteredListWatchFromClient, type Watch } from "../tools/cache/listwatch.ts";
import { newSharedIndexInformer } from "../tools/cache/shared-informer.ts";

export interface WatcherStats {
  /** Events handled by all informers' handlers (adds + updates + deletes). */
  events: number;
  /** Pods seen with spec.nodeName set, per informer (the binding's MODIFIED reached it). */
  bound: number[];
  lists: number;
  /** Lists after each informer's first. */
  relists: number;
  watches: number;
  /** Watches that ended with an ERROR event (the server closed them, or answered 410). */
  watchErrors: number;
  /** Of those, 410 Expired / Gone. */
  expired: number;
}

/** A ListerWatcher that counts its calls and the ERROR events its watches carry. */
function counting(lw: ListerWatcher, stats: WatcherStats, first: { listed: boolean }): ListerWatcher {
  return {
    list: async (opts) => {
      stats.lists++;
      if (first.listed) stats.relists++;
      first.listed = true;
      return lw.list(opts);
    },
    watch: async (opts) => {
      stats.watches++;
      const w = await lw.watch(opts);
      const counted: Watch = {
        stop: () => w.stop(),
        async *[Symbol.asyncIterator]() {
          for await (const ev of w) {
            if (ev.type === "ERROR") {
              stats.watchErrors++;
              const code = (ev.object as { code?: number }).code;
              if (code === 410) stats.expired++;
            }
            yield ev;
          }
        },
      };
      return counted;
    },
  };
}

async function main(): Promise<void> {
  const [url, namespace, n] = process.argv.slice(2);
  const informers = Number(n);
  const stats: WatcherStats = {
    events: 0,
    bound: new Array(informers).fill(0),
    lists: 0,
    relists: 0,
    watches: 0,
    watchErrors: 0,
    expired: 0,
  };
  const stop = new AbortController();
  const client = newForConfig({ host: url, qps: -1 });
  const running = [];
  for (let i = 0; i < informers; i++) {
    const lw = newFilteredListWatchFromClient(
      client.restClientFor({ group: "", version: "v1" }),
      "pods",
      namespace,
    );
    const informer = newSharedIndexInformer<KubeObject>(counting(lw, stats, { listed: false }), 0);
    const isBound = (o: unknown) => !!(o as { spec?: { nodeName?: string } }).spec?.nodeName;
    informer.addEventHandler({
      onAdd: (o) => {
        stats.events++;
        if (isBound(o)) stats.bound[i]++;
      },
      onUpdate: (old, cur) => {
        stats.events++;
        if (isBound(cur) && !isBound(old)) stats.bound[i]++;
      },
      onDelete: () => {
        stats.events++;
      },
    });
    running.push(informer);
    void informer.run(stop.signal);
  }
  while (!running.every((i) => i.hasSynced())) await new Promise((r) => setTimeout(r, 20));
  process.stdout.write(`${JSON.stringify({ ready: true })}\n`);
  let input = "";
  const end = () => {
    stop.abort();
    setTimeout(() => process.exit(0), 50);
  };
  process.stdin
    .setEncoding("utf8")
    .on("data", (chunk: string) => {
      input += chunk;
      for (let nl = input.indexOf("\n"); nl >= 0; nl = input.indexOf("\n")) {
        if (input.slice(0, nl) === "stats") process.stdout.write(`${JSON.stringify({ stats })}\n`);
        input = input.slice(nl + 1);
      }
    })
    .on("end", end)
    .on("close", end);
}

void main();

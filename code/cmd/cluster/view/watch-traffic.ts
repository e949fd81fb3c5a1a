/**
 * WatchTraffic — how many watch events the cluster view itself receives, per resource and per
 * second, counted where they arrive: on the watch streams of its own informers.
 * No upstream counterpart in a client: the API server counts what it sends
 * (apiserver_watch_events_total{group,version,kind}, "Number of events sent in watch clients",
 * in k8s.io/apiserver's endpoints metrics); this course's API server serves no /metrics, so the
 * view shows the receiving side only.
 *
 * Solves:
 * - a learner should see that a quiet cluster is not silent: node heartbeats (Lease renewals,
 *   every 10 s per node) and status updates keep every watcher busy, and one pod's start is a
 *   burst of MODIFIED pods and new events;
 * - counting informer handler calls would be wrong: a relist delivers updates that came from a
 *   LIST, not a watch, and a bookmark reaches no handler. So `instrument` wraps the
 *   ListerWatcher and counts each event the watch stream yields, by type, and each LIST.
 *
 * Invariants:
 * - `perSecond` is the count over the last `windowSeconds` whole seconds divided by that window:
 *   the current, partial second is left out so the rate does not dip at every second's start;
 * - totals only grow; buckets older than the window are dropped as time moves.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/metrics/metrics.go (WatchEvents: apiserver_watch_events_total, the server-side count)
 * @upstream kubernetes/client-go tools/cache/listwatch.go (ListerWatcher: what is wrapped)
 * @chapter 08-cluster
 */
import type { KubeObject, WatchEvent } from "../../../api/meta.ts";
import type { ListerWatcher, Watch } from "../../../client/tools/cache/listwatch.ts";

export interface ResourceTraffic {
  /** Watch events per second over the window. */
  perSecond: number;
  /** Every watch event received since the view started, and by type (ADDED, MODIFIED, …). */
  total: number;
  byType: Record<string, number>;
  /** LIST calls (the first list and every relist after a lost watch). */
  lists: number;
  /** Watch requests opened (the first, and each one after a stream ended). */
  watches: number;
}

export type TrafficSnapshot = Record<string, ResourceTraffic>;

export class WatchTraffic {
  private readonly resources = new Map<
    string,
    {
      total: number;
      byType: Record<string, number>;
      lists: number;
      watches: number;
      buckets: Map<number, number>;
    }
  >();

  constructor(
    private readonly now: () => number = Date.now,
    readonly windowSeconds = 5,
  ) {}

  private entry(resource: string) {
    let e = this.resources.get(resource);
    if (!e) {
      e = { total: 0, byType: {}, lists: 0, watches: 0, buckets: new Map() };
      this.resources.set(resource, e);
    }
    return e;
  }

  /** One watch event of `type` arrived for `resource`. */
  record(resource: string, type: string): void {
    const e = this.entry(resource);
    e.total++;
    e.byType[type] = (e.byType[type] ?? 0) + 1;
    const second = Math.floor(this.now() / 1000);
    e.buckets.set(second, (e.buckets.get(second) ?? 0) + 1);
  }

  // #region counting-watch
  /** `lw`, counting every LIST it makes and every event its watches yield, under `resource`. */
  instrument<T extends KubeObject>(resource: string, lw: ListerWatcher<T>): ListerWatcher<T> {
    this.entry(resource);
    return {
      list: (opts) => {
        this.entry(resource).lists++;
        return lw.list(opts);
      },
      watch: async (opts) => {
        const w = await lw.watch(opts);
        this.entry(resource).watches++;
        return this.counted(resource, w);
      },
    };
  }

  private counted<T extends KubeObject>(resource: string, w: Watch<T>): Watch<T> {
    const traffic = this;
    return {
      stop: () => w.stop(),
      async *[Symbol.asyncIterator](): AsyncIterator<WatchEvent<T>> {
        for await (const ev of w) {
          traffic.record(resource, ev.type);
          yield ev;
        }
      },
    };
  }
  // #endregion counting-watch

  snapshot(): TrafficSnapshot {
    const current = Math.floor(this.now() / 1000);
    const out: TrafficSnapshot = {};
    for (const [resource, e] of this.resources) {
      let inWindow = 0;
      for (const [second, n] of e.buckets) {
        if (second < current - this.windowSeconds) e.buckets.delete(second);
        else if (second < current) inWindow += n;
      }
      out[resource] = {
        perSecond: inWindow / this.windowSeconds,
        total: e.total,
        byType: { ...e.byType },
        lists: e.lists,
        watches: e.watches,
      };
    }
    return out;
  }
}

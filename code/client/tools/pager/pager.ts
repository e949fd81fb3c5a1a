/**
 * ListPager — a list made of pages: ask for `limit` items, follow `continue` until the server
 * has no more, and hand back one list; fall back to a single unpaged list if a continue token
 * expires midway.
 * Mirrors client-go tools/pager/pager.go (ListPager, New, List, defaultPageSize = 500,
 * FullListIfExpired).
 *
 * Solves:
 * - a list of 100,000 pods in one response is hundreds of megabytes for the server to build and
 *   the client to hold; pages of 500 bound both.
 * - a continue token names a snapshot (an etcd revision); if etcd compacts it away between pages
 *   the server answers 410 Expired, and the list cannot be finished consistently — it is done
 *   again, whole, at the original resourceVersion.
 *
 * Invariants:
 * - the merged list's resourceVersion is the first page's (every page is from that snapshot);
 * - `paginated` is true iff more than one page was fetched;
 * - after the first page, requests carry `continue` and no resourceVersion (the token has it).
 *
 * @upstream kubernetes/client-go tools/pager/pager.go (ListPager, New, list, defaultPageSize, FullListIfExpired)
 * @chapter 04-informers
 */

import type { KubeList, KubeObject } from "../../../api/meta.ts";
import { isResourceExpired } from "../../errors.ts";
import type { ListOptions } from "../cache/listwatch.ts";

export const defaultPageSize = 500;

export type ListPageFunc<T extends KubeObject> = (opts: ListOptions) => Promise<KubeList<T>>;

// #region pager
export class ListPager<T extends KubeObject = KubeObject> {
  /** Items per page; 0 lists in one request. */
  pageSize = defaultPageSize;
  fullListIfExpired = true;

  constructor(private readonly pageFn: ListPageFunc<T>) {}

  async list(options: ListOptions): Promise<{ list: KubeList<T>; paginated: boolean }> {
    const opts: ListOptions = { ...options };
    if (!opts.limit) opts.limit = this.pageSize || undefined;
    const requestedRV = opts.resourceVersion;
    const requestedMatch = opts.resourceVersionMatch;
    let merged: KubeList<T> | undefined;
    let paginated = false;
    for (;;) {
      let page: KubeList<T>;
      try {
        page = await this.pageFn(opts);
      } catch (err) {
        if (!isResourceExpired(err) || !this.fullListIfExpired || !opts.continue) throw err;
        // The snapshot behind the token is gone: list everything at once, as first asked.
        const full = await this.pageFn({
          ...opts,
          limit: undefined,
          continue: undefined,
          resourceVersion: requestedRV,
          resourceVersionMatch: requestedMatch,
        });
        return { list: full, paginated };
      }
      const cont = page.metadata.continue;
      if (!cont && !merged) return { list: page, paginated };
      if (!merged)
        merged = { ...page, metadata: { resourceVersion: page.metadata.resourceVersion }, items: [] };
      merged.items.push(...page.items);
      if (!cont) return { list: merged, paginated };
      opts.continue = cont;
      opts.resourceVersion = undefined;
      opts.resourceVersionMatch = undefined;
      paginated = true;
    }
  }
}
// #endregion pager

/**
 * Listers — typed reads of an informer's cache: all objects matching a label selector, the
 * objects of one namespace, one object by name — answered from the indexer, never the server.
 * Mirrors kubernetes/client-go tools/cache/listers.go (ListAll, ListAllByNamespace, GenericLister,
 * GenericNamespaceLister) and the generated listers (listers/core/v1/pod.go: PodLister,
 * PodNamespaceLister), which are this one class per type.
 *
 * Solves:
 * - a controller's reconcile reads many objects many times a second; reading the cache costs
 *   nothing and keeps the API server out of the hot loop;
 * - "the pods of namespace X" must not scan every pod: the lister uses the namespace index when
 *   the indexer has one, and falls back to a scan when it does not.
 *
 * Invariants:
 * - returned objects are the cache's own: read-only (copy before changing one);
 * - `get` on a namespace lister looks up the key `namespace/name`, the informer's key.
 *
 * @upstream kubernetes/client-go tools/cache/listers.go (ListAll, ListAllByNamespace, GenericLister, GenericNamespaceLister, NewGenericLister)
 * @upstream kubernetes/client-go listers/core/v1/pod.go (PodLister, PodNamespaceLister)
 * @chapter 04-informers
 */

import { everything, type Selector, selectorMatches } from "../../../api/labels.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { type Indexer, NamespaceIndex } from "./index.ts";

/** Every object in `indexer` whose labels match `selector` (ListAll). */
export function listAll<T extends KubeObject>(indexer: Indexer<T>, selector: Selector): T[] {
  return indexer.list().filter((o) => selectorMatches(selector, o.metadata.labels ?? {}));
}

/** The objects of `namespace` (all namespaces for "") whose labels match (ListAllByNamespace). */
export function listAllByNamespace<T extends KubeObject>(
  indexer: Indexer<T>,
  namespace: string,
  selector: Selector,
): T[] {
  if (namespace === "") return listAll(indexer, selector);
  const match = (o: T) => selectorMatches(selector, o.metadata.labels ?? {});
  if (NamespaceIndex in indexer.getIndexers())
    return indexer.byIndex(NamespaceIndex, namespace).filter(match);
  // No namespace index: a scan gives the same answer, slower.
  return indexer.list().filter((o) => (o.metadata.namespace ?? "") === namespace && match(o));
}

// #region lister
/** Reads of one resource across namespaces (GenericLister). */
export class Lister<T extends KubeObject = KubeObject> {
  constructor(private readonly indexer: Indexer<T>) {}

  list(selector: Selector = everything()): T[] {
    return listAll(this.indexer, selector);
  }

  /** A cluster-scoped object by name, or any object by its full key. */
  get(name: string): T | undefined {
    return this.indexer.getByKey(name);
  }

  byNamespace(namespace: string): NamespaceLister<T> {
    return new NamespaceLister(this.indexer, namespace);
  }
}

/** Reads within one namespace (GenericNamespaceLister). */
export class NamespaceLister<T extends KubeObject = KubeObject> {
  constructor(
    private readonly indexer: Indexer<T>,
    readonly namespace: string,
  ) {}

  list(selector: Selector = everything()): T[] {
    return listAllByNamespace(this.indexer, this.namespace, selector);
  }

  get(name: string): T | undefined {
    return this.indexer.getByKey(`${this.namespace}/${name}`);
  }
}
// #endregion lister

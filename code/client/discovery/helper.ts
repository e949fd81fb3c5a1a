/**
 * Discovery helpers — filters over what DiscoveryClient returned: only resources with given
 * verbs (the garbage collector needs `delete`, `list`, `watch`), and the lists flattened into
 * one entry per group, version and resource.
 * Mirrors kubernetes/client-go discovery/helper.go (FilteredBy, ResourcePredicateFunc,
 * SupportsAllVerbs, GroupVersionResources).
 *
 * Solves: every user of discovery asks the same two questions — "which of these can I delete /
 * watch?" and "give me the resources as GVRs to build clients and informers for" — so they are
 * answered once, here, and not by hand in each controller.
 *
 * Invariants: filters keep the lists' order; a list left empty by a filter is dropped, as upstream.
 *
 * @upstream kubernetes/client-go discovery/helper.go (FilteredBy, ResourcePredicateFunc, SupportsAllVerbs, GroupVersionResources)
 * @chapter 04-informers
 */
import type { GroupVersionResource } from "../../api/schema.ts";
import { type APIResource, type APIResourceList, parseGroupVersion } from "./discovery-client.ts";

/** ResourcePredicateFunc: decides on one resource of one group version. */
export type ResourcePredicate = (groupVersion: string, r: APIResource) => boolean;

// #region filtered-by
/** FilteredBy: the lists with only the resources the predicate keeps; empty lists dropped. */
export function filteredBy(pred: ResourcePredicate, lists: readonly APIResourceList[]): APIResourceList[] {
  const out: APIResourceList[] = [];
  for (const l of lists) {
    const resources = l.resources.filter((r) => pred(l.groupVersion, r));
    if (resources.length > 0) out.push({ groupVersion: l.groupVersion, resources });
  }
  return out;
}

/** SupportsAllVerbs: the resource has every one of `verbs`. */
export function supportsAllVerbs(verbs: readonly string[]): ResourcePredicate {
  return (_gv, r) => verbs.every((v) => r.verbs.includes(v));
}
// #endregion filtered-by

/** A resource as a GVR, with what discovery said of it (kind, scope, verbs). */
export interface DiscoveredResource extends GroupVersionResource {
  kind: string;
  namespaced: boolean;
  verbs: string[];
}

/** GroupVersionResources: one entry per group, version and resource (upstream: a set of GVRs). */
export function groupVersionResources(lists: readonly APIResourceList[]): DiscoveredResource[] {
  return lists.flatMap((l) => {
    const { group, version } = parseGroupVersion(l.groupVersion);
    return l.resources.map((r) => ({
      group,
      version,
      resource: r.name,
      kind: r.kind,
      namespaced: r.namespaced,
      verbs: r.verbs,
    }));
  });
}

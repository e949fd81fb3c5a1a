/**
 * Discovery for the namespace controller — which namespaced resources the server has, in their
 * preferred version, with their verbs: `/api`, `/api/v1`, `/apis`, `/apis/<group>/<version>`.
 * Mirrors kubernetes/client-go discovery/discovery_client.go (ServerPreferredNamespacedResources,
 * ErrGroupDiscoveryFailed) and discovery/helper.go (FilteredBy, SupportsAllVerbs,
 * GroupVersionResources).
 *
 * Solves: the namespace controller must delete *everything* in a namespace, including kinds
 * added after it was written (a CRD, a new API group); it cannot have a list, so it asks the
 * server. A group whose discovery fails must not stop the others: the answer is partial and
 * the error names the failing groups (the namespace then says so in a condition).
 *
 * Invariants:
 * - only namespaced top-level resources (no `pods/status`), one version per group and resource:
 *   the group's preferred version first, an older version only for resources it alone has;
 * - on a failed group version the others are still returned, beside an ErrGroupDiscoveryFailed.
 *
 * What upstream does differently: this belongs in the client library (client-go's discovery
 * package, with a disk cache kubectl uses); the course client has no discovery client yet, so
 * this one lives beside its only user and reaches the root paths through a RESTClient.
 *
 * @upstream kubernetes/client-go discovery/discovery_client.go (ServerPreferredNamespacedResources, ServerPreferredResources, ErrGroupDiscoveryFailed)
 * @upstream kubernetes/client-go discovery/helper.go (FilteredBy, SupportsAllVerbs, GroupVersionResources)
 * @chapter 04-informers
 */
import type { GroupVersionResource } from "../../api/schema.ts";
import type { Clientset } from "../../client/kubernetes/clientset.ts";

interface APIResource {
  name: string;
  namespaced: boolean;
  verbs: string[];
}
interface APIResourceList {
  groupVersion: string;
  resources: APIResource[];
}
interface APIGroupList {
  groups: {
    name: string;
    versions: { groupVersion: string; version: string }[];
    preferredVersion?: { version: string };
  }[];
}

/** A namespaced resource the server serves, with its verbs. */
export interface DiscoveredResource extends GroupVersionResource {
  verbs: string[];
}

// #region err-group-discovery-failed
/** Some group versions could not be read: `unable to retrieve the complete list of server APIs: apps/v1: …`. */
export class ErrGroupDiscoveryFailed extends Error {
  constructor(readonly groups: Map<string, unknown>) {
    const parts = [...groups].map(([gv, e]) => `${gv}: ${e instanceof Error ? e.message : String(e)}`).sort();
    super(`unable to retrieve the complete list of server APIs: ${parts.join(", ")}`);
    this.name = "ErrGroupDiscoveryFailed";
  }
}
// #endregion err-group-discovery-failed

/** GET of a discovery path: `/api` and `/apis` through the RESTClient of an empty group version. */
async function getPath<T>(client: Clientset, group: string, version: string): Promise<T> {
  // versionedAPIPath: {"" , v} → /api/v; {g, v} → /apis/g/v. `/apis` alone: a group of "/" leaves
  // only empty segments after "apis", which the request's URL drops.
  return client.restClientFor({ group, version }).get().do<T>();
}

// #region preferred-namespaced-resources
/**
 * ServerPreferredNamespacedResources: every namespaced resource in its preferred version. Throws
 * only when nothing at all could be read; a partial answer comes with `error` set.
 */
export async function serverPreferredNamespacedResources(
  client: Clientset,
): Promise<{ resources: DiscoveredResource[]; error?: ErrGroupDiscoveryFailed }> {
  const versions: { group: string; version: string }[] = [];
  const core = await getPath<{ versions: string[] }>(client, "", "");
  for (const v of core.versions ?? []) versions.push({ group: "", version: v });
  const groups = await getPath<APIGroupList>(client, "/", "");
  for (const g of groups.groups ?? []) {
    const preferred = g.preferredVersion?.version;
    const ordered = [...g.versions].sort(
      (a, b) => Number(b.version === preferred) - Number(a.version === preferred),
    );
    for (const v of ordered) versions.push({ group: g.name, version: v.version });
  }
  const failed = new Map<string, unknown>();
  const seen = new Set<string>();
  const out: DiscoveredResource[] = [];
  for (const gv of versions) {
    let list: APIResourceList;
    try {
      list = await getPath<APIResourceList>(client, gv.group, gv.version);
    } catch (e) {
      failed.set(gv.group ? `${gv.group}/${gv.version}` : gv.version, e);
      continue;
    }
    for (const r of list.resources ?? []) {
      if (!r.namespaced || r.name.includes("/")) continue;
      const key = `${gv.group}/${r.name}`;
      if (seen.has(key)) continue; // the preferred version's came first
      seen.add(key);
      out.push({ group: gv.group, version: gv.version, resource: r.name, verbs: r.verbs ?? [] });
    }
  }
  return { resources: out, error: failed.size > 0 ? new ErrGroupDiscoveryFailed(failed) : undefined };
}
// #endregion preferred-namespaced-resources

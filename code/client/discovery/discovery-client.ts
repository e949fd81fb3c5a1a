/**
 * DiscoveryClient — asks a server which API groups, versions and resources it serves, so a
 * component can work on kinds it was not compiled with (a CRD, a new group).
 * Mirrors kubernetes/client-go discovery/discovery_client.go (DiscoveryClient, ServerGroups,
 * ServerResourcesForGroupVersion, ServerGroupsAndResources, ServerPreferredResources,
 * ServerPreferredNamespacedResources, ErrGroupDiscoveryFailed) and discovery/aggregated_discovery.go
 * (SplitGroupsAndResources).
 *
 * Solves:
 * - the garbage collector and the namespace controller must reach *every* resource; they
 *   cannot keep a list, so they ask: `/api` and `/apis`, then one request per group version —
 *   or, from a server with aggregated discovery (1.30+ by default, ours too), everything in the
 *   two answers to `/api` and `/apis`, no request per group version;
 * - one broken group (an aggregated API server that is down) must not hide the others: the
 *   answer is partial, and the error (ErrGroupDiscoveryFailed) names the failing group versions.
 *
 * Invariants:
 * - the core group is named "" and comes first; each group's versions are in the server's
 *   order of preference, the first one preferred;
 * - a result comes with `error` set only when it is partial (some group versions failed or are
 *   stale); when nothing could be read the call throws.
 *
 * What upstream does differently: kubectl wraps this in a memory and disk cache
 * (discovery/cached), and the answer's Content-Type, not its `kind`, says which form came back.
 *
 * @upstream kubernetes/client-go discovery/discovery_client.go (DiscoveryClient, ServerGroups, ServerResourcesForGroupVersion, ServerGroupsAndResources, ServerPreferredResources, ServerPreferredNamespacedResources, ErrGroupDiscoveryFailed, IsGroupDiscoveryFailedError, acceptDiscoveryFormats)
 * @upstream kubernetes/client-go discovery/aggregated_discovery.go (SplitGroupsAndResources, StaleGroupVersionError)
 * @chapter 04-informers
 */
import type { Clientset } from "../kubernetes/clientset.ts";
import type { RESTClient } from "../rest/client.ts";

// #region types
/** One resource of a group version (metav1.APIResource); subresources are named `pods/status`. */
export interface APIResource {
  name: string;
  singularName?: string;
  namespaced: boolean;
  /** Set when it differs from the list's group version (a subresource's, from aggregated discovery). */
  group?: string;
  version?: string;
  kind: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
}

/** What `/api/v1` or `/apis/<group>/<version>` answers (metav1.APIResourceList). */
export interface APIResourceList {
  groupVersion: string;
  resources: APIResource[];
}

export interface GroupVersionForDiscovery {
  groupVersion: string;
  version: string;
}

/** One group with its versions (metav1.APIGroup); the core group is named "". */
export interface APIGroup {
  name: string;
  versions: GroupVersionForDiscovery[];
  preferredVersion?: GroupVersionForDiscovery;
}

/** A partial answer: the result, and which group versions it lacks. */
export interface Discovered<T> {
  result: T;
  error?: ErrGroupDiscoveryFailed;
}
// #endregion types

// #region err-group-discovery-failed
/** Some group versions could not be read: `unable to retrieve the complete list of server APIs: apps/v1: …`. */
export class ErrGroupDiscoveryFailed extends Error {
  /** By group version (`apps/v1`, `v1`). */
  constructor(readonly groups: Map<string, unknown>) {
    const parts = [...groups].map(([gv, e]) => `${gv}: ${e instanceof Error ? e.message : String(e)}`).sort();
    super(`unable to retrieve the complete list of server APIs: ${parts.join(", ")}`);
    this.name = "ErrGroupDiscoveryFailed";
  }
}

/** IsGroupDiscoveryFailedError. */
export function isGroupDiscoveryFailedError(err: unknown): err is ErrGroupDiscoveryFailed {
  return err instanceof ErrGroupDiscoveryFailed;
}

/** An aggregated answer marked a group version `Stale`: its server has not answered lately. */
export class StaleGroupVersionError extends Error {
  constructor(readonly groupVersion: string) {
    super(`stale GroupVersion discovery: ${groupVersion}`);
    this.name = "StaleGroupVersionError";
  }
}
// #endregion err-group-discovery-failed

/** `apps/v1`, or `v1` for the core group. */
export const groupVersionString = (group: string, version: string) =>
  group ? `${group}/${version}` : version;

/** `apps/v1` → {group: "apps", version: "v1"}; `v1` → core. */
export function parseGroupVersion(gv: string): { group: string; version: string } {
  const i = gv.indexOf("/");
  return i < 0 ? { group: "", version: gv } : { group: gv.slice(0, i), version: gv.slice(i + 1) };
}

// The Accept kubectl 1.32 sends to /api and /apis: aggregated v2, then v2beta1, then the old form.
const acceptDiscoveryFormats =
  "application/json;g=apidiscovery.k8s.io;v=v2;as=APIGroupDiscoveryList," +
  "application/json;g=apidiscovery.k8s.io;v=v2beta1;as=APIGroupDiscoveryList," +
  "application/json";

interface AggregatedResource {
  resource: string;
  responseKind?: { group: string; version: string; kind: string };
  scope: "Namespaced" | "Cluster";
  singularResource?: string;
  verbs: string[];
  shortNames?: string[];
  categories?: string[];
  subresources?: {
    subresource: string;
    responseKind?: { group: string; version: string; kind: string };
    verbs: string[];
  }[];
}
interface AggregatedGroupList {
  kind: "APIGroupDiscoveryList";
  items: {
    metadata: { name?: string };
    versions: { version: string; resources?: AggregatedResource[]; freshness?: string }[];
  }[];
}

// #region split-groups-and-resources
/**
 * SplitGroupsAndResources: the aggregated document as the old forms — the groups, and one
 * APIResourceList per group version. A version marked `Stale` is listed as failed.
 */
function splitGroupsAndResources(doc: AggregatedGroupList): {
  groups: APIGroup[];
  resources: Map<string, APIResourceList>;
  failed: Map<string, unknown>;
} {
  const groups: APIGroup[] = [];
  const resources = new Map<string, APIResourceList>();
  const failed = new Map<string, unknown>();
  for (const item of doc.items ?? []) {
    const name = item.metadata?.name ?? "";
    const versions = item.versions.map((v) => ({
      groupVersion: groupVersionString(name, v.version),
      version: v.version,
    }));
    groups.push({ name, versions, preferredVersion: versions[0] });
    for (const v of item.versions) {
      const gv = groupVersionString(name, v.version);
      if (v.freshness === "Stale") {
        failed.set(gv, new StaleGroupVersionError(gv));
        continue;
      }
      const list: APIResource[] = [];
      for (const r of v.resources ?? []) {
        if (!r.responseKind) continue; // upstream drops a resource without a kind
        const namespaced = r.scope === "Namespaced";
        list.push({
          name: r.resource,
          singularName: r.singularResource,
          namespaced,
          kind: r.responseKind.kind,
          verbs: r.verbs ?? [],
          ...(r.shortNames ? { shortNames: r.shortNames } : {}),
          ...(r.categories ? { categories: r.categories } : {}),
        });
        for (const s of r.subresources ?? []) {
          list.push({
            name: `${r.resource}/${s.subresource}`,
            namespaced,
            group: s.responseKind?.group,
            version: s.responseKind?.version,
            kind: s.responseKind?.kind ?? "",
            verbs: s.verbs ?? [],
          });
        }
      }
      resources.set(gv, { groupVersion: gv, resources: list });
    }
  }
  return { groups, resources, failed };
}
// #endregion split-groups-and-resources

// #region discovery-client
export class DiscoveryClient {
  /** The RESTClient is used for its server, credentials and limiter only: every path is absolute. */
  constructor(private readonly rest: RESTClient) {}

  /**
   * GET /api and /apis, asking for the aggregated form first. Returns the groups and, when the
   * server aggregated, every group version's resources too (legacy: `resources` is undefined).
   */
  private async downloadAPIs(): Promise<{
    groups: APIGroup[];
    resources?: Map<string, APIResourceList>;
    failed: Map<string, unknown>;
  }> {
    const get = (path: string) =>
      this.rest.get().absPath(path).setHeader("Accept", acceptDiscoveryFormats).do<Record<string, unknown>>();
    const [core, named] = await Promise.all([get("/api"), get("/apis")]);
    if (core?.kind === "APIGroupDiscoveryList" && named?.kind === "APIGroupDiscoveryList") {
      const a = splitGroupsAndResources(core as unknown as AggregatedGroupList);
      const b = splitGroupsAndResources(named as unknown as AggregatedGroupList);
      return {
        groups: [...a.groups, ...b.groups],
        resources: new Map([...a.resources, ...b.resources]),
        failed: new Map([...a.failed, ...b.failed]),
      };
    }
    // The old forms: APIVersions for the core group, APIGroupList for the others.
    const groups: APIGroup[] = [];
    const coreVersions = (core as { versions?: string[] })?.versions ?? [];
    if (coreVersions.length > 0) {
      const versions = coreVersions.map((v) => ({ groupVersion: v, version: v }));
      groups.push({ name: "", versions, preferredVersion: versions[0] });
    }
    groups.push(...((named as { groups?: APIGroup[] })?.groups ?? []));
    return { groups, failed: new Map() };
  }

  /** ServerGroups: every group with its versions, the core group first. */
  async serverGroups(): Promise<APIGroup[]> {
    return (await this.downloadAPIs()).groups;
  }

  /** ServerResourcesForGroupVersion: GET /api/v1 or /apis/<group>/<version>. */
  async serverResourcesForGroupVersion(groupVersion: string): Promise<APIResourceList> {
    const { group, version } = parseGroupVersion(groupVersion);
    const path = group ? `/apis/${group}/${version}` : `/api/${version}`;
    const list = await this.rest.get().absPath(path).do<APIResourceList>();
    return { groupVersion, resources: list?.resources ?? [] };
  }

  // #region server-groups-and-resources
  /**
   * ServerGroupsAndResources: the groups, and the resources of every group version. From an
   * aggregated server that is the two root requests; otherwise one more request per group
   * version, all at once, the failures collected rather than thrown.
   */
  async serverGroupsAndResources(): Promise<Discovered<{ groups: APIGroup[]; lists: APIResourceList[] }>> {
    const { groups, resources, failed } = await this.downloadAPIs();
    const byGV = resources ?? new Map<string, APIResourceList>();
    if (!resources) {
      const gvs = groups.flatMap((g) => g.versions.map((v) => v.groupVersion));
      await Promise.all(
        gvs.map(async (gv) => {
          try {
            byGV.set(gv, await this.serverResourcesForGroupVersion(gv));
          } catch (e) {
            failed.set(gv, e);
          }
        }),
      );
    }
    // In the groups' order, not in the order the answers came back.
    const lists = groups.flatMap((g) => g.versions.flatMap((v) => byGV.get(v.groupVersion) ?? []));
    return {
      result: { groups, lists },
      error: failed.size > 0 ? new ErrGroupDiscoveryFailed(failed) : undefined,
    };
  }
  // #endregion server-groups-and-resources

  // #region server-preferred-resources
  /**
   * ServerPreferredResources: each top-level resource once, in its group's preferred version —
   * or, for a resource the preferred version lacks, in the first version that has it.
   */
  async serverPreferredResources(): Promise<Discovered<APIResourceList[]>> {
    const { result, error } = await this.serverGroupsAndResources();
    const byGV = new Map(result.lists.map((l) => [l.groupVersion, l]));
    const chosen = new Map<string, { version: string; resource: APIResource }>(); // by group/resource
    const order: string[] = []; // group versions, as first met
    for (const g of result.groups) {
      for (const v of g.versions) {
        const list = byGV.get(v.groupVersion);
        if (!list) continue;
        if (!order.includes(v.groupVersion)) order.push(v.groupVersion);
        for (const r of list.resources) {
          if (r.name.includes("/")) continue;
          const key = `${g.name}/${r.name}`;
          // Only the preferred version may take a resource another version already has.
          if (chosen.has(key) && v.version !== g.preferredVersion?.version) continue;
          chosen.set(key, { version: v.groupVersion, resource: r });
        }
      }
    }
    const out = new Map<string, APIResource[]>(order.map((gv) => [gv, []]));
    for (const { version, resource } of chosen.values()) out.get(version)?.push(resource);
    return {
      result: order.map((gv) => ({ groupVersion: gv, resources: out.get(gv) ?? [] })),
      error,
    };
  }
  // #endregion server-preferred-resources

  /** ServerPreferredNamespacedResources: the same, namespaced resources only. */
  async serverPreferredNamespacedResources(): Promise<Discovered<APIResourceList[]>> {
    const { result, error } = await this.serverPreferredResources();
    return {
      result: result.map((l) => ({ ...l, resources: l.resources.filter((r) => r.namespaced) })),
      error,
    };
  }
}
// #endregion discovery-client

/** NewDiscoveryClientForConfig, from a clientset's connection (its server, credentials, limiter). */
export function newDiscoveryClientForClientset(client: Clientset): DiscoveryClient {
  return new DiscoveryClient(client.restClientFor({ group: "", version: "v1" }));
}

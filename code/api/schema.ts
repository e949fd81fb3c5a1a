/**
 * Group, version, resource — how a client names what it talks to: `apps/v1 replicasets`, or
 * `v1 pods` for the core group (group ""). Upstream: apimachinery's pkg/runtime/schema/group_version.go.
 *
 * Solves: the clientset (which REST path to call) and the informer factory (which informer to
 * share) both key on a resource; one type here means a value from `Resources` fits either.
 *
 * Invariants: the core group is the empty string, never "core" (that word only appears in
 * printed names, as `kubectl api-resources` shows none for it either).
 *
 * @upstream kubernetes/apimachinery pkg/runtime/schema/group_version.go (GroupVersion, GroupVersionKind, GroupVersionResource)
 * @chapter 04-informers
 */

/** A group and version; the core group is `""` (served at `/api`). */
export interface GroupVersion {
  group: string;
  version: string;
}

/** A kind by group and version (schema.GroupVersionKind): what an ownerReference names. */
export interface GroupVersionKind extends GroupVersion {
  kind: string;
}

/** A resource by group, version and plural name (schema.GroupVersionResource). */
export interface GroupVersionResource extends GroupVersion {
  resource: string;
}

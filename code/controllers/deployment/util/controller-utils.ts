/**
 * ReplicaSet helpers the Deployment controller shares with others — the pod-template hash that
 * names a Deployment's ReplicaSets, the orders it sorts them in, and "active" (replicas > 0).
 * Mirrors kubernetes/kubernetes pkg/controller/controller_utils.go (ComputeHash,
 * FilterActiveReplicaSets, ReplicaSetsByCreationTimestamp, ReplicaSetsBySizeOlder,
 * ReplicaSetsBySizeNewer) and apimachinery pkg/util/rand (SafeEncodeString).
 *
 * Solves:
 * - a Deployment's ReplicaSet must be found again from its template alone, and created under a
 *   name that is the same on every try (`web-7c79c4bf97`), so a retried create after a timeout
 *   hits AlreadyExists instead of making a second ReplicaSet: the name is a hash of the template;
 * - two different templates may hash alike: `collisionCount` is mixed in, and the controller
 *   bumps it when a name is taken by a ReplicaSet that is not its own;
 * - proportional scaling must be deterministic: ties are broken by age, then by name.
 *
 * Invariants:
 * - computeHash is a pure function of the template's JSON (keys sorted) and collisionCount;
 * - the hash uses only `bcdfghjklmnpqrstvwxz2456789` (no vowels: no words, no bad words);
 * - the sort functions return new arrays, the input is not reordered;
 * - semanticEqual treats absent, null, {} and [] alike, as the API's semantic equality does for
 *   nil and empty maps and slices.
 *
 * @upstream kubernetes/kubernetes pkg/controller/controller_utils.go (ComputeHash, FilterActiveReplicaSets, FilterReplicaSets, ReplicaSetsByCreationTimestamp, ReplicaSetsBySizeOlder, ReplicaSetsBySizeNewer)
 * @upstream kubernetes/apimachinery pkg/util/rand/rand.go (SafeEncodeString)
 * @upstream kubernetes/apimachinery pkg/api/equality/semantic.go (Semantic.DeepEqual)
 * @chapter 04-informers
 */

import type { ReplicaSet } from "../../../api/apps.ts";
import type { PodTemplateSpec } from "../../../api/core.ts";

// #region compute-hash
const alphanums = "bcdfghjklmnpqrstvwxz2456789";

/** Maps every character to one of `alphanums` (rand.SafeEncodeString). */
export function safeEncodeString(s: string): string {
  let out = "";
  for (let i = 0; i < s.length; i++) out += alphanums[s.charCodeAt(i) % alphanums.length];
  return out;
}

/** JSON with object keys sorted, so that equal templates give equal bytes whatever their key order. */
export function canonicalJSON(v: unknown): string {
  if (Array.isArray(v)) return `[${v.map(canonicalJSON).join(",")}]`;
  if (v && typeof v === "object") {
    const entries = Object.entries(v as Record<string, unknown>)
      .filter(([, x]) => x !== undefined)
      .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0));
    return `{${entries.map(([k, x]) => `${JSON.stringify(k)}:${canonicalJSON(x)}`).join(",")}}`;
  }
  return JSON.stringify(v) ?? "null";
}

function fnv32a(bytes: Uint8Array, h = 0x811c9dc5): number {
  for (const b of bytes) {
    h ^= b;
    h = Math.imul(h, 0x01000193) >>> 0;
  }
  return h >>> 0;
}

/** The `pod-template-hash` of a template: FNV-32a of it (and of collisionCount, if set), safe-encoded (ComputeHash). */
export function computeHash(template: PodTemplateSpec, collisionCount?: number): string {
  let h = fnv32a(new TextEncoder().encode(canonicalJSON(template)));
  if (collisionCount !== undefined && collisionCount !== null) {
    // Eight bytes, the count little-endian in the first four — as upstream writes it.
    const b = new Uint8Array(8);
    new DataView(b.buffer).setUint32(0, collisionCount >>> 0, true);
    h = fnv32a(b, h);
  }
  return safeEncodeString(String(h));
}
// #endregion compute-hash

/** Equal as the API compares (semantic.DeepEqual): absent, null, {} and [] are alike. */
export function semanticEqual(a: unknown, b: unknown): boolean {
  const empty = (v: unknown) =>
    v === undefined ||
    v === null ||
    (Array.isArray(v) && v.length === 0) ||
    (typeof v === "object" && v !== null && !Array.isArray(v) && Object.keys(v).length === 0);
  if (empty(a) && empty(b)) return true;
  if (Array.isArray(a) && Array.isArray(b))
    return a.length === b.length && a.every((x, i) => semanticEqual(x, b[i]));
  if (a && b && typeof a === "object" && typeof b === "object" && !Array.isArray(a) && !Array.isArray(b)) {
    const ao = a as Record<string, unknown>;
    const bo = b as Record<string, unknown>;
    const keys = new Set([...Object.keys(ao), ...Object.keys(bo)]);
    for (const k of keys) if (!semanticEqual(ao[k], bo[k])) return false;
    return true;
  }
  return a === b;
}

// #region sorting
const replicasOf = (rs: ReplicaSet) => rs.spec.replicas ?? 1;
const createdAt = (rs: ReplicaSet) => Date.parse(rs.metadata.creationTimestamp ?? "") || 0;

/** Older first; same second: by name (ReplicaSetsByCreationTimestamp). */
export function compareByCreationTimestamp(a: ReplicaSet, b: ReplicaSet): number {
  const d = createdAt(a) - createdAt(b);
  if (d !== 0) return d;
  const an = a.metadata.name ?? "";
  const bn = b.metadata.name ?? "";
  return an < bn ? -1 : an > bn ? 1 : 0;
}

export function sortByCreationTimestamp(rss: readonly ReplicaSet[]): ReplicaSet[] {
  return [...rss].sort(compareByCreationTimestamp);
}

/** Larger first; same size: older first — the order of a proportional scale-down (ReplicaSetsBySizeOlder). */
export function sortBySizeOlder(rss: readonly ReplicaSet[]): ReplicaSet[] {
  return [...rss].sort((a, b) => replicasOf(b) - replicasOf(a) || compareByCreationTimestamp(a, b));
}

/** Larger first; same size: newer first — the order of a proportional scale-up (ReplicaSetsBySizeNewer). */
export function sortBySizeNewer(rss: readonly ReplicaSet[]): ReplicaSet[] {
  return [...rss].sort((a, b) => replicasOf(b) - replicasOf(a) || compareByCreationTimestamp(b, a));
}
// #endregion sorting

/** The ReplicaSets asked to run at least one pod (FilterActiveReplicaSets). */
export function filterActiveReplicaSets(rss: readonly (ReplicaSet | undefined)[]): ReplicaSet[] {
  return rss.filter((rs): rs is ReplicaSet => rs !== undefined && replicasOf(rs) > 0);
}

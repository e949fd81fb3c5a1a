/**
 * Membership — who answers: the member ID and cluster ID every etcd response header carries.
 *
 * Solves:
 * - clients check that all their endpoints belong to one cluster, and print the member ID
 *   (`etcdctl endpoint status`, `member list`); the IDs must be stable across restarts and
 *   non-zero, and a learner comparing us with real etcd should see the same numbers;
 * - etcd does not pick them at random: a member's ID is a hash of its peer URLs and the cluster
 *   token, and the cluster's ID a hash of its members' IDs. A fresh single-member etcd named with
 *   the defaults (peer URL http://localhost:2380, token "etcd-cluster") therefore always reports
 *   member 8e9e05c52164694d in cluster cdf818194e3a8c32 — and so do we.
 *
 * Invariants:
 * - IDs are unsigned 64-bit numbers, kept as `bigint`: most are above 2^53, where a JavaScript
 *   number would silently round them;
 * - the same inputs always give the same IDs (no clock, no randomness).
 *
 * We have no peers and no raft, so the peer URL only feeds the hash; `raftTerm` is what a
 * single-member etcd reports after its first election.
 *
 * @upstream etcd-io/etcd server/etcdserver/api/membership/member.go (NewMember)
 * @upstream etcd-io/etcd server/etcdserver/api/membership/cluster.go (RaftCluster.genID)
 * @upstream etcd-io/etcd client/pkg/types/id.go (ID.String)
 * @chapter 01-etcd-watch
 */
import { createHash } from "node:crypto";

/** etcd's defaults for `--initial-advertise-peer-urls` and `--initial-cluster-token`. */
export const defaultPeerURL = "http://localhost:2380";
export const defaultClusterToken = "etcd-cluster";

/** The raft term a single-member etcd is in once it has elected itself (term 1 → 2). */
export const singleMemberRaftTerm = 2n;

export interface Member {
  id: bigint;
  name: string;
  peerURLs: string[];
  clientURLs: string[];
}

export interface Cluster {
  id: bigint;
  members: Member[];
}

// #region member-id
/** The first 8 bytes of a SHA-1, big-endian: how etcd turns a hash into an ID. */
function hashToID(bytes: Uint8Array): bigint {
  const digest = createHash("sha1").update(bytes).digest();
  return digest.readBigUInt64BE(0);
}

/** A member's ID: hash of its sorted peer URLs (joined with nothing) followed by the cluster token. */
export function computeMemberID(peerURLs: string[], clusterToken: string): bigint {
  const joined = [...peerURLs].sort().join("") + clusterToken;
  return hashToID(new TextEncoder().encode(joined));
}

/** A cluster's ID: hash of its members' IDs, sorted, each as 8 big-endian bytes. */
export function computeClusterID(memberIDs: bigint[]): bigint {
  const sorted = [...memberIDs].sort((a, b) => (a < b ? -1 : a > b ? 1 : 0));
  const bytes = Buffer.alloc(8 * sorted.length);
  for (const [i, id] of sorted.entries()) bytes.writeBigUInt64BE(id, 8 * i);
  return hashToID(bytes);
}
// #endregion member-id

/** The cluster of one member, as `etcd --name <name>` with default peer settings forms it. */
export function singleMemberCluster(name: string, clientURLs: string[], peerURL = defaultPeerURL): Cluster {
  const id = computeMemberID([peerURL], defaultClusterToken);
  return { id: computeClusterID([id]), members: [{ id, name, peerURLs: [peerURL], clientURLs }] };
}

/** How etcd prints an ID: lower-case hex, no padding (`8e9e05c52164694d`). */
export function formatID(id: bigint): string {
  return id.toString(16);
}

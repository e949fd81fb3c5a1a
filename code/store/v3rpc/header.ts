/**
 * Response header — who answered, and at which revision.
 *
 * Solves: clients check that every endpoint they talk to belongs to one cluster, and read the
 * store's revision from every answer; so every response carries the cluster id, the member id,
 * the raft term and the current revision. The KV, Lease and Watch answers get theirs from the
 * in-process server (etcdserver/server.ts, `fill`); the Maintenance and Cluster answers, which do
 * not go through it, from here.
 *
 * Invariants:
 * - the header of a Maintenance or Cluster answer is the one a KV answer given at the same moment
 *   would carry.
 *
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/header.go (header, newHeader, fill)
 * @chapter 01-etcd-watch
 */
import type { EtcdServer } from "../etcdserver/server.ts";
import type { ResponseHeader } from "../etcdserverpb/rpc.ts";
import { type Cluster, singleMemberRaftTerm } from "../membership/cluster.ts";

/** The header of our single member of `cluster`, at the store's current revision. */
export function clusterHeader(etcd: EtcdServer, cluster: Cluster): ResponseHeader {
  return {
    clusterId: cluster.id,
    memberId: cluster.members[0].id,
    revision: etcd.kv.rev(),
    raftTerm: singleMemberRaftTerm,
  };
}

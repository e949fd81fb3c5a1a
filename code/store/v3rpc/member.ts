/**
 * Cluster over gRPC — "who are you?": the member list.
 *
 * Solves: `etcdctl member list`, and every `--cluster` flag of etcdctl (`endpoint status
 * --cluster` dials each member's advertised client URLs), ask a member for the cluster's members.
 * We have one member, so the list is us, with the IDs etcd would give us (membership/cluster.ts).
 *
 * Invariants:
 * - every answer carries the same header as the KV answers (header.ts);
 * - the client URLs listed are the advertised ones, with the port actually bound when the member
 *   was told port 0 (embed/etcd.ts), so a client can dial them.
 *
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/member.go (ClusterServer.MemberList)
 * @chapter 01-etcd-watch
 */
import type * as grpc from "@grpc/grpc-js";
import type { EtcdServer } from "../etcdserver/server.ts";
import type { Cluster } from "../membership/cluster.ts";
import type { Logger } from "../pkg/log.ts";
import { clusterHeader } from "./header.ts";
import { unary } from "./util.ts";

export function clusterServer(
  etcd: EtcdServer,
  cluster: Cluster,
  log: Logger,
): grpc.UntypedServiceImplementation {
  return {
    MemberList: unary(
      "MemberList",
      () => ({
        header: clusterHeader(etcd, cluster),
        members: cluster.members.map((m) => ({
          ID: m.id,
          name: m.name,
          peerURLs: m.peerURLs,
          clientURLs: m.clientURLs,
          isLearner: false,
        })),
      }),
      log,
    ),
  };
}

/**
 * Maintenance and Cluster over gRPC — "who are you, and how are you?"
 *
 * Solves:
 * - operators and tools ask a member for its status before anything else: `etcdctl endpoint
 *   status` (Maintenance.Status: version, size, leader, raft term and index), `etcdctl endpoint
 *   health` (a read, then Maintenance.Alarm to check that no alarm is raised), `etcdctl member
 *   list` and `--cluster` flags (Cluster.MemberList);
 * - we have one member and no raft, so the answers are those of a healthy single-member etcd:
 *   we are the leader, no alarm is raised, the member list is us.
 *
 * Invariants:
 * - every answer carries the same header as the KV answers: cluster id, member id, raft term,
 *   and the store's current revision.
 *
 * What etcd does differently: `dbSize` is the size of its bbolt file and `raftIndex` the index of
 * its last raft entry. We have neither: `dbSize` is the bytes our backend holds (each record's
 * revision key, key and value), and `raftIndex` is the store revision, which also grows by one
 * with each write. Alarms (NOSPACE, CORRUPT) are never raised here.
 *
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/maintenance.go (maintenanceServer.Status, Alarm)
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/member.go (ClusterServer.MemberList)
 * @upstream etcd-io/etcd api/version/version.go (Version)
 * @chapter 01-etcd-watch
 */
import type * as grpc from "@grpc/grpc-js";
import type { EtcdServer } from "../etcdserver/server.ts";
import type { ResponseHeader } from "../etcdserverpb/rpc.ts";
import { type Cluster, singleMemberRaftTerm } from "../membership/cluster.ts";
import { revBytesLen } from "../mvcc/revision.ts";
import type { Logger } from "../pkg/log.ts";
import { EtcdError } from "../rpctypes/error.ts";
import { unary } from "./util.ts";

/** The etcd version we answer as (the course follows etcd v3.5). */
export const etcdVersion = "3.5.17";

export const ErrAlarmNotModelled = new EtcdError(
  "InvalidArgument",
  "alarms are not modelled by this server: only listing (GET) and disarming (DEACTIVATE) are served",
);

interface AlarmRequest {
  action: "GET" | "ACTIVATE" | "DEACTIVATE";
}

function header(etcd: EtcdServer, cluster: Cluster): ResponseHeader {
  return {
    clusterId: cluster.id,
    memberId: cluster.members[0].id,
    revision: etcd.kv.rev(),
    raftTerm: singleMemberRaftTerm,
  };
}

/** Bytes held by the backend: what our "database size" is (see the header). */
function backendBytes(etcd: EtcdServer): number {
  let total = 0;
  for (const rec of etcd.kv.backend.all()) total += revBytesLen + rec.kv.key.length + rec.kv.value.length;
  return total;
}

// #region status
export function maintenanceService(
  etcd: EtcdServer,
  cluster: Cluster,
  log: Logger,
): grpc.UntypedServiceImplementation {
  const self = cluster.members[0].id;
  return {
    Status: unary(
      "Status",
      () => {
        const h = header(etcd, cluster);
        const size = backendBytes(etcd);
        return {
          header: h,
          version: etcdVersion,
          dbSize: size,
          dbSizeInUse: size,
          leader: self,
          raftIndex: h.revision,
          raftAppliedIndex: h.revision,
          raftTerm: h.raftTerm,
          errors: [],
          isLearner: false,
        };
      },
      log,
    ),
    // No alarm is ever raised, so listing and disarming both answer "none".
    Alarm: unary(
      "Alarm",
      (r: AlarmRequest) =>
        r.action === "ACTIVATE" ? ErrAlarmNotModelled : { header: header(etcd, cluster), alarms: [] },
      log,
    ),
  };
}
// #endregion status

export function memberListService(
  etcd: EtcdServer,
  cluster: Cluster,
  log: Logger,
): grpc.UntypedServiceImplementation {
  return {
    MemberList: unary(
      "MemberList",
      () => ({
        header: header(etcd, cluster),
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

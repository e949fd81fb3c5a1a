/**
 * Maintenance over gRPC — "how are you?": status and alarms.
 *
 * Solves:
 * - operators and tools ask a member for its status before anything else: `etcdctl endpoint
 *   status` (Maintenance.Status: version, size, leader, raft term and index), `etcdctl endpoint
 *   health` (a read, then Maintenance.Alarm to check that no alarm is raised);
 * - we have one member and no raft, so the answers are those of a healthy single-member etcd:
 *   we are the leader and no alarm is raised. ("Who are you?" — the member list — is member.ts.)
 *
 * Invariants:
 * - every answer carries the same header as the KV answers (header.ts).
 *
 * What etcd does differently: `dbSize` is the size of its bbolt file and `raftIndex` the index of
 * its last raft entry. We have neither: `dbSize` is the bytes our backend holds (each record's
 * revision key, key and value), and `raftIndex` is the store revision, which also grows by one
 * with each write. Alarms (NOSPACE, CORRUPT) are never raised here.
 *
 * @upstream etcd-io/etcd server/etcdserver/api/v3rpc/maintenance.go (maintenanceServer.Status, Alarm)
 * @upstream etcd-io/etcd api/version/version.go (Version)
 * @chapter 01-etcd-watch
 */
import type * as grpc from "@grpc/grpc-js";
import type { EtcdServer } from "../etcdserver/server.ts";
import type { Cluster } from "../membership/cluster.ts";
import { revBytesLen } from "../mvcc/revision.ts";
import type { Logger } from "../pkg/log.ts";
import { EtcdError } from "../rpctypes/error.ts";
import { clusterHeader } from "./header.ts";
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

/** Bytes held by the backend: what our "database size" is (see the header). */
function backendBytes(etcd: EtcdServer): number {
  let total = 0;
  for (const rec of etcd.kv.backend.all()) total += revBytesLen + rec.kv.key.length + rec.kv.value.length;
  return total;
}

// #region status
export function maintenanceServer(
  etcd: EtcdServer,
  cluster: Cluster,
  log: Logger,
): grpc.UntypedServiceImplementation {
  const self = cluster.members[0].id;
  return {
    Status: unary(
      "Status",
      () => {
        const h = clusterHeader(etcd, cluster);
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
        r.action === "ACTIVATE" ? ErrAlarmNotModelled : { header: clusterHeader(etcd, cluster), alarms: [] },
      log,
    ),
  };
}
// #endregion status

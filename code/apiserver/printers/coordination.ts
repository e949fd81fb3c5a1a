/**
 * coordination.k8s.io/v1 table: leases (NAME HOLDER AGE). Upstream: printLease in
 * pkg/printers/internalversion/printers.go.
 *
 * Solves: "who is the leader?" — `kubectl get leases -n kube-system` shows which scheduler or
 * controller-manager instance holds each lock, and every node's heartbeat lease.
 *
 * Invariants: HOLDER is "" for a lease nobody holds.
 *
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (printLease)
 * @chapter 02-apiserver
 */
import type { Lease } from "../../api/coordination.ts";
import { ageColumn, column, nameColumn, translateTimestampSince } from "./helpers.ts";
import type { TablePrinter } from "./table.ts";

const leasePrinter: TablePrinter = {
  columns: [
    nameColumn,
    column(
      "Holder",
      "string",
      "holderIdentity contains the identity of the holder of a current lease. If Coordinated Leader Election is used, the holder identity must be equal to the elected LeaseCandidate.metadata.name field.",
    ),
    ageColumn,
  ],
  print: (obj, now) => {
    const lease = obj as Lease;
    return {
      cells: [
        lease.metadata.name ?? "",
        lease.spec?.holderIdentity ?? "",
        translateTimestampSince(lease.metadata.creationTimestamp, now),
      ],
    };
  },
};

export const coordinationPrinters: Readonly<Record<string, TablePrinter>> = { leases: leasePrinter };

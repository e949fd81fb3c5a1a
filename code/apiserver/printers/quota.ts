/**
 * The tables of limitranges (NAME CREATED AT) and resourcequotas (NAME AGE REQUEST LIMIT).
 * Upstream: printLimitRange and printResourceQuota in pkg/printers/internalversion/printers.go.
 *
 * Solves: `kubectl get quota` answers "how full is this namespace?" at a glance:
 * `pods: 10/10, requests.cpu: 1500m/2` under REQUEST, the `limits.` names under LIMIT.
 *
 * Invariants: quota entries come from status (what is enforced), sorted by name, `used/hard`
 * with used "0" while nothing is charged.
 *
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (printLimitRange, printResourceQuota)
 * @chapter 03-api-security
 */
import type { ResourceQuota } from "../../api/core.ts";
import { canonicalQuantity } from "../../api/quantity.ts";
import {
  ageColumn,
  column,
  creationTimestampDescription,
  nameColumn,
  translateTimestampSince,
} from "./helpers.ts";
import type { TablePrinter } from "./table.ts";

const limitRangePrinter: TablePrinter = {
  columns: [nameColumn, column("Created At", "date", creationTimestampDescription)],
  print: (obj) => ({ cells: [obj.metadata.name ?? "", obj.metadata.creationTimestamp ?? ""] }),
};

// #region quota-columns
const resourceQuotaPrinter: TablePrinter = {
  columns: [
    nameColumn,
    ageColumn,
    column("Request", "string", "Request"),
    column("Limit", "string", "Limit"),
  ],
  print: (obj, now) => {
    const rq = obj as ResourceQuota;
    const hard = rq.status?.hard ?? {};
    const used = rq.status?.used ?? {};
    const request: string[] = [];
    const limit: string[] = [];
    for (const name of Object.keys(hard).sort()) {
      const cell = `${name}: ${canonicalQuantity(used[name] ?? "0")}/${canonicalQuantity(hard[name])}`;
      (name.split(".")[0] === "limits" && name.includes(".") ? limit : request).push(cell);
    }
    return {
      cells: [
        rq.metadata.name ?? "",
        translateTimestampSince(rq.metadata.creationTimestamp, now),
        request.join(", "),
        limit.join(", "),
      ],
    };
  },
};
// #endregion quota-columns

export const quotaPrinters: Readonly<Record<string, TablePrinter>> = {
  limitranges: limitRangePrinter,
  resourcequotas: resourceQuotaPrinter,
};

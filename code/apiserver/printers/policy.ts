/**
 * policy/v1 table: poddisruptionbudgets (NAME MIN AVAILABLE MAX UNAVAILABLE ALLOWED DISRUPTIONS
 * AGE). Upstream: printPodDisruptionBudget in pkg/printers/internalversion/printers.go.
 *
 * Solves: "may I drain this node now?" — ALLOWED DISRUPTIONS is the controller's answer; the two
 * bounds show which one the budget uses (the other is N/A).
 *
 * Invariants: an unset bound prints `N/A`; a set one prints as written (`1`, `50%`).
 *
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (podDisruptionBudgetColumnDefinitions, printPodDisruptionBudget)
 * @chapter 05-scheduler
 */
import type { PodDisruptionBudget } from "../../api/policy.ts";
import { ageColumn, column, nameColumn, translateTimestampSince } from "./helpers.ts";
import type { TablePrinter } from "./table.ts";

// #region pdb-printer
const pdbPrinter: TablePrinter = {
  columns: [
    nameColumn,
    column("Min Available", "string", "The minimum number of pods that must be available."),
    column("Max Unavailable", "string", "The maximum number of pods that may be unavailable."),
    column("Allowed Disruptions", "integer", "Calculated number of pods that may be disrupted at this time."),
    ageColumn,
  ],
  print: (obj, now) => {
    const pdb = obj as PodDisruptionBudget;
    const bound = (v: number | string | undefined) => (v === undefined || v === null ? "N/A" : String(v));
    return {
      cells: [
        pdb.metadata.name ?? "",
        bound(pdb.spec?.minAvailable),
        bound(pdb.spec?.maxUnavailable),
        pdb.status?.disruptionsAllowed ?? 0,
        translateTimestampSince(pdb.metadata.creationTimestamp, now),
      ],
    };
  },
};
// #endregion pdb-printer

export const policyPrinters: Readonly<Record<string, TablePrinter>> = { poddisruptionbudgets: pdbPrinter };

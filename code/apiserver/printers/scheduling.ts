/**
 * scheduling.k8s.io/v1 table: priorityclasses (NAME VALUE GLOBAL-DEFAULT AGE PREEMPTIONPOLICY).
 * Upstream: printPriorityClass in pkg/printers/internalversion/printers.go.
 *
 * Solves: which priority a `priorityClassName` buys, and which class pods without one get.
 *
 * Invariants: VALUE is an integer and GLOBAL-DEFAULT a boolean cell (kubectl prints
 * true/false); PREEMPTIONPOLICY is "" when unset.
 *
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (printPriorityClass)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { ageColumn, column, nameColumn, translateTimestampSince } from "./helpers.ts";
import type { TablePrinter } from "./table.ts";

type PriorityClassFields = { value?: number; globalDefault?: boolean; preemptionPolicy?: string };

const priorityClassPrinter: TablePrinter = {
  columns: [
    nameColumn,
    column(
      "Value",
      "integer",
      "value represents the integer value of this priority class. This is the actual priority that pods receive when they have the name of this class in their pod spec.",
    ),
    column(
      "Global-Default",
      "boolean",
      "globalDefault specifies whether this PriorityClass should be considered as the default priority for pods that do not have any priority class. Only one PriorityClass can be marked as `globalDefault`. However, if more than one PriorityClasses exists with their `globalDefault` field set to true, the smallest value of such global default PriorityClasses will be used as the default priority.",
    ),
    ageColumn,
    column(
      "PreemptionPolicy",
      "string",
      "preemptionPolicy is the Policy for preempting pods with lower priority. One of Never, PreemptLowerPriority. Defaults to PreemptLowerPriority if unset.",
    ),
  ],
  print: (obj: KubeObject, now) => {
    const pc = obj as KubeObject & PriorityClassFields;
    return {
      cells: [
        pc.metadata.name ?? "",
        pc.value ?? 0,
        pc.globalDefault ?? false,
        translateTimestampSince(pc.metadata.creationTimestamp, now),
        pc.preemptionPolicy ?? "",
      ],
    };
  },
};

export const schedulingPrinters: Readonly<Record<string, TablePrinter>> = {
  priorityclasses: priorityClassPrinter,
};

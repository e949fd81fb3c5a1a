/**
 * The printer table — which printer draws which resource's rows, and the default for the rest.
 * Upstream: AddHandlers in pkg/printers/internalversion/printers.go registers every built-in
 * type's printer with the table generator; the registry's TableConvertor
 * (pkg/printers/storage/storage.go) asks the generator for a Table; a resource with no printer
 * gets the generic registry's default table (name and creation time).
 *
 * Solves:
 * - the table generator (table.ts) knows nothing of any resource, and each printer file nothing
 *   of the others: this is the one place that says "pods print with podPrinter";
 * - a resource without a printer still answers `kubectl get` with upstream's two columns.
 *
 * Invariants:
 * - every served resource with a printer upstream has one here (a test checks each gives one
 *   cell per column); any other resource gets `defaultTablePrinter`.
 *
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (AddHandlers)
 * @upstream kubernetes/kubernetes pkg/printers/storage/storage.go (TableConvertor.ConvertToTable: Wide always on, list metadata copied)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/registry/rest/table.go (defaultTableConvertor: Name, Created At)
 * @chapter 02-apiserver
 */
import type { KubeObject } from "../../api/meta.ts";
import { admissionRegistrationPrinters } from "./admissionregistration.ts";
import { appsPrinters } from "./apps.ts";
import { coordinationPrinters } from "./coordination.ts";
import { corePrinters } from "./core.ts";
import { discoveryPrinters } from "./discovery.ts"; // EndpointSlices
import { creationTimestampDescription, nameDescription } from "./helpers.ts";
import { podPrinter } from "./pods.ts";
import { policyPrinters } from "./policy.ts"; // chapter 5: PodDisruptionBudgets
import { quotaPrinters } from "./quota.ts";
import { rbacPrinters } from "./rbac.ts";
import { schedulingPrinters } from "./scheduling.ts";
import { type GenerateOptions, generateTable, type Table, type TablePrinter } from "./table.ts";

// #region add-handlers
/** Every printer by `<group>/<resource>` (the core group's keys start with "/": `/pods`). */
const printers: Readonly<Record<string, TablePrinter>> = {
  "/pods": podPrinter,
  ...Object.fromEntries(Object.entries(corePrinters).map(([r, p]) => [`/${r}`, p])),
  ...Object.fromEntries(Object.entries(appsPrinters).map(([r, p]) => [`apps/${r}`, p])),
  ...Object.fromEntries(
    Object.entries(coordinationPrinters).map(([r, p]) => [`coordination.k8s.io/${r}`, p]),
  ),
  ...Object.fromEntries(Object.entries(schedulingPrinters).map(([r, p]) => [`scheduling.k8s.io/${r}`, p])),
  // chapter 3: RBAC
  ...Object.fromEntries(Object.entries(rbacPrinters).map(([r, p]) => [`rbac.authorization.k8s.io/${r}`, p])),
  // chapter 3: webhooks
  ...Object.fromEntries(
    Object.entries(admissionRegistrationPrinters).map(([r, p]) => [`admissionregistration.k8s.io/${r}`, p]),
  ),
  // chapter 3: admission
  ...Object.fromEntries(Object.entries(quotaPrinters).map(([r, p]) => [`/${r}`, p])),
  // chapter 5: PodDisruptionBudgets
  ...Object.fromEntries(Object.entries(policyPrinters).map(([r, p]) => [`policy/${r}`, p])),
  // EndpointSlices
  ...Object.fromEntries(Object.entries(discoveryPrinters).map(([r, p]) => [`discovery.k8s.io/${r}`, p])),
};
// #endregion add-handlers

// #region default-table
/** rest.NewDefaultTableConvertor: for a resource nobody wrote a printer for, its name and creation time. */
export const defaultTablePrinter: TablePrinter = {
  columns: [
    { name: "Name", type: "string", format: "name", description: nameDescription, priority: 0 },
    { name: "Created At", type: "date", format: "", description: creationTimestampDescription, priority: 0 },
  ],
  // Go formats a zero time as year 1.
  print: (obj) => ({
    cells: [obj.metadata?.name ?? "", obj.metadata?.creationTimestamp ?? "0001-01-01T00:00:00Z"],
  }),
};
// #endregion default-table

/** The printer of a resource (group "" is the core group), or the default one. */
export function printerFor(group: string, resource: string): TablePrinter {
  return printers[`${group}/${resource}`] ?? defaultTablePrinter;
}

/** TableConvertor.ConvertToTable: the Table of `objs` of one resource at time `now`. */
export function convertToTable(
  group: string,
  resource: string,
  objs: readonly KubeObject[],
  now: Date,
  options: GenerateOptions = {},
): Table {
  return generateTable(printerFor(group, resource), objs, now, options);
}

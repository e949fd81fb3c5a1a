/**
 * Server-side tables — what `kubectl get` prints, computed by the API server as a
 * meta.k8s.io/v1 `Table`: its types, how one resource's printer fills one, and what each row
 * carries of its object. Upstream: the Table types of apimachinery's meta/v1, the TableGenerator
 * of pkg/printers/tablegenerator.go, and asTable in k8s.io/apiserver's handlers/response.go. Which
 * printer serves which resource is printers.ts's table.
 *
 * Solves:
 * - kubectl has no code for any resource's columns: it asks for
 *   `Accept: application/json;as=Table;g=meta.k8s.io;v=v1` and prints the cells it receives,
 *   so READY 1/1, STATUS CrashLoopBackOff, RESTARTS 3 (2m ago) are decided here, once, for every
 *   client (and a new resource needs no new kubectl);
 * - `-o wide` needs no second request: the server always sends every column, marking the extra
 *   ones `priority: 1`, and kubectl hides them unless asked;
 * - each row carries the object (by default only its metadata, as PartialObjectMetadata), so
 *   kubectl can still sort, label or name rows without fetching the objects again.
 *
 * Invariants:
 * - rows[i] describes objs[i]; every row has exactly one cell per column definition;
 * - cells are strings, integers or booleans, typed as upstream's printers type them — which is
 *   not always the column's `type` (a ConfigMap's DATA is an integer in a "string" column).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/types.go (Table, TableColumnDefinition, TableRow, TableRowCondition, PartialObjectMetadata, IncludeObjectPolicy)
 * @upstream kubernetes/kubernetes pkg/printers/tablegenerator.go (TableGenerator.GenerateTable, TableOptions.NoHeaders)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/response.go (asTable: includeObject None, Metadata, Object)
 * @chapter 02-apiserver
 */
import type { KubeObject, ListMeta, ObjectMeta } from "../../api/meta.ts";

// #region table-types
export interface TableColumnDefinition {
  name: string;
  /** An OpenAPI type: string, integer, number, boolean, date. */
  type: string;
  /** `name` marks the column that holds the object's name. */
  format: string;
  description: string;
  /** 0: always shown; 1: shown by `-o wide`. */
  priority: number;
}

/** Row conditions: upstream only defines `Completed` (a pod that Succeeded or Failed). */
export interface TableRowCondition {
  type: "Completed";
  status: "True" | "False" | "Unknown";
  reason?: string;
  message?: string;
}

export interface TableRow {
  cells: unknown[];
  conditions?: TableRowCondition[];
  /** PartialObjectMetadata, the full object, or absent — per the request's includeObject. */
  object?: unknown;
}

export interface Table {
  kind: "Table";
  apiVersion: string;
  metadata: ListMeta;
  columnDefinitions: TableColumnDefinition[];
  rows: TableRow[];
}

export interface PartialObjectMetadata {
  kind: "PartialObjectMetadata";
  apiVersion: string;
  metadata: ObjectMeta;
}

/** `?includeObject=`: what each row's `object` holds. Unset means Metadata. */
export type IncludeObjectPolicy = "None" | "Metadata" | "Object";

/** One resource's table: its columns and how one object becomes one row's cells. */
export interface TablePrinter {
  columns: readonly TableColumnDefinition[];
  print(obj: KubeObject, now: Date): { cells: unknown[]; conditions?: TableRowCondition[] };
}
// #endregion table-types

// #region generate-table
export interface GenerateOptions {
  /** resourceVersion / continue / remainingItemCount of the list (or the object's resourceVersion for a get). */
  listMeta?: ListMeta;
  /** `?noHeaders=true` (TableOptions.NoHeaders): leave the column definitions out. */
  noHeaders?: boolean;
  /** The Table's own apiVersion: meta.k8s.io/v1 (default) or meta.k8s.io/v1beta1. */
  apiVersion?: string;
}

/**
 * TableGenerator.GenerateTable: the Table `printer` makes of `objs` at time `now` (AGE is
 * computed against it). Each row's object is the object's PartialObjectMetadata — upstream's
 * default (includeObject=Metadata); `setIncludeObject` switches it.
 */
export function generateTable(
  printer: TablePrinter,
  objs: readonly KubeObject[],
  now: Date,
  options: GenerateOptions = {},
): Table {
  const apiVersion = options.apiVersion ?? "meta.k8s.io/v1";
  const rows = objs.map((obj): TableRow => {
    const { cells, conditions } = printer.print(obj, now);
    const row: TableRow = { cells };
    if (conditions && conditions.length > 0) row.conditions = conditions;
    row.object = asPartialObjectMetadata(obj, apiVersion);
    return row;
  });
  return {
    kind: "Table",
    apiVersion,
    metadata: { ...(options.listMeta ?? {}) },
    columnDefinitions: options.noHeaders ? [] : printer.columns.map((c) => ({ ...c })),
    rows,
  };
}
// #endregion generate-table

// #region include-object
/** meta.AsPartialObjectMetadata: the object's metadata under kind PartialObjectMetadata. */
export function asPartialObjectMetadata(
  obj: KubeObject,
  apiVersion = "meta.k8s.io/v1",
): PartialObjectMetadata {
  return { kind: "PartialObjectMetadata", apiVersion, metadata: structuredClone(obj.metadata ?? {}) };
}

/**
 * Sets every row's `object` per `?includeObject=` (rows[i] belongs to objs[i]): None drops it,
 * Metadata (the default) is PartialObjectMetadata, Object is the whole object.
 */
export function setIncludeObject(
  table: Table,
  objs: readonly KubeObject[],
  policy: IncludeObjectPolicy | undefined,
): Table {
  table.rows.forEach((row, i) => {
    const obj = objs[i];
    if (policy === "None" || obj === undefined) delete row.object;
    else if (policy === "Object") row.object = obj;
    else row.object = asPartialObjectMetadata(obj, table.apiVersion);
  });
  return table;
}
// #endregion include-object

/**
 * Printer helpers — the cells many tables share: a name, an age, a label map or selector, the
 * containers of a pod template — and the column definitions that go with them. Upstream: the
 * helper functions of pkg/printers/internalversion/printers.go.
 *
 * Solves:
 * - every table has NAME and AGE with the same descriptions, and ages are computed against one
 *   `now` so a whole table is consistent (and tests are deterministic);
 * - empty values print as upstream prints them (`<none>`, `<unknown>`, `<error>`), because
 *   people read those words in `kubectl get` output.
 *
 * Invariants:
 * - `translateTimestampSince(undefined, now)` is "<unknown>";
 * - `formatLabels` sorts keys byte-wise, as Go's sort.Strings does.
 *
 * @upstream kubernetes/kubernetes pkg/printers/internalversion/printers.go (translateTimestampSince, translateMicroTimestampSince, layoutContainerCells)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/labels/labels.go (FormatLabels)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/helpers.go (FormatLabelSelector)
 * @chapter 02-apiserver
 */
import type { Container } from "../../api/core.ts";
import { type LabelSelector, labelSelectorAsSelector, selectorToString } from "../../api/labels.ts";
import { humanDuration } from "./duration.ts";
import type { TableColumnDefinition } from "./table.ts";

// #region common-columns
/** metav1.ObjectMeta{}.SwaggerDoc()["name"]. */
export const nameDescription =
  "Name must be unique within a namespace. Is required when creating resources, although some resources may allow a client to request the generation of an appropriate name automatically. Name is primarily intended for creation idempotence and configuration definition. Cannot be updated. More info: https://kubernetes.io/docs/concepts/overview/working-with-objects/names#names";

/** metav1.ObjectMeta{}.SwaggerDoc()["creationTimestamp"]. */
export const creationTimestampDescription =
  "CreationTimestamp is a timestamp representing the server time when this object was created. It is not guaranteed to be set in happens-before order across separate operations. Clients may not set this value. It is represented in RFC3339 form and is in UTC.\n\nPopulated by the system. Read-only. Null for lists. More info: https://git.k8s.io/community/contributors/devel/sig-architecture/api-conventions.md#metadata";

/** One column; `priority: 1` columns are the ones `kubectl get -o wide` adds. */
export function column(
  name: string,
  type: "string" | "integer" | "boolean" | "date",
  description: string,
  priority: 0 | 1 = 0,
  format = "",
): TableColumnDefinition {
  return { name, type, format, description, priority };
}

export const nameColumn = column("Name", "string", nameDescription, 0, "name");
export const ageColumn = column("Age", "string", creationTimestampDescription);
export const containersColumn = column("Containers", "string", "Names of each container in the template.", 1);
export const imagesColumn = column(
  "Images",
  "string",
  "Images referenced by each container in the template.",
  1,
);
// #endregion common-columns

// #region age
/** The age of a timestamp at `now`, as HumanDuration prints it; "<unknown>" without one. */
export function translateTimestampSince(timestamp: string | null | undefined, now: Date): string {
  if (!timestamp) return "<unknown>";
  const t = Date.parse(timestamp);
  if (Number.isNaN(t)) return "<unknown>";
  return humanDuration(now.getTime() - t);
}
// #endregion age

/** labels.FormatLabels: `a=1,b=2` sorted by key; "<none>" for no labels. */
export function formatLabels(labels: Record<string, string> | undefined): string {
  const keys = Object.keys(labels ?? {}).sort();
  if (keys.length === 0) return "<none>";
  return keys.map((k) => `${k}=${labels?.[k]}`).join(",");
}

/** metav1.FormatLabelSelector: the selector's string form; "<none>" when empty, "<error>" when invalid. */
export function formatLabelSelector(selector: LabelSelector | null | undefined): string {
  const parsed = labelSelectorAsSelector(selector);
  if (!parsed.ok) return "<error>";
  return selectorToString(parsed.value) || "<none>";
}

/** layoutContainerCells: all container names on one line, all images on another, comma-separated. */
export function layoutContainerCells(containers: readonly Container[] | undefined): [string, string] {
  const list = containers ?? [];
  return [list.map((c) => c.name).join(","), list.map((c) => c.image ?? "").join(",")];
}

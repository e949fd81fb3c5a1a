/**
 * Quantity decoding — whether a JSON value is a quantity (`"100m"`, `"128Mi"`, `2`), and if not,
 * which of upstream's errors Quantity.UnmarshalJSON answers.
 *
 * Solves: `cpu: {}`, `cpu: true` or `memory: "lots"` must be refused while decoding, as Go's
 * Quantity.UnmarshalJSON refuses them (the whole request is a 400), with upstream's words:
 * `quantities must match the regular expression '…'` or `unable to parse quantity's suffix`.
 *
 * Invariants: a value this accepts is one code/api/resource-validation.ts can read (quantityValue).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/resource/quantity.go (ParseQuantity, parseQuantityString, ErrFormatWrong, ErrSuffix)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/api/resource/suffix.go (quantitySuffixer.interpret)
 * @chapter 02-apiserver
 */
import { QUANTITY_FORMAT_ERROR } from "../../api/resource-validation.ts";

/** ErrSuffix: the shape is right but the suffix is none upstream knows (`1Zi`, `5mi`, `1e`). */
export const QUANTITY_SUFFIX_ERROR = "unable to parse quantity's suffix";

const shape = /^([+-]?[0-9.]+)([eEinumkKMGTP]*[-+]?[0-9]*)$/;
const number = /^[+-]?([0-9]+(\.[0-9]*)?|\.[0-9]+)$/;
const suffixes = new Set([
  "",
  "n",
  "u",
  "m",
  "k",
  "M",
  "G",
  "T",
  "P",
  "E",
  "Ki",
  "Mi",
  "Gi",
  "Ti",
  "Pi",
  "Ei",
]);

/** The error ParseQuantity gives for `text`, or undefined when it parses. */
export function parseQuantityError(text: string): string | undefined {
  const m = shape.exec(text);
  if (!m || !number.test(m[1])) return QUANTITY_FORMAT_ERROR;
  const suffix = m[2];
  if (suffixes.has(suffix) || /^[eE][-+]?[0-9]+$/.test(suffix)) return undefined;
  return QUANTITY_SUFFIX_ERROR;
}

/**
 * Patch options — the `fieldManager` and `force` query parameters, checked before any patch runs,
 * as ValidatePatchOptions in apimachinery's meta/v1/validation/validation.go checks them.
 *
 * Solves:
 * - server-side apply records who owns which field, so an apply without a `fieldManager` is
 *   refused (`kubectl apply --server-side` sends `fieldManager=kubectl`; controllers must name
 *   themselves);
 * - `force` only means something for apply (take fields from other managers); elsewhere it is
 *   refused rather than silently ignored.
 *
 * Invariants:
 * - the error is upstream's: 422 Invalid on kind `PatchOptions` of group `meta.k8s.io`, with the
 *   field errors as causes.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/apis/meta/v1/validation/validation.go (ValidatePatchOptions, ValidateFieldManager, FieldManagerMaxLength)
 * @chapter 02-apiserver
 */

import { type FieldError, forbidden, invalid, required, tooLong } from "../../api/field-errors.ts";
import { newInvalid, type StatusError } from "../errors.ts";

/** The patch content types the API server accepts for built-in kinds. */
export const patchTypes = {
  json: "application/json-patch+json",
  merge: "application/merge-patch+json",
  strategic: "application/strategic-merge-patch+json",
  apply: "application/apply-patch+yaml",
} as const;

export interface PatchOptions {
  fieldManager?: string;
  force?: boolean;
}

export const fieldManagerMaxLength = 128;

// #region validate-patch-options
/** ValidatePatchOptions: undefined when valid, otherwise the 422 to answer. */
export function validatePatchOptions(options: PatchOptions, contentType: string): StatusError | undefined {
  const errs: FieldError[] = [];
  const manager = options.fieldManager ?? "";
  if (contentType !== patchTypes.apply) {
    if (options.force !== undefined)
      errs.push(forbidden("force", "may not be specified for non-apply patch"));
  } else if (manager === "") {
    errs.push(required("fieldManager", "is required for apply patch"));
  }
  if (manager.length > fieldManagerMaxLength) errs.push(tooLong("fieldManager", fieldManagerMaxLength));
  // unicode.IsPrint: letters, marks, numbers, punctuation, symbols and the ASCII space; Go
  // reports each other rune with its byte offset.
  let offset = 0;
  for (const ch of manager) {
    if (ch !== " " && !/[\p{L}\p{M}\p{N}\p{P}\p{S}]/u.test(ch)) {
      const code = ch.codePointAt(0)!.toString(16).toUpperCase().padStart(4, "0");
      errs.push(invalid("fieldManager", manager, `invalid character U+${code} (at position ${offset})`));
    }
    offset += Buffer.byteLength(ch);
  }
  return errs.length ? newInvalid("meta.k8s.io", "PatchOptions", "", errs) : undefined;
}
// #endregion validate-patch-options

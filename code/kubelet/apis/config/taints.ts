/**
 * Taint specs — `key=value:Effect` text to Taints, as `--register-with-taints` (and `kubectl
 * taint`) read it, with upstream's error messages.
 * Mirrors kubernetes/kubernetes pkg/util/taints/taints.go.
 *
 * Solves: a node that must not take ordinary pods from its first second (a GPU machine, a node
 * still being prepared) registers already tainted; a typo in the effect must stop the kubelet
 * rather than register a Node without the taint.
 *
 * Invariants:
 * - a spec is `key=value:Effect` or `key:Effect`; the effect is required to add a taint and is
 *   one of NoSchedule, PreferNoSchedule, NoExecute;
 * - the key is a qualified name and the value a label value (IsQualifiedName, IsValidLabelValue);
 * - two taints with one key and one effect are refused (they would be one taint on the Node).
 *
 * @upstream kubernetes/kubernetes pkg/util/taints/taints.go (parseTaint, validateTaintEffect, ParseTaints, CheckTaintValidation)
 * @upstream kubernetes/kubernetes pkg/util/flag/flags.go (RegisterWithTaintsVar.Set)
 * @chapter 07-kubelet
 */
import type { Taint, TaintEffect } from "../../../api/core.ts";
import { isQualifiedName, isValidLabelValue } from "../../../api/string-validation.ts";

const effects: readonly string[] = ["NoSchedule", "PreferNoSchedule", "NoExecute"];

/** Go's `%v` of a v1.Taint, as upstream's messages print one: `{dedicated gpu NoSchedule <nil>}`. */
export function goTaintString(t: Taint): string {
  return `{${t.key} ${t.value ?? ""} ${t.effect} ${t.timeAdded ?? "<nil>"}}`;
}

function validateTaintEffect(effect: string): string | undefined {
  return effects.includes(effect) ? undefined : `invalid taint effect: ${effect}, unsupported taint effect`;
}

/** parseTaint: `key=value:Effect`, `key:Effect` or `key` (the effect is checked by the caller). */
function parseTaint(spec: string): Taint | string {
  const parts = spec.split(":");
  let key: string;
  let value = "";
  let effect = "";
  if (parts.length === 1) {
    key = parts[0];
  } else if (parts.length === 2) {
    effect = parts[1];
    const bad = validateTaintEffect(effect);
    if (bad) return bad;
    const kv = parts[0].split("=");
    if (kv.length > 2) return `invalid taint spec: ${spec}`;
    key = kv[0];
    if (kv.length === 2) {
      value = kv[1];
      const errs = isValidLabelValue(value);
      if (errs.length > 0) return `invalid taint spec: ${spec}, ${errs.join("; ")}`;
    }
  } else {
    return `invalid taint spec: ${spec}`;
  }
  const errs = isQualifiedName(key);
  if (errs.length > 0) return `invalid taint spec: ${spec}, ${errs.join("; ")}`;
  return { key, ...(value !== "" ? { value } : {}), effect: effect as TaintEffect };
}

// #region parse-taints
/** ParseTaints for taints to add (RegisterWithTaintsVar.Set): the taints, or upstream's error. */
export function parseTaints(specs: readonly string[]): Taint[] | string {
  const taints: Taint[] = [];
  for (const spec of specs) {
    const t = parseTaint(spec);
    if (typeof t === "string") return t;
    // Adding a taint needs its effect: `dedicated=gpu` alone is a spec for removal only.
    if (t.effect === ("" as TaintEffect)) return `invalid taint spec: ${spec}`;
    if (taints.some((o) => o.key === t.key && o.effect === t.effect)) {
      return `duplicated taints with the same key and effect: ${goTaintString(t)}`;
    }
    taints.push(t);
  }
  return taints;
}
// #endregion parse-taints

/** CheckTaintValidation: a taint from a config file, checked as a parsed one would be. */
export function checkTaintValidation(t: Taint): string | undefined {
  const keyErrs = isQualifiedName(t.key ?? "");
  if (keyErrs.length > 0) return `invalid taint key: ${keyErrs.join("; ")}`;
  if (t.value) {
    const valueErrs = isValidLabelValue(t.value);
    if (valueErrs.length > 0) return `invalid taint value: ${valueErrs.join("; ")}`;
  }
  if (t.effect) return validateTaintEffect(t.effect);
  return undefined;
}

/**
 * Resource lists as quota does arithmetic on them — `{pods: "3", "requests.cpu": "1500m"}` added,
 * subtracted, masked to the names a quota limits, compared entry by entry, and printed as
 * upstream's messages print them (`pods=1,requests.cpu=500m`).
 * Upstream: kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/quota/v1/resources.go.
 *
 * Solves: a quota compares the usage a request adds plus what is used with what is allowed, for
 * only the resources that quota names; every step is one small function of whole lists.
 *
 * Invariants: entries are quantities in upstream's canonical text (quantity.ts); a name missing
 * from a list is zero; no function changes its arguments.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/quota/v1/resources.go (Add, SubtractWithNonNegativeResult, Mask, LessThanOrEqual, IsZero, ResourceNames)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go (prettyPrint)
 * @chapter 03-api-security
 */
import type { ResourceList } from "../api/core.ts";
import {
  addQuantity,
  cmpQuantity,
  formatQuantity,
  parseQuantity,
  type Quantity,
  subQuantity,
  zeroQuantity,
} from "../api/quantity.ts";

export type { ResourceList };

const q = (text: string | undefined): Quantity => parseQuantity(text ?? "0") ?? zeroQuantity();

// #region arithmetic
export function addLists(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = { ...a };
  for (const [name, v] of Object.entries(b)) {
    out[name] = name in a ? formatQuantity(addQuantity(q(a[name]), q(v))) : formatQuantity(q(v));
  }
  return out;
}

/** a − b, with every negative result 0 (an update that shrinks usage charges nothing). */
export function subtractNonNegative(a: ResourceList, b: ResourceList): ResourceList {
  const out: ResourceList = {};
  for (const [name, v] of Object.entries(a)) {
    const d = subQuantity(q(v), q(b[name]));
    out[name] = d.nanos < 0n ? "0" : formatQuantity(d);
  }
  return out;
}

/** Only the entries whose name is in `names`. */
export function maskList(list: ResourceList, names: Iterable<string>): ResourceList {
  const out: ResourceList = {};
  for (const name of names) if (name in list) out[name] = list[name];
  return out;
}

/** The names where a > b (LessThanOrEqual's `exceeded`); an entry missing from b is not compared. */
export function exceededNames(a: ResourceList, b: ResourceList): string[] {
  return Object.keys(a)
    .filter((name) => name in b && cmpQuantity(q(a[name]), q(b[name])) > 0)
    .sort();
}

export const isZeroList = (list: ResourceList): boolean =>
  Object.values(list).every((v) => q(v).nanos === 0n);

/** Are both lists the same names with the same values (`1Gi` = `1024Mi`)? */
export function equalLists(a: ResourceList | undefined, b: ResourceList | undefined): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => k in (b ?? {}) && cmpQuantity(q(a?.[k]), q(b?.[k])) === 0);
}
// #endregion arithmetic

/** prettyPrint: `pods=1,requests.cpu=500m`, sorted by name. */
export function prettyPrint(list: ResourceList): string {
  return Object.keys(list)
    .sort()
    .map((name) => `${name}=${formatQuantity(q(list[name]))}`)
    .join(",");
}

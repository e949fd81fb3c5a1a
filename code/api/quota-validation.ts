/**
 * LimitRange and ResourceQuota validation — names a quota or limit range may use, amounts that
 * parse and are not negative, and a limit range whose bounds are in order (min ≤ default
 * request ≤ default ≤ max).
 *
 * Solves: LimitRanger and ResourceQuota enforce these objects on every pod; a LimitRange whose
 * default lies above its max would refuse every pod it defaulted, so it is refused itself.
 *
 * Invariants: every error at once, on upstream's field paths (`spec.limits[0].min[cpu]`).
 *
 * What upstream does differently: it also checks the resource names per limit type (storage
 * for PersistentVolumeClaim) and that maxLimitRequestRatio is at most max/min.
 *
 * @upstream kubernetes/kubernetes pkg/apis/core/validation/validation.go (ValidateLimitRange, ValidateResourceQuota, ValidateResourceQuotaUpdate, ValidateResourceQuotaStatusUpdate, validateResourceQuotaScopes)
 * @chapter 03-api-security
 */
import type { LimitRange, ResourceList, ResourceQuota } from "./core.ts";
import {
  childPath,
  type FieldError,
  forbidden,
  indexPath,
  invalid,
  keyPath,
  notSupported,
  required,
} from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";
import { validateObjectMeta, validateObjectMetaUpdate } from "./object-meta-validation.ts";
import { cmpQuantity, parseQuantity } from "./quantity.ts";
import { validateResourceQuantity } from "./resource-validation.ts";
import { nameIsDNSSubdomain } from "./string-validation.ts";

const limitTypes = ["Container", "Pod", "PersistentVolumeClaim"];
const quotaScopes = [
  "BestEffort",
  "CrossNamespacePodAffinity",
  "NotBestEffort",
  "NotTerminating",
  "PriorityClass",
  "Terminating",
];

function validateList(list: ResourceList | undefined, path: string): FieldError[] {
  const errs: FieldError[] = [];
  for (const [name, v] of Object.entries(list ?? {}))
    errs.push(...validateResourceQuantity(name, v, keyPath(path, name)));
  return errs;
}

/** `a` is above `b` for the same name: `<what a> value X is greater than <what b> value Y`. */
function ordered(
  lo: ResourceList,
  hi: ResourceList,
  loName: string,
  hiName: string,
  path: string,
  field: string,
): FieldError[] {
  const errs: FieldError[] = [];
  for (const [name, v] of Object.entries(lo)) {
    const a = parseQuantity(v);
    const b = parseQuantity(hi[name]);
    if (a && b && cmpQuantity(a, b) > 0) {
      errs.push(
        invalid(
          keyPath(childPath(path, field), name),
          v,
          `${loName} value ${v} is greater than ${hiName} value ${hi[name]}`,
        ),
      );
    }
  }
  return errs;
}

// #region limit-range
export function validateLimitRange(lr: KubeObject): FieldError[] {
  const errs = validateObjectMeta(lr.metadata, true, nameIsDNSSubdomain);
  const limits = (lr as LimitRange).spec?.limits ?? [];
  limits.forEach((item, i) => {
    const path = indexPath("spec.limits", i);
    if (!item.type) errs.push(required(childPath(path, "type"), ""));
    else if (!limitTypes.includes(item.type))
      errs.push(notSupported(childPath(path, "type"), item.type, limitTypes));
    for (const f of ["max", "min", "default", "defaultRequest", "maxLimitRequestRatio"] as const) {
      errs.push(...validateList(item[f], childPath(path, f)));
    }
    if (item.type === "Pod") {
      if (Object.keys(item.default ?? {}).length > 0)
        errs.push(forbidden(childPath(path, "default"), "may not be specified when `type` is 'Pod'"));
      if (Object.keys(item.defaultRequest ?? {}).length > 0) {
        errs.push(forbidden(childPath(path, "defaultRequest"), "may not be specified when `type` is 'Pod'"));
      }
    }
    const [min, max, def, defReq] = [
      item.min ?? {},
      item.max ?? {},
      item.default ?? {},
      item.defaultRequest ?? {},
    ];
    errs.push(...ordered(min, max, "min", "max", path, "min"));
    errs.push(...ordered(defReq, max, "default request", "max", path, "defaultRequest"));
    errs.push(...ordered(min, defReq, "min", "default request", path, "min"));
    errs.push(...ordered(defReq, def, "default request", "default limit", path, "defaultRequest"));
    errs.push(...ordered(def, max, "default", "max", path, "default"));
    errs.push(...ordered(min, def, "min", "default", path, "min"));
    for (const [name, v] of Object.entries(item.maxLimitRequestRatio ?? {})) {
      const r = parseQuantity(v);
      if (r && r.nanos < 1_000_000_000n)
        errs.push(
          invalid(keyPath(childPath(path, "maxLimitRequestRatio"), name), v, `ratio ${v} is less than 1`),
        );
    }
  });
  return errs;
}

export const validateLimitRangeUpdate = (lr: KubeObject, old: KubeObject): FieldError[] => [
  ...validateObjectMetaUpdate(lr.metadata, old.metadata),
  ...validateLimitRange(lr),
];
// #endregion limit-range

// #region resource-quota
export function validateResourceQuota(rq: KubeObject): FieldError[] {
  const errs = validateObjectMeta(rq.metadata, true, nameIsDNSSubdomain);
  const quota = rq as ResourceQuota;
  errs.push(...validateList(quota.spec?.hard, "spec.hard"));
  errs.push(...validateList(quota.status?.hard, "status.hard"));
  errs.push(...validateList(quota.status?.used, "status.used"));
  for (const [i, scope] of (quota.spec?.scopes ?? []).entries()) {
    if (!quotaScopes.includes(scope))
      errs.push(notSupported(indexPath("spec.scopes", i), scope, quotaScopes));
  }
  return errs;
}

export const validateResourceQuotaUpdate = (rq: KubeObject, old: KubeObject): FieldError[] => [
  ...validateObjectMetaUpdate(rq.metadata, old.metadata),
  ...validateResourceQuota(rq),
];

export function validateResourceQuotaStatusUpdate(rq: KubeObject, old: KubeObject): FieldError[] {
  const quota = rq as ResourceQuota;
  return [
    ...validateObjectMetaUpdate(rq.metadata, old.metadata),
    ...validateList(quota.status?.hard, "status.hard"),
    ...validateList(quota.status?.used, "status.used"),
  ];
}
// #endregion resource-quota

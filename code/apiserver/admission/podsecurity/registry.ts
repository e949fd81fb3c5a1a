/**
 * The PodSecurity evaluator — which checks a level and version run, in which order. Upstream:
 * k8s.io/pod-security-admission policy/registry.go (checkRegistry.EvaluatePod).
 *
 * Solves: a namespace pinned to `v1.24` keeps the rules of 1.24 (a check newer than that does
 * not run; an older version of a check does), while `latest` follows the newest rules.
 *
 * Invariants:
 * - privileged runs nothing; baseline runs the baseline checks; restricted runs the baseline
 *   checks, then the restricted ones, without the baseline checks a restricted one overrides;
 * - a version newer than the newest check (v1.40 today) is evaluated as the newest;
 * - results keep registration order, so a message lists the same faults in the same order.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/registry.go (NewEvaluator, EvaluatePod, inflateVersions)
 * @chapter 03-api-security
 */
import type { LevelVersion } from "./api.ts";
import type { Check, CheckPod, CheckResult, PodMetadata, PodSpec } from "./checks.ts";
import { baselineChecks } from "./checks-baseline.ts";
import { restrictedChecks } from "./checks-restricted.ts";

/** The check's version for a minor version (latest: its newest), or none if it is newer than that. */
function versionOf(check: Check, minor: number): CheckPod | undefined {
  let found: CheckPod | undefined;
  for (const v of check.versions) if (v.minimumVersion <= minor) found = v.checkPod;
  return found;
}

// #region evaluate
export function evaluatePod(lv: LevelVersion, meta: PodMetadata, spec: PodSpec): CheckResult[] {
  if (lv.level === "privileged") return [];
  const minor = lv.version === "latest" ? Number.POSITIVE_INFINITY : lv.version.minor;
  const restricted =
    lv.level === "restricted"
      ? restrictedChecks.map((c) => ({ check: c, fn: versionOf(c, minor) })).filter((c) => c.fn)
      : [];
  const overridden = new Set(restricted.flatMap((c) => c.check.overrides ?? []));
  const results: CheckResult[] = [];
  for (const check of baselineChecks) {
    if (overridden.has(check.id)) continue;
    const fn = versionOf(check, minor);
    if (fn) results.push(fn(meta, spec));
  }
  for (const { fn } of restricted) results.push((fn as CheckPod)(meta, spec));
  return results;
}
// #endregion evaluate

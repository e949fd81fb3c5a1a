/**
 * PodSecurity levels, versions and namespace labels — what a namespace says about its pods:
 * `pod-security.kubernetes.io/enforce: restricted` (and `-version: v1.32`), the same for `audit`
 * and `warn`. Upstream: k8s.io/pod-security-admission api/constants.go and api/helpers.go.
 *
 * Solves: one namespace can refuse (enforce), record (audit) and tell (warn) at three different
 * levels, so an operator can tighten a namespace in steps: warn at restricted first, see what
 * would break, then enforce.
 *
 * Invariants:
 * - a missing label falls back to the default policy (`privileged:latest` for all three modes);
 * - a bad label still yields a policy: enforce fails closed (restricted, latest), audit and warn
 *   fail open (privileged); the error is returned beside it, as upstream's PolicyToEvaluate;
 * - `latest` is newer than every numbered version; a version newer than the newest check is
 *   evaluated as the newest (registry.ts).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/api/constants.go (Level, labels)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/api/helpers.go (ParseLevel, ParseVersion, PolicyToEvaluate, CompareLevels)
 * @chapter 03-api-security
 */

// #region levels
export type Level = "privileged" | "baseline" | "restricted";
export const validLevels: readonly Level[] = ["privileged", "baseline", "restricted"];

/** `latest`, or a minor version of Kubernetes 1 (`v1.32` is `{ minor: 32 }`). */
export type Version = "latest" | { minor: number };

export interface LevelVersion {
  level: Level;
  version: Version;
}

export interface Policy {
  enforce: LevelVersion;
  audit: LevelVersion;
  warn: LevelVersion;
}

export type Mode = keyof Policy;

const labelPrefix = "pod-security.kubernetes.io/";
export const levelLabel = (mode: Mode) => `${labelPrefix}${mode}`;
export const versionLabel = (mode: Mode) => `${labelPrefix}${mode}-version`;
/** Audit annotations are named under the same prefix (`pod-security.kubernetes.io/audit-violations`). */
export const auditAnnotationPrefix = labelPrefix;
// #endregion levels

export const latest: Version = "latest";
export const privilegedLatest: LevelVersion = { level: "privileged", version: latest };
export const defaultPolicy: Policy = {
  enforce: privilegedLatest,
  audit: privilegedLatest,
  warn: privilegedLatest,
};

export function versionString(v: Version): string {
  return v === "latest" ? "latest" : `v1.${v.minor}`;
}

/** `restricted:latest`, `baseline:v1.32`: how messages name a policy. */
export function levelVersionString(lv: LevelVersion): string {
  return `${lv.level}:${versionString(lv.version)}`;
}

export function sameLevelVersion(a: LevelVersion, b: LevelVersion): boolean {
  return levelVersionString(a) === levelVersionString(b);
}

/** -1 if a is less strict than b, 0 if equal, +1 if stricter. */
export function compareLevels(a: Level, b: Level): number {
  return Math.sign(validLevels.indexOf(a) - validLevels.indexOf(b));
}

// #region parse
export function parseLevel(value: string): { level: Level; error?: string } {
  if ((validLevels as readonly string[]).includes(value)) return { level: value as Level };
  return { level: "restricted", error: `must be one of ${validLevels.join(", ")}` };
}

export function parseVersion(value: string): { version: Version; error?: string } {
  if (value === "latest") return { version: latest };
  const m = /^v1\.([0-9]|[1-9][0-9]*)$/.exec(value);
  if (!m) return { version: latest, error: `must be "latest" or "v1.x"` };
  return { version: { minor: Number(m[1]) } };
}

/**
 * The policy the labels ask for, with the defaults where a label is missing, and the label
 * errors as field errors (`metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: …`).
 */
export function policyToEvaluate(
  labels: Record<string, string> | undefined,
  defaults: Policy = defaultPolicy,
): { policy: Policy; errors: string[] } {
  const policy: Policy = {
    enforce: { ...defaults.enforce },
    audit: { ...defaults.audit },
    warn: { ...defaults.warn },
  };
  const errors: string[] = [];
  if (!labels) return { policy, errors };
  const invalid = (label: string, value: string, why: string) =>
    errors.push(`metadata.labels[${label}]: Invalid value: ${JSON.stringify(value)}: ${why}`);
  for (const mode of ["enforce", "audit", "warn"] as const) {
    const level = labels[levelLabel(mode)];
    if (level !== undefined) {
      const parsed = parseLevel(level);
      // Enforce fails closed (restricted); audit and warn fail open.
      policy[mode].level = parsed.error && mode !== "enforce" ? "privileged" : parsed.level;
      if (parsed.error) invalid(levelLabel(mode), level, parsed.error);
    }
    const version = labels[versionLabel(mode)];
    if (version !== undefined) {
      const parsed = parseVersion(version);
      policy[mode].version = parsed.version;
      if (parsed.error) invalid(versionLabel(mode), version, parsed.error);
    }
  }
  return { policy, errors };
}
// #endregion parse

/** field.ErrorList.ToAggregate().Error(): one error as it is, several as `[a, b]`. */
export function aggregate(errors: string[]): string {
  return errors.length === 1 ? errors[0] : `[${errors.join(", ")}]`;
}

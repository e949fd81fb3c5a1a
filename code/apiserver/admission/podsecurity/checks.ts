/**
 * PodSecurity checks — the shape every check shares and the helpers their messages use. A check
 * reads a pod's metadata and spec (a pod's own, or a controller's template) and says allowed,
 * or a reason and a detail: `privileged (container "c" must not set securityContext.privileged=true)`.
 * Upstream: k8s.io/pod-security-admission policy/checks.go, policy/visitor.go, policy/helpers.go.
 *
 * Solves: the Pod Security Standards are a list of small, independent rules; each one is a
 * pure function of the pod, versioned so that `v1.25` in a namespace label keeps meaning what
 * it meant in 1.25 after the rules change.
 *
 * Invariants:
 * - a check never throws for a strange pod: a missing field is the safe default;
 * - containers are visited in upstream's order: init containers, containers, ephemeral containers;
 * - lists in messages are Go's `%q`-quoted strings joined by ", " (joinQuote), sorted where
 *   upstream collects into a set.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/checks.go (Check, VersionedCheck, CheckResult, AggregateCheckResults)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/visitor.go (visitContainers)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/helpers.go (joinQuote, pluralize)
 * @chapter 03-api-security
 */
import type { Level } from "./api.ts";

// #region pod-types
/** The parts of a pod the checks read (JSON as stored; every field optional). */
export interface SecurityContext {
  privileged?: boolean;
  allowPrivilegeEscalation?: boolean;
  runAsNonRoot?: boolean;
  runAsUser?: number;
  procMount?: string;
  capabilities?: { add?: string[]; drop?: string[] };
  seccompProfile?: { type?: string; localhostProfile?: string };
  appArmorProfile?: { type?: string; localhostProfile?: string };
  seLinuxOptions?: { user?: string; role?: string; type?: string; level?: string };
  windowsOptions?: { hostProcess?: boolean };
}

export interface Container {
  name: string;
  image?: string;
  ports?: { containerPort?: number; hostPort?: number }[];
  securityContext?: SecurityContext;
}

export interface PodSpec {
  os?: { name?: string };
  hostNetwork?: boolean;
  hostPID?: boolean;
  hostIPC?: boolean;
  runtimeClassName?: string;
  securityContext?: SecurityContext & { sysctls?: { name: string; value?: string }[] };
  volumes?: ({ name: string } & Record<string, unknown>)[];
  initContainers?: Container[];
  containers?: Container[];
  ephemeralContainers?: Container[];
}

export interface PodMetadata {
  name?: string;
  annotations?: Record<string, string>;
}
// #endregion pod-types

// #region check
export interface CheckResult {
  allowed: boolean;
  /** Short, for the list of reasons: `privileged`, `host namespaces`. */
  forbiddenReason?: string;
  /** What exactly, in the words of the fields: `container "c" must not set …`. */
  forbiddenDetail?: string;
}

export type CheckPod = (meta: PodMetadata, spec: PodSpec) => CheckResult;

export interface Check {
  id: string;
  level: Exclude<Level, "privileged">;
  /**
   * A restricted check that replaces stricter-than baseline ones (capabilities, hostPath volumes,
   * seccomp): where it applies, the named baseline checks do not run, so restricted does not
   * report the same fault twice.
   */
  overrides?: string[];
  /** Oldest first; the newest whose minimum is not after the evaluated version applies. */
  versions: { minimumVersion: number; checkPod: CheckPod }[];
}

export const allowed: CheckResult = { allowed: true };

export function forbidden(reason: string, detail: string): CheckResult {
  return { allowed: false, forbiddenReason: reason, forbiddenDetail: detail };
}
// #endregion check

// #region helpers
/** Every container of the pod, in upstream's order. */
export function containersOf(spec: PodSpec): Container[] {
  return [...(spec.initContainers ?? []), ...(spec.containers ?? []), ...(spec.ephemeralContainers ?? [])];
}

export function pluralize(singular: string, plural: string, n: number): string {
  return n === 1 ? singular : plural;
}

/** Go's %q of each, joined with ", ". */
export function joinQuote(items: readonly string[]): string {
  return items.map((s) => JSON.stringify(s)).join(", ");
}

/** `container "a"` / `containers "a", "b"`. */
export function containersPhrase(names: readonly string[]): string {
  return `${pluralize("container", "containers", names.length)} ${joinQuote(names)}`;
}

/** A sorted, deduplicated list (upstream's sets.String.List()). */
export function sortedSet(items: Iterable<string>): string[] {
  return [...new Set(items)].sort();
}

export function isWindowsPod(spec: PodSpec): boolean {
  return spec.os?.name === "windows";
}
// #endregion helpers

// #region aggregate
/** The failed checks of one evaluation, as messages print them. */
export interface AggregateCheckResult {
  allowed: boolean;
  forbiddenReasons: string[];
  forbiddenDetails: string[];
}

export function aggregateCheckResults(results: readonly CheckResult[]): AggregateCheckResult {
  const failed = results.filter((r) => !r.allowed);
  return {
    allowed: failed.length === 0,
    forbiddenReasons: failed.map((r) => r.forbiddenReason ?? ""),
    forbiddenDetails: failed.map((r) => r.forbiddenDetail ?? ""),
  };
}

/** `reason (detail), reason (detail)`: the text after `violates PodSecurity "…": `. */
export function forbiddenDetail(a: AggregateCheckResult): string {
  return a.forbiddenReasons
    .map((reason, i) => (a.forbiddenDetails[i] ? `${reason} (${a.forbiddenDetails[i]})` : reason))
    .join(", ");
}

/** Reasons only: the per-pod warnings of a namespace label change. */
export function forbiddenReason(a: AggregateCheckResult): string {
  return a.forbiddenReasons.join(", ");
}
// #endregion aggregate

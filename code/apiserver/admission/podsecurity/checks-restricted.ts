/**
 * The restricted checks — what the restricted level adds to baseline: current hardening best
 * practice. No privilege escalation, run as non-root (and never as uid 0), a seccomp profile,
 * every capability dropped (NET_BIND_SERVICE may come back), and only the volume types that
 * cannot reach the node. v1.32's versions and messages. Upstream: k8s.io/pod-security-admission
 * policy/check_*.go.
 *
 * Solves: a namespace at `restricted` only runs pods written to be safe; each message names
 * the field to set, so the fix is in the refusal (`container "c" must set
 * securityContext.allowPrivilegeEscalation=false`).
 *
 * Invariants:
 * - unlike baseline, an unset field fails where the safe value must be asked for
 *   (allowPrivilegeEscalation, runAsNonRoot, seccompProfile, capabilities.drop);
 * - pod-level runAsNonRoot and seccompProfile cover every container that sets neither;
 * - from v1.25, Windows pods (spec.os.name=windows) skip the Linux-only checks.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_allowPrivilegeEscalation.go (allowPrivilegeEscalation_1_8, allowPrivilegeEscalation_1_25)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_restrictedVolumes.go (restrictedVolumes_1_0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_runAsNonRoot.go (runAsNonRoot_1_0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_runAsUser.go (runAsUser_1_23)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_seccompProfile_restricted.go (seccompProfileRestricted_1_19, seccompProfileRestricted_1_25)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_capabilities_restricted.go (capabilitiesRestricted_1_22, capabilitiesRestricted_1_25)
 * @chapter 03-api-security
 */

import {
  allowed,
  type Check,
  type CheckPod,
  containersOf,
  containersPhrase,
  forbidden,
  isWindowsPod,
  joinQuote,
  pluralize,
  sortedSet,
} from "./checks.ts";
import { validSeccomp } from "./checks-baseline.ts";

/** From v1.25 a Windows pod is allowed by the Linux-only checks. */
const exceptWindows =
  (check: CheckPod): CheckPod =>
  (meta, spec) =>
    isWindowsPod(spec) ? allowed : check(meta, spec);

// #region privilege-escalation
const allowPrivilegeEscalation: CheckPod = (_meta, spec) => {
  const bad = containersOf(spec)
    .filter((c) => c.securityContext?.allowPrivilegeEscalation !== false)
    .map((c) => c.name);
  if (bad.length === 0) return allowed;
  return forbidden(
    "allowPrivilegeEscalation != false",
    `${containersPhrase(bad)} must set securityContext.allowPrivilegeEscalation=false`,
  );
};
// #endregion privilege-escalation

// #region volumes
/** The volume types a restricted pod may use: none of them reaches the node or the network. */
const allowedVolumeTypes = new Set([
  "configMap",
  "csi",
  "downwardAPI",
  "emptyDir",
  "ephemeral",
  "persistentVolumeClaim",
  "projected",
  "secret",
]);

const restrictedVolumes: CheckPod = (_meta, spec) => {
  const bad: string[] = [];
  const types: string[] = [];
  for (const v of spec.volumes ?? []) {
    const source = Object.keys(v).find((k) => k !== "name" && v[k] != null);
    if (source && allowedVolumeTypes.has(source)) continue;
    bad.push(v.name);
    types.push(source ?? "unknown");
  }
  if (bad.length === 0) return allowed;
  const list = sortedSet(types);
  return forbidden(
    "restricted volume types",
    `${pluralize("volume", "volumes", bad.length)} ${joinQuote(bad)} ${pluralize("uses", "use", bad.length)} ${pluralize("restricted volume type", "restricted volume types", list.length)} ${joinQuote(list)}`,
  );
};
// #endregion volumes

// #region run-as-non-root
const runAsNonRoot: CheckPod = (_meta, spec) => {
  const setters: string[] = [];
  const podValue = spec.securityContext?.runAsNonRoot;
  if (podValue === false) setters.push("pod");
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containersOf(spec)) {
    const v = c.securityContext?.runAsNonRoot;
    if (v === false) explicit.push(c.name);
    else if (v == null && podValue !== true) implicit.push(c.name);
  }
  if (explicit.length > 0) setters.push(containersPhrase(explicit));
  if (setters.length > 0) {
    return forbidden(
      "runAsNonRoot != true",
      `${setters.join(" and ")} must not set securityContext.runAsNonRoot=false`,
    );
  }
  if (implicit.length > 0) {
    return forbidden(
      "runAsNonRoot != true",
      `pod or ${containersPhrase(implicit)} must set securityContext.runAsNonRoot=true`,
    );
  }
  return allowed;
};
// #endregion run-as-non-root

// #region run-as-user
const runAsUser: CheckPod = (_meta, spec) => {
  const setters: string[] = [];
  if (spec.securityContext?.runAsUser === 0) setters.push("pod");
  const bad = containersOf(spec)
    .filter((c) => c.securityContext?.runAsUser === 0)
    .map((c) => c.name);
  if (bad.length > 0) setters.push(containersPhrase(bad));
  if (setters.length === 0) return allowed;
  return forbidden("runAsUser=0", `${setters.join(" and ")} must not set runAsUser=0`);
};
// #endregion run-as-user

// #region seccomp-restricted
const seccompRestricted: CheckPod = (_meta, spec) => {
  const setters: string[] = [];
  const values: string[] = [];
  const pod = spec.securityContext?.seccompProfile;
  if (pod && !validSeccomp(pod.type)) {
    setters.push("pod");
    values.push(pod.type ?? "");
  }
  const podSet = pod != null && validSeccomp(pod.type);
  const explicit: string[] = [];
  const implicit: string[] = [];
  for (const c of containersOf(spec)) {
    const p = c.securityContext?.seccompProfile;
    if (p) {
      if (!validSeccomp(p.type)) {
        explicit.push(c.name);
        values.push(p.type ?? "");
      }
    } else if (!podSet) implicit.push(c.name);
  }
  if (explicit.length > 0) setters.push(containersPhrase(explicit));
  if (setters.length > 0) {
    return forbidden(
      "seccompProfile",
      `${setters.join(" and ")} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`,
    );
  }
  if (implicit.length > 0) {
    return forbidden(
      "seccompProfile",
      `pod or ${containersPhrase(implicit)} must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost"`,
    );
  }
  return allowed;
};
// #endregion seccomp-restricted

// #region capabilities-restricted
const capabilitiesRestricted: CheckPod = (_meta, spec) => {
  const missingDropAll: string[] = [];
  const addingForbidden: string[] = [];
  const caps: string[] = [];
  for (const c of containersOf(spec)) {
    const capabilities = c.securityContext?.capabilities;
    if (!capabilities) {
      missingDropAll.push(c.name);
      continue;
    }
    if (!(capabilities.drop ?? []).includes("ALL")) missingDropAll.push(c.name);
    const extra = (capabilities.add ?? []).filter((cap) => cap !== "NET_BIND_SERVICE");
    if (extra.length > 0) {
      addingForbidden.push(c.name);
      caps.push(...extra);
    }
  }
  const details: string[] = [];
  if (missingDropAll.length > 0) {
    details.push(`${containersPhrase(missingDropAll)} must set securityContext.capabilities.drop=["ALL"]`);
  }
  if (addingForbidden.length > 0) {
    details.push(
      `${containersPhrase(addingForbidden)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`,
    );
  }
  return details.length === 0 ? allowed : forbidden("unrestricted capabilities", details.join("; "));
};
// #endregion capabilities-restricted

// #region restricted-checks
/** In upstream's registration order; evaluated after the baseline checks. */
export const restrictedChecks: Check[] = [
  {
    id: "allowPrivilegeEscalation",
    level: "restricted",
    versions: [
      { minimumVersion: 8, checkPod: allowPrivilegeEscalation },
      { minimumVersion: 25, checkPod: exceptWindows(allowPrivilegeEscalation) },
    ],
  },
  {
    id: "capabilities_restricted",
    level: "restricted",
    overrides: ["capabilities_baseline"],
    versions: [
      { minimumVersion: 22, checkPod: capabilitiesRestricted },
      { minimumVersion: 25, checkPod: exceptWindows(capabilitiesRestricted) },
    ],
  },
  {
    id: "restrictedVolumes",
    level: "restricted",
    overrides: ["hostPathVolumes"],
    versions: [{ minimumVersion: 0, checkPod: restrictedVolumes }],
  },
  { id: "runAsNonRoot", level: "restricted", versions: [{ minimumVersion: 0, checkPod: runAsNonRoot }] },
  { id: "runAsUser", level: "restricted", versions: [{ minimumVersion: 23, checkPod: runAsUser }] },
  {
    id: "seccompProfile_restricted",
    level: "restricted",
    overrides: ["seccompProfile_baseline"],
    versions: [
      { minimumVersion: 19, checkPod: seccompRestricted },
      { minimumVersion: 25, checkPod: exceptWindows(seccompRestricted) },
    ],
  },
];
// #endregion restricted-checks

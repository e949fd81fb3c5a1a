/**
 * The baseline checks — what the Pod Security Standards' baseline level forbids: the known ways
 * out of a container (host namespaces, privileged, extra capabilities, hostPath volumes, host
 * ports, unconfined AppArmor, SELinux or seccomp, an unmasked /proc, unsafe sysctls, Windows
 * host processes). One function per upstream check file, v1.32's versions and messages.
 *
 * Solves: a namespace at `baseline` runs ordinary workloads unchanged (nothing here is needed by
 * a plain web server) and refuses the pods that would own the node.
 *
 * Invariants:
 * - every check is allowed for a pod that sets none of its fields (the defaults are safe);
 * - three checks give way at restricted to stricter ones (checks-restricted.ts `overrides`):
 *   capabilities_baseline, hostPathVolumes, seccompProfile_baseline.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_windowsHostProcess.go (windowsHostProcess_1_0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_hostNamespaces.go (hostNamespaces_1_0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_privileged.go (privileged_1_0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_capabilities_baseline.go (capabilitiesBaseline_1_0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_hostPathVolumes.go (hostPathVolumes_1_0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_hostPorts.go (hostPorts_1_0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_appArmorProfile.go (appArmorProfile_1_0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_seLinuxOptions.go (seLinuxOptions_1_0, seLinuxOptions_1_31)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_procMount.go (procMount_1_0)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_seccompProfile_baseline.go (seccompProfileBaseline_1_0, seccompProfileBaseline_1_19)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/policy/check_sysctls.go (sysctls_1_0 … sysctls_1_32)
 * @chapter 03-api-security
 */
import {
  allowed,
  type Check,
  type CheckPod,
  type CheckResult,
  containersOf,
  containersPhrase,
  forbidden,
  joinQuote,
  type PodSpec,
  pluralize,
  type SecurityContext,
  sortedSet,
} from "./checks.ts";

/**
 * The pattern many checks share: the pod and the containers that set a field badly, as
 * `pod and containers "a", "b"`; empty when nobody did.
 */
function badSetters(spec: PodSpec, bad: (sc: SecurityContext) => boolean): string[] {
  const setters: string[] = [];
  if (spec.securityContext && bad(spec.securityContext)) setters.push("pod");
  const names = containersOf(spec)
    .filter((c) => c.securityContext && bad(c.securityContext))
    .map((c) => c.name);
  if (names.length > 0) setters.push(containersPhrase(names));
  return setters;
}

// #region host-process
const windowsHostProcess: CheckPod = (_meta, spec) => {
  const setters = badSetters(spec, (sc) => sc.windowsOptions?.hostProcess === true);
  if (setters.length === 0) return allowed;
  return forbidden(
    "hostProcess",
    `${setters.join(" and ")} must not set securityContext.windowsOptions.hostProcess=true`,
  );
};
// #endregion host-process

// #region host-namespaces
const hostNamespaces: CheckPod = (_meta, spec) => {
  const set = (["hostNetwork", "hostPID", "hostIPC"] as const).filter((f) => spec[f] === true);
  return set.length === 0 ? allowed : forbidden("host namespaces", set.map((f) => `${f}=true`).join(", "));
};
// #endregion host-namespaces

// #region privileged
const privileged: CheckPod = (_meta, spec) => {
  const bad = containersOf(spec)
    .filter((c) => c.securityContext?.privileged === true)
    .map((c) => c.name);
  if (bad.length === 0) return allowed;
  return forbidden("privileged", `${containersPhrase(bad)} must not set securityContext.privileged=true`);
};
// #endregion privileged

// #region capabilities-baseline
/** The container runtimes' default set: adding one of these gives nothing away. */
const defaultCapabilities = new Set([
  "AUDIT_WRITE",
  "CHOWN",
  "DAC_OVERRIDE",
  "FOWNER",
  "FSETID",
  "KILL",
  "MKNOD",
  "NET_BIND_SERVICE",
  "SETFCAP",
  "SETGID",
  "SETPCAP",
  "SETUID",
  "SYS_CHROOT",
]);

const capabilitiesBaseline: CheckPod = (_meta, spec) => {
  const bad: string[] = [];
  const caps: string[] = [];
  for (const c of containersOf(spec)) {
    const extra = (c.securityContext?.capabilities?.add ?? []).filter((cap) => !defaultCapabilities.has(cap));
    if (extra.length === 0) continue;
    bad.push(c.name);
    caps.push(...extra);
  }
  if (bad.length === 0) return allowed;
  return forbidden(
    "non-default capabilities",
    `${containersPhrase(bad)} must not include ${joinQuote(sortedSet(caps))} in securityContext.capabilities.add`,
  );
};
// #endregion capabilities-baseline

// #region host-path
const hostPathVolumes: CheckPod = (_meta, spec) => {
  const bad = (spec.volumes ?? []).filter((v) => v.hostPath != null).map((v) => v.name);
  if (bad.length === 0) return allowed;
  return forbidden("hostPath volumes", `${pluralize("volume", "volumes", bad.length)} ${joinQuote(bad)}`);
};
// #endregion host-path

// #region host-ports
const hostPorts: CheckPod = (_meta, spec) => {
  const bad: string[] = [];
  const ports: string[] = [];
  for (const c of containersOf(spec)) {
    const used = (c.ports ?? []).filter((p) => (p.hostPort ?? 0) !== 0).map((p) => String(p.hostPort));
    if (used.length === 0) continue;
    bad.push(c.name);
    ports.push(...used);
  }
  if (bad.length === 0) return allowed;
  const list = sortedSet(ports); // sorted as strings, as upstream's string set
  return forbidden(
    "hostPort",
    `${containersPhrase(bad)} ${pluralize("uses", "use", bad.length)} ${pluralize("hostPort", "hostPorts", list.length)} ${list.join(", ")}`,
  );
};
// #endregion host-ports

// #region apparmor
const appArmorAnnotationPrefix = "container.apparmor.security.beta.kubernetes.io/";

const appArmorProfile: CheckPod = (meta, spec) => {
  const badType = (sc: SecurityContext) =>
    sc.appArmorProfile != null && !["RuntimeDefault", "Localhost"].includes(sc.appArmorProfile.type ?? "");
  const setters = badSetters(spec, badType);
  const values = sortedSet(
    [spec.securityContext, ...containersOf(spec).map((c) => c.securityContext)]
      .filter((sc): sc is SecurityContext => sc != null && badType(sc))
      .map((sc) => sc.appArmorProfile?.type ?? ""),
  );
  const annotations = Object.entries(meta.annotations ?? {})
    .filter(([k, v]) => k.startsWith(appArmorAnnotationPrefix) && !allowedAppArmorAnnotation(v))
    .map(([k, v]) => `${k}=${JSON.stringify(v)}`)
    .sort();
  if (annotations.length > 0) {
    values.push(...annotations);
    setters.push(pluralize("annotation", "annotations", annotations.length));
  }
  if (setters.length === 0) return allowed;
  return forbidden(
    pluralize("forbidden AppArmor profile", "forbidden AppArmor profiles", values.length),
    `${setters.join(" and ")} must not set AppArmor profile type to ${joinQuote(values)}`,
  );
};

function allowedAppArmorAnnotation(v: string): boolean {
  return v === "" || v === "runtime/default" || v.startsWith("localhost/");
}
// #endregion apparmor

// #region selinux
const seLinuxTypes10 = ["", "container_t", "container_init_t", "container_kvm_t"];
const seLinuxTypes131 = [...seLinuxTypes10, "container_engine_t"];

function seLinuxOptions(allowedTypes: readonly string[]): CheckPod {
  return (_meta, spec) => {
    const badTypes: string[] = [];
    let setUser = false;
    let setRole = false;
    const setters = badSetters(spec, (sc) => {
      const o = sc.seLinuxOptions;
      if (!o) return false;
      let valid = true;
      if (!allowedTypes.includes(o.type ?? "")) {
        valid = false;
        badTypes.push(o.type ?? "");
      }
      if (o.user) [valid, setUser] = [false, true];
      if (o.role) [valid, setRole] = [false, true];
      return !valid;
    });
    if (setters.length === 0) return allowed;
    const data: string[] = [];
    const types = sortedSet(badTypes);
    if (types.length > 0) data.push(`${pluralize("type", "types", types.length)} ${joinQuote(types)}`);
    if (setUser) data.push("user may not be set");
    if (setRole) data.push("role may not be set");
    return forbidden(
      "seLinuxOptions",
      `${setters.join(" and ")} set forbidden securityContext.seLinuxOptions: ${data.join("; ")}`,
    );
  };
}
// #endregion selinux

// #region proc-mount
const procMount: CheckPod = (_meta, spec) => {
  const bad: string[] = [];
  const types: string[] = [];
  for (const c of containersOf(spec)) {
    const pm = c.securityContext?.procMount;
    if (pm == null || pm === "Default") continue;
    bad.push(c.name);
    types.push(pm);
  }
  if (bad.length === 0) return allowed;
  return forbidden(
    "procMount",
    `${containersPhrase(bad)} must not set securityContext.procMount to ${joinQuote(sortedSet(types))}`,
  );
};
// #endregion proc-mount

// #region seccomp-baseline
export const validSeccomp = (t: string | undefined) => t === "RuntimeDefault" || t === "Localhost";

/** Before 1.19 seccomp was set by annotations; a namespace pinned to v1.18 is judged by those. */
const seccompBaseline10: CheckPod = (meta, spec) => {
  const a = meta.annotations ?? {};
  const ok = (v: string) => v === "runtime/default" || v === "docker/default" || v.startsWith("localhost/");
  const keys = [
    "seccomp.security.alpha.kubernetes.io/pod",
    ...containersOf(spec).map((c) => `container.seccomp.security.alpha.kubernetes.io/${c.name}`),
  ];
  const bad = sortedSet(
    keys.filter((k) => a[k] !== undefined && !ok(a[k])).map((k) => `${k}=${JSON.stringify(a[k])}`),
  );
  if (bad.length === 0) return allowed;
  return forbidden(
    "seccompProfile",
    `forbidden ${pluralize("annotation", "annotations", bad.length)} ${bad.join(", ")}`,
  );
};

const seccompBaseline119: CheckPod = (_meta, spec) => {
  const values: string[] = [];
  const setters = badSetters(spec, (sc) => {
    if (!sc.seccompProfile || validSeccomp(sc.seccompProfile.type)) return false;
    values.push(sc.seccompProfile.type ?? "");
    return true;
  });
  if (setters.length === 0) return allowed;
  return forbidden(
    "seccompProfile",
    `${setters.join(" and ")} must not set securityContext.seccompProfile.type to ${joinQuote(sortedSet(values))}`,
  );
};
// #endregion seccomp-baseline

// #region sysctls
/** The namespaced sysctls that cannot reach beyond the pod, growing by version. */
const sysctls10 = [
  "kernel.shm_rmid_forced",
  "net.ipv4.ip_local_port_range",
  "net.ipv4.tcp_syncookies",
  "net.ipv4.ping_group_range",
  "net.ipv4.ip_unprivileged_port_start",
];
const sysctls127 = [...sysctls10, "net.ipv4.ip_local_reserved_ports"];
const sysctls129 = [
  ...sysctls127,
  "net.ipv4.tcp_keepalive_time",
  "net.ipv4.tcp_fin_timeout",
  "net.ipv4.tcp_keepalive_intvl",
  "net.ipv4.tcp_keepalive_probes",
];
const sysctls132 = [...sysctls129, "net.ipv4.tcp_rmem", "net.ipv4.tcp_wmem"];

function sysctls(allowedNames: readonly string[]): CheckPod {
  return (_meta, spec): CheckResult => {
    const bad = (spec.securityContext?.sysctls ?? [])
      .map((s) => s.name)
      .filter((n) => !allowedNames.includes(n));
    return bad.length === 0 ? allowed : forbidden("forbidden sysctls", bad.join(", "));
  };
}
// #endregion sysctls

// #region baseline-checks
/** In upstream's registration order (its file names, sorted): messages list failures in this order. */
export const baselineChecks: Check[] = [
  { id: "appArmorProfile", level: "baseline", versions: [{ minimumVersion: 0, checkPod: appArmorProfile }] },
  {
    id: "capabilities_baseline",
    level: "baseline",
    versions: [{ minimumVersion: 0, checkPod: capabilitiesBaseline }],
  },
  { id: "hostNamespaces", level: "baseline", versions: [{ minimumVersion: 0, checkPod: hostNamespaces }] },
  {
    id: "hostPathVolumes",
    level: "baseline",
    versions: [{ minimumVersion: 0, checkPod: hostPathVolumes }],
  },
  { id: "hostPorts", level: "baseline", versions: [{ minimumVersion: 0, checkPod: hostPorts }] },
  { id: "privileged", level: "baseline", versions: [{ minimumVersion: 0, checkPod: privileged }] },
  { id: "procMount", level: "baseline", versions: [{ minimumVersion: 0, checkPod: procMount }] },
  {
    id: "seLinuxOptions",
    level: "baseline",
    versions: [
      { minimumVersion: 0, checkPod: seLinuxOptions(seLinuxTypes10) },
      { minimumVersion: 31, checkPod: seLinuxOptions(seLinuxTypes131) },
    ],
  },
  {
    id: "seccompProfile_baseline",
    level: "baseline",
    versions: [
      { minimumVersion: 0, checkPod: seccompBaseline10 },
      { minimumVersion: 19, checkPod: seccompBaseline119 },
    ],
  },
  {
    id: "sysctls",
    level: "baseline",
    versions: [
      { minimumVersion: 0, checkPod: sysctls(sysctls10) },
      { minimumVersion: 27, checkPod: sysctls(sysctls127) },
      { minimumVersion: 29, checkPod: sysctls(sysctls129) },
      { minimumVersion: 32, checkPod: sysctls(sysctls132) },
    ],
  },
  {
    id: "windowsHostProcess",
    level: "baseline",
    versions: [{ minimumVersion: 0, checkPod: windowsHostProcess }],
  },
];
// #endregion baseline-checks

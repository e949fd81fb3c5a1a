import { describe, expect, it } from "vitest";
import { policyToEvaluate } from "./api.ts";
import {
  aggregateCheckResults,
  type Check,
  forbiddenDetail,
  type PodMetadata,
  type PodSpec,
} from "./checks.ts";
import { baselineChecks } from "./checks-baseline.ts";
import { restrictedChecks } from "./checks-restricted.ts";
import { evaluatePod } from "./registry.ts";

const checks = new Map<string, Check>([...baselineChecks, ...restrictedChecks].map((c) => [c.id, c]));

/** The check's newest version (or the one for `minor`) on a pod. */
function run(id: string, spec: PodSpec, meta: PodMetadata = {}, minor = Number.POSITIVE_INFINITY) {
  const check = checks.get(id);
  if (!check) throw new Error(`no check ${id}`);
  const v = [...check.versions].reverse().find((x) => x.minimumVersion <= minor);
  if (!v) throw new Error(`${id} has no version for ${minor}`);
  const r = v.checkPod(meta, spec);
  return r.allowed ? "allowed" : `${r.forbiddenReason} (${r.forbiddenDetail})`;
}

const c = (name: string, securityContext?: object, extra: object = {}) => ({
  name,
  securityContext,
  ...extra,
});

/** A container that passes every restricted check. */
const good = c("c", {
  allowPrivilegeEscalation: false,
  runAsNonRoot: true,
  seccompProfile: { type: "RuntimeDefault" },
  capabilities: { drop: ["ALL"] },
});

// Each row: check, a pod that passes, a pod that fails, the exact reason (detail).
const table: [string, PodSpec, PodSpec, string, PodMetadata?][] = [
  [
    "windowsHostProcess",
    { containers: [c("c", { windowsOptions: { hostProcess: false } })] },
    {
      securityContext: { windowsOptions: { hostProcess: true } },
      containers: [c("c", { windowsOptions: { hostProcess: true } })],
    },
    'hostProcess (pod and container "c" must not set securityContext.windowsOptions.hostProcess=true)',
  ],
  [
    "hostNamespaces",
    { hostNetwork: false, containers: [c("c")] },
    { hostNetwork: true, hostPID: true, hostIPC: true, containers: [c("c")] },
    "host namespaces (hostNetwork=true, hostPID=true, hostIPC=true)",
  ],
  [
    "privileged",
    { containers: [c("c", { privileged: false })] },
    { initContainers: [c("init", { privileged: true })], containers: [c("c", { privileged: true })] },
    'privileged (containers "init", "c" must not set securityContext.privileged=true)',
  ],
  [
    "capabilities_baseline",
    { containers: [c("c", { capabilities: { add: ["NET_BIND_SERVICE", "CHOWN"] } })] },
    { containers: [c("c", { capabilities: { add: ["SYS_ADMIN", "NET_RAW", "CHOWN"] } })] },
    'non-default capabilities (container "c" must not include "NET_RAW", "SYS_ADMIN" in securityContext.capabilities.add)',
  ],
  [
    "hostPathVolumes",
    { volumes: [{ name: "e", emptyDir: {} }], containers: [c("c")] },
    {
      volumes: [
        { name: "root", hostPath: { path: "/" } },
        { name: "proc", hostPath: { path: "/proc" } },
      ],
      containers: [c("c")],
    },
    'hostPath volumes (volumes "root", "proc")',
  ],
  [
    "hostPorts",
    { containers: [c("c", undefined, { ports: [{ containerPort: 80 }] })] },
    {
      containers: [
        c("c", undefined, {
          ports: [
            { containerPort: 80, hostPort: 8080 },
            { containerPort: 9, hostPort: 443 },
          ],
        }),
      ],
    },
    'hostPort (container "c" uses hostPorts 443, 8080)',
  ],
  [
    "appArmorProfile",
    {
      securityContext: { appArmorProfile: { type: "RuntimeDefault" } },
      containers: [c("c", { appArmorProfile: { type: "Localhost" } })],
    },
    { containers: [c("c", { appArmorProfile: { type: "Unconfined" } })] },
    'forbidden AppArmor profile (container "c" must not set AppArmor profile type to "Unconfined")',
  ],
  [
    "seLinuxOptions",
    { containers: [c("c", { seLinuxOptions: { type: "container_engine_t", level: "s0:c1" } })] },
    {
      securityContext: { seLinuxOptions: { type: "spc_t" } },
      containers: [c("c", { seLinuxOptions: { user: "root" } })],
    },
    'seLinuxOptions (pod and container "c" set forbidden securityContext.seLinuxOptions: type "spc_t"; user may not be set)',
  ],
  [
    "procMount",
    { containers: [c("c", { procMount: "Default" })] },
    { containers: [c("c", { procMount: "Unmasked" })] },
    'procMount (container "c" must not set securityContext.procMount to "Unmasked")',
  ],
  [
    "seccompProfile_baseline",
    { securityContext: { seccompProfile: { type: "RuntimeDefault" } }, containers: [c("c")] },
    { containers: [c("c", { seccompProfile: { type: "Unconfined" } })] },
    'seccompProfile (container "c" must not set securityContext.seccompProfile.type to "Unconfined")',
  ],
  [
    "sysctls",
    { securityContext: { sysctls: [{ name: "net.ipv4.tcp_rmem" }] }, containers: [c("c")] },
    {
      securityContext: { sysctls: [{ name: "kernel.msgmax" }, { name: "net.core.somaxconn" }] },
      containers: [c("c")],
    },
    "forbidden sysctls (kernel.msgmax, net.core.somaxconn)",
  ],
  [
    "allowPrivilegeEscalation",
    { containers: [good] },
    { containers: [c("c")] },
    'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false)',
  ],
  [
    "capabilities_restricted",
    { containers: [c("c", { capabilities: { drop: ["ALL"], add: ["NET_BIND_SERVICE"] } })] },
    { containers: [c("a"), c("b", { capabilities: { drop: ["ALL"], add: ["CHOWN"] } })] },
    'unrestricted capabilities (container "a" must set securityContext.capabilities.drop=["ALL"]; container "b" must not include "CHOWN" in securityContext.capabilities.add)',
  ],
  [
    "restrictedVolumes",
    {
      volumes: [
        { name: "s", secret: { secretName: "x" } },
        { name: "p", persistentVolumeClaim: { claimName: "x" } },
      ],
      containers: [good],
    },
    {
      volumes: [
        { name: "h", hostPath: { path: "/" } },
        { name: "n", nfs: { server: "x", path: "/" } },
      ],
      containers: [good],
    },
    'restricted volume types (volumes "h", "n" use restricted volume types "hostPath", "nfs")',
  ],
  [
    "runAsNonRoot",
    { securityContext: { runAsNonRoot: true }, containers: [c("c")] },
    { containers: [c("a"), c("b", { runAsNonRoot: true })] },
    'runAsNonRoot != true (pod or container "a" must set securityContext.runAsNonRoot=true)',
  ],
  [
    "runAsUser",
    { securityContext: { runAsUser: 1000 }, containers: [c("c")] },
    { securityContext: { runAsUser: 0 }, containers: [c("c", { runAsUser: 0 })] },
    'runAsUser=0 (pod and container "c" must not set runAsUser=0)',
  ],
  [
    "seccompProfile_restricted",
    {
      securityContext: { seccompProfile: { type: "Localhost", localhostProfile: "p.json" } },
      containers: [c("c")],
    },
    { containers: [c("c")] },
    'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
  ],
];

describe("each PodSecurity check: a passing pod, a failing pod, upstream's message", () => {
  it.each(table)("%s", (id, pass, fail, message, meta) => {
    expect(run(id, pass, meta)).toBe("allowed");
    expect(run(id, fail, meta)).toBe(message);
  });

  it("covers every check v1.32 registers", () => {
    expect(table.map((row) => row[0]).sort()).toEqual([...checks.keys()].sort());
  });

  it("explicit bad values are named before missing ones", () => {
    expect(
      run("runAsNonRoot", {
        securityContext: { runAsNonRoot: false },
        containers: [c("a", { runAsNonRoot: false }), c("b")],
      }),
    ).toBe('runAsNonRoot != true (pod and container "a" must not set securityContext.runAsNonRoot=false)');
    expect(
      run("seccompProfile_restricted", {
        securityContext: { seccompProfile: { type: "Unconfined" } },
        containers: [c("c")],
      }),
    ).toBe('seccompProfile (pod must not set securityContext.seccompProfile.type to "Unconfined")');
  });

  it("AppArmor annotations are judged too", () => {
    const meta = { annotations: { "container.apparmor.security.beta.kubernetes.io/c": "unconfined" } };
    expect(run("appArmorProfile", { containers: [c("c")] }, meta)).toBe(
      'forbidden AppArmor profile (annotation must not set AppArmor profile type to "container.apparmor.security.beta.kubernetes.io/c=\\"unconfined\\"")',
    );
  });

  it("versions: sysctls allowed in v1.32 are forbidden in v1.28; v1.18 judges seccomp annotations", () => {
    const spec = {
      securityContext: { sysctls: [{ name: "net.ipv4.tcp_keepalive_time" }] },
      containers: [c("c")],
    };
    expect(run("sysctls", spec, {}, 28)).toBe("forbidden sysctls (net.ipv4.tcp_keepalive_time)");
    expect(run("sysctls", spec, {}, 29)).toBe("allowed");
    const meta = { annotations: { "seccomp.security.alpha.kubernetes.io/pod": "unconfined" } };
    expect(run("seccompProfile_baseline", { containers: [c("c")] }, meta, 18)).toBe(
      'seccompProfile (forbidden annotation seccomp.security.alpha.kubernetes.io/pod="unconfined")',
    );
  });

  it("Windows pods skip the Linux-only restricted checks from v1.25", () => {
    const spec: PodSpec = { os: { name: "windows" }, containers: [c("c")] };
    expect(run("allowPrivilegeEscalation", spec)).toBe("allowed");
    expect(run("allowPrivilegeEscalation", spec, {}, 24)).toContain("allowPrivilegeEscalation != false");
  });
});

describe("evaluatePod: levels and versions", () => {
  const plain: PodSpec = { containers: [c("c")] };
  const message = (
    level: "privileged" | "baseline" | "restricted",
    spec: PodSpec,
    version: "latest" | { minor: number } = "latest",
  ) => forbiddenDetail(aggregateCheckResults(evaluatePod({ level, version }, {}, spec)));

  it("restricted: baseline checks first, then restricted, in upstream's order", () => {
    expect(message("restricted", plain)).toBe(
      'allowPrivilegeEscalation != false (container "c" must set securityContext.allowPrivilegeEscalation=false), ' +
        'unrestricted capabilities (container "c" must set securityContext.capabilities.drop=["ALL"]), ' +
        'runAsNonRoot != true (pod or container "c" must set securityContext.runAsNonRoot=true), ' +
        'seccompProfile (pod or container "c" must set securityContext.seccompProfile.type to "RuntimeDefault" or "Localhost")',
    );
    expect(message("baseline", plain)).toBe("");
    expect(message("privileged", { hostNetwork: true, containers: [c("c", { privileged: true })] })).toBe("");
  });

  it("at restricted, restrictedVolumes replaces hostPathVolumes; at baseline the order is registration order", () => {
    const spec: PodSpec = {
      ...good,
      volumes: [{ name: "h", hostPath: { path: "/" } }],
      containers: [good],
      hostNetwork: true,
    };
    expect(message("restricted", spec)).toBe(
      'host namespaces (hostNetwork=true), restricted volume types (volume "h" uses restricted volume type "hostPath")',
    );
    expect(
      message("baseline", { ...spec, containers: [c("c", { capabilities: { add: ["NET_ADMIN"] } })] }),
    ).toBe(
      'non-default capabilities (container "c" must not include "NET_ADMIN" in securityContext.capabilities.add), host namespaces (hostNetwork=true), hostPath volumes (volume "h")',
    );
  });

  it("a version pinned before a check existed does not run it; a future version runs the newest", () => {
    const root: PodSpec = { securityContext: { runAsUser: 0 }, containers: [good] };
    expect(message("restricted", root, { minor: 22 })).toBe("");
    expect(message("restricted", root, { minor: 40 })).toBe("runAsUser=0 (pod must not set runAsUser=0)");
  });
});

describe("policyToEvaluate", () => {
  it("reads the labels, falls back to privileged:latest, fails closed for a bad enforce level", () => {
    const { policy, errors } = policyToEvaluate({
      "pod-security.kubernetes.io/enforce": "baseline",
      "pod-security.kubernetes.io/enforce-version": "v1.32",
      "pod-security.kubernetes.io/warn": "restricted",
    });
    expect(errors).toEqual([]);
    expect(policy).toEqual({
      enforce: { level: "baseline", version: { minor: 32 } },
      audit: { level: "privileged", version: "latest" },
      warn: { level: "restricted", version: "latest" },
    });
    const bad = policyToEvaluate({
      "pod-security.kubernetes.io/enforce": "strict",
      "pod-security.kubernetes.io/audit": "nope",
      "pod-security.kubernetes.io/warn-version": "1.32",
    });
    expect(bad.policy.enforce.level).toBe("restricted");
    expect(bad.policy.audit.level).toBe("privileged");
    expect(bad.errors).toEqual([
      'metadata.labels[pod-security.kubernetes.io/enforce]: Invalid value: "strict": must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.kubernetes.io/audit]: Invalid value: "nope": must be one of privileged, baseline, restricted',
      'metadata.labels[pod-security.kubernetes.io/warn-version]: Invalid value: "1.32": must be "latest" or "v1.x"',
    ]);
  });
});

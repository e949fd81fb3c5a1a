/**
 * The PodSecurity admission plugin — reads the namespace's `pod-security.kubernetes.io/*`
 * labels and judges every pod written there: `enforce` refuses (403), `warn` answers with a
 * warning kubectl prints, `audit` writes an annotation into the audit event. Upstream:
 * k8s.io/pod-security-admission admission/admission.go, wired into the API server by
 * plugin/pkg/admission/security/podsecurity/admission.go.
 *
 * Solves:
 * - the replacement of PodSecurityPolicy: three fixed levels, chosen per namespace by a label,
 *   with no per-pod policy to bind or to get wrong;
 * - a Deployment whose template would be refused is told at once (warn, audit) — it is never
 *   refused itself: its ReplicaSet's pods are, later, by the same plugin;
 * - tightening a namespace (`kubectl label ns x pod-security.kubernetes.io/enforce=restricted`)
 *   warns about the running pods that the new level would refuse, without touching them.
 *
 * Invariants:
 * - only enforce refuses, and only pods; a refused request carries no warnings (upstream:
 *   "avoid adding warnings to a request we're already going to reject");
 * - a namespace with bad labels cannot be created (422); an existing one with bad labels is
 *   evaluated with enforce at restricted (fail closed) and audit and warn at privileged;
 * - pod status, binding and log writes are not judged, nor a pod update that changes neither an
 *   image nor a seccomp annotation (the only pod fields an update may change that matter here);
 * - exempt usernames, namespaces and runtime classes (the plugin's configuration) skip it all.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/pod-security-admission/admission/admission.go (Admission.Validate, ValidateNamespace, ValidatePod, ValidatePodController, EvaluatePod, EvaluatePodsInNamespace, isSignificantPodUpdate)
 * @upstream kubernetes/kubernetes plugin/pkg/admission/security/podsecurity/admission.go (Plugin.Validate: warnings, audit annotations, the Status)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";
import { isStatusError, type StatusError } from "../../errors.ts";
import type { Store } from "../../registry/store.ts";
import { newAdmissionForbidden } from "../errors.ts";
import type { Attributes, ValidationInterface } from "../interfaces.ts";
import {
  aggregate,
  auditAnnotationPrefix,
  compareLevels,
  defaultPolicy,
  type LevelVersion,
  levelVersionString,
  type Policy,
  policyToEvaluate,
  sameLevelVersion,
  versionString,
} from "./api.ts";
import {
  type AggregateCheckResult,
  aggregateCheckResults,
  containersOf,
  forbiddenDetail,
  forbiddenReason,
  type PodMetadata,
  type PodSpec,
} from "./checks.ts";
import { evaluatePod } from "./registry.ts";

export const PluginName = "PodSecurity";

// #region configuration
/** PodSecurityConfiguration (pod-security.admission.config.k8s.io/v1): defaults and exemptions. */
export interface PodSecurityConfiguration {
  defaults?: Policy;
  exemptions?: { usernames?: string[]; namespaces?: string[]; runtimeClasses?: string[] };
}
// #endregion configuration

/** The pod template of the kinds that make pods (upstream's DefaultPodSpecExtractor). */
const podTemplatePaths: Record<string, string[]> = {
  "/podtemplates": ["template"],
  "/replicationcontrollers": ["spec", "template"],
  "apps/replicasets": ["spec", "template"],
  "apps/deployments": ["spec", "template"],
  "apps/statefulsets": ["spec", "template"],
  "apps/daemonsets": ["spec", "template"],
  "batch/jobs": ["spec", "template"],
  "batch/cronjobs": ["spec", "jobTemplate", "spec", "template"],
};

/** Pod subresources that cannot change what the checks read. */
const ignoredPodSubresources = new Set([
  "exec",
  "attach",
  "binding",
  "eviction",
  "log",
  "portforward",
  "proxy",
  "status",
]);

/** What the plugin reads (plugins.ts's PluginContext, by shape, to keep the import one-way). */
export interface PodSecurityContext {
  store(group: string, resource: string): Store | undefined;
}

export function newPodSecurity(
  ctx: PodSecurityContext,
  config: PodSecurityConfiguration = {},
): ValidationInterface {
  const defaults = config.defaults ?? defaultPolicy;
  const exempt = config.exemptions ?? {};
  const has = (list: string[] | undefined, v: string | undefined) => !!v && (list ?? []).includes(v);

  async function namespaceLabels(name: string): Promise<Record<string, string> | undefined> {
    const store = ctx.store("", "namespaces");
    try {
      const ns = store ? await store.get("", name) : undefined;
      return ns?.metadata.labels;
    } catch (e) {
      throw statusOf(e, 500, "InternalError", `failed to lookup namespace ${name}`);
    }
  }

  function statusOf(e: unknown, code: number, reason: string, message: string): StatusError {
    if (isStatusError(e) && code === e.code) return e;
    const err = newAdmissionForbidden(
      { name: "", resource: { group: "", version: "v1", resource: "namespaces" } } as Attributes,
      message,
    );
    Object.assign(err.status, { code, reason, message });
    err.message = message;
    return err;
  }

  function annotate(a: Attributes, key: string, value: string): void {
    a.annotations ??= {};
    a.annotations[`${auditAnnotationPrefix}${key}`] = value;
  }

  // #region evaluate-pod
  /** EvaluatePod: enforce (pods only), then audit, then warn — each level evaluated once. */
  function evaluate(
    a: Attributes,
    policy: Policy,
    policyErrors: string[],
    meta: PodMetadata,
    spec: PodSpec,
    enforce: boolean,
  ): void {
    if (has(exempt.runtimeClasses, spec.runtimeClassName)) {
      annotate(a, "exempt", "runtimeClass");
      return;
    }
    if (policyErrors.length > 0) annotate(a, "error", `Failed to parse policy: ${aggregate(policyErrors)}`);
    const cache = new Map<string, AggregateCheckResult>();
    const result = (lv: LevelVersion) => {
      const key = levelVersionString(lv);
      const r = cache.get(key) ?? aggregateCheckResults(evaluatePod(lv, meta, spec));
      cache.set(key, r);
      return r;
    };
    let refusal: StatusError | undefined;
    if (enforce) {
      annotate(a, "enforce-policy", levelVersionString(policy.enforce));
      const r = result(policy.enforce);
      if (!r.allowed) {
        refusal = newAdmissionForbidden(
          a,
          `violates PodSecurity ${JSON.stringify(levelVersionString(policy.enforce))}: ${forbiddenDetail(r)}`,
        );
      }
    }
    const audit = result(policy.audit);
    if (!audit.allowed) {
      annotate(
        a,
        "audit-violations",
        `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.audit))}: ${forbiddenDetail(audit)}`,
      );
    }
    if (refusal) throw refusal;
    const warn = result(policy.warn);
    if (!warn.allowed) {
      a.warnings ??= [];
      a.warnings.push(
        `would violate PodSecurity ${JSON.stringify(levelVersionString(policy.warn))}: ${forbiddenDetail(warn)}`,
      );
    }
  }
  // #endregion evaluate-pod

  // #region validate-namespace
  async function validateNamespace(a: Attributes): Promise<void> {
    if (a.subresource || !a.object) return;
    const { policy, errors } = policyToEvaluate(a.object.metadata.labels, defaults);
    if (a.operation === "CREATE") {
      if (errors.length > 0) throw statusOf(undefined, 422, "Invalid", aggregate(errors));
      return;
    }
    const old = policyToEvaluate(a.oldObject?.metadata.labels, defaults);
    if (errors.length > 0 && (old.errors.length === 0 || aggregate(errors) !== aggregate(old.errors))) {
      throw statusOf(undefined, 422, "Invalid", aggregate(errors));
    }
    // Dry-run the existing pods only when the new enforce level is stricter than before.
    const [now, before] = [policy.enforce, old.policy.enforce];
    if (sameLevelVersion(now, before) || now.level === "privileged") return;
    const sameVersion = versionString(now.version) === versionString(before.version);
    if (sameVersion && compareLevels(now.level, before.level) < 1) return; // relaxed
    if (has(exempt.namespaces, a.name)) return;
    a.warnings ??= [];
    a.warnings.push(...(await evaluatePodsInNamespace(a.name, now)));
  }

  /** The new enforce level against the pods already there: one warning per distinct fault. */
  async function evaluatePodsInNamespace(namespace: string, enforce: LevelVersion): Promise<string[]> {
    const pods = (await ctx.store("", "pods")?.list(namespace, {}))?.items ?? [];
    const byWarning = new Map<string, { podName: string; count: number }>();
    for (const pod of pods) {
      const spec = (pod.spec ?? {}) as PodSpec;
      if (has(exempt.runtimeClasses, spec.runtimeClassName)) continue;
      const r = aggregateCheckResults(evaluatePod(enforce, pod.metadata, spec));
      if (r.allowed) continue;
      const warning = forbiddenReason(r);
      const name = pod.metadata.name ?? "";
      const seen = byWarning.get(warning);
      if (!seen) byWarning.set(warning, { podName: name, count: 1 });
      else {
        seen.count++;
        if (name < seen.podName) seen.podName = name;
      }
    }
    if (byWarning.size === 0) return [];
    const podWarnings = [...byWarning].map(([warning, { podName, count }]) =>
      count === 1
        ? `${podName}: ${warning}`
        : count === 2
          ? `${podName} (and 1 other pod): ${warning}`
          : `${podName} (and ${count - 1} other pods): ${warning}`,
    );
    return [
      `existing pods in namespace ${JSON.stringify(namespace)} violate the new PodSecurity enforce level ${JSON.stringify(levelVersionString(enforce))}`,
      ...podWarnings.sort(),
    ];
  }
  // #endregion validate-namespace

  // #region validate-pods
  async function validatePod(a: Attributes): Promise<void> {
    if (ignoredPodSubresources.has(a.subresource) || !a.object) return;
    if (has(exempt.namespaces, a.namespace) || has(exempt.usernames, a.userInfo.name)) {
      annotate(a, "exempt", has(exempt.namespaces, a.namespace) ? "namespace" : "user");
      return;
    }
    const { policy, errors } = policyToEvaluate(await namespaceLabels(a.namespace), defaults);
    const allPrivileged = [policy.enforce, policy.warn, policy.audit].every(
      (lv) => lv.level === "privileged",
    );
    if (errors.length === 0 && allPrivileged) return;
    if (a.operation === "UPDATE" && a.oldObject && !isSignificantPodUpdate(a.object, a.oldObject)) return;
    evaluate(a, policy, errors, a.object.metadata, (a.object.spec ?? {}) as PodSpec, true);
  }

  async function validatePodController(a: Attributes, path: string[]): Promise<void> {
    if (a.subresource || !a.object) return;
    if (has(exempt.namespaces, a.namespace) || has(exempt.usernames, a.userInfo.name)) return;
    const { policy, errors } = policyToEvaluate(await namespaceLabels(a.namespace), defaults);
    if (errors.length === 0 && policy.warn.level === "privileged" && policy.audit.level === "privileged")
      return;
    let template: unknown = a.object;
    for (const key of path) template = (template as Record<string, unknown> | undefined)?.[key];
    if (!template) return; // a controller without a template: nothing to judge
    const t = template as { metadata?: PodMetadata; spec?: PodSpec };
    evaluate(a, policy, errors, t.metadata ?? {}, t.spec ?? {}, false);
  }
  // #endregion validate-pods

  return {
    name: PluginName,
    handles: (op) => op === "CREATE" || op === "UPDATE",
    async validate(a) {
      const gr = `${a.resource.group}/${a.resource.resource}`;
      if (gr === "/namespaces") return validateNamespace(a);
      if (gr === "/pods") return validatePod(a);
      const path = podTemplatePaths[gr];
      if (path) return validatePodController(a, path);
    },
  };
}

/** Only a change of an image or of a seccomp annotation can change a pod's verdict on update. */
export function isSignificantPodUpdate(pod: KubeObject, old: KubeObject): boolean {
  const seccompPod = "seccomp.security.alpha.kubernetes.io/pod";
  const ann = pod.metadata.annotations ?? {};
  const oldAnn = old.metadata.annotations ?? {};
  if (ann[seccompPod] !== oldAnn[seccompPod]) return true;
  const spec = (pod.spec ?? {}) as PodSpec;
  const oldSpec = (old.spec ?? {}) as PodSpec;
  for (const key of ["containers", "initContainers"] as const) {
    if ((spec[key] ?? []).length !== (oldSpec[key] ?? []).length) return true;
  }
  const oldByName = new Map(containersOf(oldSpec).map((c) => [c.name, c]));
  for (const c of containersOf(spec)) {
    const o = oldByName.get(c.name);
    if (!o || o.image !== c.image) return true;
    const key = `container.seccomp.security.alpha.kubernetes.io/${c.name}`;
    if (ann[key] !== oldAnn[key]) return true;
  }
  return false;
}

/**
 * Webhook configuration validation — what a MutatingWebhookConfiguration or
 * ValidatingWebhookConfiguration must say before the API server will call anyone with it.
 * Upstream: kubernetes pkg/apis/admissionregistration/validation/validation.go, with the URL and
 * service checks of k8s.io/apiserver pkg/util/webhook/validation.go.
 *
 * Solves:
 * - a webhook is called for every matching write in the cluster: a configuration that is
 *   ambiguous (`*` beside other operations, both a url and a service) or unsafe (plain http, a
 *   dry run reaching a webhook with side effects) is refused when it is written, not discovered
 *   when a pod create fails;
 * - v1 admits only webhooks without side effects (`None`, `NoneOnDryRun`): `Unknown` and `Some`
 *   survive only in configurations stored by an older API server, and an update may keep them.
 *
 * Invariants:
 * - every webhook name is a fully qualified domain name (three segments or more), unique in its
 *   configuration;
 * - timeoutSeconds is between 1 and 30; exactly one of clientConfig.url and clientConfig.service;
 * - messages and supported-value lists are upstream's (Go's sets list sorted).
 *
 * @upstream kubernetes/kubernetes pkg/apis/admissionregistration/validation/validation.go (ValidateMutatingWebhookConfiguration, ValidateValidatingWebhookConfiguration, validateMutatingWebhook, validateRuleWithOperations, validateResources, validateAdmissionReviewVersions, ValidateMutatingWebhookConfigurationUpdate)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/util/webhook/validation.go (ValidateWebhookURL, ValidateWebhookService)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/validation/validation.go (IsFullyQualifiedName)
 * @chapter 03-api-security
 */
import type {
  MutatingWebhook,
  MutatingWebhookConfiguration,
  RuleWithOperations,
  ValidatingWebhook,
} from "./admissionregistration.ts";
import {
  childPath,
  duplicate,
  type FieldError,
  goStringSlice,
  indexPath,
  invalid,
  notSupported,
  required,
} from "./field-errors.ts";
import type { KubeObject } from "./meta.ts";
import {
  validateLabelSelector,
  validateObjectMeta,
  validateObjectMetaUpdate,
} from "./object-meta-validation.ts";
import {
  isDNS1035Label,
  isDNS1123Subdomain,
  isValidPortNum,
  nameIsDNSSubdomain,
} from "./string-validation.ts";

const supportedFailurePolicies = ["Fail", "Ignore"];
const supportedMatchPolicies = ["Equivalent", "Exact"];
const noSideEffectClasses = ["None", "NoneOnDryRun"];
const supportedSideEffectClasses = ["None", "NoneOnDryRun", "Some", "Unknown"];
const supportedOperations = ["*", "CONNECT", "CREATE", "DELETE", "UPDATE"];
const supportedReinvocationPolicies = ["IfNeeded", "Never"];
const validScopes = ["*", "Cluster", "Namespaced"];
/** AcceptedAdmissionReviewVersions: what the prior API server version understands. */
const acceptedAdmissionReviewVersions = ["v1", "v1beta1"];

interface Options {
  requireNoSideEffects: boolean;
  requireRecognizedAdmissionReviewVersion: boolean;
  requireUniqueWebhookNames: boolean;
}

const createOptions: Options = {
  requireNoSideEffects: true,
  requireRecognizedAdmissionReviewVersion: true,
  requireUniqueWebhookNames: true,
};

// #region rules
/** IsFullyQualifiedName: a DNS subdomain with at least three labels. */
function validateFullyQualifiedName(name: string, path: string): FieldError[] {
  if (!name) return [required(path)];
  const errs = isDNS1123Subdomain(name);
  if (errs.length > 0) return [invalid(path, name, errs.join(","))];
  if (name.split(".").length < 3)
    return [invalid(path, name, "should be a domain with at least three segments separated by dots")];
  return [];
}

/** validateResources: `*`, `*\/*`, `x/*` and `*\/x` may not overlap with what they already cover. */
function validateResources(resources: readonly string[] | undefined, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const list = resources ?? [];
  if (list.length === 0) errors.push(required(path));
  const withWildcardSub = new Set<string>();
  const withWildcardRes = new Set<string>();
  let doubleWildcard = false;
  let singleWildcard = false;
  let withoutSub = false;
  list.forEach((resSub, i) => {
    if (resSub === "") {
      errors.push(required(indexPath(path, i)));
      return;
    }
    if (resSub === "*/*") doubleWildcard = true;
    if (resSub === "*") singleWildcard = true;
    const slash = resSub.indexOf("/");
    if (slash < 0) {
      withoutSub = resSub !== "*";
      return;
    }
    const res = resSub.slice(0, slash);
    const sub = resSub.slice(slash + 1);
    if (withWildcardSub.has(res))
      errors.push(
        invalid(indexPath(path, i), resSub, `if '${res}/*' is present, must not specify ${resSub}`),
      );
    if (withWildcardRes.has(sub))
      errors.push(
        invalid(indexPath(path, i), resSub, `if '*/${sub}' is present, must not specify ${resSub}`),
      );
    if (sub === "*") withWildcardSub.add(res);
    if (res === "*") withWildcardRes.add(sub);
  });
  if (list.length > 1 && doubleWildcard)
    errors.push(invalid(path, goStringSlice(list), "if '*/*' is present, must not specify other resources"));
  if (singleWildcard && withoutSub)
    errors.push(
      invalid(
        path,
        goStringSlice(list),
        "if '*' is present, must not specify other resources without subresources",
      ),
    );
  return errors;
}

/** validateRuleWithOperations with validateRule: operations, groups, versions, resources, scope. */
export function validateRuleWithOperations(rule: RuleWithOperations, path: string): FieldError[] {
  const errors: FieldError[] = [];
  const ops = rule.operations ?? [];
  if (ops.length === 0) errors.push(required(childPath(path, "operations")));
  if (ops.length > 1 && ops.includes("*"))
    errors.push(
      invalid(
        childPath(path, "operations"),
        goStringSlice(ops),
        "if '*' is present, must not specify other operations",
      ),
    );
  ops.forEach((op, i) => {
    if (!supportedOperations.includes(op))
      errors.push(notSupported(indexPath(childPath(path, "operations"), i), op, supportedOperations));
  });
  const groups = rule.apiGroups ?? [];
  if (groups.length === 0) errors.push(required(childPath(path, "apiGroups")));
  if (groups.length > 1 && groups.includes("*"))
    errors.push(
      invalid(
        childPath(path, "apiGroups"),
        goStringSlice(groups),
        "if '*' is present, must not specify other API groups",
      ),
    );
  const versions = rule.apiVersions ?? [];
  if (versions.length === 0) errors.push(required(childPath(path, "apiVersions")));
  if (versions.length > 1 && versions.includes("*"))
    errors.push(
      invalid(
        childPath(path, "apiVersions"),
        goStringSlice(versions),
        "if '*' is present, must not specify other API versions",
      ),
    );
  versions.forEach((v, i) => {
    if (v === "") errors.push(required(indexPath(childPath(path, "apiVersions"), i)));
  });
  errors.push(...validateResources(rule.resources, childPath(path, "resources")));
  if (rule.scope !== undefined && rule.scope !== null && !validScopes.includes(rule.scope))
    errors.push(notSupported(childPath(path, "scope"), rule.scope, validScopes));
  return errors;
}
// #endregion rules

// #region client-config
/** ValidateWebhookURL with forceHttps: https, a host, no user, query or fragment. */
function validateWebhookURL(raw: string, path: string): FieldError[] {
  const form = "; desired format: https://host[/path]";
  let u: URL;
  try {
    u = new URL(raw);
  } catch {
    return [required(path, `url must be a valid URL: parse "${raw}": invalid URL${form}`)];
  }
  const errors: FieldError[] = [];
  const scheme = u.protocol.replace(/:$/, "");
  if (scheme !== "https") errors.push(invalid(path, scheme, `'https' is the only allowed URL scheme${form}`));
  if (!u.host) errors.push(invalid(path, u.host, `host must be specified${form}`));
  if (u.username || u.password)
    errors.push(
      invalid(
        path,
        u.password ? `${u.username}:xxxxx` : u.username,
        "user information is not permitted in the URL",
      ),
    );
  if (u.hash) errors.push(invalid(path, u.hash.slice(1), "fragments are not permitted in the URL"));
  if (u.search)
    errors.push(invalid(path, u.search.slice(1), "query parameters are not permitted in the URL"));
  return errors;
}

/** ValidateWebhookService: a name, a namespace, a valid port, a path of DNS-subdomain segments. */
function validateWebhookService(
  service: { name?: string; namespace?: string; path?: string; port?: number },
  path: string,
): FieldError[] {
  const errors: FieldError[] = [];
  if (!service.name) errors.push(required(childPath(path, "name"), "service name is required"));
  if (!service.namespace)
    errors.push(required(childPath(path, "namespace"), "service namespace is required"));
  const port = service.port ?? 443;
  const portErrs = isValidPortNum(port);
  if (portErrs.length > 0)
    errors.push(invalid(childPath(path, "port"), port, `port is not valid: ${portErrs.join(", ")}`));
  const p = service.path;
  if (p === undefined || p === null || p === "" || p === "/") return errors;
  const pathField = childPath(path, "path");
  if (p === "//") return [...errors, invalid(pathField, p, "segment[0] may not be empty")];
  if (!p.startsWith("/")) errors.push(invalid(pathField, p, "must start with a '/'"));
  let check = p.slice(1);
  if (check.endsWith("/")) check = check.slice(0, -1);
  check.split("/").forEach((step, i) => {
    if (step === "") {
      errors.push(invalid(pathField, p, `segment[${i}] may not be empty`));
      return;
    }
    for (const failure of isDNS1123Subdomain(step))
      errors.push(invalid(pathField, p, `segment[${i}]: ${failure}`));
  });
  return errors;
}
// #endregion client-config

// #region webhook
/** validateValidatingWebhook / validateMutatingWebhook (the mutating one adds reinvocationPolicy). */
function validateWebhook(
  hook: MutatingWebhook,
  opts: Options,
  path: string,
  mutating: boolean,
): FieldError[] {
  const errors = validateFullyQualifiedName(hook.name ?? "", childPath(path, "name"));
  (hook.rules ?? []).forEach((rule, i) => {
    errors.push(...validateRuleWithOperations(rule, indexPath(childPath(path, "rules"), i)));
  });
  if (hook.failurePolicy != null && !supportedFailurePolicies.includes(hook.failurePolicy))
    errors.push(notSupported(childPath(path, "failurePolicy"), hook.failurePolicy, supportedFailurePolicies));
  if (hook.matchPolicy != null && !supportedMatchPolicies.includes(hook.matchPolicy))
    errors.push(notSupported(childPath(path, "matchPolicy"), hook.matchPolicy, supportedMatchPolicies));
  const allowed = opts.requireNoSideEffects ? noSideEffectClasses : supportedSideEffectClasses;
  if (hook.sideEffects == null)
    errors.push(required(childPath(path, "sideEffects"), `must specify one of ${allowed.join(", ")}`));
  else if (!allowed.includes(hook.sideEffects))
    errors.push(notSupported(childPath(path, "sideEffects"), hook.sideEffects, allowed));
  if (hook.timeoutSeconds != null && (hook.timeoutSeconds > 30 || hook.timeoutSeconds < 1))
    errors.push(
      invalid(
        childPath(path, "timeoutSeconds"),
        hook.timeoutSeconds,
        "the timeout value must be between 1 and 30 seconds",
      ),
    );
  errors.push(...validateLabelSelector(hook.namespaceSelector, childPath(path, "namespaceSelector")));
  errors.push(...validateLabelSelector(hook.objectSelector, childPath(path, "objectSelector")));
  if (
    mutating &&
    hook.reinvocationPolicy != null &&
    !supportedReinvocationPolicies.includes(hook.reinvocationPolicy)
  )
    errors.push(
      notSupported(
        childPath(path, "reinvocationPolicy"),
        hook.reinvocationPolicy,
        supportedReinvocationPolicies,
      ),
    );
  const cc = hook.clientConfig ?? {};
  if ((cc.url == null) === (cc.service == null))
    errors.push(required(childPath(path, "clientConfig"), "exactly one of url or service is required"));
  else if (cc.url != null) errors.push(...validateWebhookURL(cc.url, childPath(path, "clientConfig", "url")));
  else if (cc.service)
    errors.push(...validateWebhookService(cc.service, childPath(path, "clientConfig", "service")));
  return errors;
}

/** validateAdmissionReviewVersions: present, DNS-1035 labels, no duplicates, one this server speaks. */
function validateAdmissionReviewVersions(
  versions: readonly string[] | undefined,
  opts: Options,
  path: string,
) {
  const list = versions ?? [];
  if (list.length === 0)
    return [required(path, `must specify one of ${acceptedAdmissionReviewVersions.join(", ")}`)];
  const errors: FieldError[] = [];
  const seen = new Set<string>();
  list.forEach((v, i) => {
    if (seen.has(v)) {
      errors.push(invalid(indexPath(path, i), v, "duplicate version"));
      return;
    }
    seen.add(v);
    for (const e of isDNS1035Label(v)) errors.push(invalid(indexPath(path, i), v, e));
  });
  if (
    opts.requireRecognizedAdmissionReviewVersion &&
    !list.some((v) => acceptedAdmissionReviewVersions.includes(v))
  )
    errors.push(
      invalid(
        path,
        goStringSlice(list),
        `must include at least one of ${acceptedAdmissionReviewVersions.join(", ")}`,
      ),
    );
  return errors;
}

function validateConfiguration(config: KubeObject, opts: Options, mutating: boolean): FieldError[] {
  const errors = validateObjectMeta(config.metadata, false, nameIsDNSSubdomain, "metadata", {
    kubeFinalizers: false,
  });
  const names = new Set<string>();
  ((config as MutatingWebhookConfiguration).webhooks ?? []).forEach((hook, i) => {
    const path = indexPath("webhooks", i);
    errors.push(...validateWebhook(hook, opts, path, mutating));
    errors.push(
      ...validateAdmissionReviewVersions(
        hook.admissionReviewVersions,
        opts,
        childPath(path, "admissionReviewVersions"),
      ),
    );
    if (opts.requireUniqueWebhookNames && hook.name) {
      if (names.has(hook.name)) errors.push(duplicate(childPath(path, "name"), hook.name));
      else names.add(hook.name);
    }
  });
  return errors;
}
// #endregion webhook

// #region validate
export function validateMutatingWebhookConfiguration(config: KubeObject): FieldError[] {
  return validateConfiguration(config, createOptions, true);
}

export function validateValidatingWebhookConfiguration(config: KubeObject): FieldError[] {
  return validateConfiguration(config, createOptions, false);
}

/** An update may keep what the old object already had: side effects, unknown versions, repeated names. */
function updateOptions(old: KubeObject): Options {
  const hooks: ValidatingWebhook[] = (old as MutatingWebhookConfiguration).webhooks ?? [];
  const names = hooks.map((h) => h.name);
  return {
    requireNoSideEffects: hooks.every(
      (h) => h.sideEffects != null && noSideEffectClasses.includes(h.sideEffects),
    ),
    requireRecognizedAdmissionReviewVersion: hooks.every(
      (h) =>
        (h.admissionReviewVersions ?? []).length === 0 ||
        (h.admissionReviewVersions ?? []).some((v) => acceptedAdmissionReviewVersions.includes(v)),
    ),
    requireUniqueWebhookNames: new Set(names).size === names.length,
  };
}

export function validateMutatingWebhookConfigurationUpdate(
  config: KubeObject,
  old: KubeObject,
): FieldError[] {
  return [
    ...validateConfiguration(config, updateOptions(old), true),
    ...validateObjectMetaUpdate(config.metadata, old.metadata, "metadata", { kubeFinalizers: false }),
  ];
}

export function validateValidatingWebhookConfigurationUpdate(
  config: KubeObject,
  old: KubeObject,
): FieldError[] {
  return [
    ...validateConfiguration(config, updateOptions(old), false),
    ...validateObjectMetaUpdate(config.metadata, old.metadata, "metadata", { kubeFinalizers: false }),
  ];
}
// #endregion validate

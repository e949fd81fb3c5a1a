/**
 * MutatingWebhookConfiguration and ValidatingWebhookConfiguration (group
 * admissionregistration.k8s.io, version v1) — the objects that tell the API server which HTTPS
 * endpoints to ask about which requests. Upstream: k8s.io/api's admissionregistration/v1/types.go,
 * with the defaults of kubernetes pkg/apis/admissionregistration/v1/defaults.go.
 *
 * Solves:
 * - policies written by cluster users, in any language, run inside the API server's admission
 *   chain without rebuilding the API server: a webhook is a URL plus the rules that say when to
 *   call it;
 * - the API server must know, before it calls anyone, what happens if the call fails
 *   (`failurePolicy`), how long to wait (`timeoutSeconds`), and whether a dry run may reach the
 *   webhook at all (`sideEffects`).
 *
 * Invariants (after defaulting):
 * - every webhook has failurePolicy (Fail), matchPolicy (Equivalent), namespaceSelector and
 *   objectSelector (`{}`: everything), timeoutSeconds (10); a mutating one reinvocationPolicy
 *   (Never); every rule a scope (`*`); a service reference a port (443);
 * - `sideEffects` and `admissionReviewVersions` have no default in v1: validation requires them.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/admissionregistration/v1/types.go (MutatingWebhookConfiguration, ValidatingWebhookConfiguration, MutatingWebhook, ValidatingWebhook, RuleWithOperations, WebhookClientConfig, ServiceReference)
 * @upstream kubernetes/kubernetes pkg/apis/admissionregistration/v1/defaults.go (SetDefaults_ValidatingWebhook, SetDefaults_MutatingWebhook, SetDefaults_Rule, SetDefaults_ServiceReference)
 * @chapter 03-api-security
 */
import type { LabelSelector } from "./labels.ts";
import type { KubeObject } from "./meta.ts";

// #region types
export type OperationType = "*" | "CREATE" | "UPDATE" | "DELETE" | "CONNECT";
export type ScopeType = "*" | "Cluster" | "Namespaced";
export type FailurePolicyType = "Fail" | "Ignore";
export type MatchPolicyType = "Exact" | "Equivalent";
export type SideEffectClass = "None" | "NoneOnDryRun" | "Unknown" | "Some";
export type ReinvocationPolicyType = "Never" | "IfNeeded";

/** RuleWithOperations: the Rule fields are inline in JSON. */
export interface RuleWithOperations {
  operations?: OperationType[];
  apiGroups?: string[];
  apiVersions?: string[];
  /** `pods`, `pods/status`, `*` (every resource, no subresources), `*\/*`, `pods/*`, `*\/scale`. */
  resources?: string[];
  scope?: ScopeType;
}

export interface ServiceReference {
  namespace: string;
  name: string;
  path?: string;
  port?: number;
}

export interface WebhookClientConfig {
  /** `https://host[:port][/path]` — exactly one of url and service. */
  url?: string;
  service?: ServiceReference;
  /** PEM certificates (base64 in JSON) that verify the webhook's serving certificate. */
  caBundle?: string;
}

export interface ValidatingWebhook {
  /** A fully qualified name, unique in its configuration: `pod-policy.example.com`. */
  name: string;
  clientConfig: WebhookClientConfig;
  rules?: RuleWithOperations[];
  failurePolicy?: FailurePolicyType;
  matchPolicy?: MatchPolicyType;
  namespaceSelector?: LabelSelector;
  objectSelector?: LabelSelector;
  sideEffects?: SideEffectClass;
  timeoutSeconds?: number;
  admissionReviewVersions?: string[];
  matchConditions?: { name: string; expression: string }[];
}

export interface MutatingWebhook extends ValidatingWebhook {
  reinvocationPolicy?: ReinvocationPolicyType;
}

export interface ValidatingWebhookConfiguration extends KubeObject {
  webhooks?: ValidatingWebhook[];
}

export interface MutatingWebhookConfiguration extends KubeObject {
  webhooks?: MutatingWebhook[];
}
// #endregion types

export const DEFAULT_TIMEOUT_SECONDS = 10;

// #region defaults
function setDefaultsWebhook(hook: ValidatingWebhook): void {
  hook.failurePolicy ??= "Fail";
  hook.matchPolicy ??= "Equivalent";
  hook.namespaceSelector ??= {};
  hook.objectSelector ??= {};
  hook.timeoutSeconds ??= DEFAULT_TIMEOUT_SECONDS;
  for (const rule of hook.rules ?? []) rule.scope ??= "*";
  const service = hook.clientConfig?.service;
  if (service) service.port ??= 443;
}

export function setDefaultsValidatingWebhookConfiguration(config: KubeObject): void {
  for (const hook of (config as ValidatingWebhookConfiguration).webhooks ?? []) setDefaultsWebhook(hook);
}

export function setDefaultsMutatingWebhookConfiguration(config: KubeObject): void {
  for (const hook of (config as MutatingWebhookConfiguration).webhooks ?? []) {
    setDefaultsWebhook(hook);
    hook.reinvocationPolicy ??= "Never";
  }
}
// #endregion defaults

/**
 * Admission plugins — every plugin this API server knows, upstream's fixed order, the ones on
 * by default, and `--enable-admission-plugins` / `--disable-admission-plugins` turned into a
 * chain. Upstream: kubernetes pkg/kubeapiserver/options/plugins.go (AllOrderedPlugins,
 * DefaultOffAdmissionPlugins) and k8s.io/apiserver pkg/server/options/admission.go.
 *
 * Solves:
 * - the order is a fact of the binary, not of the flags: webhooks run after the built-in
 *   mutations, ResourceQuota last, so quota counts the object every other plugin has finished;
 * - `--enable-admission-plugins` adds to the defaults and `--disable-admission-plugins` takes
 *   away; a name the server does not know is an error at start, not a plugin silently missing.
 *
 * Invariants:
 * - `allOrderedPlugins` is upstream v1.32's list; a plugin this miniature does not build is
 *   listed in `notBuilt` and, if enabled, skipped with a start-up line that says so;
 * - a plugin named in both flags is an error, as upstream's validation.
 *
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/options/plugins.go (AllOrderedPlugins, RegisterAllAdmissionPlugins, DefaultOffAdmissionPlugins)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/options/admission.go (AdmissionOptions.enabledPluginNames, Validate)
 * @chapter 03-api-security
 */

import type { Store } from "../registry/store.ts";
import { AdmissionChain } from "./chain.ts";
import type { PluginContext } from "./context.ts";
import type { Interface } from "./interfaces.ts";
import { newAlwaysAdmit } from "./plugin/admit.ts";
import { newDefaultTolerationSeconds } from "./plugin/default-toleration-seconds.ts";
import { newAlwaysDeny } from "./plugin/deny.ts";
import { newLimitRanger } from "./plugin/limit-ranger.ts";
import { newNamespaceLifecycle } from "./plugin/namespace-lifecycle.ts";
import { newNodeRestriction } from "./plugin/noderestriction.ts";
import { newPriority } from "./plugin/priority.ts";
import { newResourceQuota } from "./plugin/resource-quota.ts";
import { newServiceAccount } from "./plugin/service-account.ts";
import { newPodSecurity } from "./podsecurity/admission.ts";
import { newValidatingAdmissionPolicy } from "./policy/validating.ts";
import { depsFromStores } from "./webhook/generic.ts";
import { MutatingAdmissionWebhook } from "./webhook/mutating.ts";
import { WebhookSource } from "./webhook/source.ts";
import { ValidatingAdmissionWebhook } from "./webhook/validating.ts";

/** What a plugin may read while it decides (context.ts; kept importable from here). */
export type { PluginContext };

export type PluginFactory = (ctx: PluginContext, opts: AdmissionOptions) => Interface;

// #region ordered-plugins
/** v1.32's AllOrderedPlugins. */
export const allOrderedPlugins = [
  "AlwaysAdmit",
  "NamespaceAutoProvision",
  "NamespaceLifecycle",
  "NamespaceExists",
  "LimitPodHardAntiAffinityTopology",
  "LimitRanger",
  "ServiceAccount",
  "NodeRestriction",
  "TaintNodesByCondition",
  "AlwaysPullImages",
  "ImagePolicyWebhook",
  "PodSecurity",
  "PodNodeSelector",
  "Priority",
  "DefaultTolerationSeconds",
  "PodTolerationRestriction",
  "EventRateLimit",
  "ExtendedResourceToleration",
  "DefaultStorageClass",
  "StorageObjectInUseProtection",
  "OwnerReferencesPermissionEnforcement",
  "PersistentVolumeClaimResize",
  "RuntimeClass",
  "CertificateApproval",
  "CertificateSigning",
  "ClusterTrustBundleAttest",
  "CertificateSubjectRestriction",
  "DefaultIngressClass",
  "DenyServiceExternalIPs",
  // Webhooks, policies, quota and deny go last, in this order.
  "MutatingAdmissionPolicy",
  "MutatingAdmissionWebhook",
  "ValidatingAdmissionPolicy",
  "ValidatingAdmissionWebhook",
  "ResourceQuota",
  "AlwaysDeny",
] as const;

/** The plugins on when no flag says otherwise (v1.32's defaultOnPlugins). */
export const defaultOnPlugins: ReadonlySet<string> = new Set([
  "NamespaceLifecycle",
  "LimitRanger",
  "ServiceAccount",
  "DefaultStorageClass",
  "PersistentVolumeClaimResize",
  "DefaultTolerationSeconds",
  "MutatingAdmissionWebhook",
  "ValidatingAdmissionWebhook",
  "ResourceQuota",
  "StorageObjectInUseProtection",
  "Priority",
  "TaintNodesByCondition",
  "RuntimeClass",
  "CertificateApproval",
  "CertificateSigning",
  "ClusterTrustBundleAttest",
  "CertificateSubjectRestriction",
  "DefaultIngressClass",
  "PodSecurity",
  "MutatingAdmissionPolicy",
  "ValidatingAdmissionPolicy",
]);
// #endregion ordered-plugins

// #region registry
/** The plugins this miniature builds (RegisterAllAdmissionPlugins). */
export const pluginFactories: Record<string, PluginFactory> = {
  AlwaysAdmit: () => newAlwaysAdmit(),
  AlwaysDeny: () => newAlwaysDeny(),
  // chapter 3: built-in plugins, NodeRestriction, PodSecurity and webhooks register here.
  NodeRestriction: (ctx) => newNodeRestriction((group, resource) => ctx.store(group, resource)),
  PodSecurity: (ctx) => newPodSecurity(ctx),
  // chapter 3: webhooks — each keeps its configurations in memory from their store's watch.
  MutatingAdmissionWebhook: (ctx) =>
    new MutatingAdmissionWebhook(
      new WebhookSource(storeOf(ctx, "admissionregistration.k8s.io", "mutatingwebhookconfigurations")),
      depsFromStores(ctx.store),
    ),
  ValidatingAdmissionWebhook: (ctx) =>
    new ValidatingAdmissionWebhook(
      new WebhookSource(storeOf(ctx, "admissionregistration.k8s.io", "validatingwebhookconfigurations")),
      depsFromStores(ctx.store),
    ),
  // chapter 3: admission (the built-in plugins)
  NamespaceLifecycle: (ctx) => newNamespaceLifecycle(ctx),
  LimitRanger: (ctx) => newLimitRanger(ctx),
  ServiceAccount: (ctx) => newServiceAccount(ctx),
  Priority: (ctx) => newPriority(ctx),
  DefaultTolerationSeconds: (_ctx, opts) =>
    newDefaultTolerationSeconds({
      notReadySeconds: opts.defaultNotReadyTolerationSeconds,
      unreachableSeconds: opts.defaultUnreachableTolerationSeconds,
    }),
  ResourceQuota: (ctx) => newResourceQuota(ctx),
  // chapter 3: ValidatingAdmissionPolicy — CEL policies and bindings read from their own stores.
  ValidatingAdmissionPolicy: (ctx) => newValidatingAdmissionPolicy(ctx),
};

function storeOf(ctx: PluginContext, group: string, resource: string): Store {
  const store = ctx.store(group, resource);
  if (!store) throw new Error(`admission: no store for ${resource}.${group}`);
  return store;
}
// #endregion registry

export interface AdmissionOptions {
  /** `--enable-admission-plugins`: added to the defaults. */
  enablePlugins?: string[];
  /** `--disable-admission-plugins`: taken from the defaults. */
  disablePlugins?: string[];
  /** `--default-not-ready-toleration-seconds` (DefaultTolerationSeconds; default 300). */
  defaultNotReadyTolerationSeconds?: number;
  /** `--default-unreachable-toleration-seconds` (DefaultTolerationSeconds; default 300). */
  defaultUnreachableTolerationSeconds?: number;
}

// #region enabled-plugins
/** The enabled plugin names, in upstream's order; an unknown or contradictory name throws. */
export function enabledPluginNames(opts: AdmissionOptions): string[] {
  const known = new Set<string>(allOrderedPlugins);
  const enable = opts.enablePlugins ?? [];
  const disable = opts.disablePlugins ?? [];
  for (const [flag, names] of [
    ["enable-admission-plugins", enable],
    ["disable-admission-plugins", disable],
  ] as const) {
    for (const name of names) {
      if (!known.has(name)) throw new Error(`${flag} plugin "${name}" is unknown`);
    }
  }
  const overlap = [...new Set(enable.filter((name) => disable.includes(name)))].sort();
  if (overlap.length > 0) {
    // Go's %v of a string list: [A B].
    throw new Error(
      `[${overlap.join(" ")}] in enable-admission-plugins and disable-admission-plugins overlapped`,
    );
  }
  return allOrderedPlugins.filter(
    (name) => (defaultOnPlugins.has(name) || enable.includes(name)) && !disable.includes(name),
  );
}
// #endregion enabled-plugins

/** The chain of the enabled plugins this miniature builds; the rest are reported as skipped. */
export function newAdmissionChain(
  opts: AdmissionOptions,
  ctx: PluginContext,
): { chain: AdmissionChain; skipped: string[] } {
  const plugins: Interface[] = [];
  const skipped: string[] = [];
  for (const name of enabledPluginNames(opts)) {
    const factory = pluginFactories[name];
    if (factory) plugins.push(factory(ctx, opts));
    else skipped.push(name);
  }
  return { chain: new AdmissionChain(plugins), skipped };
}

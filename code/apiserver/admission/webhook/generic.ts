/**
 * The generic webhook plugin — what MutatingAdmissionWebhook and ValidatingAdmissionWebhook
 * share: the plugin itself before it dispatches (Webhook: its source, Handles, Dispatch's
 * preamble), which webhooks a request should reach (ShouldCallHook), and one call of one
 * webhook from AdmissionReview out to a verified answer in. Upstream: k8s.io/apiserver
 * pkg/admission/plugin/webhook/generic/webhook.go, with the calling half of
 * mutating/dispatcher.go and validating/dispatcher.go.
 *
 * Solves:
 * - the order of the cheap tests is upstream's: namespace selector, object selector, then the
 *   rules; a selector error surfaces only if a rule would have matched, so a webhook that does
 *   not apply can never fail a request;
 * - matchPolicy Equivalent: a rule for `deployments` in `apps/v1` also covers the same
 *   resource served at another version. Every resource here is served at exactly one version,
 *   so Equivalent finds nothing more than Exact — the code still asks the resource table;
 * - a dry run reaches only webhooks that declare no side effects (`None`, `NoneOnDryRun`);
 *   any other is a 400 before anything is sent, whatever the failure policy.
 *
 * Invariants:
 * - each call gets a fresh uid, and the answer must carry it;
 * - the timeout is the webhook's timeoutSeconds (default 10; validation caps it at 30);
 * - every failure to get a usable answer is an ErrCallingWebhook (subject to failurePolicy);
 *   an answer that says no is a denial (never subject to it).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/generic/webhook.go (Webhook, Webhook.Handles, Webhook.ShouldCallHook, Webhook.Dispatch)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go (callAttrMutatingHook: dry run, request, timeout, verification)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/runtime/mapper.go (equivalentResourceRegistry.EquivalentResourcesFor)
 * @chapter 03-api-security
 */
import { randomUUID } from "node:crypto";
import { DEFAULT_TIMEOUT_SECONDS, type MutatingWebhook } from "../../../api/admissionregistration.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { isStatusError } from "../../errors.ts";
import { resources } from "../../resources.ts";
import type { Attributes, Operation } from "../interfaces.ts";
import {
  type AdmissionResponse,
  createV1AdmissionReview,
  DecodeError,
  InvalidResponseError,
  verifyAdmissionResponse,
  type WebhookInvocation,
} from "./admissionreview.ts";
import { CallError, type HookTarget, postAdmissionReview } from "./client.ts";
import { ErrCallingWebhook, newDryRunUnsupportedErr } from "./errors.ts";
import { matchSelectors, type NamespaceGetter } from "./matchers.ts";
import { isExemptAdmissionConfigurationResource, ruleMatches } from "./rules.ts";
import { type ObjectGetter, resolveEndpoint } from "./service-resolver.ts";
import type { HookSource, WebhookAccessor } from "./source.ts";

/** What the plugins read besides their configurations (upstream: listers and a client). */
export interface WebhookDeps {
  getNamespace: NamespaceGetter;
  getService: ObjectGetter;
  getEndpoints: ObjectGetter;
}

// #region webhook-plugin
/**
 * Webhook: what both plugins are before they dispatch (upstream's generic.Webhook, which each
 * plugin embeds). Each subclass adds only its dispatch: one by one with patches, or all at once.
 */
export abstract class Webhook {
  constructor(
    protected readonly source: HookSource,
    protected readonly deps: WebhookDeps,
  ) {}

  /** Every operation: each webhook's own rules decide which requests it sees. */
  handles(_op: Operation): boolean {
    return true;
  }

  close(): void {
    this.source.stop();
  }

  /**
   * Dispatch's preamble: requests on the webhook configurations themselves reach no webhook (so
   * a broken webhook can always be deleted), and nothing is sent before the first list.
   */
  protected async hooksFor(a: Attributes): Promise<WebhookAccessor[]> {
    if (isExemptAdmissionConfigurationResource(a)) return [];
    await this.source.ready;
    return this.source.webhooks();
  }
}

/** Whatever a webhook decided, its warnings reach the client and its annotations the audit log. */
export function recordResponse(h: MutatingWebhook, result: AdmissionResponse, a: Attributes): void {
  a.warnings?.push(...result.warnings);
  for (const [k, v] of Object.entries(result.auditAnnotations)) {
    if (a.annotations) a.annotations[`${h.name}/${k}`] = v;
  }
}
// #endregion webhook-plugin

// #region should-call-hook
/** ShouldCallHook: the invocation if this webhook applies to the request, else undefined. */
export async function shouldCallHook(
  w: WebhookAccessor,
  a: Attributes,
  deps: WebhookDeps,
): Promise<WebhookInvocation | undefined> {
  const h = w.hook;
  // Selector errors count only if a rule matches (upstream evaluates both, reports later).
  const selectors = await matchSelectors(h.namespaceSelector, h.objectSelector, a, deps.getNamespace);
  if (!selectors.matched) return undefined;

  let invocation: WebhookInvocation | undefined;
  if ((h.rules ?? []).some((rule) => ruleMatches(rule, a))) {
    invocation = { resource: a.resource, subresource: a.subresource, kind: a.kind };
  } else if ((h.matchPolicy ?? "Equivalent") === "Equivalent") {
    outer: for (const rule of h.rules ?? []) {
      for (const eq of equivalentResourcesFor(a.resource)) {
        if (
          ruleMatches(rule, {
            ...a,
            resource: { group: eq.group, version: eq.version, resource: eq.resource },
          })
        ) {
          invocation = {
            resource: { group: eq.group, version: eq.version, resource: eq.resource },
            subresource: a.subresource,
            kind: { group: eq.group, version: eq.version, kind: eq.kind },
          };
          break outer;
        }
      }
    }
  }
  if (!invocation) return undefined;
  if (selectors.err !== undefined) throw selectors.err;
  return invocation;
}

/**
 * EquivalentResourcesFor: the same resource served at other versions of its group. Upstream
 * also knows renamed groups (extensions/v1beta1 deployments ≡ apps/v1 deployments); this
 * server serves each resource at one version, so the list is empty today.
 */
export function equivalentResourcesFor(r: Attributes["resource"]) {
  return resources.filter((x) => x.group === r.group && x.resource === r.resource && x.version !== r.version);
}
// #endregion should-call-hook

// #region call-hook
/**
 * One call: the dry-run check, the target, the AdmissionReview POST, the verified answer.
 * Throws ErrCallingWebhook for failures to get an answer, a StatusError for a refused dry run.
 */
export async function callHook(
  h: MutatingWebhook,
  invocation: WebhookInvocation,
  a: Attributes,
  mutating: boolean,
  deps: WebhookDeps,
): Promise<AdmissionResponse> {
  if (a.dryRun) {
    if (h.sideEffects == null) throw new ErrCallingWebhook(h.name, "Webhook SideEffects is nil");
    if (h.sideEffects !== "None" && h.sideEffects !== "NoneOnDryRun") throw newDryRunUnsupportedErr(h.name);
  }
  if (!(h.admissionReviewVersions ?? []).includes("v1")) {
    throw new ErrCallingWebhook(
      h.name,
      `could not create admission objects: webhook does not accept known AdmissionReview versions`,
    );
  }
  const uid = randomUUID();
  const review = createV1AdmissionReview(uid, a, invocation);
  let target: HookTarget;
  try {
    target = await hookTarget(h, deps);
  } catch (e) {
    // Upstream resolves a service while dialing: the failure reads as the POST's.
    const svc = h.clientConfig?.service;
    const where = svc
      ? `https://${svc.name}.${svc.namespace}.svc:${svc.port ?? 443}${svc.path ?? ""}`
      : (h.clientConfig?.url ?? "");
    const timeout = h.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS;
    throw new ErrCallingWebhook(
      h.name,
      `failed to call webhook: Post "${where}?timeout=${timeout}s": ${(e as Error).message}`,
    );
  }
  let answer: unknown;
  try {
    answer = await postAdmissionReview(target, review, h.timeoutSeconds ?? DEFAULT_TIMEOUT_SECONDS);
  } catch (e) {
    if (e instanceof CallError) throw new ErrCallingWebhook(h.name, `failed to call webhook: ${e.message}`);
    throw e;
  }
  try {
    return verifyAdmissionResponse(uid, mutating, answer);
  } catch (e) {
    if (e instanceof DecodeError) throw new ErrCallingWebhook(h.name, `failed to call webhook: ${e.message}`);
    if (e instanceof InvalidResponseError)
      throw new ErrCallingWebhook(h.name, `received invalid webhook response: ${e.message}`);
    throw e;
  }
}

/** Where to send it: the URL as given, or the service resolved to one of its endpoints. */
async function hookTarget(h: MutatingWebhook, deps: WebhookDeps): Promise<HookTarget> {
  const cc = h.clientConfig ?? {};
  const ca = cc.caBundle ? Buffer.from(cc.caBundle, "base64").toString("utf8") : undefined;
  if (cc.url) {
    const url = new URL(cc.url);
    return { url, serverName: url.hostname.replace(/^\[|\]$/g, ""), ca };
  }
  const svc = cc.service;
  if (!svc) throw new Error("webhook has no clientConfig.url or clientConfig.service");
  let base: URL;
  try {
    base = await resolveEndpoint(
      deps.getService,
      deps.getEndpoints,
      svc.namespace,
      svc.name,
      svc.port ?? 443,
    );
  } catch (e) {
    throw new Error(isStatusError(e) ? e.message : (e as Error).message);
  }
  base.pathname = svc.path ?? "/";
  return { url: base, serverName: `${svc.name}.${svc.namespace}.svc`, ca };
}
// #endregion call-hook

/** The deps read from the registry stores (ctx.store) — namespace, service and endpoints gets. */
export function depsFromStores(
  store: (
    group: string,
    resource: string,
  ) => { get(ns: string, name: string): Promise<KubeObject> } | undefined,
): WebhookDeps {
  const getter = (resource: string) => (ns: string, name: string) => {
    const s = store("", resource);
    if (!s) throw new Error(`no ${resource} store`);
    return s.get(ns, name);
  };
  return {
    getNamespace: (name) => getter("namespaces")("", name),
    getService: getter("services"),
    getEndpoints: getter("endpoints"),
  };
}

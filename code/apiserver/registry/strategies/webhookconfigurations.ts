/**
 * Webhook configuration strategies — MutatingWebhookConfiguration and
 * ValidatingWebhookConfiguration: cluster-scoped, and a generation that counts changes to the
 * webhooks. Upstream: kubernetes pkg/registry/admissionregistration/mutatingwebhookconfiguration/strategy.go
 * and validatingwebhookconfiguration/strategy.go.
 *
 * Solves: a client (or the API server's own webhook cache) can tell that a configuration's
 * webhooks changed from `metadata.generation`, without comparing the lists; a label change
 * does not count.
 *
 * Invariants: a new configuration has generation 1; an update bumps it exactly when `webhooks`
 * changed (compared semantically); updates without a resourceVersion are allowed, PUT does not
 * create.
 *
 * @upstream kubernetes/kubernetes pkg/registry/admissionregistration/mutatingwebhookconfiguration/strategy.go (mutatingWebhookConfigurationStrategy: PrepareForCreate, PrepareForUpdate)
 * @upstream kubernetes/kubernetes pkg/registry/admissionregistration/validatingwebhookconfiguration/strategy.go (validatingWebhookConfigurationStrategy)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";
import type { RESTStrategy } from "../strategy.ts";
import { baseStrategy, semanticDeepEqual } from "./helpers.ts";

// #region generation
function prepareForCreate(obj: KubeObject): void {
  obj.metadata.generation = 1;
}

function prepareForUpdate(obj: KubeObject, old: KubeObject): void {
  const oldGeneration = old.metadata.generation ?? 0;
  obj.metadata.generation = semanticDeepEqual(obj.webhooks, old.webhooks) ? oldGeneration : oldGeneration + 1;
}
// #endregion generation

export const mutatingWebhookConfigurationStrategy: RESTStrategy = {
  ...baseStrategy(false),
  prepareForCreate,
  prepareForUpdate,
};

export const validatingWebhookConfigurationStrategy: RESTStrategy = {
  ...baseStrategy(false),
  prepareForCreate,
  prepareForUpdate,
};

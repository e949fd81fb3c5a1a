/**
 * ValidatingAdmissionWebhook — the admission plugin that asks every matching validating
 * webhook, all at once, whether the final object may be stored. Upstream: k8s.io/apiserver
 * pkg/admission/plugin/webhook/validating/plugin.go and dispatcher.go (validatingDispatcher.Dispatch).
 *
 * Solves:
 * - validating webhooks cannot change anything, so their order cannot matter: they run in
 *   parallel and the request waits for the slowest, not for the sum;
 * - they run in the validating phase, after every mutation (webhooks included) and after the
 *   registry's own validation — what they allow is exactly what is stored.
 *
 * Invariants:
 * - every matching webhook is called, even after one has refused; the first refusal to arrive
 *   is the answer (upstream: the first error on its channel; the rest are only logged);
 * - Ignore skips a webhook that could not be asked; a denial is never ignored;
 * - warnings from every webhook reach the client.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/validating/dispatcher.go (validatingDispatcher.Dispatch, callHook)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/validating/plugin.go (PluginName, Plugin.Validate)
 * @chapter 03-api-security
 */
import type { Attributes, ValidationInterface } from "../interfaces.ts";
import type { WebhookInvocation } from "./admissionreview.ts";
import { ErrCallingWebhook, toStatusErr } from "./errors.ts";
import { callHook, recordResponse, shouldCallHook, Webhook } from "./generic.ts";
import type { WebhookAccessor } from "./source.ts";

export const ValidatingPluginName = "ValidatingAdmissionWebhook";

/** The source, Handles and close are generic.ts's Webhook; this adds the validating dispatch. */
export class ValidatingAdmissionWebhook extends Webhook implements ValidationInterface {
  readonly name = ValidatingPluginName;

  // #region dispatch
  async validate(a: Attributes): Promise<void> {
    const relevant: { w: WebhookAccessor; invocation: WebhookInvocation }[] = [];
    for (const w of await this.hooksFor(a)) {
      const invocation = await shouldCallHook(w, a, this.deps);
      if (invocation) relevant.push({ w, invocation });
    }
    const errors: unknown[] = [];
    await Promise.all(
      relevant.map(async ({ w, invocation }) => {
        const err = await this.callValidatingHook(w, invocation, a);
        if (err !== undefined) errors.push(err); // in the order they arrive
      }),
    );
    if (errors.length > 0) throw errors[0];
  }

  /** One webhook; returns the error to report, or undefined when it allowed (or was ignored). */
  private async callValidatingHook(w: WebhookAccessor, invocation: WebhookInvocation, a: Attributes) {
    const h = w.hook;
    try {
      const result = await callHook(h, invocation, a, false, this.deps);
      recordResponse(h, result, a);
      return result.allowed ? undefined : toStatusErr(h.name, result.result);
    } catch (e) {
      if (e instanceof ErrCallingWebhook) return h.failurePolicy === "Ignore" ? undefined : e.toStatusError();
      return e;
    }
  }
  // #endregion dispatch
}

/**
 * MutatingAdmissionWebhook — the admission plugin that calls every matching mutating webhook,
 * one after another, and applies each one's JSON patch to the object before the next sees it.
 * Upstream: k8s.io/apiserver pkg/admission/plugin/webhook/mutating/plugin.go and
 * dispatcher.go (mutatingDispatcher.Dispatch, callAttrMutatingHook), reinvocationcontext.go.
 *
 * Solves:
 * - injection (a sidecar, a label, a default) by code the cluster's users write, in the
 *   mutating phase — after the built-in mutations, so a webhook sees their result, and before
 *   validation, so whatever it adds is validated like the rest;
 * - order dependence: webhooks run in a fixed order (configurations by name), and one whose
 *   reinvocationPolicy is IfNeeded runs once more if a later webhook changed the object, so it
 *   can react to what the later one added;
 * - failure policy: a webhook that cannot be reached refuses the request (Fail, the default)
 *   or is skipped (Ignore); a webhook that answers "no" always refuses it.
 *
 * Invariants:
 * - the patch is a JSON patch (`patchType: JSONPatch`, base64 `patch`), applied to the object
 *   as the webhook saw it; the result is defaulted again (a sidecar gets its defaults);
 * - a webhook is reinvoked at most once per request, and only if it ran in the first round;
 * - warnings from every webhook reach the client.
 *
 * What upstream does differently: its reinvocation re-runs the whole mutating chain (the
 * built-in plugins too, which are idempotent) before reinvoking webhooks; here only the webhooks
 * are reinvoked. Objects are converted to the version each webhook asked for; here every
 * resource has one version.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/dispatcher.go (mutatingDispatcher.Dispatch, callAttrMutatingHook)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/reinvocationcontext.go (webhookReinvokeContext)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/webhook/mutating/plugin.go (PluginName, Plugin.Admit)
 * @chapter 03-api-security
 */
import type { MutatingWebhook } from "../../../api/admissionregistration.ts";
import { setDefaults } from "../../../api/defaults.ts";
import type { KubeObject } from "../../../api/meta.ts";
import { newInternalError } from "../../errors.ts";
import { applyOperations, decodePatch, JSONPatchError } from "../../patch/json-patch.ts";
import { semanticDeepEqual } from "../../registry/strategies/helpers.ts";
import type { Attributes, MutationInterface } from "../interfaces.ts";
import { ErrCallingWebhook, toStatusErr } from "./errors.ts";
import { callHook, recordResponse, shouldCallHook, Webhook } from "./generic.ts";
import type { WebhookAccessor } from "./source.ts";

export const MutatingPluginName = "MutatingAdmissionWebhook";

// #region reinvoke-context
/** webhookReinvokeContext: who ran before a change, and so who runs again. */
class ReinvokeContext {
  previouslyInvoked = new Set<string>();
  reinvoke = new Set<string>();
  shouldReinvoke = false;

  /** A webhook changed the object: everyone reinvocable who ran before it runs again. */
  requireReinvokingPreviouslyInvoked(): void {
    for (const uid of this.previouslyInvoked) this.reinvoke.add(uid);
    this.previouslyInvoked.clear();
  }
}
// #endregion reinvoke-context

/** The source, Handles and close are generic.ts's Webhook; this adds the mutating dispatch. */
export class MutatingAdmissionWebhook extends Webhook implements MutationInterface {
  readonly name = MutatingPluginName;

  // #region dispatch
  async admit(a: Attributes): Promise<void> {
    const hooks = await this.hooksFor(a);
    const ctx = new ReinvokeContext();
    await this.round(hooks, a, ctx, false);
    // Round two: only webhooks that ran before a later change, and still match.
    if (ctx.shouldReinvoke && ctx.reinvoke.size > 0) await this.round(hooks, a, ctx, true);
  }

  private async round(
    hooks: WebhookAccessor[],
    a: Attributes,
    ctx: ReinvokeContext,
    reinvoking: boolean,
  ): Promise<void> {
    for (const w of hooks) {
      const invocation = await shouldCallHook(w, a, this.deps);
      if (!invocation) continue;
      if (reinvoking && !ctx.reinvoke.has(w.uid)) continue;
      const hook = w.hook;
      let changed = false;
      let failure: unknown;
      try {
        changed = await this.callMutatingHook(hook, invocation, a);
      } catch (e) {
        failure = e;
      }
      if (changed) {
        ctx.requireReinvokingPreviouslyInvoked();
        ctx.shouldReinvoke = true;
      }
      // Added after the change is recorded: a webhook is not reinvoked for its own change.
      if (hook.reinvocationPolicy === "IfNeeded") ctx.previouslyInvoked.add(w.uid);
      if (failure === undefined) continue;
      if (failure instanceof ErrCallingWebhook) {
        if (hook.failurePolicy === "Ignore") continue; // fail open (upstream logs and annotates)
        throw failure.toStatusError();
      }
      throw failure;
    }
  }
  // #endregion dispatch

  // #region apply-patch
  /** callAttrMutatingHook: ask, then apply the patch in place. Returns whether the object changed. */
  private async callMutatingHook(
    h: MutatingWebhook,
    invocation: Parameters<typeof callHook>[1],
    a: Attributes,
  ): Promise<boolean> {
    const result = await callHook(h, invocation, a, true, this.deps);
    recordResponse(h, result, a);
    if (!result.allowed) throw toStatusErr(h.name, result.result);
    if (result.patch.length === 0) return false;
    let ops: ReturnType<typeof decodePatch>;
    try {
      ops = decodePatch(JSON.parse(result.patch.toString("utf8")));
    } catch (e) {
      throw newInternalError((e as Error).message);
    }
    if (ops.length === 0) return false;
    if (!a.object) {
      throw newInternalError(
        `admission webhook "${h.name}" attempted to modify the object, which is not supported for this operation`,
      );
    }
    if (result.patchType !== "JSONPatch") {
      throw new ErrCallingWebhook(h.name, `unsupported patch type "${result.patchType}"`);
    }
    let patched: KubeObject;
    try {
      patched = applyOperations(a.object, ops) as KubeObject;
    } catch (e) {
      if (e instanceof JSONPatchError) throw newInternalError(e.message);
      throw e;
    }
    setDefaults(patched);
    const changed = !semanticDeepEqual(a.object, patched);
    replaceInPlace(a.object, patched);
    return changed;
  }
  // #endregion apply-patch
}

/** The chain hands every plugin the same object: change it, do not replace it. */
function replaceInPlace(target: KubeObject, source: KubeObject): void {
  for (const key of Object.keys(target)) delete (target as Record<string, unknown>)[key];
  Object.assign(target, source);
}

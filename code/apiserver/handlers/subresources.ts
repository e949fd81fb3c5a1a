/**
 * The handlers of the subresources with a kind of their own — `…/deployments/web/scale` (an
 * autoscaling/v1 Scale), `…/pods/web/binding` (a Binding), `…/pods/web/log` (text) — between the
 * HTTP request and the subresource's REST in registry/subresources/. Upstream serves them with the
 * same generic handlers as every resource (handlers/get.go, update.go, patch.go, create.go), over
 * the subresource's own REST storage (ScaleREST, BindingREST, LogREST).
 *
 * Solves: the body of a subresource request is not the parent's kind, so it is decoded as its own
 * kind (no defaults: a Scale or Binding has none), and the answer is the subresource's object, not
 * the parent.
 *
 * Invariants:
 * - a PATCH of a Scale applies to the Scale (JSON, merge or strategic merge — Scale has no lists,
 *   so a strategic merge patch is a merge patch), whose replicas then go to the parent;
 * - any other patch type is a 415 naming the three that apply.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/patch.go (PatchResource over ScaleREST: jsonPatcher, smpPatcher)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/update.go (UpdateResource over ScaleREST)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/create.go (createHandler over BindingREST, EvictionREST, and over TokenREST for serviceaccounts/token)
 * @chapter 02-apiserver
 */

import { newUnsupportedMediaTypeError } from "../errors.ts";
import { parseJSON, parseMediaType } from "../negotiation.ts";
import { applyJSONPatch } from "../patch/json-patch.ts";
import { applyMergePatch } from "../patch/merge-patch.ts";
import type { Store } from "../registry/store.ts";
import { type Binding, createBinding } from "../registry/subresources/binding.ts";
import { createEviction, type Eviction } from "../registry/subresources/eviction.ts";
import type { KubeletClientConfig } from "../registry/subresources/kubelet-client.ts";
import { streamPodLog } from "../registry/subresources/log.ts";
import { getScale, type Scale, updateScale } from "../registry/subresources/scale.ts";
import type { TokenREST, TokenRequest } from "../registry/subresources/token.ts";
import { admitCreate, createValidation } from "./admission.ts";
import { decodeRequestObject } from "./create.ts";
import { type RequestScope, readBody, writeJSON } from "./rest.ts";
import { addWarnings } from "./warnings.ts";

// #region scale
export async function getScaleResource(scope: RequestScope): Promise<void> {
  writeJSON(scope.res, 200, await getScale(scope.store, scope.info.namespace, scope.info.name));
}

export async function updateScaleResource(scope: RequestScope): Promise<void> {
  const body = await decodeRequestObject(scope, { apiVersion: "autoscaling/v1", kind: "Scale" }, false);
  const scale = await updateScale(scope.store, scope.info.namespace, scope.info.name, () => body as Scale);
  writeJSON(scope.res, 200, scale);
}

/** The patch types a Scale takes, in the order the 415 lists them. */
const scalePatchTypes = [
  "application/json-patch+json",
  "application/merge-patch+json",
  "application/strategic-merge-patch+json",
];

/** PATCH .../scale: the patch applies to the Scale, whose replicas then go to the parent. */
export async function patchScaleResource(scope: RequestScope): Promise<void> {
  const type = parseMediaType(scope.req.headers["content-type"] ?? "").type;
  const patch = parseJSON(await readBody(scope.req));
  const scale = await updateScale(scope.store, scope.info.namespace, scope.info.name, (current) => {
    if (type === scalePatchTypes[0]) return applyJSONPatch(current, patch) as Scale;
    if (type === scalePatchTypes[1] || type === scalePatchTypes[2]) {
      return applyMergePatch(current, patch) as Scale;
    }
    throw newUnsupportedMediaTypeError(scalePatchTypes);
  });
  writeJSON(scope.res, 200, scale);
}
// #endregion scale

/** POST .../pods/web/binding: the scheduler's one write (BindingREST.Create); 201 with a Status. */
export async function createBindingResource(scope: RequestScope): Promise<void> {
  const body = await decodeRequestObject(scope, { apiVersion: "v1", kind: "Binding" }, false);
  await admitCreate(scope, body, "Binding");
  await createValidation(scope, "Binding")?.(body);
  writeJSON(
    scope.res,
    201,
    await createBinding(scope.store, scope.info.namespace, scope.info.name, body as Binding),
  );
}

/**
 * POST .../pods/web/eviction (chapter 8: `kubectl drain`): a policy/v1 Eviction (v1beta1 too, as
 * upstream's AcceptsGroupVersion) in; 201 with a Status, or the budget's 429.
 */
export async function createEvictionResource(scope: RequestScope, pdbs: Store): Promise<void> {
  const body = await decodeRequestObject(scope, { apiVersion: "policy/v1", kind: "Eviction" }, false);
  await admitCreate(scope, body, "Eviction");
  await createValidation(scope, "Eviction")?.(body);
  const dryRun = scope.query.getAll("dryRun");
  const status = await createEviction(
    scope.store,
    pdbs,
    scope.info.namespace,
    scope.info.name,
    body as Eviction,
    dryRun,
  );
  writeJSON(scope.res, status.code === 500 ? 500 : 201, status);
}

/** GET .../pods/web/log: the kubelet's plain text, streamed through (chapter 7: LogREST.Get). */
export async function getPodLog(
  scope: RequestScope,
  nodes: Store,
  kubelet: KubeletClientConfig,
): Promise<void> {
  await streamPodLog(
    scope.store,
    nodes,
    kubelet,
    scope.info.namespace,
    scope.info.name,
    scope.query,
    scope.res,
  );
}

// chapter 3: service-account tokens
/** POST .../serviceaccounts/build-bot/token: a TokenRequest in, the same with a signed token out (201). */
export async function createTokenRequestResource(scope: RequestScope, tokens: TokenREST): Promise<void> {
  const body = await decodeRequestObject(
    scope,
    { apiVersion: "authentication.k8s.io/v1", kind: "TokenRequest" },
    false,
  );
  const { object, warnings } = await tokens.create(
    scope.info.namespace,
    scope.info.name,
    body as TokenRequest,
  );
  addWarnings(scope.res, warnings);
  writeJSON(scope.res, 201, object);
}

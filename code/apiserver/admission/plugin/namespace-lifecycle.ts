/**
 * NamespaceLifecycle — nothing is created in a namespace that does not exist or is being
 * deleted, and the namespaces the cluster needs (default, kube-system, kube-public) cannot be
 * deleted at all. Upstream: k8s.io/apiserver pkg/admission/plugin/namespace/lifecycle/admission.go.
 *
 * Solves:
 * - the namespace controller deletes a Terminating namespace's content and then the namespace:
 *   a pod created meanwhile would either be orphaned or keep the namespace from ever going, so
 *   creates into it are refused (`unable to create new content in namespace x because it is
 *   being terminated`);
 * - an object in a namespace that does not exist is invisible to `kubectl get ns` and to the
 *   namespace controller: refused with the namespace's own 404 (`namespaces "x" not found`);
 * - deleting kube-system would take the control plane's own objects with it.
 *
 * Invariants:
 * - cluster-scoped objects, namespaces themselves and deletes of namespaced objects always pass
 *   (a delete in a Terminating namespace is how it empties);
 * - the namespace is read from the registry store each time: upstream reads an informer and
 *   falls back to a live lookup when it is missing or was just deleted; our store is the live
 *   state, so there is no stale cache to guard against.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/namespace/lifecycle/admission.go (Lifecycle.Admit, accessReviewResources)
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/options/admission.go (the immortal namespaces: default, kube-system, kube-public)
 * @chapter 03-api-security
 */
import type { Namespace } from "../../../api/core.ts";
import { isStatusError, newForbidden, newInternalError } from "../../errors.ts";
import type { PluginContext } from "../context.ts";
import { newAdmissionForbidden } from "../errors.ts";
import type { Attributes, MutationInterface } from "../interfaces.ts";

export const PluginName = "NamespaceLifecycle";

/** metav1.NamespaceDefault, NamespaceSystem, NamespacePublic. */
export const immortalNamespaces: ReadonlySet<string> = new Set(["default", "kube-system", "kube-public"]);

const isNamespaceKind = (a: Attributes) => a.kind.group === "" && a.kind.kind === "Namespace";

// #region lifecycle
export function newNamespaceLifecycle(ctx: PluginContext, immortal = immortalNamespaces): MutationInterface {
  return {
    name: PluginName,
    handles: (op) => op === "CREATE" || op === "UPDATE" || op === "DELETE",
    async admit(a) {
      if (a.operation === "DELETE" && isNamespaceKind(a) && immortal.has(a.name)) {
        throw newForbidden(a.resource, a.name, "this namespace may not be deleted");
      }
      // Cluster-scoped objects, and every operation on namespaces themselves, pass.
      if (!a.namespace || isNamespaceKind(a)) return;
      // Deleting content is how a Terminating namespace empties.
      if (a.operation === "DELETE") return;
      // "May I?" must not tell whether a namespace exists.
      if (a.resource.group === "authorization.k8s.io" && a.resource.resource === "localsubjectaccessreviews")
        return;

      const namespaces = ctx.store("", "namespaces");
      if (!namespaces) throw newInternalError("NamespaceLifecycle: no namespaces store");
      let ns: Namespace;
      try {
        ns = (await namespaces.get("", a.namespace)) as Namespace;
      } catch (e) {
        // The namespace's own NotFound: `namespaces "x" not found`.
        if (isStatusError(e) && e.code === 404) throw e;
        throw newInternalError((e as Error).message);
      }
      if (a.operation === "CREATE" && ns.status?.phase === "Terminating") {
        const err = newAdmissionForbidden(
          a,
          `unable to create new content in namespace ${a.namespace} because it is being terminated`,
        );
        err.status.details ??= {};
        err.status.details.causes = [
          ...(err.status.details.causes ?? []),
          {
            reason: "NamespaceTerminating",
            message: `namespace ${a.namespace} is being terminated`,
            field: "metadata.namespace",
          },
        ];
        throw err;
      }
    },
  };
}
// #endregion lifecycle

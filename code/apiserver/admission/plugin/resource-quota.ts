/**
 * ResourceQuota — the last admission plugin: for a create (or an update that grows usage) in
 * a namespace with quotas, the usage the object adds is charged to every quota that limits it,
 * or the request is refused with upstream's `exceeded quota: …` message.
 *
 * Solves:
 * - a team's namespace cannot take more of the cluster than its quota, counted exactly even
 *   when many creates arrive at once (charge.ts: the write with the resourceVersion read);
 * - it runs last, after every mutation, so it counts the object as it will be stored (with the
 *   requests LimitRanger defaulted, the sidecar a webhook added).
 *
 * Invariants:
 * - a quota is enforced once its `status.hard` equals its `spec.hard`; until then (a new quota,
 *   or one whose spec changed) this plugin first recomputes `status.used` from a list of the
 *   namespace's objects and writes it, with the same resourceVersion precondition;
 * - usage only goes up here. Giving usage back when objects are deleted is the resource quota
 *   controller's job (code/controllers/resourcequota/, chapter 4); without a controller-manager
 *   running, a quota's usage is recomputed only when its spec changes (`kubectl edit quota`);
 * - the recomputation is code/quota/usage.ts's calculateUsage, the controller's own, so the two
 *   writers of `status.used` never count differently;
 * - a dry run checks and refuses as a real request does, but charges nothing;
 * - scoped quotas: Terminating, NotTerminating, BestEffort and NotBestEffort match pods; other
 *   scopes (PriorityClass, CrossNamespacePodAffinity, scopeSelector) are not built, and a quota
 *   using them matches nothing.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/admission.go (QuotaAdmission.Validate)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/plugin/resourcequota/controller.go (quotaEvaluator.checkRequest, hasUsageStats, "status unknown for quota")
 * @upstream kubernetes/kubernetes pkg/controller/resourcequota/resource_quota_controller.go (syncResourceQuota: the recomputation this plugin does on a new quota)
 * @upstream kubernetes/kubernetes pkg/quota/v1/evaluator/core/pods.go (podMatchesScopeFunc)
 * @chapter 03-api-security
 */
import type { Pod, ResourceQuota } from "../../../api/core.ts";
import type { KubeObject } from "../../../api/meta.ts";
// The evaluation is shared with the resource quota controller, so it lives in code/quota/.
import { podConstraints, usageOf } from "../../../quota/evaluator.ts";
import { equalLists, type ResourceList, subtractNonNegative } from "../../../quota/resources.ts";
import { calculateUsage, matchesScopes } from "../../../quota/usage.ts";
import { isStatusError, newInternalError } from "../../errors.ts";
import type { Store } from "../../registry/store.ts";
import type { PluginContext } from "../context.ts";
import { newAdmissionForbidden } from "../errors.ts";
import type { ValidationInterface } from "../interfaces.ts";
import { chargeQuota, type QuotaAccess } from "./quota-charge.ts";

export const PluginName = "ResourceQuota";

/** The learner's charge and usage (exercise 03-api-security/05-quota-usage) can replace ours. */
export type ChargeFunc = (delta: ResourceList, access: QuotaAccess) => Promise<void>;
export type UsageFunc = (group: string, resource: string, obj: KubeObject) => ResourceList;

// #region admission
export function newResourceQuota(
  ctx: PluginContext,
  charge: ChargeFunc = chargeQuota,
  usage: UsageFunc = usageOf,
): ValidationInterface {
  const quotas = (): Store => {
    const store = ctx.store("", "resourcequotas");
    if (!store) throw newInternalError("ResourceQuota: no resourcequotas store");
    return store;
  };

  /** syncResourceQuota: status.hard = spec.hard and status.used recomputed from the namespace's objects. */
  async function syncStatus(namespace: string, quota: ResourceQuota): Promise<ResourceQuota> {
    for (;;) {
      const hard = quota.spec?.hard ?? {};
      if (quota.status?.hard && equalLists(quota.status.hard, hard)) return quota;
      const used = await calculateUsage(
        quota,
        async ({ group, resource }) => (await ctx.store(group, resource)?.list(namespace, {}))?.items,
        { usage },
      );
      try {
        const { obj } = await quotas().update(
          namespace,
          quota.metadata.name ?? "",
          () => ({ ...quota, status: { hard, used } }),
          {
            strategy: quotas().strategy.status,
          },
        );
        return obj as ResourceQuota;
      } catch (e) {
        if (!(isStatusError(e) && e.code === 409)) throw e;
        quota = (await quotas().get(namespace, quota.metadata.name ?? "")) as ResourceQuota;
      }
    }
  }

  return {
    name: PluginName,
    handles: (op) => op === "CREATE" || op === "UPDATE",
    async validate(a) {
      if (a.subresource || !a.namespace || !a.object) return;
      if (a.resource.group === "" && a.resource.resource === "namespaces") return;
      const { items } = await quotas().list(a.namespace, {});
      if (items.length === 0) return;
      let delta = usage(a.resource.group, a.resource.resource, a.object);
      if (a.operation === "UPDATE" && a.oldObject) {
        delta = subtractNonNegative(delta, usage(a.resource.group, a.resource.resource, a.oldObject));
      }
      const sorted = (items as ResourceQuota[]).sort((x, y) =>
        (x.metadata.name ?? "").localeCompare(y.metadata.name ?? ""),
      );
      for (let quota of sorted) {
        if (!matchesScopes(quota, a.resource.group, a.resource.resource, a.object)) continue;
        quota = await syncStatus(a.namespace, quota);
        const name = quota.metadata.name ?? "";
        if (a.resource.group === "" && a.resource.resource === "pods") {
          const missing = podConstraints(quota.status?.hard ?? {}, a.object as Pod);
          if (missing) throw newAdmissionForbidden(a, `failed quota: ${name}: ${missing}`);
        }
        await charge(delta, {
          get: async () => (await quotas().get(a.namespace, name)) as ResourceQuota,
          async updateStatus(q) {
            if (a.dryRun) return q; // a dry run charges nothing
            const { obj } = await quotas().update(a.namespace, name, () => structuredClone(q) as KubeObject, {
              strategy: quotas().strategy.status,
            });
            return obj as ResourceQuota;
          },
          forbidden: (why) => newAdmissionForbidden(a, why),
        });
      }
    },
  };
}
// #endregion admission

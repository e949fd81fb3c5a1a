/**
 * REST storage — the registry's wiring: which strategy each served resource has, under which
 * key prefix its objects live, and one registry store per resource over one storage backend.
 * Upstream each API group has a storage provider that builds its resources' stores
 * (pkg/registry/core/rest/storage_core.go, pkg/registry/apps/rest/storage_apps.go, …), and
 * pkg/controlplane/instance.go installs them.
 *
 * Solves:
 * - the strategies (registry/strategies/) and the store (store.ts) know nothing of each other's
 *   list: this file is the one place that says "pods use podStrategy", so adding a resource is
 *   one row here and one in resources.ts;
 * - a few resources kept their historical etcd prefixes (`/registry/minions` for nodes), and an
 *   API server sharing a real etcd with kube-apiserver must use the same keys;
 * - events are written often and read rarely: a watch cache of them would cost memory for little,
 *   so, as upstream, they have none (`DefaultWatchCacheSizes` gives them size 0) and every list or
 *   watch of events is served by etcd.
 *
 * Invariants:
 * - every stored resource of resources.ts has a strategy here (a test checks it); a resource
 *   without one is a 500 InternalError, never a silent default;
 * - one store per resource, keyed `<group>/<resource>` (the core group is ""), all over the
 *   backend's storage for its prefix.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/rest/storage_core.go (legacyProvider.NewRESTStorage: one store per core resource, with its strategy)
 * @upstream kubernetes/kubernetes pkg/registry/apps/rest/storage_apps.go (StorageProvider: deployments, replicasets)
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/default_storage_factory_builder.go (SpecialDefaultResourcePrefixes, DefaultWatchCacheSizes)
 * @upstream kubernetes/kubernetes pkg/controlplane/instance.go (the REST storage providers the API server installs)
 * @chapter 02-apiserver
 */
import { newInternalError } from "../errors.ts";
import { apiVersionOf, resources } from "../resources.ts";
import type { StorageBackend } from "../storage/factory.ts";
import { Store } from "./store.ts";
import { configMapStrategy } from "./strategies/configmaps.ts";
import { deploymentStrategy } from "./strategies/deployments.ts";
import { endpointsStrategy } from "./strategies/endpoints.ts";
import { endpointSliceStrategy } from "./strategies/endpointslices.ts"; // EndpointSlices
import { eventStrategy } from "./strategies/events.ts";
import { leaseStrategy } from "./strategies/leases.ts";
import { limitRangeStrategy } from "./strategies/limitranges.ts";
import { namespaceStrategy } from "./strategies/namespaces.ts";
import { nodeStrategy } from "./strategies/nodes.ts";
// chapter 5: PodDisruptionBudgets
import { podDisruptionBudgetStrategy } from "./strategies/poddisruptionbudgets.ts";
import { nodeNameTriggerFunc, podStrategy } from "./strategies/pods.ts";
import { priorityClassStrategy } from "./strategies/priorityclasses.ts";
import {
  clusterRoleBindingStrategy,
  clusterRoleStrategy,
  roleBindingStrategy,
  roleStrategy,
} from "./strategies/rbac.ts";
import { replicaSetStrategy } from "./strategies/replicasets.ts";
import { resourceQuotaStrategy } from "./strategies/resourcequotas.ts";
import { secretStrategy } from "./strategies/secrets.ts";
import { serviceAccountStrategy } from "./strategies/serviceaccounts.ts";
import { serviceStrategy } from "./strategies/services.ts";
// chapter 3: ValidatingAdmissionPolicy
import {
  validatingAdmissionPolicyBindingStrategy,
  validatingAdmissionPolicyStrategy,
} from "./strategies/validatingadmissionpolicies.ts";
// chapter 3: webhooks
import {
  mutatingWebhookConfigurationStrategy,
  validatingWebhookConfigurationStrategy,
} from "./strategies/webhookconfigurations.ts";
import type { RESTStrategy } from "./strategy.ts";

// #region strategy-for
const strategies: Readonly<Record<string, RESTStrategy>> = {
  "/namespaces": namespaceStrategy,
  "/pods": podStrategy,
  "/nodes": nodeStrategy,
  "/events": eventStrategy,
  "/configmaps": configMapStrategy,
  "/secrets": secretStrategy,
  "/serviceaccounts": serviceAccountStrategy,
  "/services": serviceStrategy,
  "/endpoints": endpointsStrategy,
  "apps/replicasets": replicaSetStrategy,
  "apps/deployments": deploymentStrategy,
  "coordination.k8s.io/leases": leaseStrategy,
  "scheduling.k8s.io/priorityclasses": priorityClassStrategy,
  // chapter 3: RBAC
  "rbac.authorization.k8s.io/roles": roleStrategy,
  "rbac.authorization.k8s.io/rolebindings": roleBindingStrategy,
  "rbac.authorization.k8s.io/clusterroles": clusterRoleStrategy,
  "rbac.authorization.k8s.io/clusterrolebindings": clusterRoleBindingStrategy,
  // chapter 3: webhooks
  "admissionregistration.k8s.io/mutatingwebhookconfigurations": mutatingWebhookConfigurationStrategy,
  "admissionregistration.k8s.io/validatingwebhookconfigurations": validatingWebhookConfigurationStrategy,
  // chapter 3: admission
  "/limitranges": limitRangeStrategy,
  "/resourcequotas": resourceQuotaStrategy,
  // chapter 3: ValidatingAdmissionPolicy
  "admissionregistration.k8s.io/validatingadmissionpolicies": validatingAdmissionPolicyStrategy,
  "admissionregistration.k8s.io/validatingadmissionpolicybindings": validatingAdmissionPolicyBindingStrategy,
  // chapter 5: PodDisruptionBudgets
  "policy/poddisruptionbudgets": podDisruptionBudgetStrategy,
  "discovery.k8s.io/endpointslices": endpointSliceStrategy, // EndpointSlices
};

/** The strategy of a resource this server serves (group "" is the core group). */
export function strategyFor(group: string, resource: string): RESTStrategy {
  const strategy = strategies[`${group}/${resource}`];
  if (!strategy) {
    throw newInternalError(`no registry strategy for ${group ? `${resource}.${group}` : resource}`);
  }
  return strategy;
}
// #endregion strategy-for

/** SpecialDefaultResourcePrefixes: the resources whose etcd prefix is not their name. */
const specialDefaultResourcePrefixes: Readonly<Record<string, string>> = {
  nodes: "minions",
  services: "services/specs",
  endpoints: "services/endpoints",
};

/** DefaultWatchCacheSizes: the resources with no watch cache (size 0), keyed `<group>/<resource>`. */
export const noWatchCache: ReadonlySet<string> = new Set(["/events", "events.k8s.io/events"]);

// #region new-rest-storage
/** One registry store per stored resource, keyed `<group>/<resource>`. */
export function newRESTStorage(backend: StorageBackend, cache: boolean): Map<string, Store> {
  const stores = new Map<string, Store>();
  for (const r of resources) {
    if (r.stored === false) continue; // computed per request (selfsubjectaccessreviews)
    const prefix = `/registry/${specialDefaultResourcePrefixes[r.resource] ?? r.resource}`;
    const storage = backend.forResource(prefix, {
      cache: cache && !noWatchCache.has(`${r.group}/${r.resource}`),
      groupResource: { group: r.group, resource: r.resource },
      newFunc: () => ({ apiVersion: apiVersionOf(r), kind: r.kind, metadata: {} }),
      // pkg/registry/core/pod/storage: TriggerFunc {"spec.nodeName": NodeNameTriggerFunc}.
      triggerFunc: r.group === "" && r.resource === "pods" ? nodeNameTriggerFunc : undefined,
    });
    stores.set(`${r.group}/${r.resource}`, new Store(r, storage, strategyFor(r.group, r.resource), prefix));
  }
  return stores;
}
// #endregion new-rest-storage

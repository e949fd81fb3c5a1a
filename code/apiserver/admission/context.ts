/**
 * PluginContext — what an admission plugin may read while it decides: the registry stores
 * (upstream hands plugins shared informers and a client) and the authorizer.
 *
 * Solves: plugins are built by plugins.ts and read by it; their shared context lives here so
 * that no plugin imports the registry of plugins (no import circle).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/admission/initializer/interfaces.go (WantsExternalKubeInformerFactory, WantsExternalKubeClientSet, WantsAuthorizer)
 * @chapter 03-api-security
 */
import type { Authorizer } from "../authz/authorizer.ts";
import type { Store } from "../registry/store.ts";

export interface PluginContext {
  /** The store of a served resource, e.g. `store("", "namespaces")`. */
  store(group: string, resource: string): Store | undefined;
  authorizer?: Authorizer;
}

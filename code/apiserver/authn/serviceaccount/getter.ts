/**
 * ServiceAccountTokenGetter — how the token authenticator reads the objects a token names (its
 * ServiceAccount, and the Pod, Secret or Node it is bound to), here straight from the registry
 * stores of this API server. Upstream: kubernetes pkg/serviceaccount/jwt.go (the interface) and
 * pkg/controller/serviceaccount/tokengetter.go (the implementation).
 *
 * Solves: a signed token stays valid until it expires, but the identity it names may be gone —
 * the authenticator asks, on every request, whether the ServiceAccount (and the bound object)
 * still exists with the uid the token was made for.
 *
 * Invariants:
 * - a missing object is a NotFound Status error, never `undefined`;
 * - the getter reads; it never writes.
 *
 * What upstream does differently: it reads through informers' listers (an in-memory cache fed by
 * a watch), falling back to a live GET on a miss, so that authentication costs no storage read;
 * we read the registry stores, whose gets the watch cache may answer.
 *
 * @upstream kubernetes/kubernetes pkg/serviceaccount/jwt.go (ServiceAccountTokenGetter)
 * @upstream kubernetes/kubernetes pkg/controller/serviceaccount/tokengetter.go (clientGetter: listers first, then the client)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";
import type { Store } from "../../registry/store.ts";

// #region getter
export interface ServiceAccountTokenGetter {
  getServiceAccount(namespace: string, name: string): Promise<KubeObject>;
  getPod(namespace: string, name: string): Promise<KubeObject>;
  getSecret(namespace: string, name: string): Promise<KubeObject>;
  getNode(name: string): Promise<KubeObject>;
}
// #endregion getter

/** The getter over this server's stores (the map startAPIServer builds, keyed `group/resource`). */
export function registryTokenGetter(stores: ReadonlyMap<string, Store>): ServiceAccountTokenGetter {
  const store = (resource: string) => stores.get(`/${resource}`) as Store;
  return {
    getServiceAccount: (namespace, name) => store("serviceaccounts").get(namespace, name),
    getPod: (namespace, name) => store("pods").get(namespace, name),
    getSecret: (namespace, name) => store("secrets").get(namespace, name),
    getNode: (name) => store("nodes").get("", name),
  };
}

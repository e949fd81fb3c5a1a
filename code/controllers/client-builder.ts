/**
 * Controller client builders — which credentials a controller's requests carry: the manager's
 * own (SimpleControllerClientBuilder), or, with `--use-service-account-credentials`, a
 * ServiceAccount of its own in kube-system with a token from the TokenRequest API
 * (DynamicControllerClientBuilder).
 * Upstream: kubernetes/kubernetes staging/src/k8s.io/controller-manager/pkg/clientbuilder/client_builder_dynamic.go, and the others listed below.
 *
 * Solves: under RBAC each controller gets only its own role (`system:controller:<name>`, bound
 * to `kube-system/<name>`), so a bug in one controller reaches only what that one may touch, and
 * the audit log names the controller behind every request.
 *
 * Invariants:
 * - the ServiceAccount is made if missing (the manager's role may create service accounts and
 *   their tokens, nothing else of the controllers');
 * - a controller's clientset carries the token and the cluster's CA, never the manager's client
 *   certificate; it shares the manager's rate-limit settings but not its bucket.
 *
 * What upstream does differently: its tokens last an hour (expirationSeconds 3600) and are
 * renewed before they expire, by a token source under the transport; ours asks for the same
 * hour and is not renewed yet (the course client cannot swap a clientset's token), so a manager
 * running for more than an hour with this flag loses its controllers' access.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/controller-manager/pkg/clientbuilder/client_builder_dynamic.go (DynamicControllerClientBuilder, getOrCreateServiceAccount)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/controller-manager/pkg/clientbuilder/client_builder.go (SimpleControllerClientBuilder)
 * @chapter 04-informers
 */
import type { ServiceAccount } from "../api/core.ts";
import { isNotFound } from "../client/errors.ts";
import { type Clientset, newForConfig } from "../client/kubernetes/clientset.ts";
import type { Config } from "../client/rest/config.ts";

/** Where the controllers' accounts live (upstream's "kube-system"). */
export const controllerServiceAccountNamespace = "kube-system";
const tokenExpirationSeconds = 3600;

// #region dynamic-client-builder
/** ClientOrDie(name) for --use-service-account-credentials: a clientset acting as kube-system/<name>. */
export function dynamicControllerClientBuilder(root: Clientset, rootConfig: Config) {
  const made = new Map<string, Promise<Clientset>>();
  return (name: string): Promise<Clientset> => {
    let c = made.get(name);
    if (!c) {
      c = (async () => {
        const accounts = root.coreV1.serviceAccounts(controllerServiceAccountNamespace);
        try {
          await accounts.get(name);
        } catch (e) {
          if (!isNotFound(e)) throw e;
          const sa: ServiceAccount = {
            apiVersion: "v1",
            kind: "ServiceAccount",
            metadata: { name, namespace: controllerServiceAccountNamespace },
          };
          await accounts.create(sa).catch((err) => {
            if ((err as { code?: number }).code !== 409) throw err;
          });
        }
        const tr = await accounts.createSubresource<{ status: { token: string } }>(name, "token", {
          apiVersion: "authentication.k8s.io/v1",
          kind: "TokenRequest",
          spec: { audiences: [], expirationSeconds: tokenExpirationSeconds },
        });
        const tls = rootConfig.tlsClientConfig;
        return newForConfig({
          ...rootConfig,
          bearerToken: tr.status.token,
          bearerTokenFile: undefined,
          rateLimiter: undefined,
          // The CA stays; the manager's own client certificate must not go with the token.
          tlsClientConfig: tls && {
            insecure: tls.insecure,
            serverName: tls.serverName,
            caData: tls.caData,
            caFile: tls.caFile,
          },
        });
      })();
      made.set(name, c);
    }
    return c;
  };
}
// #endregion dynamic-client-builder

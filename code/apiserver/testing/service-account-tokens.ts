/**
 * Service-account tokens for a test or demo API server started in-process: the config
 * kube-apiserver would build from `--service-account-issuer`, `--service-account-key-file` and
 * `--service-account-signing-key-file` pointing at a PKI's sa.pub / sa.key, as
 * serviceAccountConfigFromFlags (authn/serviceaccount/options.ts) reads them.
 *
 * Solves: every secured set-up (the controller-manager's kubectl test, the secured fuzz, the
 * TokenRequest kubectl test, chapter 4's demo) wants the same flags with the same defaults; here
 * once, and a wrong flag set throws with the flags' own messages instead of being cast away.
 *
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/options/authentication.go (ServiceAccountAuthenticationOptions: the flags filled in here)
 * @chapter 03-api-security
 */
import type { PKILayout } from "../../pki/certs.ts";
import { type ServiceAccountConfig, serviceAccountConfigFromFlags } from "../authn/serviceaccount/options.ts";

/** The issuer kubeadm sets (`--service-account-issuer`), which in-cluster clients expect. */
export const defaultServiceAccountIssuer = "https://kubernetes.default.svc.cluster.local";

/**
 * The token signer and authenticator for a PKI's service-account key pair: one issuer, audiences
 * defaulted to it, no cap on the expiration asked, and `--service-account-extend-token-expiration`
 * on (kube-apiserver's defaults).
 */
export function serviceAccountConfigForPKI(
  layout: Pick<PKILayout, "serviceAccountKey" | "serviceAccountPublicKey">,
  issuer = defaultServiceAccountIssuer,
): ServiceAccountConfig {
  const config = serviceAccountConfigFromFlags({
    keyFiles: [layout.serviceAccountPublicKey],
    issuers: [issuer],
    apiAudiences: [],
    signingKeyFile: layout.serviceAccountKey,
    maxTokenExpirationMs: 0,
    extendTokenExpiration: true,
  });
  if (config === undefined || Array.isArray(config))
    throw new Error(`service-account flags for ${layout.serviceAccountKey}: ${config?.join("; ") ?? "none"}`);
  return config;
}

/**
 * The anonymous authenticator — `--anonymous-auth`: a request that presents no credential at all
 * is the user `system:anonymous` in the group `system:unauthenticated`. Upstream: k8s.io/apiserver
 * pkg/authentication/request/anonymous/anonymous.go.
 *
 * Solves: some things must be reachable before a client has any identity — `/healthz`,
 * `/version`, discovery for a login tool — so "no credential" becomes a user the authorizer can
 * judge (RBAC's `system:public-info-viewer` binds `system:unauthenticated`), instead of a 401.
 *
 * Invariants:
 * - it accepts every request it is asked about: config.ts asks it last, and only when every
 *   other authenticator said "not mine" — a request with a *bad* credential never reaches it;
 * - the anonymous user never gets `system:authenticated` (group-adder.ts leaves it alone).
 *
 * What upstream does differently: 1.32 can limit anonymous to some paths (the
 * AuthenticationConfiguration file's `anonymous.conditions`); kube-apiserver also turns
 * `--anonymous-auth` off, with a warning, when the authorization mode is AlwaysAllow.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/request/anonymous/anonymous.go (Authenticator.AuthenticateRequest)
 * @chapter 03-api-security
 */
import type { Authenticator, AuthenticatorResponse } from "./authenticator.ts";
import { AllUnauthenticated, Anonymous } from "./user.ts";

// #region anonymous
export class AnonymousAuthenticator implements Authenticator {
  async authenticateRequest(): Promise<AuthenticatorResponse> {
    return { user: { name: Anonymous, groups: [AllUnauthenticated] } };
  }
}
// #endregion anonymous

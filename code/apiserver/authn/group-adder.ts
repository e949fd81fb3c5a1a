/**
 * The authenticated group adder — every user an authenticator vouched for is also in
 * `system:authenticated`. Upstream: k8s.io/apiserver
 * pkg/authentication/group/authenticated_group_adder.go.
 *
 * Solves: RBAC can grant something to "everyone who logged in" (`system:basic-user`,
 * `system:discovery` bind this group) whatever proved the identity — so no authenticator has to
 * remember to add the group, and none can forget it.
 *
 * Invariants:
 * - added once, at the end of the list, after the union decided: never twice;
 * - not added to `system:anonymous`, nor to a user who already carries `system:authenticated` or
 *   `system:unauthenticated` (a user is never in both);
 * - the response is copied, never changed in place: an authenticator may hand out the same
 *   user object for every request (the token file's table does).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/group/authenticated_group_adder.go (AuthenticatedGroupAdder.AuthenticateRequest)
 * @chapter 03-api-security
 */
import type { IncomingMessage } from "node:http";
import type { Authenticator, AuthenticatorResponse } from "./authenticator.ts";
import { AllAuthenticated, AllUnauthenticated, Anonymous } from "./user.ts";

// #region group-adder
export class AuthenticatedGroupAdder implements Authenticator {
  constructor(private readonly auth: Authenticator) {}

  async authenticateRequest(req: IncomingMessage): Promise<AuthenticatorResponse | null> {
    const resp = await this.auth.authenticateRequest(req);
    if (!resp) return null;
    const { user } = resp;
    if (user.name === Anonymous) return resp;
    if (user.groups.some((g) => g === AllAuthenticated || g === AllUnauthenticated)) return resp;
    return { ...resp, user: { ...user, groups: [...user.groups, AllAuthenticated] } };
  }
}
// #endregion group-adder

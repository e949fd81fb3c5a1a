/**
 * UserInfo — who a request comes from, as authentication decided it: a name, a uid, groups and
 * extra key/values. Upstream: k8s.io/apiserver pkg/authentication/user/user.go.
 *
 * Solves: authorization, admission and audit never see a certificate or a token, only this —
 * so RBAC can bind "the group system:nodes" whether the node proved itself with an x509
 * certificate or a bootstrap token.
 *
 * Invariants:
 * - every authenticated user carries `system:authenticated`; the anonymous user carries
 *   `system:unauthenticated` instead (never both);
 * - names and groups starting with `system:` are Kubernetes's own; an authenticator never
 *   invents one from user input it did not verify.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/authentication/user/user.go (Info, DefaultInfo, the system users and groups)
 * @chapter 03-api-security
 */

// #region user-info
export interface UserInfo {
  name: string;
  uid?: string;
  groups: string[];
  /** Extra facts an authenticator vouches for (a service-account token's pod name, for example). */
  extra?: Record<string, string[]>;
}
// #endregion user-info

/** The well-known names of user.go. */
export const SystemPrivilegedGroup = "system:masters";
export const NodesGroup = "system:nodes";
export const MonitoringGroup = "system:monitoring";
export const AllUnauthenticated = "system:unauthenticated";
export const AllAuthenticated = "system:authenticated";
export const Anonymous = "system:anonymous";
export const APIServerUser = "system:apiserver";
export const KubeProxy = "system:kube-proxy";
export const KubeControllerManager = "system:kube-controller-manager";
export const KubeScheduler = "system:kube-scheduler";
/** The user of the insecure port (upstream's pre-1.20 insecureSuperuser): all-powerful. */
export const InsecureUser: UserInfo = {
  name: "system:unsecured",
  groups: [SystemPrivilegedGroup, AllAuthenticated],
};

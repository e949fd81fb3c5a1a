/**
 * Node identity — which node, if any, a user is: `system:node:<name>` in the group
 * `system:nodes`. Upstream: kubernetes pkg/auth/nodeidentifier/default.go.
 *
 * Solves: the Node authorizer and the NodeRestriction admission plugin must agree on who is a
 * kubelet and which node it speaks for; both ask this one function.
 *
 * Invariants:
 * - the name alone is not enough: a user called `system:node:a` outside `system:nodes` is no
 *   node (both gates leave it to RBAC);
 * - a member of `system:nodes` whose name lacks the prefix is no node either; one with the
 *   prefix and nothing after it is a node with no name — the gates refuse it.
 *
 * @upstream kubernetes/kubernetes pkg/auth/nodeidentifier/default.go (defaultNodeIdentifier.NodeIdentity)
 * @chapter 03-api-security
 */
import { NodesGroup, type UserInfo } from "../../authn/user.ts";

const nodeUserNamePrefix = "system:node:";

// #region node-identity
/** `{ isNode, nodeName }`; nodeName is "" when the user is not a node or names none. */
export function nodeIdentity(user: UserInfo | undefined): { isNode: boolean; nodeName: string } {
  if (!user?.name.startsWith(nodeUserNamePrefix)) return { isNode: false, nodeName: "" };
  if (!user.groups.includes(NodesGroup)) return { isNode: false, nodeName: "" };
  return { isNode: true, nodeName: user.name.slice(nodeUserNamePrefix.length) };
}
// #endregion node-identity

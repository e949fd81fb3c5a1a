/**
 * The Node authorizer — `--authorization-mode=Node`: a kubelet may read a secret, configmap,
 * PVC or PV only if a pod bound to its node uses it, may mint tokens only for its pods'
 * service accounts, and may touch only its own Node and Lease. Upstream: kubernetes
 * plugin/pkg/auth/authorizer/node/node_authorizer.go.
 *
 * Solves:
 * - a role says "nodes may get secrets" — every secret, for every node; one compromised
 *   kubelet would read the whole cluster's credentials. The graph narrows "secrets" to
 *   "the secrets of the pods scheduled here", and keeps narrowing as pods come and go;
 * - everything that is not about a related object (events, services, CSRs) is judged by the
 *   static node rules, so no RoleBinding for kubelets is needed.
 *
 * Invariants:
 * - users that are not nodes get `noOpinion` and an empty reason: the next authorizer decides;
 * - this authorizer never says `deny`: a refusal is `noOpinion` with a reason, so RBAC may
 *   still grant a node more (upstream's design: Node before RBAC, both may only add);
 * - a read of a related object needs its name: listing secrets, or watching all configmaps, is
 *   refused — a single-object list/watch (`fieldSelector=metadata.name=x`) is allowed;
 * - writes the authorizer cannot judge without the object (create a mirror pod, update a
 *   Node) are allowed here and narrowed by the NodeRestriction admission plugin.
 *
 * What upstream does differently: the ResourceSlice rules (DRA, off by default in v1.32) are
 * left out; log lines are klog's `NODE DENY` at V(2).
 *
 * @upstream kubernetes/kubernetes plugin/pkg/auth/authorizer/node/node_authorizer.go (NodeAuthorizer.Authorize, authorizeStatusUpdate, authorizeGet, authorizeReadNamespacedObject, authorize, authorizeCreateToken, authorizeLease, authorizeCSINode, authorizeNode, authorizePod, RulesFor)
 * @upstream kubernetes/kubernetes pkg/kubeapiserver/authorizer/config.go (the Node mode: graph, populator, NodeRules)
 * @chapter 03-api-security
 */
import { parse as parseFieldSelector } from "../../../api/fields.ts";
import type { UserInfo } from "../../authn/user.ts";
import type { Store } from "../../registry/store.ts";
import type { Attributes, Authorizer, AuthorizerResult, RuleResolver } from "../authorizer.ts";
import { Graph, type VertexType } from "./graph.ts";
import { GraphPopulator } from "./graph-populator.ts";
import { nodeIdentity } from "./node-identifier.ts";
import { nodeRules, type PolicyRule, rulesAllow } from "./node-rules.ts";

const allow: AuthorizerResult = { decision: "allow", reason: "" };
const noOpinion = (reason = ""): AuthorizerResult => ({ decision: "noOpinion", reason });

const nodeLeaseNamespace = "kube-node-lease";

export class NodeAuthorizer implements Authorizer, RuleResolver {
  constructor(
    readonly graph: Graph,
    private readonly rules: PolicyRule[] = nodeRules(),
    /** Where the `NODE DENY` lines go (upstream: klog V(2)). */
    private readonly log: (line: string) => void = () => {},
  ) {}

  // #region authorize
  async authorize(a: Attributes): Promise<AuthorizerResult> {
    const { isNode, nodeName } = nodeIdentity(a.user);
    if (!isNode) return noOpinion();
    if (!nodeName) return noOpinion(`unknown node for user ${JSON.stringify(a.user.name)}`);

    if (a.isResourceRequest) {
      switch (`${a.apiGroup}/${a.resource}`) {
        case "/secrets":
          return this.authorizeReadNamespacedObject(nodeName, "secret", a);
        case "/configmaps":
          return this.authorizeReadNamespacedObject(nodeName, "configmap", a);
        case "/persistentvolumeclaims":
          if (a.subresource === "status") return this.authorizeStatusUpdate(nodeName, "pvc", a);
          return this.authorizeGet(nodeName, "pvc", a);
        case "/persistentvolumes":
          return this.authorizeGet(nodeName, "pv", a);
        case "resource.k8s.io/resourceclaims":
          return this.authorizeGet(nodeName, "resourceclaim", a);
        case "storage.k8s.io/volumeattachments":
          return this.authorizeGet(nodeName, "volumeattachment", a);
        case "/serviceaccounts":
          return this.authorizeCreateToken(nodeName, a);
        case "coordination.k8s.io/leases":
          return this.authorizeLease(nodeName, a);
        case "storage.k8s.io/csinodes":
          return this.authorizeCSINode(nodeName, a);
        case "/nodes":
          return this.authorizeNode(nodeName, a);
        case "/pods":
          return this.authorizePod(nodeName, a);
      }
    }
    // Not subdivided by relationship: the static rules every node shares.
    return rulesAllow(a, this.rules) ? allow : noOpinion();
  }
  // #endregion authorize

  private deny(nodeName: string, a: Attributes, reason: string): AuthorizerResult {
    this.log(
      `NODE DENY: '${nodeName}' ${a.verb} ${a.resource}${a.subresource ? `/${a.subresource}` : ""} ${a.namespace}/${a.name}`,
    );
    return noOpinion(reason);
  }

  // #region by-relationship
  /** get, list, watch of one named, namespaced object (secrets, configmaps). */
  private authorizeReadNamespacedObject(nodeName: string, type: VertexType, a: Attributes): AuthorizerResult {
    if (!["get", "list", "watch"].includes(a.verb))
      return this.deny(nodeName, a, "can only read resources of this type");
    if (a.subresource) return this.deny(nodeName, a, "cannot read subresource");
    if (!a.namespace) return this.deny(nodeName, a, "can only read namespaced object of this type");
    return this.authorizeRelated(nodeName, type, a);
  }

  /** get of one object (PVCs, PVs, resource claims, volume attachments). */
  private authorizeGet(nodeName: string, type: VertexType, a: Attributes): AuthorizerResult {
    if (a.verb !== "get") return this.deny(nodeName, a, "can only get individual resources of this type");
    if (a.subresource) return this.deny(nodeName, a, "cannot get subresource");
    return this.authorizeRelated(nodeName, type, a);
  }

  /** update/patch of a related PVC's status (volume expansion). */
  private authorizeStatusUpdate(nodeName: string, type: VertexType, a: Attributes): AuthorizerResult {
    if (a.verb !== "update" && a.verb !== "patch")
      return this.deny(nodeName, a, "can only get/update/patch this type");
    if (a.subresource !== "status") return this.deny(nodeName, a, "can only update status subresource");
    return this.authorizeRelated(nodeName, type, a);
  }

  /** The graph question itself: a path from this object to this node. */
  private authorizeRelated(nodeName: string, type: VertexType, a: Attributes): AuthorizerResult {
    if (!a.name) return this.deny(nodeName, a, "No Object name found");
    const path = this.graph.hasPathFrom(nodeName, type, a.namespace, a.name);
    if (!path.found) {
      this.log(`NODE DENY: ${path.why}`);
      return noOpinion(`no relationship found between node '${nodeName}' and this object`);
    }
    return allow;
  }

  /** serviceaccounts/token create, for the service accounts of the node's pods. */
  private authorizeCreateToken(nodeName: string, a: Attributes): AuthorizerResult {
    if (a.verb !== "create" || !a.name) {
      return this.deny(nodeName, a, "can only create tokens for individual service accounts");
    }
    if (a.subresource !== "token")
      return this.deny(nodeName, a, "can only create token subresource of serviceaccount");
    return this.authorizeRelated(nodeName, "serviceAccount", a);
  }
  // #endregion by-relationship

  // #region by-name
  /** The node's heartbeat Lease, in kube-node-lease, named after the node. */
  private authorizeLease(nodeName: string, a: Attributes): AuthorizerResult {
    if (!["get", "create", "update", "patch", "delete"].includes(a.verb)) {
      return this.deny(nodeName, a, "can only get, create, update, patch, or delete a node lease");
    }
    if (a.namespace !== nodeLeaseNamespace) {
      return this.deny(
        nodeName,
        a,
        `can only access leases in the ${JSON.stringify(nodeLeaseNamespace)} system namespace`,
      );
    }
    // A create has no name in the URL; NodeRestriction checks the object's name instead.
    if (a.verb !== "create" && a.name !== nodeName) {
      return this.deny(nodeName, a, "can only access node lease with the same name as the requesting node");
    }
    return allow;
  }

  private authorizeCSINode(nodeName: string, a: Attributes): AuthorizerResult {
    if (!["get", "create", "update", "patch", "delete"].includes(a.verb)) {
      return this.deny(nodeName, a, "can only get, create, update, patch, or delete a CSINode");
    }
    if (a.subresource) return this.deny(nodeName, a, "cannot authorize CSINode subresources");
    if (a.verb !== "create" && a.name !== nodeName) {
      return this.deny(nodeName, a, "can only access CSINode with the same name as the requesting node");
    }
    return allow;
  }

  /** The Node object (AuthorizeNodeWithSelectors, beta and on in v1.32): reads of its own only. */
  private authorizeNode(nodeName: string, a: Attributes): AuthorizerResult {
    if (a.subresource === "") {
      // Writes: NodeRestriction limits a node to its own Node object.
      if (["create", "update", "patch"].includes(a.verb)) return allow;
      if (["get", "list", "watch"].includes(a.verb)) {
        // By name, not by graph: a kubelet reads its Node before it has created it.
        if (a.name === nodeName) return allow;
        if (a.name === "")
          return this.deny(nodeName, a, `node '${nodeName}' cannot read all nodes, only its own Node object`);
        return this.deny(nodeName, a, `node '${nodeName}' cannot read '${a.name}', only its own Node object`);
      }
    } else if (a.subresource === "status" && (a.verb === "update" || a.verb === "patch")) {
      return allow;
    }
    return this.deny(nodeName, a, "");
  }

  /** Pods (AuthorizeNodeWithSelectors): its own pods to read, mirror pods and status to write. */
  private authorizePod(nodeName: string, a: Attributes): AuthorizerResult {
    switch (a.subresource) {
      case "":
        if (a.verb === "get") return this.authorizeGet(nodeName, "pod", a);
        if (a.verb === "list" || a.verb === "watch") {
          const parsed = parseFieldSelector(a.fieldSelector ?? "");
          const scoped =
            parsed.ok &&
            parsed.value.requirements.some(
              (r) => r.field === "spec.nodeName" && r.operator !== "!=" && r.value === nodeName,
            );
          if (scoped) return allow;
          if (a.name) return this.authorizeRelated(nodeName, "pod", a);
          return this.deny(nodeName, a, "can only list/watch pods with spec.nodeName field selector");
        }
        // Mirror pods; NodeRestriction limits them to pods bound to this node.
        if (a.verb === "create" || a.verb === "delete") return allow;
        break;
      case "status":
        if (a.verb === "update" || a.verb === "patch") return allow;
        break;
      case "eviction":
        if (a.verb === "create") return allow;
        break;
    }
    return this.deny(nodeName, a, "");
  }
  // #endregion by-name

  /** A node's permissions depend on its pods: they cannot be listed as rules. */
  async rulesFor(user: UserInfo, _namespace: string): ReturnType<RuleResolver["rulesFor"]> {
    if (nodeIdentity(user).isNode) {
      return {
        resourceRules: [],
        nonResourceRules: [],
        incomplete: true,
        evaluationError: "node authorizer does not support user rule resolution",
      };
    }
    return { resourceRules: [], nonResourceRules: [], incomplete: false };
  }
}

// #region new-node-authorizer
/**
 * The Node mode as kube-apiserver builds it: a graph, a populator watching the registry, and
 * the authorizer over both. `stop()` ends the populator's watches.
 */
export function newNodeAuthorizer(
  stores: Map<string, Store>,
  log?: (line: string) => void,
): NodeAuthorizer & { populator: GraphPopulator; stop(): void } {
  const graph = new Graph();
  const populator = new GraphPopulator(graph, stores);
  const authorizer = new NodeAuthorizer(graph, nodeRules(), log);
  return Object.assign(authorizer, { populator, stop: () => populator.stop() });
}
// #endregion new-node-authorizer

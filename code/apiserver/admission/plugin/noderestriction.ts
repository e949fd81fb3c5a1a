/**
 * NodeRestriction — the admission plugin that holds each kubelet to its own node: its own Node
 * object (and no labels that would steer workloads to it), mirror pods bound to itself, the
 * status of its own pods, evictions of its own pods, its own Lease, tokens only for its pods.
 * Upstream: kubernetes plugin/pkg/admission/noderestriction/admission.go.
 *
 * Solves: the Node authorizer decides before the body is read, so it cannot tell "update Node
 * node-a" from "update Node node-b" on a create (no name in the URL), nor see which labels an
 * update sets, nor which node a new mirror pod is bound to. This plugin sees the object and the
 * stored one, and refuses what authorization had to let through.
 *
 * Invariants:
 * - only requests from nodes are judged (nodeIdentity); everyone else passes untouched;
 * - a node with no name is refused everything;
 * - a node may never create an object that would widen its own access through the graph: a
 *   mirror pod may reference no service account, secret, configmap, cluster trust bundle or PVC;
 * - a node may not set labels under `node-restriction.kubernetes.io/`, nor kubernetes.io / k8s.io
 *   labels other than the kubelet's own (hostname, topology, instance type, os, arch, and the
 *   `kubelet.kubernetes.io/` and `node.kubernetes.io/` namespaces), nor change its taints.
 *
 * What upstream does differently: it reads pods and nodes from informer caches, not storage;
 * its PVC-status, ResourceSlice and CertificateSigningRequest checks are left out (this server
 * serves none of those resources).
 *
 * @upstream kubernetes/kubernetes plugin/pkg/admission/noderestriction/admission.go (Plugin.Admit, admitPod, admitPodCreate, admitPodStatus, admitPodEviction, admitNode, getModifiedLabels, getForbiddenLabels, admitServiceAccount, admitLease, admitCSINode)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/kubelet/pkg/apis/well_known_labels.go (IsKubeletLabel)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/core/v1/well_known_labels.go (LabelNamespaceNodeRestriction)
 * @chapter 03-api-security
 */
import type { KubeObject } from "../../../api/meta.ts";
import { mirrorPodAnnotationKey } from "../../authz/node/graph.ts";
import { nodeIdentity } from "../../authz/node/node-identifier.ts";
import { type PodRefs, podConfigMapNames, podSecretNames } from "../../authz/node/pod-references.ts";
import { canonicalJSON } from "../../patch/json-value.ts";
import type { Store } from "../../registry/store.ts";
import { newAdmissionForbidden } from "../errors.ts";
import type { Attributes, MutationInterface } from "../interfaces.ts";

export const PluginName = "NodeRestriction";

const nodeLeaseNamespace = "kube-node-lease";

// #region labels
/** The labels a kubelet sets on its own Node (kubeletapis.IsKubeletLabel). */
const kubeletLabels = new Set([
  "kubernetes.io/hostname",
  "topology.kubernetes.io/zone",
  "topology.kubernetes.io/region",
  "failure-domain.beta.kubernetes.io/zone",
  "failure-domain.beta.kubernetes.io/region",
  "beta.kubernetes.io/instance-type",
  "node.kubernetes.io/instance-type",
  "kubernetes.io/os",
  "kubernetes.io/arch",
  "beta.kubernetes.io/os",
  "beta.kubernetes.io/arch",
]);
const kubeletLabelNamespaces = ["kubelet.kubernetes.io", "node.kubernetes.io"];
const labelNamespaceNodeRestriction = "node-restriction.kubernetes.io";

function labelNamespace(key: string): string {
  const slash = key.indexOf("/");
  return slash < 0 ? "" : key.slice(0, slash);
}

const inNamespace = (ns: string, domain: string) => ns === domain || ns.endsWith(`.${domain}`);

function isKubeletLabel(key: string): boolean {
  return kubeletLabels.has(key) || kubeletLabelNamespaces.some((d) => inNamespace(labelNamespace(key), d));
}

function isKubernetesLabel(key: string): boolean {
  const ns = labelNamespace(key);
  return inNamespace(ns, "kubernetes.io") || inNamespace(ns, "k8s.io");
}

/** getModifiedLabels: every key added, removed or changed between the two. */
export function modifiedLabels(a: Record<string, string> = {}, b: Record<string, string> = {}): Set<string> {
  const out = new Set<string>();
  for (const [k, v] of Object.entries(a)) if (b[k] !== v) out.add(k);
  for (const [k, v] of Object.entries(b)) if (a[k] !== v) out.add(k);
  return out;
}

/** getForbiddenLabels, sorted as Go's sets.String.List() sorts. */
export function forbiddenLabels(modified: Set<string>): string[] {
  return [...modified]
    .filter((label) => {
      if (inNamespace(labelNamespace(label), labelNamespaceNodeRestriction)) return true;
      return isKubernetesLabel(label) && !isKubeletLabel(label);
    })
    .sort();
}
// #endregion labels

/** apiequality.Semantic.DeepEqual for JSON, where nil and empty lists are the same. */
function semanticEqual(a: unknown, b: unknown): boolean {
  const norm = (v: unknown) => (Array.isArray(v) && v.length === 0 ? undefined : v);
  return canonicalJSON(norm(a) ?? null) === canonicalJSON(norm(b) ?? null);
}

type PodLike = PodRefs & { metadata: { ownerReferences?: OwnerRef[] } };
interface OwnerRef {
  apiVersion: string;
  kind: string;
  name: string;
  uid: string;
  controller?: boolean;
  blockOwnerDeletion?: boolean;
}

// #region plugin
export class NodeRestriction implements MutationInterface {
  readonly name = PluginName;

  constructor(private readonly store: (group: string, resource: string) => Store | undefined) {}

  handles(operation: Attributes["operation"]): boolean {
    return operation === "CREATE" || operation === "UPDATE" || operation === "DELETE";
  }

  async admit(a: Attributes): Promise<void> {
    const { isNode, nodeName } = nodeIdentity(a.userInfo);
    if (!isNode) return; // only nodes are restricted here
    if (!nodeName)
      throw this.forbid(a, `could not determine node from user ${JSON.stringify(a.userInfo.name)}`);

    switch (`${a.resource.group}/${a.resource.resource}`) {
      case "/pods":
        if (a.subresource === "") return this.admitPod(nodeName, a);
        if (a.subresource === "status") return this.admitPodStatus(nodeName, a);
        if (a.subresource === "eviction") return this.admitPodEviction(nodeName, a);
        throw this.forbid(
          a,
          `unexpected pod subresource ${JSON.stringify(a.subresource)}, only 'status' and 'eviction' are allowed`,
        );
      case "/nodes":
        return this.admitNode(nodeName, a);
      case "/serviceaccounts":
        return this.admitServiceAccount(nodeName, a);
      case "coordination.k8s.io/leases":
        return this.admitLease(nodeName, a);
      case "storage.k8s.io/csinodes":
        return this.admitCSINode(nodeName, a);
    }
  }
  // #endregion plugin

  private forbid(a: Attributes, reason: string) {
    return newAdmissionForbidden(a, reason);
  }

  /** The pod as stored now; a missing pod is the store's own 404, as upstream returns it. */
  private async existingPod(a: Attributes, name: string): Promise<PodLike> {
    const pods = this.store("", "pods");
    if (!pods) throw this.forbid(a, `${PluginName} requires a pod getter`);
    return (await pods.get(a.namespace, name)) as PodLike;
  }

  // #region pods
  private async admitPod(nodeName: string, a: Attributes): Promise<void> {
    if (a.operation === "CREATE") return this.admitPodCreate(nodeName, a);
    if (a.operation === "DELETE") {
      const existing = await this.existingPod(a, a.name);
      if (existing.spec?.nodeName !== nodeName) {
        throw this.forbid(
          a,
          `node ${JSON.stringify(nodeName)} can only delete pods with spec.nodeName set to itself`,
        );
      }
      return;
    }
    throw this.forbid(
      a,
      `unexpected operation ${JSON.stringify(a.operation)}, node ${JSON.stringify(nodeName)} can only create and delete mirror pods`,
    );
  }

  /** A mirror pod of one of the node's static pods: bound to it, owned by it, referencing nothing. */
  private async admitPodCreate(nodeName: string, a: Attributes): Promise<void> {
    const pod = a.object as PodLike;
    const node = JSON.stringify(nodeName);
    if (pod.metadata.annotations?.[mirrorPodAnnotationKey] === undefined) {
      throw this.forbid(
        a,
        `pod does not have ${JSON.stringify(mirrorPodAnnotationKey)} annotation, node ${node} can only create mirror pods`,
      );
    }
    if (pod.spec?.nodeName !== nodeName) {
      throw this.forbid(a, `node ${node} can only create pods with spec.nodeName set to itself`);
    }
    const owners = pod.metadata.ownerReferences ?? [];
    if (owners.length > 1) {
      throw this.forbid(a, `node ${node} can only create pods with a single owner reference set to itself`);
    }
    if (owners.length === 0)
      throw this.forbid(a, `node ${node} can only create pods with an owner reference set to itself`);
    const owner = owners[0];
    if (owner.apiVersion !== "v1" || owner.kind !== "Node" || owner.name !== nodeName) {
      throw this.forbid(a, `node ${node} can only create pods with an owner reference set to itself`);
    }
    if (!owner.controller) {
      throw this.forbid(
        a,
        `node ${node} can only create pods with a controller owner reference set to itself`,
      );
    }
    if (owner.blockOwnerDeletion)
      throw this.forbid(a, `node ${node} must not set blockOwnerDeletion on an owner reference`);
    const nodes = this.store("", "nodes");
    if (!nodes) throw this.forbid(a, `${PluginName} requires a node getter`);
    const self = await nodes.get("", nodeName); // a missing Node is the store's 404
    if (owner.uid !== self.metadata.uid) {
      throw this.forbid(a, `node ${nodeName} UID mismatch: expected ${owner.uid} got ${self.metadata.uid}`);
    }

    // The graph would grant the node whatever its pods reference: a node-made pod references nothing.
    if (pod.spec?.serviceAccountName)
      throw this.forbid(a, `node ${node} can not create pods that reference a service account`);
    if (podSecretNames(pod).length > 0)
      throw this.forbid(a, `node ${node} can not create pods that reference secrets`);
    if (podConfigMapNames(pod).length > 0)
      throw this.forbid(a, `node ${node} can not create pods that reference configmaps`);
    const volumes = (pod.spec?.volumes ?? []) as {
      projected?: { sources?: { clusterTrustBundle?: unknown }[] };
      persistentVolumeClaim?: unknown;
    }[];
    if (volumes.some((v) => v.projected?.sources?.some((s) => s.clusterTrustBundle))) {
      throw this.forbid(a, `node ${node} can not create pods that reference clustertrustbundles`);
    }
    if (volumes.some((v) => v.persistentVolumeClaim)) {
      throw this.forbid(a, `node ${node} can not create pods that reference persistentvolumeclaims`);
    }
  }

  /** Status of the node's own pods only, and not a back door to labels or claim statuses. */
  private admitPodStatus(nodeName: string, a: Attributes): void {
    if (a.operation !== "UPDATE") throw this.forbid(a, `unexpected operation ${JSON.stringify(a.operation)}`);
    const oldPod = a.oldObject as PodLike;
    const newPod = a.object as PodLike;
    const node = JSON.stringify(nodeName);
    if (oldPod.spec?.nodeName !== nodeName) {
      throw this.forbid(
        a,
        `node ${node} can only update pod status for pods with spec.nodeName set to itself`,
      );
    }
    if (modifiedLabels(oldPod.metadata.labels, newPod.metadata.labels).size > 0) {
      throw this.forbid(a, `node ${node} cannot update labels through pod status`);
    }
    const claims = (p: PodLike) =>
      (p.status?.resourceClaimStatuses ?? []).map((s) => [s.name, s.resourceClaimName ?? null]);
    if (canonicalJSON(claims(oldPod)) !== canonicalJSON(claims(newPod))) {
      throw this.forbid(a, `node ${node} cannot update resource claim statues`);
    }
  }

  private async admitPodEviction(nodeName: string, a: Attributes): Promise<void> {
    if (a.operation !== "CREATE") throw this.forbid(a, `unexpected operation ${a.operation}`);
    // The pod named in the URL wins over the name in the Eviction body.
    const podName = a.name || (a.object?.metadata?.name ?? "");
    if (!podName) throw this.forbid(a, "could not determine pod from request data");
    const existing = await this.existingPod(a, podName);
    if (existing.spec?.nodeName !== nodeName) {
      throw this.forbid(a, `node ${nodeName} can only evict pods with spec.nodeName set to itself`);
    }
  }
  // #endregion pods

  // #region nodes
  private admitNode(nodeName: string, a: Attributes): void {
    const node = JSON.stringify(nodeName);
    if (a.name !== nodeName)
      throw this.forbid(a, `node ${node} is not allowed to modify node ${JSON.stringify(a.name)}`);
    const obj = a.object as KubeObject & { spec?: { configSource?: unknown; taints?: unknown[] } };
    if (a.operation === "CREATE") {
      // The graph scopes a node to what its Node spec names: a config source would be a view escalation.
      if (obj.spec?.configSource) {
        throw this.forbid(a, `node ${node} is not allowed to create pods with a non-nil configSource`);
      }
      const forbidden = forbiddenLabels(modifiedLabels(obj.metadata.labels, undefined));
      if (forbidden.length > 0) {
        throw this.forbid(
          a,
          `node ${node} is not allowed to set the following labels: ${forbidden.join(", ")}`,
        );
      }
    }
    if (a.operation === "UPDATE") {
      const old = a.oldObject as typeof obj;
      if (obj.spec?.configSource && !semanticEqual(obj.spec.configSource, old.spec?.configSource)) {
        throw this.forbid(
          a,
          `node ${node} is not allowed to update configSource to a new non-nil configSource`,
        );
      }
      // Removing its own NoSchedule taint would let a node attract workloads it must not run.
      if (!semanticEqual(obj.spec?.taints, old.spec?.taints)) {
        throw this.forbid(a, `node ${node} is not allowed to modify taints`);
      }
      const forbidden = forbiddenLabels(modifiedLabels(obj.metadata.labels, old.metadata.labels));
      if (forbidden.length > 0)
        throw this.forbid(a, `is not allowed to modify labels: ${forbidden.join(", ")}`);
    }
  }
  // #endregion nodes

  // #region tokens-and-leases
  /** A token a node requests must be bound to one of its pods, by name and uid. */
  private async admitServiceAccount(nodeName: string, a: Attributes): Promise<void> {
    if (a.operation !== "CREATE" || a.subresource !== "token") return;
    const ref = (
      a.object?.spec as {
        boundObjectRef?: { apiVersion?: string; kind?: string; name?: string; uid?: string };
      }
    )?.boundObjectRef;
    if (ref?.apiVersion !== "v1" || ref.kind !== "Pod" || !ref.name) {
      throw this.forbid(a, "node requested token not bound to a pod");
    }
    if (!ref.uid) throw this.forbid(a, "node requested token with a pod binding without a uid");
    const pod = await this.existingPod(a, ref.name);
    if (ref.uid !== pod.metadata.uid) {
      throw this.forbid(
        a,
        `the UID in the bound object reference (${ref.uid}) does not match the UID in record. The object might have been deleted and then recreated`,
      );
    }
    if (pod.spec?.nodeName !== nodeName) {
      throw this.forbid(a, "node requested token bound to a pod scheduled on a different node");
    }
  }

  /** The Node authorizer cannot see a Lease's name on create; this plugin can. */
  private admitLease(nodeName: string, a: Attributes): void {
    if (a.namespace !== nodeLeaseNamespace) {
      throw this.forbid(
        a,
        `can only access leases in the ${JSON.stringify(nodeLeaseNamespace)} system namespace`,
      );
    }
    const name = a.operation === "CREATE" ? (a.object?.metadata?.name ?? "") : a.name;
    if (name !== nodeName)
      throw this.forbid(a, "can only access node lease with the same name as the requesting node");
  }

  private admitCSINode(nodeName: string, a: Attributes): void {
    const name = a.operation === "CREATE" ? (a.object?.metadata?.name ?? "") : a.name;
    if (name !== nodeName) {
      throw this.forbid(a, "can only access CSINode with the same name as the requesting node");
    }
  }
  // #endregion tokens-and-leases
}

/** The plugin over the registry's stores (upstream: over the pod and node informers). */
export function newNodeRestriction(
  store: (group: string, resource: string) => Store | undefined,
): NodeRestriction {
  return new NodeRestriction(store);
}

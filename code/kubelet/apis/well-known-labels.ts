/**
 * The labels a kubelet may put on its own Node — the allowed set and the allowed namespaces.
 * Mirrors kubernetes/kubernetes staging/src/k8s.io/kubelet/pkg/apis/well_known_labels.go.
 *
 * Solves: a kubelet that could label its Node `node-role.kubernetes.io/control-plane` could steer
 * control-plane workloads onto itself. The NodeRestriction admission plugin (chapter 3) refuses
 * such labels from a node; the kubelet refuses them earlier, at its command line, with the list
 * of what it may set (ValidateKubeletFlags).
 *
 * Invariants: a key is a kubelet label if it is in `kubeletLabels`, or its prefix is one of
 * `kubeletLabelNamespaces` or a subdomain of one (`x.node.kubernetes.io/…`).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/kubelet/pkg/apis/well_known_labels.go (kubeletLabels, kubeletLabelNamespaces, IsKubeletLabel)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/api/core/v1/well_known_labels.go (LabelHostname, LabelTopologyZone, …)
 * @chapter 07-kubelet
 */

/** KubeletLabels(): sorted, as upstream's sets.String.List() returns them. */
export const kubeletLabels: readonly string[] = [
  "beta.kubernetes.io/arch",
  "beta.kubernetes.io/instance-type",
  "beta.kubernetes.io/os",
  "failure-domain.beta.kubernetes.io/region",
  "failure-domain.beta.kubernetes.io/zone",
  "kubernetes.io/arch",
  "kubernetes.io/hostname",
  "kubernetes.io/os",
  "node.kubernetes.io/instance-type",
  "topology.kubernetes.io/region",
  "topology.kubernetes.io/zone",
];

/** KubeletLabelNamespaces(): LabelNamespaceSuffixKubelet, LabelNamespaceSuffixNode. */
export const kubeletLabelNamespaces: readonly string[] = ["kubelet.kubernetes.io", "node.kubernetes.io"];

/** The prefix of a label key (`a.io` in `a.io/b`), or "" without one. */
export function labelNamespace(key: string): string {
  const slash = key.indexOf("/");
  return slash < 0 ? "" : key.slice(0, slash);
}

/** IsKubeletLabel: may a kubelet set this label on its own Node? */
export function isKubeletLabel(key: string): boolean {
  if (kubeletLabels.includes(key)) return true;
  const ns = labelNamespace(key);
  return kubeletLabelNamespaces.some((allowed) => ns === allowed || ns.endsWith(`.${allowed}`));
}

/**
 * The certificate list — every identity of the cluster, with the file it lives in, the subject
 * the authorizers will read and the SANs a client will check.
 * Mirrors kubernetes/kubernetes cmd/kubeadm/app/phases/certs/certlist.go.
 *
 * Solves: the API server's x509 authenticator turns a client certificate into a user — CN is the
 * user name, each O a group — so a certificate *is* an identity, and RBAC's default bindings and
 * the Node authorizer recognise fixed names: `system:masters` is bound to cluster-admin,
 * `system:kube-scheduler` and `system:kube-controller-manager` to their roles, and a kubelet is
 * `system:node:<name>` in group `system:nodes`. One list, read by the generator and by the
 * chapters, keeps those names in one place.
 *
 * Invariants:
 * - the layout is fixed (scripts and later chapters rely on it): `ca.crt`/`ca.key`,
 *   `apiserver.crt`/`apiserver.key`, `apiserver-kubelet-client.crt`/`.key` (chapter 7: the API
 *   server's client certificate towards kubelets), `sa.key`/`sa.pub`, and for each client identity
 *   `<id>.crt`, `<id>.key`, `<id>.kubeconfig`;
 * - client ids are `admin`, `kube-scheduler`, `kube-controller-manager` and `node-<name>` for
 *   each node name, in that order; node names are DNS-1123 subdomains (they are Node object names).
 *
 * What kubeadm does differently:
 * - kubeadm 1.29+ puts `admin.conf` in group `kubeadm:cluster-admins` (bound to cluster-admin by
 *   a ClusterRoleBinding it creates) and keeps `system:masters` for `super-admin.conf`, a
 *   break-glass credential RBAC cannot revoke; our one `admin` is that super-admin;
 * - kubeadm's kubeconfig files (`admin.conf`, `scheduler.conf`, …) embed their certificate only;
 *   we also write it beside them as `<id>.crt`/`<id>.key`, for components that take files;
 * - the API server certificate also carries the node name, the advertise address and the first
 *   IP of the service CIDR (10.96.0.1) in kubeadm; ours carries the advertise address only when
 *   it is asked for as an extra SAN (`npm run cluster -- --advertise-address` does), and has no
 *   service CIDR;
 * - no etcd CA or front-proxy CA: nothing here uses them yet.
 *
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/phases/certs/certlist.go (KubeadmCertRootCA, KubeadmCertAPIServer, KubeadmCertKubeletClient, GetDefaultCertList)
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/util/pkiutil/pki_helpers.go (GetAPIServerAltNames, appendSANsToAltNames)
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/constants/constants.go (CACertAndKeyBaseName, APIServerCertCommonName, ServiceAccountKeyBaseName, SystemPrivilegedGroup, NodesGroup, NodesUserPrefix)
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/phases/kubeconfig/kubeconfig.go (getKubeConfigSpecsBase)
 * @chapter 03-api-security
 */
import { isDNS1123Subdomain, isWildcardDNS1123Subdomain, parseIPSloppy } from "../api/string-validation.ts";
import type { CertConfig } from "./pki-helpers.ts";

/** The CA's file base name and common name (kubeadm's KubeadmCertRootCA). */
export const CACertAndKeyBaseName = "ca";
export const CACommonName = "kubernetes";
/** The API server's serving certificate. */
export const APIServerCertAndKeyBaseName = "apiserver";
export const APIServerCertCommonName = "kube-apiserver";
/** chapter 7: the API server's client certificate towards kubelets (`--kubelet-client-certificate`). */
export const APIServerKubeletClientCertAndKeyBaseName = "apiserver-kubelet-client";
export const APIServerKubeletClientCertCommonName = "kube-apiserver-kubelet-client";
/** The service-account token signing key pair: `sa.key`, `sa.pub`. */
export const ServiceAccountKeyBaseName = "sa";
/** The cluster name every kubeconfig uses (kubeadm's default ClusterName). */
export const ClusterName = "kubernetes";
/** Where the kubeconfigs point unless told otherwise. */
export const DefaultServer = "https://127.0.0.1:6443";
/** The kubelet identities made when no node names are given. */
export const DefaultNodes: readonly string[] = ["node-1"];

/** Well-known users and groups (kubeadm constants.go). */
export const SystemPrivilegedGroup = "system:masters";
export const NodesGroup = "system:nodes";
export const NodesUserPrefix = "system:node:";
export const SchedulerUser = "system:kube-scheduler";
export const ControllerManagerUser = "system:kube-controller-manager";
export const AdminUser = "kubernetes-admin";

/** One certificate of the list, and what goes into it. */
export interface CertSpec extends CertConfig {
  /** The file base name: `<id>.crt`, `<id>.key` (and `<id>.kubeconfig` for a client). */
  id: string;
  /** kubeadm's LongName: what the certificate is for, in progress lines. */
  longName: string;
}

// #region apiserver-cert
/**
 * The API server's serving certificate. A client checks the name it dialled against these SANs,
 * so they hold every name a client may use: the loopback addresses it listens on, `localhost`,
 * the in-cluster names of the `kubernetes` Service (kubeadm's GetAPIServerAltNames, with the
 * default DNS domain `cluster.local`), and the extra SANs asked for
 * (`--apiserver-cert-extra-sans`: the machine's address when the cluster is reached over the
 * network, a load balancer's name).
 */
export function apiServerCertSpec(extraSANs: readonly string[] = []): CertSpec {
  const extra = splitCertSANs(extraSANs);
  return {
    id: APIServerCertAndKeyBaseName,
    longName: "certificate for serving the Kubernetes API",
    commonName: APIServerCertCommonName,
    organization: [],
    altNames: {
      dnsNames: unique([
        "kubernetes",
        "kubernetes.default",
        "kubernetes.default.svc",
        "kubernetes.default.svc.cluster.local",
        "localhost",
        ...extra.dnsNames,
      ]),
      ips: unique(["127.0.0.1", "::1", ...extra.ips]),
    },
    usages: ["serverAuth"],
  };
}

/**
 * kubeadm's appendSANsToAltNames: an entry that parses as an IP is an IP SAN, one that is a
 * DNS-1123 subdomain (or `*.` and one) a DNS SAN. Anything else was refused before
 * (validateCertSANs), so it is left out here as kubeadm leaves it out.
 */
export function splitCertSANs(sans: readonly string[]): { dnsNames: string[]; ips: string[] } {
  const out = { dnsNames: [] as string[], ips: [] as string[] };
  for (const san of sans) {
    if (parseIPSloppy(san)) out.ips.push(san);
    else if (isDNS1123Subdomain(san).length === 0 || isWildcardDNS1123Subdomain(san).length === 0)
      out.dnsNames.push(san);
  }
  return out;
}
// #endregion apiserver-cert

/**
 * chapter 7: kubeadm's KubeadmCertKubeletClient — the API server shows it to a kubelet when it
 * proxies `kubectl logs` and `kubectl exec`; the kubelet authenticates it against its
 * `--client-ca-file` and asks the API server (a SubjectAccessReview) whether that user may
 * `get`/`create` `nodes/proxy` — yes: `system:masters` is bound to cluster-admin. No kubeconfig:
 * the API server reads the files by flag.
 */
export function apiServerKubeletClientCertSpec(): CertSpec {
  return {
    id: APIServerKubeletClientCertAndKeyBaseName,
    longName: "Client certificate for the API server to connect to kubelet",
    commonName: APIServerKubeletClientCertCommonName,
    organization: [SystemPrivilegedGroup],
    altNames: { dnsNames: [], ips: [] },
    usages: ["clientAuth"],
  };
}

/** In first-seen order, each once (an extra SAN may repeat a default one). */
function unique(values: string[]): string[] {
  return [...new Set(values)];
}

// #region client-certs
/** A kubelet's identity id: `node-<name>`. */
export function nodeIdentityId(nodeName: string): string {
  return `node-${nodeName}`;
}

/**
 * The client identities, each a certificate with clientAuth and a kubeconfig: CN is the user the
 * API server will see, O its groups (kubeadm's getKubeConfigSpecsBase).
 */
export function clientCertSpecs(nodes: readonly string[]): CertSpec[] {
  const client = (id: string, longName: string, commonName: string, organization: string[]): CertSpec => ({
    id,
    longName,
    commonName,
    organization,
    altNames: { dnsNames: [], ips: [] },
    usages: ["clientAuth"],
  });
  return [
    client("admin", "certificate for the cluster administrator", AdminUser, [SystemPrivilegedGroup]),
    client("kube-scheduler", "certificate for the scheduler", SchedulerUser, []),
    client("kube-controller-manager", "certificate for the controller manager", ControllerManagerUser, []),
    ...nodes.map((name) =>
      client(nodeIdentityId(name), `certificate for the kubelet on ${name}`, `${NodesUserPrefix}${name}`, [
        NodesGroup,
      ]),
    ),
  ];
}
// #endregion client-certs

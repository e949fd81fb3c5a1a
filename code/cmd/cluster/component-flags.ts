/**
 * The command lines of the cluster's storage and API server, with upstream's flags — what
 * hack/local-up-cluster.sh's start_etcd (through hack/lib/etcd.sh) and start_apiserver pass —
 * kept apart from the launcher that spawns them, so the flags read as one list each.
 * No upstream counterpart as code: the flags are upstream's (etcd v3.5's and kube-apiserver's).
 *
 * @upstream kubernetes/kubernetes hack/local-up-cluster.sh (start_apiserver: the flags)
 * @upstream kubernetes/kubernetes hack/lib/etcd.sh (kube::etcd::start: --listen-client-urls, --advertise-client-urls, --data-dir)
 * @chapter 08-cluster
 */
import { join } from "node:path";
import type { PKILayout } from "../../pki/certs.ts";
import { cmdFile } from "./preflight.ts";

/** `node --import tsx code/cmd/<name>.ts`: how a learner starts a course component. */
export function node(name: string): string[] {
  return [process.execPath, "--import", "tsx", cmdFile(name)];
}

// #region etcd-flags
/** Our etcd (one member, no peers), its data under `<dir>/etcd/etcd`. */
export function etcdArgs(dir: string, clientURL: string): string[] {
  return [
    ...node("etcd"),
    "--name=etcd",
    `--data-dir=${join(dir, "etcd", "etcd")}`,
    `--listen-client-urls=${clientURL}`,
    `--advertise-client-urls=${clientURL}`,
  ];
}

/** One member of the real etcd, its peers on 127.0.0.1 (`initialCluster`: `name=peerURL,…`). */
export function realEtcdArgs(
  binary: string,
  m: { name: string; dataDir: string; clientURL: string; peerURL: string; initialCluster: string },
): string[] {
  return [
    binary,
    `--name=${m.name}`,
    `--data-dir=${m.dataDir}`,
    `--listen-client-urls=${m.clientURL}`,
    `--advertise-client-urls=${m.clientURL}`,
    `--listen-peer-urls=${m.peerURL}`,
    `--initial-advertise-peer-urls=${m.peerURL}`,
    `--initial-cluster=${m.initialCluster}`,
    "--initial-cluster-state=new",
    "--initial-cluster-token=kuth-cluster",
  ];
}
// #endregion etcd-flags

// #region apiserver-flags
/**
 * HTTPS with the chapter-3 PKI, Node,RBAC, NodeRestriction, ServiceAccount tokens, the kubelets'
 * client; listening on `bindAddress` (127.0.0.1 unless the cluster runs over a network address).
 */
export function apiServerArgs(
  l: PKILayout,
  port: number,
  etcdURLs: string[],
  bindAddress = "127.0.0.1",
): string[] {
  return [
    ...node("kube-apiserver"),
    `--etcd-servers=${etcdURLs.join(",")}`,
    `--secure-port=${port}`,
    `--bind-address=${bindAddress}`,
    `--tls-cert-file=${l.apiServerCert}`,
    `--tls-private-key-file=${l.apiServerKey}`,
    `--client-ca-file=${l.caCert}`,
    "--authorization-mode=Node,RBAC",
    "--enable-admission-plugins=NodeRestriction",
    `--service-account-signing-key-file=${l.serviceAccountKey}`,
    `--service-account-key-file=${l.serviceAccountPublicKey}`,
    "--service-account-issuer=https://kubernetes.default.svc.cluster.local",
    // How the API server reaches the kubelets (kubectl logs, exec): chapter 7.
    `--kubelet-client-certificate=${l.apiServerKubeletClientCert}`,
    `--kubelet-client-key=${l.apiServerKubeletClientKey}`,
    "--kubelet-preferred-address-types=InternalIP",
    "--v=0",
  ];
}
// #endregion apiserver-flags

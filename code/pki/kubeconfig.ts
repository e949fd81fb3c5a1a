/**
 * Kubeconfig — the file a client (kubectl, a controller, a kubelet) reads to find the API server,
 * trust its certificate and prove who it is.
 * Mirrors upstream's kubernetes/kubernetes cmd/kubeadm/app/phases/kubeconfig/kubeconfig.go.
 *
 * Solves: a component needs three things to talk to the API server over TLS — the URL, the CA
 * that signed the server's certificate, and its own client certificate and key. A kubeconfig
 * carries all three in one file (`certificate-authority-data`, `client-certificate-data`,
 * `client-key-data`, base64 of the PEM files), so `kubectl --kubeconfig admin.kubeconfig` works
 * with nothing else.
 *
 * Invariants:
 * - the shape is client-go's `clientcmd/api/v1` Config, written as kubeadm writes it: one cluster
 *   named `kubernetes`, one user named after the certificate's CN, one context
 *   `<user>@kubernetes` that is also the current context, empty preferences; keys in the order
 *   client-go's serializer emits them (alphabetical), so the file reads like kubeadm's `admin.conf`;
 * - a kubeconfig found on disk is accepted only if it points at the same server and carries
 *   exactly the CA, certificate and key of the files beside it; otherwise the difference is
 *   reported (kubeadm errors on a wrong CA and only warns on a different server URL; we error on
 *   both, because a kubeconfig is cheap to rewrite and a silent mismatch is not).
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/client-go/tools/clientcmd/api/v1/types.go (Config, NamedCluster, Cluster, NamedAuthInfo, AuthInfo, NamedContext, Context)
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/util/kubeconfig/kubeconfig.go (CreateBasic, CreateWithCerts)
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/phases/kubeconfig/kubeconfig.go (validateKubeConfig, createKubeConfigFileIfNotExists)
 * @chapter 03-api-security
 */
import { parse, stringify } from "yaml";

/** clientcmd v1 Config, the fields kubeadm writes. */
export interface Config {
  apiVersion: "v1";
  clusters: { cluster: { "certificate-authority-data": string; server: string }; name: string }[];
  contexts: { context: { cluster: string; user: string }; name: string }[];
  "current-context": string;
  kind: "Config";
  preferences: Record<string, never>;
  users: { name: string; user: { "client-certificate-data": string; "client-key-data": string } }[];
}

/** What a kubeconfig for one identity holds, decoded. */
export interface KubeConfigSpec {
  server: string;
  clusterName: string;
  userName: string;
  /** PEM text of ca.crt, <id>.crt and <id>.key. */
  caCert: string;
  clientCert: string;
  clientKey: string;
}

const b64 = (text: string) => Buffer.from(text).toString("base64");
const unb64 = (data: unknown) =>
  typeof data === "string" ? Buffer.from(data, "base64").toString() : undefined;

// #region create-with-certs
/** CreateWithCerts: a Config that authenticates with an embedded client certificate. */
export function createWithCerts(spec: KubeConfigSpec): Config {
  const contextName = `${spec.userName}@${spec.clusterName}`;
  return {
    apiVersion: "v1",
    clusters: [
      {
        cluster: { "certificate-authority-data": b64(spec.caCert), server: spec.server },
        name: spec.clusterName,
      },
    ],
    contexts: [{ context: { cluster: spec.clusterName, user: spec.userName }, name: contextName }],
    "current-context": contextName,
    kind: "Config",
    preferences: {},
    users: [
      {
        name: spec.userName,
        user: { "client-certificate-data": b64(spec.clientCert), "client-key-data": b64(spec.clientKey) },
      },
    ],
  };
}

/** The YAML text of a Config; base64 data stays on one line, as client-go writes it. */
export function serializeKubeConfig(config: Config): string {
  return stringify(config, { lineWidth: 0, indentSeq: false });
}
// #endregion create-with-certs

// #region validate
/**
 * validateKubeConfig: does the file at hand say what we would write? Returns the difference in
 * kubeadm's words (`exists already but has got the wrong CA cert`), or undefined when it matches.
 * Compared through the current context, as a client resolves it.
 */
export function kubeConfigMismatch(text: string, path: string, expected: KubeConfigSpec): string | undefined {
  let doc: unknown;
  try {
    doc = parse(text);
  } catch (e) {
    return `a kubeconfig file "${path}" exists already but is not YAML: ${(e as Error).message}`;
  }
  const config = doc as Partial<Config> | null;
  if (config?.kind !== "Config" || config.apiVersion !== "v1") {
    return `a kubeconfig file "${path}" exists already but is not a v1 Config`;
  }
  const current = config.contexts?.find((c) => c?.name === config["current-context"])?.context;
  const cluster = config.clusters?.find((c) => c?.name === current?.cluster)?.cluster;
  const user = config.users?.find((u) => u?.name === current?.user)?.user;
  if (!current || !cluster || !user) {
    return `a kubeconfig file "${path}" exists already but its current context names no cluster or user in it`;
  }
  // kubeadm trims whitespace before comparing: the decoded PEM may have lost its final newline.
  const same = (a: string | undefined, b: string) => a !== undefined && a.trim() === b.trim();
  if (!same(unb64(cluster["certificate-authority-data"]), expected.caCert)) {
    return `a kubeconfig file "${path}" exists already but has got the wrong CA cert`;
  }
  if (cluster.server !== expected.server) {
    return `a kubeconfig file "${path}" exists already but has an unexpected API Server URL: expected: ${expected.server}, got: ${cluster.server}`;
  }
  if (
    !same(unb64(user["client-certificate-data"]), expected.clientCert) ||
    !same(unb64(user["client-key-data"]), expected.clientKey)
  ) {
    return `a kubeconfig file "${path}" exists already but its client certificate or key is not the one in the files beside it`;
  }
  return undefined;
}
// #endregion validate

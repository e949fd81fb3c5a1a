/**
 * How the API server reaches a node's kubelet: the Node's preferred address, its kubelet port,
 * and the client certificate it shows (`--kubelet-client-certificate`, `--kubelet-client-key`,
 * `--kubelet-certificate-authority`, `--kubelet-preferred-address-types`).
 * Mirrors kubernetes/kubernetes pkg/kubelet/client/kubelet_client.go.
 *
 * Solves: `pods/log` and `pods/exec` are answered by the kubelet of the pod's node, so the API
 * server must turn a node name into a URL it can dial — from the Node object the kubelet
 * registered (`status.addresses`, `status.daemonEndpoints.kubeletEndpoint.Port`) — and into a
 * TLS connection the kubelet will authenticate.
 *
 * Invariants:
 * - the address is the first of the node's addresses whose type comes first in the preferred
 *   list (upstream's default order: Hostname, InternalDNS, InternalIP, ExternalDNS, ExternalIP);
 *   none is upstream's `no preferred addresses found; known addresses: [...]`;
 * - the port is the node's kubelet endpoint, or `--kubelet-port` (10250) when it has none;
 * - without `--kubelet-certificate-authority` the kubelet's serving certificate is not
 *   verified (upstream's default: kubelets serve self-signed certificates);
 * - a kubelet that cannot be dialed is Go's text: `Get "https://…": dial tcp 127.0.0.1:10250:
 *   connect: connection refused`, which the API server answers as a 500 Status.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/client/kubelet_client.go (KubeletClientConfig, NodeConnectionInfoGetter.GetConnectionInfo)
 * @upstream kubernetes/kubernetes pkg/util/node/node.go (GetPreferredNodeAddress, NoMatchError)
 * @upstream kubernetes/kubernetes cmd/kube-apiserver/app/options/options.go (the --kubelet-* flags and defaults)
 * @upstream kubernetes/kubernetes cmd/kubeadm/app/phases/controlplane/manifests.go (kubeadm passes --kubelet-preferred-address-types=InternalIP,ExternalIP,Hostname)
 * @chapter 07-kubelet
 */
import type { ClientRequest, IncomingMessage } from "node:http";
import { request } from "node:https";
import type { Node } from "../../../api/core.ts";
import { isStatusError, newNotFound } from "../../errors.ts";
import type { Store } from "../store.ts";

/** `--kubelet-preferred-address-types`' default. */
export const DefaultPreferredAddressTypes = [
  "Hostname",
  "InternalDNS",
  "InternalIP",
  "ExternalDNS",
  "ExternalIP",
];
/** `--kubelet-port`'s default (upstream's ports.KubeletPort). */
export const DefaultKubeletPort = 10250;

/** KubeletClientConfig: the PEM contents of the flags' files. */
export interface KubeletClientConfig {
  /** `--kubelet-client-certificate`. */
  cert?: string;
  /** `--kubelet-client-key`. */
  key?: string;
  /** `--kubelet-certificate-authority`; absent: the kubelet's certificate is not verified. */
  ca?: string;
  preferredAddressTypes?: string[];
  port?: number;
}

/** ConnectionInfo: where to dial and how. */
export interface ConnectionInfo {
  scheme: "https";
  hostname: string;
  port: number;
  config: KubeletClientConfig;
}

// #region connection-info
/** GetConnectionInfo: the node's preferred address and kubelet port. */
export async function getConnectionInfo(
  nodes: Store,
  nodeName: string,
  config: KubeletClientConfig,
): Promise<ConnectionInfo> {
  let node: Node;
  try {
    node = (await nodes.get("", nodeName)) as Node;
  } catch (e) {
    if (isStatusError(e) && e.code === 404) throw newNotFound({ group: "", resource: "nodes" }, nodeName);
    throw e;
  }
  const addresses = node.status?.addresses ?? [];
  let hostname: string | undefined;
  for (const type of config.preferredAddressTypes ?? DefaultPreferredAddressTypes) {
    hostname = addresses.find((a) => a.type === type)?.address;
    if (hostname) break;
  }
  if (!hostname) {
    const known = addresses.map((a) => `{${a.type} ${a.address}}`).join(" ");
    throw new Error(`no preferred addresses found; known addresses: [${known}]`);
  }
  const endpointPort = node.status?.daemonEndpoints?.kubeletEndpoint?.Port ?? 0;
  return {
    scheme: "https",
    hostname,
    port: endpointPort > 0 ? endpointPort : (config.port ?? DefaultKubeletPort),
    config,
  };
}
// #endregion connection-info

/** `https://host:port/path?query`, with an IPv6 host in brackets (net.JoinHostPort). */
export function locationURL(info: ConnectionInfo, path: string, query: URLSearchParams): URL {
  const host = info.hostname.includes(":") ? `[${info.hostname}]` : info.hostname;
  const q = query.toString();
  return new URL(`${info.scheme}://${host}:${info.port}${path}${q ? `?${q}` : ""}`);
}

/** The TLS options of a request to the kubelet. */
export function kubeletTLSOptions(config: KubeletClientConfig) {
  return {
    cert: config.cert,
    key: config.key,
    ...(config.ca ? { ca: config.ca, rejectUnauthorized: true } : { rejectUnauthorized: false }),
  };
}

/** Go's net/http error text for a failed request, as the client would see it. */
export function dialErrorMessage(method: string, url: URL, e: unknown): string {
  const err = e as NodeJS.ErrnoException & { address?: string; port?: number };
  const verb = method.charAt(0).toUpperCase() + method.slice(1).toLowerCase();
  const quoted = `${verb} "${url.toString()}"`;
  const target = `${url.hostname.replace(/^\[|\]$/g, "")}:${url.port}`;
  switch (err.code) {
    case "ECONNREFUSED":
      return `${quoted}: dial tcp ${target}: connect: connection refused`;
    case "ETIMEDOUT":
      return `${quoted}: dial tcp ${target}: i/o timeout`;
    case "ENOTFOUND":
    case "EAI_AGAIN":
      return `${quoted}: dial tcp: lookup ${url.hostname}: no such host`;
    default:
      return `${quoted}: ${err.message}`;
  }
}

/** A GET to the kubelet; resolves with the response, rejects with Go's dial error text. */
export function getFromKubelet(
  url: URL,
  config: KubeletClientConfig,
  signal: AbortSignal,
): { req: ClientRequest; response: Promise<IncomingMessage> } {
  let req!: ClientRequest;
  const response = new Promise<IncomingMessage>((resolve, reject) => {
    req = request(url, { method: "GET", ...kubeletTLSOptions(config), signal }, resolve);
    req.on("error", (e: Error) => reject(new Error(dialErrorMessage("GET", url, e))));
    req.end();
  });
  return { req, response };
}

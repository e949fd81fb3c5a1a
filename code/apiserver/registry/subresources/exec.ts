/**
 * pods/exec — `GET …/pods/web/exec?command=sh&command=-c&command=…&stdin=true&stdout=true`
 * with `Upgrade: websocket`: the API server checks the request like any other, finds the pod's
 * node and splices the client's connection to that kubelet's `/exec/…`.
 * Mirrors kubernetes/kubernetes pkg/registry/core/pod/rest/subresources.go (ExecREST).
 *
 * Solves: `kubectl exec` needs a two-way stream to a process on a node it cannot reach; the API
 * server is the one door (authentication, RBAC on `pods/exec`), so it opens a TLS connection to
 * the kubelet with its own client certificate, replays the upgrade request there, and from then
 * on copies bytes both ways — the WebSocket handshake and frames pass through untouched.
 *
 * Invariants:
 * - the container rules are LogLocation's (validateContainer); a pod without a node is a 400
 *   `pod web does not have a host assigned`;
 * - a request without an upgrade is a 400 `Upgrade request required`;
 * - the client's credentials (Authorization, Impersonate-*) never reach the kubelet: it sees the
 *   API server's certificate, and authorizes that user for `nodes/proxy`;
 * - a kubelet that cannot be dialed is a 500 Status `error dialing backend: dial tcp …`; once
 *   dialed, whatever the kubelet answers (101, or its error) goes back as it is;
 * - either side closing closes the other.
 *
 * What upstream does differently: since 1.30 the API server translates kubectl's WebSocket
 * (v5.channel.k8s.io) into SPDY towards the kubelet (TranslateStreamCloseWebsocketRequests),
 * because kubelets and runtimes speak SPDY; our kubelet speaks the WebSocket protocol itself
 * (upstream's ExtendWebSocketsToKubelet, alpha), so bytes are spliced without translation. A
 * SPDY upgrade (kubectl's fallback) is spliced the same way and refused by the kubelet.
 *
 * @upstream kubernetes/kubernetes pkg/registry/core/pod/rest/subresources.go (ExecREST.Connect)
 * @upstream kubernetes/kubernetes pkg/registry/core/pod/strategy.go (ExecLocation, streamLocation, streamParams)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/proxy/upgradeaware.go (UpgradeAwareHandler.tryUpgrade: "error dialing backend")
 * @chapter 07-kubelet
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import { connect } from "node:tls";
import { newBadRequest, type StatusError } from "../../errors.ts";
import type { Store } from "../store.ts";
import {
  type ConnectionInfo,
  getConnectionInfo,
  type KubeletClientConfig,
  kubeletTLSOptions,
  locationURL,
} from "./kubelet-client.ts";
import { getPod, validateContainer } from "./log.ts";

/** v1.PodExecOptions from the query (booleans as the parameter codec reads them). */
export interface PodExecOptions {
  container?: string;
  command: string[];
  stdin: boolean;
  stdout: boolean;
  stderr: boolean;
  tty: boolean;
}

export function podExecOptionsFromQuery(q: URLSearchParams): PodExecOptions {
  const bool = (name: string) => ["1", "t", "T", "TRUE", "true", "True"].includes(q.get(name) ?? "");
  return {
    container: q.get("container") || undefined,
    command: q.getAll("command"),
    stdin: bool("stdin"),
    stdout: bool("stdout"),
    stderr: bool("stderr"),
    tty: bool("tty"),
  };
}

// #region exec-location
/** ExecLocation: `/exec/{ns}/{pod}/{container}` on the pod's kubelet, with the streams asked for. */
export async function execLocation(
  pods: Store,
  nodes: Store,
  config: KubeletClientConfig,
  namespace: string,
  name: string,
  opts: PodExecOptions,
): Promise<{ url: URL; info: ConnectionInfo }> {
  const pod = await getPod(pods, namespace, name);
  const container = validateContainer(opts.container, pod);
  const nodeName = (pod.spec as { nodeName?: string } | undefined)?.nodeName;
  if (!nodeName) throw newBadRequest(`pod ${name} does not have a host assigned`);
  const info = await getConnectionInfo(nodes, nodeName, config);
  // streamParams: upstream's short names, "1" for true.
  const params = new URLSearchParams();
  if (opts.stdin) params.append("input", "1");
  if (opts.stdout) params.append("output", "1");
  if (opts.stderr) params.append("error", "1");
  if (opts.tty) params.append("tty", "1");
  for (const c of opts.command) params.append("command", c);
  const path = `/exec/${encodeURIComponent(namespace)}/${encodeURIComponent(name)}/${encodeURIComponent(container)}`;
  return { url: locationURL(info, path, params), info };
}
// #endregion exec-location

/** Headers that carry the client's identity: the kubelet must not see them. */
const dropped = /^(authorization|impersonate-.*|host|content-length)$/i;

// #region splice-upgrade
/**
 * tryUpgrade: dial the kubelet over TLS with the API server's client certificate, replay the
 * request line and headers for the kubelet's path, then copy bytes both ways. Resolves once the
 * kubelet is connected; a failed dial rejects with upstream's "error dialing backend".
 */
export function spliceUpgrade(
  req: IncomingMessage,
  client: Duplex,
  head: Buffer,
  url: URL,
  config: KubeletClientConfig,
): Promise<void> {
  return new Promise((resolve, reject) => {
    const host = url.hostname.replace(/^\[|\]$/g, "");
    const backend = connect({ host, port: Number(url.port), ...kubeletTLSOptions(config) });
    let connected = false;
    backend.once("secureConnect", () => {
      connected = true;
      const lines = [`${req.method ?? "GET"} ${url.pathname}${url.search} HTTP/1.1`, `Host: ${url.host}`];
      for (let i = 0; i < req.rawHeaders.length; i += 2) {
        const key = req.rawHeaders[i] as string;
        if (!dropped.test(key)) lines.push(`${key}: ${req.rawHeaders[i + 1]}`);
      }
      backend.write(`${lines.join("\r\n")}\r\n\r\n`);
      if (head.length > 0) backend.write(head);
      backend.pipe(client);
      client.pipe(backend);
      resolve();
    });
    backend.on("error", (e: NodeJS.ErrnoException) => {
      if (!connected) {
        const target = `${host}:${url.port}`;
        const why = e.code === "ECONNREFUSED" ? "connect: connection refused" : e.message;
        reject(new Error(`error dialing backend: dial tcp ${target}: ${why}`));
        return;
      }
      client.destroy();
    });
    backend.on("close", () => client.destroy());
    client.on("close", () => backend.destroy());
    client.on("error", () => backend.destroy());
  });
}
// #endregion splice-upgrade

/** ExecREST.Connect: validate, locate, splice. Errors before the splice are Statuses to write. */
export async function connectExec(
  pods: Store,
  nodes: Store,
  config: KubeletClientConfig,
  namespace: string,
  name: string,
  query: URLSearchParams,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  const opts = podExecOptionsFromQuery(query);
  const { url } = await execLocation(pods, nodes, config, namespace, name, opts);
  await spliceUpgrade(req, socket, head, url, config);
}

/** The HTTP answer of an error on a socket that was asked to upgrade (a Status, as JSON). */
export function writeUpgradeError(socket: Duplex, err: StatusError): void {
  const status = err.status;
  const body = Buffer.from(JSON.stringify(status));
  const reason = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    500: "Internal Server Error",
  }[status.code];
  socket.end(
    `HTTP/1.1 ${status.code} ${reason ?? "Error"}\r\nContent-Type: application/json\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${body.toString()}`,
  );
}

/**
 * The kubelet's HTTPS server (`--port`, 10250): `/healthz`, `/pods`, `/containerLogs/…` and
 * `/exec/…` — the endpoints the API server proxies `kubectl logs` and `kubectl exec` to.
 * Mirrors kubernetes/kubernetes pkg/kubelet/server/server.go.
 *
 * Solves: logs and processes live on the node, not in etcd, so the API server cannot answer
 * `kubectl logs` or `kubectl exec` itself; it finds the pod's node and forwards the request to
 * that node's kubelet, which reads the container's log file or runs the command in it.
 *
 * Invariants:
 * - every request passes the auth filter first (auth.ts): a verified client certificate, then a
 *   SubjectAccessReview for `nodes/proxy` (or the subresource upstream picks for the path);
 * - `/containerLogs/{ns}/{pod}/{container}` takes PodLogOptions as query parameters (`tail` is
 *   the old spelling of `tailLines`, `tail=all` none), a pod the kubelet does not run is a 404
 *   `pod "x" does not exist`, a container not in its spec a 404 `container "c" not found in pod
 *   "x"`, and a log that cannot be read a 400 with the reason; the body streams (chunked);
 * - `/exec/{ns}/{pod}/{container}?command=…&stdin=1&stdout=1&stderr=1&tty=1` must be a
 *   WebSocket upgrade offering v5 or v4 of `channel.k8s.io` (remotecommand.ts);
 * - with no `--tls-cert-file`, a self-signed certificate for the node is made at start (written
 *   to `--cert-dir` as `kubelet.crt`/`kubelet.key` when given), as upstream's kubelet does.
 *
 * What upstream does differently: it also serves `/attach`, `/portForward`, `/run`, `/stats`,
 * `/metrics`, `/logs`, `/checkpoint`, `/runningpods`, `/configz` and the debug handlers; exec
 * over SPDY (a POST upgrade), and exec with the runtime's own streaming server behind a proxy.
 *
 * The host interface (what the kubelet gives its server; the coordinator wires it to the Kubelet):
 * - `getPods()` — the pods bound to this kubelet (upstream's `HostInterface.GetPods`), served
 *   as a v1 PodList on `/pods`;
 * - `findContainer(namespace, pod, container, previous)` — the container's log file and id
 *   (`previous`: the last terminated instance, restartCount − 1), `running` while it runs;
 *   `{ error }` is a 400 with upstream's text (`previous terminated container "c" in pod "x"
 *   not found`, `container "c" in pod "x" is waiting to start: ContainerCreating`); it is asked
 *   again while following, and the reader stops once `running` is false;
 * - `streaming` — the runtime's StreamingRuntime; absent (the fake runtime), exec is refused.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/server/server.go (InstallDefaultHandlers, InstallDebuggingHandlers, InstallAuthFilter, getContainerLogs, getExec, encodePods)
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet_pods.go (GetKubeletContainerLogs, validateContainerLogStatus)
 * @upstream kubernetes/kubernetes pkg/kubelet/kubelet.go (ListenAndServe) and cmd/kubelet/app/server.go (InitializeTLS: the self-signed certificate)
 * @chapter 07-kubelet
 */
import { constants } from "node:fs";
import { access, mkdir, readFile, writeFile } from "node:fs/promises";
import type { IncomingMessage, ServerResponse } from "node:http";
import { createServer, type Server } from "node:https";
import type { AddressInfo, Socket } from "node:net";
import { join } from "node:path";
import { WebSocketServer } from "ws";
import type { Pod } from "../../api/core.ts";
import {
  DefaultEncryptionAlgorithm,
  encodeCertPEM,
  encodePrivateKeyPEM,
  newCertificateAuthority,
  newPrivateKey,
  newSignedCert,
} from "../../pki/pki-helpers.ts";
import { newLogOptions, type PodLogOptions, readLogs } from "../kuberuntime/logs/logs.ts";
import type { StreamingRuntime } from "../runtime/cri.ts";
import {
  authenticateRequest,
  authorizationErrorMessage,
  forbiddenMessage,
  getRequestAttributes,
  type KubeletAuthorizer,
  type KubeletRequestAttributes,
} from "./auth.ts";
import {
  negotiateProtocol,
  type StreamOptions,
  serveExec,
  supportedStreamProtocols,
} from "./remotecommand.ts";

/** Upstream's default `--port`. */
export const DefaultKubeletPort = 10250;

/** Where a container's log is, for `/containerLogs` and exec. */
export interface ContainerLocation {
  containerId: string;
  /** The CRI log file (`<root>/pods-logs/<ns>_<pod>_<uid>/<container>/<restartCount>.log`). */
  logPath: string;
  running: boolean;
}

// #region host
/** What the kubelet gives its server (see the header). */
export interface KubeletServerHost {
  getPods(): Pod[];
  findContainer(
    namespace: string,
    podName: string,
    containerName: string,
    previous: boolean,
  ): ContainerLocation | { error: string } | Promise<ContainerLocation | { error: string }>;
  streaming?: StreamingRuntime;
}
// #endregion host

export interface KubeletServerOptions {
  nodeName: string;
  host: KubeletServerHost;
  /** `--port`; 0 picks a free one (tests). Default 10250. */
  port?: number;
  /** `--address`, default 127.0.0.1 here (upstream: 0.0.0.0). */
  address?: string;
  /** `--tls-cert-file` / `--tls-private-key-file` contents; absent: self-signed. */
  tls?: { cert: string; key: string };
  /** `--cert-dir`: where a self-signed pair is kept. */
  certDir?: string;
  /** `--client-ca-file` contents: the CA client certificates must chain to. */
  clientCA: string;
  /** `--authorization-mode=Webhook`: a SubjectAccessReview per request (auth.ts). */
  authorizer: KubeletAuthorizer;
  /** Overrides the reader's 5 s state-check period while following (tests). */
  logStateCheckPeriodMs?: number;
  log?: (line: string) => void;
}

export interface KubeletServer {
  /** `https://127.0.0.1:<port>`. */
  url: string;
  port: number;
  /** The serving certificate's PEM. */
  cert: string;
  close(): Promise<void>;
}

/** A self-signed pair for the node, as upstream's kubelet makes when given none. */
async function servingCert(opts: KubeletServerOptions): Promise<{ cert: string; key: string }> {
  if (opts.tls) return opts.tls;
  const pair = opts.certDir
    ? { cert: join(opts.certDir, "kubelet.crt"), key: join(opts.certDir, "kubelet.key") }
    : undefined;
  if (pair) {
    const exists = (p: string) =>
      access(p).then(
        () => true,
        () => false,
      );
    if ((await exists(pair.cert)) && (await exists(pair.key)))
      return { cert: await readFile(pair.cert, "utf8"), key: await readFile(pair.key, "utf8") };
  }
  const now = new Date();
  const stamp = Math.floor(now.getTime() / 1000);
  const ca = await newCertificateAuthority(`${opts.nodeName}-ca@${stamp}`, DefaultEncryptionAlgorithm, now);
  const key = await newPrivateKey(DefaultEncryptionAlgorithm);
  const leaf = await newSignedCert(
    {
      commonName: `${opts.nodeName}@${stamp}`,
      organization: [],
      altNames: { dnsNames: [opts.nodeName, "localhost"], ips: ["127.0.0.1"] },
      usages: ["serverAuth"],
    },
    key,
    ca,
    now,
  );
  const made = { cert: encodeCertPEM(leaf) + encodeCertPEM(ca.cert), key: encodePrivateKeyPEM(key) };
  if (pair) {
    await mkdir(opts.certDir as string, { recursive: true });
    await writeFile(pair.key, made.key, { mode: 0o600 });
    await writeFile(pair.cert, made.cert, { mode: 0o644 });
  }
  return made;
}

// #region start
export async function startKubeletServer(opts: KubeletServerOptions): Promise<KubeletServer> {
  const log = opts.log ?? (() => {});
  const tls = await servingCert(opts);
  const server: Server = createServer(
    {
      cert: tls.cert,
      key: tls.key,
      ca: opts.clientCA,
      requestCert: true,
      rejectUnauthorized: false,
      minVersion: "TLSv1.2",
    },
    (req, res) => void handle(opts, req, res),
  );
  // The subprotocol is chosen before the upgrade (handleUpgrade refuses what none matches).
  const wss = new WebSocketServer({
    noServer: true,
    handleProtocols: (offered) => negotiateProtocol(offered) ?? false,
  });
  server.on(
    "upgrade",
    (req: IncomingMessage, socket: Socket, head: Buffer) => void handleUpgrade(opts, wss, req, socket, head),
  );
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? DefaultKubeletPort, opts.address ?? "127.0.0.1", () => {
      server.off("error", reject);
      resolve();
    });
  });
  const port = (server.address() as AddressInfo).port;
  log(`Starting to listen address="${opts.address ?? "127.0.0.1"}" port=${port}`);
  return {
    url: `https://127.0.0.1:${port}`,
    port,
    cert: tls.cert,
    close: () =>
      new Promise<void>((resolve) => {
        for (const c of wss.clients) c.terminate();
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}
// #endregion start

/** InstallAuthFilter: 401 without a verified certificate, 403 when the review says no. */
async function authorize(
  opts: KubeletServerOptions,
  req: IncomingMessage,
): Promise<{ code: number; message: string } | KubeletRequestAttributes> {
  const log = opts.log ?? (() => {});
  const user = authenticateRequest(req);
  if (!user) return { code: 401, message: "Unauthorized" };
  const attrs = getRequestAttributes(user, req, opts.nodeName);
  try {
    const { allowed } = await opts.authorizer.authorize(attrs);
    if (!allowed) return { code: 403, message: forbiddenMessage(attrs) };
  } catch (e) {
    log(`Authorization error: ${(e as Error).message}`);
    return { code: 500, message: authorizationErrorMessage(attrs) };
  }
  return attrs;
}

function writeText(res: ServerResponse, code: number, text: string): void {
  res.writeHead(code, { "Content-Type": "text/plain; charset=utf-8" });
  res.end(text);
}

async function handle(opts: KubeletServerOptions, req: IncomingMessage, res: ServerResponse): Promise<void> {
  try {
    const gate = await authorize(opts, req);
    if ("code" in gate) return writeText(res, gate.code, gate.message);
    const url = new URL(req.url ?? "/", "https://kubelet");
    const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
    if (req.method !== "GET") return writeText(res, 405, "Method Not Allowed");
    if (url.pathname === "/healthz") return writeText(res, 200, "ok");
    if (url.pathname === "/pods" || url.pathname === "/pods/") {
      res.writeHead(200, { "Content-Type": "application/json" });
      res.end(
        JSON.stringify({ kind: "PodList", apiVersion: "v1", metadata: {}, items: opts.host.getPods() }),
      );
      return;
    }
    if (parts[0] === "containerLogs" && parts.length === 4)
      return await getContainerLogs(
        opts,
        res,
        parts[1] as string,
        parts[2] as string,
        parts[3] as string,
        url,
      );
    // UpgradeAwareHandler with upgradeRequired: its responder answers every error with a 500.
    if (parts[0] === "exec") return writeText(res, 500, "Upgrade request required");
    writeText(res, 404, "404 page not found");
  } catch (e) {
    if (res.headersSent) res.destroy();
    else writeText(res, 500, (e as Error).message);
  }
}

// #region container-logs
/** The query's PodLogOptions (v1, as the kubelet decodes them); a string is a 400's text. */
function podLogOptions(q: URLSearchParams): PodLogOptions | string {
  const int = (name: string): number | undefined | string => {
    const v = q.get(name);
    if (v === null) return undefined;
    return /^-?\d+$/.test(v) ? Number(v) : `{"message": "Unable to decode query."}`;
  };
  const bool = (name: string) => ["true", "1"].includes(q.get(name) ?? "");
  // Backwards compatibility: `tail` for tailLines, and `tail=all` for none.
  const tail = q.get("tail");
  if (tail !== null) {
    if (tail === "all") q.delete("tailLines");
    else q.set("tailLines", tail);
  }
  const tailLines = int("tailLines");
  const limitBytes = int("limitBytes");
  const sinceSeconds = int("sinceSeconds");
  for (const v of [tailLines, limitBytes, sinceSeconds]) if (typeof v === "string") return v;
  const sinceTime = q.get("sinceTime") ?? undefined;
  if (sinceTime !== undefined && Number.isNaN(Date.parse(sinceTime)))
    return `{"message": "Unable to decode query."}`;
  return {
    tailLines: tailLines as number | undefined,
    limitBytes: limitBytes as number | undefined,
    sinceSeconds: sinceSeconds as number | undefined,
    sinceTime,
    follow: bool("follow"),
    timestamps: bool("timestamps"),
  };
}

/** getContainerLogs: find the pod and container, then stream the reader's output. */
async function getContainerLogs(
  opts: KubeletServerOptions,
  res: ServerResponse,
  namespace: string,
  podName: string,
  containerName: string,
  url: URL,
): Promise<void> {
  const logOpts = podLogOptions(url.searchParams);
  if (typeof logOpts === "string") return writeText(res, 400, logOpts);
  const pod = opts.host
    .getPods()
    .find((p) => p.metadata.namespace === namespace && p.metadata.name === podName);
  if (!pod) return writeText(res, 404, `pod "${podName}" does not exist`);
  const spec = pod.spec as
    | { containers?: { name: string }[]; initContainers?: { name: string }[] }
    | undefined;
  const names = [...(spec?.containers ?? []), ...(spec?.initContainers ?? [])].map((c) => c.name);
  if (!names.includes(containerName))
    return writeText(res, 404, `container "${containerName}" not found in pod "${podName}"`);
  const previous = ["true", "1"].includes(url.searchParams.get("previous") ?? "");
  const where = await opts.host.findContainer(namespace, podName, containerName, previous);
  if ("error" in where) return writeText(res, 400, where.error);
  const abort = new AbortController();
  res.on("close", () => abort.abort());
  const readerOpts = newLogOptions(logOpts, new Date());
  // ReadLogs' first failure, while a 400 can still be written: the file cannot be opened.
  try {
    await access(where.logPath, constants.R_OK);
  } catch (e) {
    const why =
      (e as NodeJS.ErrnoException).code === "ENOENT" ? "no such file or directory" : (e as Error).message;
    return writeText(res, 400, `failed to open log file "${where.logPath}": open ${where.logPath}: ${why}`);
  }
  try {
    // Headers go out at once: a follower must see 200 before the first line arrives.
    res.writeHead(200, { "Content-Type": "text/plain", "Transfer-Encoding": "chunked" });
    await readLogs(
      where.logPath,
      readerOpts,
      { stdout: res, stderr: res },
      {
        signal: abort.signal,
        stateCheckPeriodMs: opts.logStateCheckPeriodMs,
        isContainerRunning: async () => {
          const now = await opts.host.findContainer(namespace, podName, containerName, previous);
          return !("error" in now) && now.containerId === where.containerId && now.running;
        },
      },
    );
    res.end();
  } catch {
    // Mid-stream, the only way to tell the client something went wrong is to cut the stream.
    res.destroy();
  }
}
// #endregion container-logs

/** Writes a plain HTTP answer on a socket that was about to be upgraded. */
function rejectUpgrade(socket: Socket, code: number, text: string): void {
  const reason = {
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    500: "Internal Server Error",
  }[code];
  const body = Buffer.from(text);
  socket.end(
    `HTTP/1.1 ${code} ${reason ?? ""}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${body.length}\r\nConnection: close\r\n\r\n${text}`,
  );
}

/** getExec: the auth filter, the pod, the container, then the WebSocket and the command. */
async function handleUpgrade(
  opts: KubeletServerOptions,
  wss: WebSocketServer,
  req: IncomingMessage,
  socket: Socket,
  head: Buffer,
): Promise<void> {
  socket.on("error", () => {});
  const gate = await authorize(opts, req);
  if ("code" in gate) return rejectUpgrade(socket, gate.code, gate.message);
  const url = new URL(req.url ?? "/", "https://kubelet");
  const parts = url.pathname.split("/").filter(Boolean).map(decodeURIComponent);
  if (parts[0] !== "exec" || parts.length !== 4) return rejectUpgrade(socket, 404, "404 page not found");
  const [, namespace, podName, containerName] = parts as [string, string, string, string];
  const q = url.searchParams;
  const flag = (name: string) => ["1", "true"].includes(q.get(name) ?? "");
  const streamOpts: StreamOptions = {
    stdin: flag("input") || flag("stdin"),
    stdout: flag("output") || flag("stdout"),
    stderr: flag("error") || flag("stderr"),
    tty: flag("tty"),
  };
  const cmd = q.getAll("command");
  // remotecommand.NewOptions: at least one stream, and no stderr with a TTY.
  if (!streamOpts.stdin && !streamOpts.stdout && !streamOpts.stderr)
    return rejectUpgrade(socket, 400, "you must specify at least 1 of stdin, stdout, stderr");
  if (streamOpts.tty && streamOpts.stderr) streamOpts.stderr = false;
  const pod = opts.host
    .getPods()
    .find((p) => p.metadata.namespace === namespace && p.metadata.name === podName);
  if (!pod) return rejectUpgrade(socket, 404, "pod does not exist");
  const where = await opts.host.findContainer(namespace, podName, containerName, false);
  if ("error" in where || !where.running)
    return rejectUpgrade(socket, 500, `container not found ("${containerName}")`);
  const streaming = opts.host.streaming;
  if (!streaming) return rejectUpgrade(socket, 500, "the container runtime does not support exec");
  // kubectl falls back to SPDY when the WebSocket handshake fails; this kubelet speaks only the
  // WebSocket protocol, so the fallback ends here with a reason rather than a bare 400.
  if ((req.headers.upgrade ?? "").toLowerCase() !== "websocket")
    return rejectUpgrade(
      socket,
      400,
      `upgrade to ${req.headers.upgrade} is not served: exec speaks WebSocket (${supportedStreamProtocols.join(", ")})`,
    );
  const offered = (req.headers["sec-websocket-protocol"] ?? "").split(",").map((p) => p.trim());
  const protocol = negotiateProtocol(offered);
  if (!protocol)
    return rejectUpgrade(
      socket,
      400,
      `requested protocol(s) are not supported: [${offered.join(" ")}]; supports [${supportedStreamProtocols.join(" ")}]`,
    );
  wss.handleUpgrade(req, socket, head, (ws) => {
    void serveExec(ws, protocol, streamOpts, cmd, () =>
      streaming.Exec({ containerId: where.containerId, cmd, tty: streamOpts.tty, stdin: streamOpts.stdin }),
    );
  });
}

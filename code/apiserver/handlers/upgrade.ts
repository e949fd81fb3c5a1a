/**
 * Requests that switch protocols — `kubectl exec`'s WebSocket (a GET) or its SPDY fallback (a
 * POST) — pass the same gates as every request, then leave HTTP: the connection is handed to
 * pods/exec, which splices it to the pod's kubelet.
 * Mirrors kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go (ConnectResource).
 *
 * Solves: Node's HTTP server gives an upgrade request to its `upgrade` listener, not to the
 * request handler, so without this the handler chain (authentication, impersonation,
 * authorization) would never see it; and an answer here is written on a raw socket.
 *
 * Invariants:
 * - authentication, impersonation and authorization run exactly as in handle(); a WebSocket exec
 *   is a GET, so RBAC is asked for `get pods/exec`, as v1.32 asks (the extra `create` check of
 *   AuthorizePodWebsocketUpgradeCreatePermission came later);
 * - anything but `pods/exec` is a 404; every failure is an HTTP answer carrying a Status.
 *
 * What upstream does differently: upgrades go through the whole filter chain (audit, priority
 * and fairness, the long-running request checks) and CONNECT admission (the connect options
 * are admitted as PodExecOptions); here neither audit nor admission sees them.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go (ConnectResource)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/request/requestinfo.go (an upgrade's verb is its method's: GET → get, POST → create)
 * @chapter 07-kubelet
 */
import type { IncomingMessage } from "node:http";
import type { Duplex } from "node:stream";
import type { Authenticator } from "../authn/authenticator.ts";
import type { Authorizer } from "../authz/authorizer.ts";
import { errorToAPIStatus, newBadRequest, newGenericServerResponse } from "../errors.ts";
import { authenticateRequest } from "../filters/authentication.ts";
import { authorizeRequest, authorizerAttributes } from "../filters/authorization.ts";
import { impersonateRequest } from "../filters/impersonation.ts";
import type { Store } from "../registry/store.ts";
import { connectExec, writeUpgradeError } from "../registry/subresources/exec.ts";
import type { KubeletClientConfig } from "../registry/subresources/kubelet-client.ts";
import { newRequestInfo, type RequestInfo } from "../request-info.ts";

/** What serving an upgrade needs of the server. */
export interface UpgradeDeps {
  authorizer: Authorizer | undefined;
  pods: Store;
  nodes: Store;
  kubeletClient: KubeletClientConfig;
  log: (line: string) => void;
}

// #region upgrade
/** The gates, then pods/exec; a failure is written on the socket as a Status. */
export async function serveUpgrade(
  deps: UpgradeDeps,
  authenticator: Authenticator | undefined,
  req: IncomingMessage,
  socket: Duplex,
  head: Buffer,
): Promise<void> {
  socket.on("error", () => {});
  let info: RequestInfo = newRequestInfo(req.method ?? "GET", "/");
  const logLine = (code: number) =>
    deps.log(
      `"HTTP" verb="${info.verb.toUpperCase()}" URI="${req.url ?? ""}" userAgent="${req.headers["user-agent"] ?? ""}" resp=${code}`,
    );
  try {
    try {
      info = newRequestInfo(req.method ?? "GET", req.url ?? "/");
    } catch (e) {
      throw newBadRequest(`malformed request path: ${(e as Error).message}`);
    }
    const authenticated = await authenticateRequest(req, authenticator);
    const user = await impersonateRequest(req, authenticated, deps.authorizer);
    const query = new URL(req.url ?? "/", "http://localhost").searchParams;
    await authorizeRequest(authorizerAttributes(user, info, query), deps.authorizer);
    const isExec =
      info.isResourceRequest &&
      info.apiGroup === "" &&
      info.resource === "pods" &&
      info.subresource === "exec" &&
      info.name !== "" &&
      info.namespace !== "";
    if (!isExec) throw newGenericServerResponse(404, "", { group: "", resource: "" }, "", "", 0, false);
    await connectExec(
      deps.pods,
      deps.nodes,
      deps.kubeletClient,
      info.namespace,
      info.name,
      query,
      req,
      socket,
      head,
    );
    logLine(101);
  } catch (e) {
    const status = errorToAPIStatus(e);
    logLine(status.status.code);
    writeUpgradeError(socket, status);
  }
}
// #endregion upgrade

/**
 * The kubelet API's gates: who is asking (a client certificate signed by `--client-ca-file`) and
 * may they (a SubjectAccessReview the kubelet sends to the API server, upstream's
 * `--authorization-mode=Webhook`), with the attributes upstream derives from the request path.
 * Mirrors kubernetes/kubernetes pkg/kubelet/server/auth.go.
 *
 * Solves: the kubelet's port runs commands in containers and reads their logs, so it must not be
 * open to whoever reaches it; yet it has no users or roles of its own. It delegates: the TLS
 * handshake proves the client's name (CN) and groups (O), and the API server's authorizers
 * (RBAC, Node) decide, through a SubjectAccessReview, whether that user may act on the node —
 * `nodes/proxy` for logs, exec and pods, as if the request had gone through the API server.
 *
 * Invariants:
 * - the attributes are upstream's: verb from the HTTP method (GET→get, POST→create, PUT→update,
 *   PATCH→patch, DELETE→delete), resource `nodes`, name the node, subresource `proxy`, except
 *   `/stats/*` → `stats`, `/metrics/*` → `metrics`, `/logs/*` → `log`;
 * - no verified client certificate is a 401 `Unauthorized`; a denied review is a 403 with
 *   upstream's text `Forbidden (user=…, verb=…, resource=nodes, subresource(s)=[proxy])`.
 *
 * What upstream does differently: it also accepts bearer tokens (checked by a TokenReview) and,
 * with `--anonymous-auth`, anonymous requests; it caches review answers (5 min allowed, 30 s
 * denied). Ours authenticates by certificate only and asks the API server on every request.
 *
 * @upstream kubernetes/kubernetes pkg/kubelet/server/auth.go (nodeAuthorizerAttributesGetter.GetRequestAttributes)
 * @upstream kubernetes/kubernetes pkg/kubelet/server/server.go (InstallAuthFilter: the 401 and 403 answers)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/plugin/pkg/authorizer/webhook/webhook.go (the SubjectAccessReview it sends)
 * @chapter 07-kubelet
 */
import type { IncomingMessage } from "node:http";
import type { TLSSocket } from "node:tls";
import type { RESTClient } from "../../client/rest/client.ts";

/** Who the request is from: the certificate's CN and Os. */
export interface KubeletUser {
  name: string;
  groups: string[];
}

/** authorizer.AttributesRecord, as far as a kubelet request fills it. */
export interface KubeletRequestAttributes {
  user: KubeletUser;
  verb: string;
  apiVersion: "v1";
  resource: "nodes";
  subresource: string;
  name: string;
  path: string;
}

/** Whether `attrs` may proceed; `reason` is the reviewer's explanation. */
export interface KubeletAuthorizer {
  authorize(attrs: KubeletRequestAttributes): Promise<{ allowed: boolean; reason: string }>;
}

/**
 * x509 authentication: the TLS layer already checked the chain against `--client-ca-file`
 * (`socket.authorized`); the subject names the user. Undefined when no valid certificate came.
 */
export function authenticateRequest(req: IncomingMessage): KubeletUser | undefined {
  const socket = req.socket as TLSSocket;
  if (!socket.authorized) return undefined;
  const subject = socket.getPeerCertificate()?.subject;
  if (!subject?.CN) return undefined;
  const cn = Array.isArray(subject.CN) ? (subject.CN[0] as string) : subject.CN;
  const o = subject.O;
  return { name: cn, groups: o === undefined ? [] : Array.isArray(o) ? o : [o] };
}

function isSubpath(subpath: string, path: string): boolean {
  const p = path.replace(/\/$/, "");
  return subpath === p || (subpath.startsWith(p) && subpath[p.length] === "/");
}

// #region request-attributes
const verbs: Record<string, string> = {
  POST: "create",
  GET: "get",
  PUT: "update",
  PATCH: "patch",
  DELETE: "delete",
};

/**
 * GetRequestAttributes: every path is `nodes/proxy` on this node, except the few upstream
 * subdivides. A WebSocket exec is a GET, so `get nodes/proxy`; SPDY's POST would be `create`.
 */
export function getRequestAttributes(
  user: KubeletUser,
  req: IncomingMessage,
  nodeName: string,
): KubeletRequestAttributes {
  const path = new URL(req.url ?? "/", "https://kubelet").pathname;
  let subresource = "proxy";
  if (isSubpath(path, "/stats")) subresource = "stats";
  else if (isSubpath(path, "/metrics")) subresource = "metrics";
  else if (isSubpath(path, "/logs")) subresource = "log";
  return {
    user,
    verb: verbs[req.method ?? ""] ?? "",
    apiVersion: "v1",
    resource: "nodes",
    subresource,
    name: nodeName,
    path,
  };
}
// #endregion request-attributes

/** The 403 text of upstream's auth filter (a list of subresources since 1.32, and a line end). */
export function forbiddenMessage(attrs: KubeletRequestAttributes): string {
  return `Forbidden (user=${attrs.user.name}, verb=${attrs.verb}, resource=${attrs.resource}, subresource(s)=[${attrs.subresource}])\n`;
}

/** The 500 text of upstream's auth filter when the review itself failed. */
export function authorizationErrorMessage(attrs: KubeletRequestAttributes): string {
  return `Authorization error (user=${attrs.user.name}, verb=${attrs.verb}, resource=${attrs.resource}, subresource=${attrs.subresource})`;
}

/**
 * The webhook authorizer: one SubjectAccessReview per request, posted with the kubelet's own
 * credentials (a node may create reviews: the Node authorizer's static rules allow it).
 */
export function newSubjectAccessReviewAuthorizer(client: RESTClient): KubeletAuthorizer {
  return {
    async authorize(attrs) {
      const review = {
        apiVersion: "authorization.k8s.io/v1",
        kind: "SubjectAccessReview",
        spec: {
          user: attrs.user.name,
          groups: attrs.user.groups,
          resourceAttributes: {
            namespace: "",
            verb: attrs.verb,
            group: "",
            version: attrs.apiVersion,
            resource: attrs.resource,
            subresource: attrs.subresource,
            name: attrs.name,
          },
        },
      };
      const answer = await client
        .post()
        .resource("subjectaccessreviews")
        .body(review)
        .do<{ status?: { allowed?: boolean; reason?: string } }>();
      return { allowed: answer.status?.allowed === true, reason: answer.status?.reason ?? "" };
    },
  };
}

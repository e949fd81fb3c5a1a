/**
 * Auditing one request — the audit filter: after authentication, the policy gives the request
 * its level; RequestReceived is logged at once, ResponseStarted when a long-running response
 * (a watch, a log) sends its headers, ResponseComplete when the response ends, Panic instead
 * when the handler broke. Upstream: k8s.io/apiserver pkg/endpoints/filters/audit.go (WithAudit,
 * auditResponseWriter) and audit_annotations / failed-authentication audit.
 *
 * Solves:
 * - a trace of the pipeline per request: who was authenticated, what authorization decided
 *   and why (`authorization.k8s.io/decision`, `…/reason`), what admission noted
 *   (`pod-security.kubernetes.io/audit-violations`), what came back;
 * - the handlers only report facts (the decoded body, a patch, the impersonated user); the
 *   response is read from what the server writes, so no handler knows about levels.
 *
 * Invariants:
 * - with no policy the server creates none of this (server.ts): audit costs nothing when off;
 * - level None writes nothing; Metadata never carries a body; Request adds requestObject;
 *   RequestResponse adds responseObject (not for watches: their events are not logged);
 * - a stage in omitStages is skipped; every written event carries the same auditID;
 * - a failed authentication is audited too, as upstream: one ResponseStarted event, no user.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/filters/audit.go (WithAudit, evaluatePolicyAndCreateAuditEvent, decorateResponseWriter, processAuditEvent)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/filters/authn_audit.go (WithFailedAuthenticationAudit, getAuthMethods)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/audit/request.go (LogRequestObject, LogRequestPatch, LogResponseObject, LogImpersonatedUser)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/server/filters/wrap.go (WithPanicRecovery: the Panic stage)
 * @chapter 03-api-security
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import type { KubeObject } from "../../api/meta.ts";
import type { UserInfo } from "../authn/user.ts";
import { authorizerAttributes } from "../filters/authorization.ts";
import { newRequestInfo, type RequestInfo } from "../request-info.ts";
import type { Backend } from "./backend.ts";
import { type Event, eventUser, microTime, nowMicros, sourceIPs, withoutManagedFields } from "./event.ts";
import { evaluatePolicy, type Level, type Policy, type RequestAuditConfig, type Stage } from "./policy.ts";

export interface Auditor {
  policy: Policy;
  backend: Backend;
}

const order: Level[] = ["None", "Metadata", "Request", "RequestResponse"];
const atLeast = (l: Level, min: Level) => order.indexOf(l) >= order.indexOf(min);

/** Upstream's long-running check: watches and proxies, and the streaming subresources. */
function isLongRunning(info: RequestInfo): boolean {
  return (
    ["watch", "proxy"].includes(info.verb) ||
    ["attach", "exec", "proxy", "log", "portforward"].includes(info.subresource)
  );
}

// #region request-audit
export class RequestAudit {
  /** What the plugins and gates note; read into every event written after. */
  readonly annotations: Record<string, string> = {};
  private config: RequestAuditConfig = { level: "None", omitStages: [], omitManagedFields: false };
  private event: Event | undefined;
  private done = false;

  constructor(
    private readonly auditor: Auditor,
    private readonly req: IncomingMessage,
    private readonly res: ServerResponse,
    private readonly auditID: string,
    private readonly received = nowMicros(),
  ) {
    // The request ends however it ends: ResponseComplete, or the failed-authentication event.
    res.once("close", () => this.complete());
  }

  get level(): Level {
    return this.config.level;
  }

  /** After authentication: the policy's level for this user and request; RequestReceived. */
  begin(user: UserInfo, info: RequestInfo): void {
    this.config = evaluatePolicy(this.auditor.policy, authorizerAttributes(user, info));
    if (this.config.level === "None") return;
    this.event = this.newEvent(info, user);
    this.decorateResponse(info);
    this.process("RequestReceived");
  }

  /** The authorization gate's verdict (upstream's WithAuthorization annotations). */
  recordDecision = (decision: "allow" | "forbid", reason: string): void => {
    this.annotations["authorization.k8s.io/decision"] = decision;
    this.annotations["authorization.k8s.io/reason"] = reason;
  };

  /** For filters/impersonation.ts: who the request acts as. */
  logImpersonatedUser(user: UserInfo): void {
    if (this.event) this.event.impersonatedUser = eventUser(user);
  }

  /** LogRequestObject: completes objectRef from the decoded body; keeps the body at Request level. */
  logRequestObject(obj: KubeObject): void {
    const ev = this.event;
    if (!ev) return;
    const ref = ev.objectRef;
    if (ref) {
      ref.namespace ||= obj.metadata?.namespace || undefined;
      ref.name ||= obj.metadata?.name || undefined;
      ref.uid ||= obj.metadata?.uid || undefined;
      ref.resourceVersion ||= obj.metadata?.resourceVersion || undefined;
    }
    if (atLeast(this.config.level, "Request")) ev.requestObject = this.body(structuredClone(obj));
  }

  /** LogRequestPatch: a patch is logged as sent. */
  logRequestPatch(patch: Buffer): void {
    if (!this.event || !atLeast(this.config.level, "Request")) return;
    try {
      this.event.requestObject = JSON.parse(patch.toString("utf8"));
    } catch {
      this.event.requestObject = patch.toString("utf8"); // an apply patch in YAML
    }
  }

  /** WithPanicRecovery: the handler broke; Panic replaces ResponseComplete. */
  panic(e: unknown): void {
    const ev = this.event;
    if (!ev || this.done) return;
    this.done = true;
    ev.responseStatus = {
      metadata: {},
      status: "Failure",
      message: `APIServer panic'd: ${e instanceof Error ? e.message : String(e)}`,
      reason: "InternalError",
      code: 500,
    };
    this.process("Panic");
  }
  // #endregion request-audit

  private newEvent(info: RequestInfo | undefined, user: UserInfo | undefined): Event {
    const ua = this.req.headers["user-agent"];
    // Every key in upstream's order up front, so JSON.stringify keeps it as fields fill in.
    return {
      kind: "Event",
      apiVersion: "audit.k8s.io/v1",
      level: this.config.level,
      auditID: this.auditID,
      stage: "RequestReceived",
      requestURI: this.req.url ?? "/",
      verb: info?.verb ?? (this.req.method ?? "GET").toLowerCase(),
      user: eventUser(user),
      impersonatedUser: undefined,
      sourceIPs: sourceIPs(this.req),
      userAgent: ua || undefined,
      objectRef: info?.isResourceRequest
        ? {
            resource: info.resource || undefined,
            namespace: info.namespace || undefined,
            name: info.name || undefined,
            uid: undefined,
            apiGroup: info.apiGroup || undefined,
            apiVersion: info.apiVersion || undefined,
            resourceVersion: undefined,
            subresource: info.subresource || undefined,
          }
        : undefined,
      responseStatus: undefined,
      requestObject: undefined,
      responseObject: undefined,
      requestReceivedTimestamp: microTime(this.received),
      stageTimestamp: "",
      annotations: undefined,
    };
  }

  // #region response
  /** auditResponseWriter: ResponseStarted for long-running responses; the body for responseStatus. */
  private decorateResponse(info: RequestInfo): void {
    const res = this.res;
    const writeHead = res.writeHead.bind(res) as (...args: unknown[]) => ServerResponse;
    const end = res.end.bind(res) as (...args: unknown[]) => ServerResponse;
    const longRunning = isLongRunning(info);
    (res as { writeHead: unknown }).writeHead = (...args: unknown[]) => {
      const out = writeHead(...args);
      this.setResponseStatus(res.statusCode);
      if (longRunning) this.process("ResponseStarted");
      return out;
    };
    (res as { end: unknown }).end = (...args: unknown[]) => {
      const chunk = args[0];
      if ((Buffer.isBuffer(chunk) || typeof chunk === "string") && !longRunning) this.logResponseBody(chunk);
      return end(...args);
    };
  }

  private setResponseStatus(code: number): void {
    if (this.event && !this.event.responseStatus) this.event.responseStatus = { metadata: {}, code };
  }

  /** LogResponseObject: a Status becomes responseStatus; at RequestResponse the body is kept. */
  private logResponseBody(chunk: Buffer | string): void {
    const ev = this.event;
    if (!ev) return;
    const isJSON = String(this.res.getHeader("content-type") ?? "").includes("json");
    const wanted = atLeast(this.config.level, "RequestResponse") || this.res.statusCode >= 300;
    if (!isJSON || !wanted) return;
    let body: {
      kind?: string;
      status?: string;
      message?: string;
      reason?: string;
      details?: unknown;
      code?: number;
    };
    try {
      body = JSON.parse(chunk.toString());
    } catch {
      return;
    }
    if (body.kind === "Status") {
      const { status, message, reason, details, code } = body;
      ev.responseStatus = { metadata: {}, status, message, reason, details, code } as Event["responseStatus"];
    }
    if (atLeast(this.config.level, "RequestResponse")) ev.responseObject = this.body(body);
  }
  // #endregion response

  private complete(): void {
    if (this.done) return;
    this.done = true;
    if (this.event) {
      this.setResponseStatus(this.res.statusCode);
      this.process("ResponseComplete");
      return;
    }
    if (this.res.statusCode === 401) this.failedAuthentication();
  }

  /** WithFailedAuthenticationAudit: the policy for an unknown user; one ResponseStarted event. */
  private failedAuthentication(): void {
    const nobody: UserInfo = { name: "", groups: [] };
    let info: RequestInfo | undefined;
    try {
      info = newRequestInfo(this.req.method ?? "GET", this.req.url ?? "/");
    } catch {
      info = undefined;
    }
    if (!info) return;
    this.config = evaluatePolicy(this.auditor.policy, authorizerAttributes(nobody, info));
    if (this.config.level === "None") return;
    this.event = this.newEvent(info, undefined);
    this.event.responseStatus = { metadata: {}, message: authMethods(this.req), code: 401 };
    this.process("ResponseStarted");
  }

  private body(obj: unknown): unknown {
    return this.config.omitManagedFields ? withoutManagedFields(obj) : obj;
  }

  /** processAuditEvent: stamp the stage and write, unless the stage is omitted. */
  private process(stage: Stage): void {
    const ev = this.event;
    if (!ev || this.config.omitStages.includes(stage)) return;
    ev.stage = stage;
    ev.stageTimestamp = microTime(nowMicros());
    ev.annotations = Object.keys(this.annotations).length > 0 ? { ...this.annotations } : undefined;
    this.auditor.backend.processEvents(JSON.parse(JSON.stringify(ev)) as Event);
  }
}

/** getAuthMethods: what the client tried, for the failed-authentication event. */
function authMethods(req: IncomingMessage): string {
  const tried: string[] = [];
  const auth = req.headers.authorization ?? "";
  if (/^basic /i.test(auth)) tried.push("basic");
  if (/^bearer /i.test(auth)) tried.push("bearer");
  const socket = req.socket as { getPeerCertificate?: () => { raw?: Buffer } };
  if (socket.getPeerCertificate?.()?.raw) tried.push("x509");
  return tried.length > 0
    ? `Authentication failed, attempted: ${tried.join(", ")}`
    : "Authentication failed, no credentials provided";
}

/**
 * A JavaScript bug — a TypeError, RangeError or ReferenceError — is this server's panic (Go's
 * nil dereference, index out of range); any other error is an answer, however unwelcome.
 */
export function isPanic(e: unknown): boolean {
  return e instanceof TypeError || e instanceof RangeError || e instanceof ReferenceError;
}

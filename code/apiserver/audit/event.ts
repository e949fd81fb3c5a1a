/**
 * The audit event — one JSON object per request and stage, in audit.k8s.io/v1's Event shape:
 * who (user, impersonatedUser, sourceIPs, userAgent), what (verb, requestURI, objectRef), the
 * answer (responseStatus), and at the higher levels the bodies (requestObject, responseObject).
 * Upstream: k8s.io/apiserver pkg/apis/audit/v1/types.go (Event) and pkg/audit/request.go.
 *
 * Solves: an event is a fact a tool can search (`jq 'select(.verb=="delete")'`): the same
 * auditID on every stage of one request, and on the response's Audit-Id header, ties them up.
 *
 * Invariants:
 * - fields appear in upstream's order and empty ones are left out, as Go's `omitempty`;
 * - timestamps are MicroTime: RFC 3339 with six fractional digits (`…T12:00:00.123456Z`);
 * - sourceIPs: X-Forwarded-For's addresses, then X-Real-Ip, then the peer, each once.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/apis/audit/v1/types.go (Event, ObjectReference)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/audit/request.go (NewEventFromRequest, LogRequestObject, LogResponseObject)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apimachinery/pkg/util/net/http.go (SourceIPs)
 * @chapter 03-api-security
 */
import type { IncomingMessage } from "node:http";
import type { Status } from "../../api/meta.ts";
import type { UserInfo } from "../authn/user.ts";
import type { Level, Stage } from "./policy.ts";

// #region event
/** authentication.k8s.io/v1 UserInfo, as the event writes it. */
export interface EventUser {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

export interface ObjectReference {
  resource?: string;
  namespace?: string;
  name?: string;
  uid?: string;
  apiGroup?: string;
  apiVersion?: string;
  resourceVersion?: string;
  subresource?: string;
}

export interface Event {
  kind: "Event";
  apiVersion: "audit.k8s.io/v1";
  level: Level;
  auditID: string;
  stage: Stage;
  requestURI: string;
  verb: string;
  user: EventUser;
  /** Set by impersonation (filters/impersonation.ts): who the request acted as. */
  impersonatedUser?: EventUser;
  sourceIPs?: string[];
  userAgent?: string;
  objectRef?: ObjectReference;
  responseStatus?: Partial<Status> & { metadata: Record<string, never> };
  requestObject?: unknown;
  responseObject?: unknown;
  requestReceivedTimestamp: string;
  stageTimestamp: string;
  annotations?: Record<string, string>;
}
// #endregion event

export function eventUser(u: UserInfo | undefined): EventUser {
  if (!u) return {};
  const out: EventUser = { username: u.name };
  if (u.uid) out.uid = u.uid;
  if (u.groups.length > 0) out.groups = [...u.groups];
  if (u.extra && Object.keys(u.extra).length > 0) out.extra = u.extra;
  return out;
}

// #region microtime
/** The wall clock with microseconds (Date has milliseconds only). */
export function nowMicros(): bigint {
  return BigInt(Math.round((performance.timeOrigin + performance.now()) * 1000));
}

/** metav1.MicroTime's JSON: `2026-12-01T12:00:00.123456Z`. */
export function microTime(micros: bigint): string {
  const ms = Number(micros / 1000n);
  const frac = String(micros % 1000000n).padStart(6, "0");
  return `${new Date(ms).toISOString().slice(0, 19)}.${frac}Z`;
}
// #endregion microtime

/** SourceIPs: the forwarded-for chain, then X-Real-Ip, then the peer's address. */
export function sourceIPs(req: IncomingMessage): string[] {
  const ips: string[] = [];
  const add = (ip: string | undefined) => {
    const clean = ip?.trim().replace(/^::ffff:/, "");
    if (clean && !ips.includes(clean)) ips.push(clean);
  };
  const xff = req.headers["x-forwarded-for"];
  for (const part of (Array.isArray(xff) ? xff.join(",") : (xff ?? "")).split(",")) add(part);
  const real = req.headers["x-real-ip"];
  add(Array.isArray(real) ? real[0] : real);
  add(req.socket.remoteAddress);
  return ips;
}

/** A copy of an object without metadata.managedFields (also in a list's items): omitManagedFields. */
export function withoutManagedFields(obj: unknown): unknown {
  if (!obj || typeof obj !== "object") return obj;
  const o = obj as { metadata?: { managedFields?: unknown }; items?: unknown[] };
  const copy: Record<string, unknown> = { ...o };
  if (o.metadata && "managedFields" in o.metadata) {
    const { managedFields: _, ...metadata } = o.metadata;
    copy.metadata = metadata;
  }
  if (Array.isArray(o.items)) copy.items = o.items.map(withoutManagedFields);
  return copy;
}

/**
 * WithTracing — the API server's span of every request: it continues the caller's trace (an
 * incoming W3C `traceparent`), is named after the route (`POST
 * /api/v1/namespaces/{:namespace}/pods`), and is the parent of the spans the request makes on
 * its way down (authentication, the `Create` handler, the `Create etcd3` storage write).
 * Upstream: filters/traces.go, an otelhttp handler around the whole handler chain.
 *
 * Solves:
 * - a scheduler's binding or a kubelet's status update shows up under the component span that
 *   sent it, one trace across two processes;
 * - a pod's requests can be found by the pod: a request about a pod carries k8s.pod.name and
 *   k8s.namespace.name from its URL, and k8s.pod.uid once the object is read or written (`tagPod`).
 *
 * Invariants:
 * - with tracing off (the no-op provider) the request runs exactly as before: no span, no
 *   context switch;
 * - the span ends when the handler returns (a watch's when the watch ends).
 *
 * What upstream does differently: its span name is set by otelhttp after the request info is
 * known, as ours (updateName); otelhttp also records byte counts and network attributes, and the
 * span is "public" (a new root linked to the caller's) for users outside system:masters and
 * system:monitoring — ours always continues the caller's trace.
 *
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/filters/traces.go (WithTracing, getSpanNameFromRequestInfo)
 * @upstream kubernetes/kubernetes staging/src/k8s.io/apiserver/pkg/endpoints/handlers/rest.go (traceFields)
 * @chapter 08-cluster
 */
import type { IncomingMessage, ServerResponse } from "node:http";
import { type Attributes, context, createContextKey, SpanKind, trace } from "@opentelemetry/api";
import type { ComponentTracerProvider } from "../../tracing/provider.ts";
import { activeSpan, extractContext, podAttributes, type Span, startSpan } from "../../tracing/tracing.ts";
import type { UserInfo } from "../authn/user.ts";
import type { RequestInfo } from "../request-info.ts";

const scope = "k8s.io/apiserver/pkg/endpoints/filters";
const requestSpanKey = createContextKey("k8s.io/apiserver request span");

// #region with-tracing
/** Runs the request inside its span (or, tracing off, just runs it). */
export function withTracing(
  tp: ComponentTracerProvider | undefined,
  req: IncomingMessage,
  res: ServerResponse,
  serve: () => Promise<void>,
): Promise<void> {
  if (!tp?.recording) return serve();
  const attributes: Attributes = {
    "http.method": req.method ?? "GET",
    "http.target": req.url ?? "/",
    "http.user_agent": String(req.headers["user-agent"] ?? ""),
  };
  return startSpan(
    tp,
    scope,
    "KubernetesAPI",
    attributes,
    async (span) => {
      await context.with(context.active().setValue(requestSpanKey, span), serve);
      span?.setAttribute("audit-id", String(res.getHeader("Audit-Id") ?? ""));
      span?.setAttribute("http.status_code", res.statusCode);
    },
    { parent: extractContext(req.headers), kind: SpanKind.SERVER },
  );
}
// #endregion with-tracing

/** getSpanNameFromRequestInfo: the route, with `{:namespace}` and `{:name}` for the variable parts. */
export function spanNameFromRequestInfo(info: RequestInfo, method: string): string {
  if (!info.isResourceRequest) return method;
  let name = `/${info.apiPrefix}`;
  if (info.apiGroup) name += `/${info.apiGroup}`;
  name += `/${info.apiVersion}`;
  if (info.namespace) name += "/namespaces/{:namespace}";
  name += `/${info.resource}`;
  if (info.name) name += "/{:name}";
  if (info.subresource) name += `/${info.subresource}`;
  return `${method} ${name}`;
}

/** The request span, wherever in the request the caller is; undefined when tracing is off. */
function requestSpan(): Span | undefined {
  return context.active().getValue(requestSpanKey) as Span | undefined;
}

// #region tag-request
/** Once the request info and the user are known: the span's route name and who asked for what. */
export function tagRequest(info: RequestInfo, method: string, user?: UserInfo): void {
  const span = requestSpan();
  if (!span) return;
  span.updateName(spanNameFromRequestInfo(info, method));
  span.setAttributes({ "k8s.verb": info.verb, "k8s.resource": info.resource ?? "" });
  if (info.subresource) span.setAttribute("k8s.subresource", info.subresource);
  if (user) span.setAttribute("k8s.user", user.name);
  if (info.resource === "pods" && info.name)
    span.setAttributes(podAttributes({ metadata: { name: info.name, namespace: info.namespace } }));
}

/** A pod read or written by this request: its uid, name and namespace on the request span and the active one. */
export function tagPod(pod: { metadata?: { uid?: string; name?: string; namespace?: string } }): void {
  const span = requestSpan();
  if (!span) return;
  const attributes = podAttributes(pod);
  span.setAttributes(attributes);
  const active = activeSpan();
  if (active && active !== span) active.setAttributes(attributes);
}
// #endregion tag-request

/** traceFields: what a handler span (`Create`, `Update`, `Patch`) records of its request. */
export function traceFields(req: IncomingMessage, res: ServerResponse): Attributes {
  return {
    url: req.url ?? "",
    "user-agent": String(req.headers["user-agent"] ?? ""),
    "audit-id": String(res.getHeader("Audit-Id") ?? ""),
    client: req.socket.remoteAddress ?? "",
    accept: String(req.headers.accept ?? ""),
    protocol: `HTTP/${req.httpVersion}`,
  };
}

/** Whether a span records here: handlers skip building event attributes when none does. */
export const tracing = () => trace.getSpan(context.active()) !== undefined;

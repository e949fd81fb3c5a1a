/**
 * Collector — a small OTLP/HTTP receiver: every component's exporter POSTs its spans to
 * `/v1/traces`, and each span is appended to a file as one JSON line (a SpanRecord).
 * No upstream counterpart: upstream clusters send their spans to an OpenTelemetry Collector
 * (opentelemetry-collector's otlpreceiver) and on to a tracing backend such as Jaeger.
 *
 * Solves:
 * - the course needs no tracing backend: `npm run cluster` starts one collector, gives every
 *   component its endpoint, and `npm run cluster -- trace <pod>` reads the file back;
 * - spans from every process land in one place, each with the component that made it
 *   (`service`, from the resource's `service.name`), so one pod's life can be put back together
 *   across processes.
 *
 * Invariants:
 * - one line per span, in the order the exports arrived; a line is written whole (appends are
 *   serialized), so a reader never sees half a span;
 * - a body the collector cannot read is answered 400 (415 for protobuf: ours decodes OTLP's JSON
 *   encoding only, what @opentelemetry/exporter-trace-otlp-http sends) and nothing is written;
 * - `close()` stops listening and resolves once every accepted span is on disk.
 *
 * @upstream none — course tooling (stands in for opentelemetry-collector's OTLP/HTTP receiver, receiver/otlpreceiver)
 * @chapter 08-cluster
 */
import { appendFile } from "node:fs/promises";
import { createServer, type IncomingMessage } from "node:http";
import type { AddressInfo } from "node:net";
import { gunzipSync } from "node:zlib";

/** One span as the file holds it. Times are milliseconds since the epoch, with fractions. */
export interface SpanRecord {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  /** The component: the resource's service.name (`apiserver`, `kube-scheduler`, `kubelet`). */
  service: string;
  kind?: number;
  startMs: number;
  endMs: number;
  attributes: Record<string, unknown>;
  events: { name: string; timeMs: number; attributes?: Record<string, unknown> }[];
  /** Set when the span ended in error (OTLP status code 2). */
  error?: string;
}

// OTLP's JSON encoding (opentelemetry-proto, trace/v1): only the fields we keep.
type AnyValue = {
  stringValue?: string;
  boolValue?: boolean;
  intValue?: string | number;
  doubleValue?: number;
  arrayValue?: { values?: AnyValue[] };
};
type KeyValue = { key: string; value?: AnyValue };
type Time = string | number | { low: number; high: number };
interface OTLPSpan {
  traceId: string;
  spanId: string;
  parentSpanId?: string;
  name: string;
  kind?: number;
  startTimeUnixNano: Time;
  endTimeUnixNano: Time;
  attributes?: KeyValue[];
  events?: { name: string; timeUnixNano: Time; attributes?: KeyValue[] }[];
  status?: { code?: number; message?: string };
}
interface ExportTraceServiceRequest {
  resourceSpans?: {
    resource?: { attributes?: KeyValue[] };
    scopeSpans?: { spans?: OTLPSpan[] }[];
  }[];
}

// #region decode
function value(v: AnyValue | undefined): unknown {
  if (!v) return undefined;
  if (v.stringValue !== undefined) return v.stringValue;
  if (v.boolValue !== undefined) return v.boolValue;
  if (v.intValue !== undefined) return Number(v.intValue);
  if (v.doubleValue !== undefined) return v.doubleValue;
  if (v.arrayValue) return (v.arrayValue.values ?? []).map(value);
  return undefined;
}

function attributes(kvs: KeyValue[] | undefined): Record<string, unknown> {
  const out: Record<string, unknown> = {};
  for (const kv of kvs ?? []) out[kv.key] = value(kv.value);
  return out;
}

/** Nanoseconds (a decimal string, a number, or a {low, high} Long) → milliseconds. */
function ms(t: Time): number {
  const ns = typeof t === "object" ? (BigInt(t.high >>> 0) << 32n) | BigInt(t.low >>> 0) : BigInt(t);
  return Number(ns / 1000n) / 1000;
}

/** The spans of one export request, flattened with their component. */
export function decodeExport(req: ExportTraceServiceRequest): SpanRecord[] {
  const out: SpanRecord[] = [];
  for (const rs of req.resourceSpans ?? []) {
    const service = String(attributes(rs.resource?.attributes)["service.name"] ?? "unknown");
    for (const ss of rs.scopeSpans ?? []) {
      for (const s of ss.spans ?? []) {
        const rec: SpanRecord = {
          traceId: s.traceId,
          spanId: s.spanId,
          name: s.name,
          service,
          kind: s.kind,
          startMs: ms(s.startTimeUnixNano),
          endMs: ms(s.endTimeUnixNano),
          attributes: attributes(s.attributes),
          events: (s.events ?? []).map((e) => {
            const a = attributes(e.attributes);
            return {
              name: e.name,
              timeMs: ms(e.timeUnixNano),
              ...(Object.keys(a).length ? { attributes: a } : {}),
            };
          }),
        };
        if (s.parentSpanId) rec.parentSpanId = s.parentSpanId;
        if (s.status?.code === 2) rec.error = s.status.message ?? "error";
        out.push(rec);
      }
    }
  }
  return out;
}
// #endregion decode

async function readBody(req: IncomingMessage): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const c of req) chunks.push(c as Buffer);
  const body = Buffer.concat(chunks);
  return req.headers["content-encoding"] === "gzip" ? gunzipSync(body) : body;
}

export interface Collector {
  /** What to give components as `endpoint`: `http://127.0.0.1:<port>`. */
  endpoint: string;
  close(): Promise<void>;
}

// #region start-collector
/** Starts the receiver on 127.0.0.1 (`port` 0 or absent: a free port); spans go to `file`. */
export async function startCollector(opts: { file: string; port?: number }): Promise<Collector> {
  let writes: Promise<void> = Promise.resolve();
  const server = createServer((req, res) => {
    const reply = (code: number, body: string) => {
      res.writeHead(code, { "Content-Type": "application/json" });
      res.end(body);
    };
    if (req.method !== "POST" || (req.url ?? "").split("?")[0] !== "/v1/traces") {
      req.resume();
      return reply(404, JSON.stringify({ message: "only POST /v1/traces is served" }));
    }
    if (!String(req.headers["content-type"] ?? "").startsWith("application/json")) {
      req.resume();
      return reply(415, JSON.stringify({ message: "this collector reads OTLP/HTTP JSON only" }));
    }
    readBody(req).then(
      (body) => {
        let spans: SpanRecord[];
        try {
          spans = decodeExport(JSON.parse(body.toString("utf8")));
        } catch (e) {
          return reply(400, JSON.stringify({ message: `bad export request: ${(e as Error).message}` }));
        }
        const lines = spans.map((s) => `${JSON.stringify(s)}\n`).join("");
        writes = writes.then(() => (lines ? appendFile(opts.file, lines) : undefined)).catch(() => {});
        // ExportTraceServiceResponse: empty means every span was accepted.
        writes.then(() => reply(200, "{}"));
      },
      (e) => reply(400, JSON.stringify({ message: String(e) })),
    );
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(opts.port ?? 0, "127.0.0.1", () => resolve());
  });
  const { port } = server.address() as AddressInfo;
  return {
    endpoint: `http://127.0.0.1:${port}`,
    async close() {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await writes;
    },
  };
}
// #endregion start-collector

import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import { startCollector } from "./collector.ts";
import { newProvider, noopProvider } from "./provider.ts";
import { activeSpan, detached, extractContext, injectTraceContext, startSpan, withSpan } from "./tracing.ts";

describe("spans", () => {
  it("tracing off: the function runs with no span, nothing is active and no traceparent is sent", async () => {
    const seen: unknown[] = [];
    const out = await startSpan(
      noopProvider,
      "test",
      "root",
      () => {
        throw new Error("attributes are not built when tracing is off");
      },
      async (span) => {
        seen.push(span);
        await withSpan("child", {}, (child) => seen.push(child));
        const headers: Record<string, string> = {};
        injectTraceContext(headers);
        seen.push(headers, activeSpan());
        return 42;
      },
    );
    expect(out).toBe(42);
    expect(seen).toEqual([undefined, undefined, {}, undefined]);
  });

  it("withSpan outside any component span does nothing", () => {
    expect(withSpan("orphan", {}, (span) => span)).toBeUndefined();
  });

  it("a traceparent sent from inside a span continues that trace on the other side", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tracing-"));
    const collector = await startCollector({ file: join(dir, "spans.jsonl") });
    const tp = newProvider(
      { endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 },
      "kube-scheduler",
    );
    const headers: Record<string, string> = {};
    let traceId = "";
    await startSpan(tp, "test", "bind", {}, async (span) => {
      traceId = span!.spanContext().traceId;
      injectTraceContext(headers);
    });
    expect(headers.traceparent).toMatch(new RegExp(`^00-${traceId}-[0-9a-f]{16}-01$`));
    const server = newProvider({ endpoint: collector.endpoint }, "apiserver"); // rate 0: only sampled parents
    const child = startSpan(server, "test", "POST", {}, (span) => span!.spanContext(), {
      parent: extractContext(headers),
    });
    expect(child.traceId).toBe(traceId);
    expect(child.traceFlags & 1).toBe(1);
    // A root on that server (no parent) is not sampled: rate 0 follows parents only.
    const root = startSpan(server, "test", "GET", {}, (span) => span!.isRecording());
    expect(root).toBe(false);
    await Promise.all([tp.shutdown(), server.shutdown()]);
    await collector.close();
    await rm(dir, { recursive: true, force: true });
  });
});

describe("detached", () => {
  it("runs work that outlives a span outside it", async () => {
    const dir = await mkdtemp(join(tmpdir(), "tracing-"));
    const collector = await startCollector({ file: join(dir, "spans.jsonl") });
    const tp = newProvider({ endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 }, "kubelet");
    const seen = await startSpan(tp, "test", "syncPod", {}, async () => {
      const inside = activeSpan() !== undefined;
      const outside = detached(() => activeSpan());
      const nested = detached(() => withSpan("probe", {}, (s) => s));
      return { inside, outside, nested };
    });
    expect(seen).toEqual({ inside: true, outside: undefined, nested: undefined });
    await tp.shutdown();
    await collector.close();
    await rm(dir, { recursive: true, force: true });
  });
});

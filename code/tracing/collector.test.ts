import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterEach, beforeEach, describe, expect, it } from "vitest";
import { type Collector, type SpanRecord, startCollector } from "./collector.ts";
import { newProvider } from "./provider.ts";
import { addEvent, podAttributes, startSpan, withSpan } from "./tracing.ts";

const pod = { metadata: { uid: "u-1", name: "web", namespace: "default" } };
let dir: string;
let collector: Collector;
const file = () => join(dir, "spans.jsonl");
const read = async (): Promise<SpanRecord[]> =>
  (await readFile(file(), "utf8").catch(() => ""))
    .split("\n")
    .filter(Boolean)
    .map((l) => JSON.parse(l));

beforeEach(async () => {
  dir = await mkdtemp(join(tmpdir(), "collector-"));
  collector = await startCollector({ file: file() });
});
afterEach(async () => {
  await collector.close();
  await rm(dir, { recursive: true, force: true });
});

describe("startCollector", () => {
  it("writes every span the OpenTelemetry exporter sends as one JSON line, with its component, parent and events", async () => {
    const tp = newProvider(
      { endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 },
      "kube-scheduler",
    );
    await startSpan(tp, "test", "scheduleOne", podAttributes(pod), async () => {
      await new Promise((r) => setTimeout(r, 5)); // across an await, the span stays active
      await withSpan("Filter", { plugin: "NodeName" }, async () => {
        addEvent("checked", { nodes: 3 });
      });
    });
    await tp.shutdown(); // flushes the batch
    const spans = await read();
    expect(spans.map((s) => s.name).sort()).toEqual(["Filter", "scheduleOne"]);
    const root = spans.find((s) => s.name === "scheduleOne")!;
    const child = spans.find((s) => s.name === "Filter")!;
    expect(root.service).toBe("kube-scheduler");
    expect(root.parentSpanId).toBeUndefined();
    expect(child.traceId).toBe(root.traceId);
    expect(child.parentSpanId).toBe(root.spanId);
    expect(root.attributes).toMatchObject({
      "k8s.pod.uid": "u-1",
      "k8s.pod.name": "web",
      "k8s.namespace.name": "default",
    });
    expect(child.events).toEqual([{ name: "checked", timeMs: expect.any(Number), attributes: { nodes: 3 } }]);
    // OpenTelemetry JS reads each span's clock on its own: allow a millisecond of drift.
    expect(root.startMs).toBeLessThanOrEqual(child.startMs + 1);
    expect(root.endMs + 1).toBeGreaterThanOrEqual(child.endMs);
    expect(root.endMs - root.startMs).toBeGreaterThanOrEqual(4);
  });

  it("records an error on the span that threw", async () => {
    const tp = newProvider({ endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 }, "kubelet");
    await expect(
      startSpan(tp, "test", "syncPod", {}, async () => {
        throw new Error("boom");
      }),
    ).rejects.toThrow("boom");
    await tp.shutdown();
    const [span] = await read();
    expect(span).toMatchObject({ name: "syncPod", error: "boom" });
  });

  it("refuses what it cannot read and writes nothing", async () => {
    const post = (body: string, type = "application/json") =>
      fetch(`${collector.endpoint}/v1/traces`, { method: "POST", body, headers: { "content-type": type } });
    expect((await post("{not json")).status).toBe(400);
    expect((await post("x", "application/x-protobuf")).status).toBe(415);
    expect((await fetch(`${collector.endpoint}/other`)).status).toBe(404);
    expect(await read()).toEqual([]);
  });
});

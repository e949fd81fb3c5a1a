/**
 * Chapter 8's proof that a pod's life is traced across the cluster's processes: every component
 * of a LocalCluster exports its spans to one collector (`tracing` option), one pod is created and
 * becomes Ready, and the span file then holds that pod's spans from the API server, the scheduler
 * and the kubelet, in the order of its life — created, scheduled, bound, synced, its container
 * started, Ready — and the API server's handling of the scheduler's binding is a child of the
 * scheduler's binding span (the traceparent crossed the process boundary).
 */
import { mkdtemp, readFile, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Pod } from "../api/core.ts";
import { waitFor } from "../testing/wait-for.ts";
import { type Collector, type SpanRecord, startCollector } from "../tracing/collector.ts";
import { formatSummary, formatTimeline, gatherPodSpans, milestones, parseSpans } from "./cluster/trace.ts";
import { LocalCluster } from "./testing/local-cluster.ts";

let dir: string;
let collector: Collector;
let cluster: LocalCluster;
const spansFile = () => join(dir, "spans.jsonl");

beforeAll(async () => {
  dir = await mkdtemp(join(tmpdir(), "cluster-trace-"));
  collector = await startCollector({ file: spansFile() });
  cluster = await LocalCluster.start({
    tracing: { endpoint: collector.endpoint, samplingRatePerMillion: 1_000_000 },
  });
}, 300_000);

afterAll(async () => {
  await cluster?.close();
  await collector?.close();
  if (dir) await rm(dir, { recursive: true, force: true });
}, 120_000);

const ready = (p: Pod) =>
  p.status?.conditions?.some((c) => c.type === "Ready" && c.status === "True") ?? false;
const attr = (s: SpanRecord, k: string) => s.attributes[k];

describe("a pod's life, traced", () => {
  it("records spans from the API server, the scheduler and the kubelet for the pod, in the order of its life", async () => {
    const created = await cluster.admin.coreV1.pods("default").create({
      apiVersion: "v1",
      kind: "Pod",
      metadata: { name: "traced", namespace: "default" },
      spec: {
        containers: [
          {
            name: "web",
            image: "course/web:1.0",
            ports: [{ containerPort: 8080 }],
            readinessProbe: { httpGet: { path: "/readyz", port: 8080 }, periodSeconds: 1 },
          },
        ],
      },
    });
    const uid = created.metadata.uid ?? "";
    await waitFor(
      "pod traced Ready",
      async () => ready(await cluster.admin.coreV1.pods("default").get("traced")),
      180_000,
    );
    // Spans reach the file a second or so after they end (each component's batch processor).
    const mine = await waitFor(
      "the pod's spans from every component, through Ready",
      async () => {
        const all = parseSpans(await readFile(spansFile(), "utf8").catch(() => ""));
        const got = gatherPodSpans(all, uid);
        const m = milestones(got);
        const started = got.some((s) => s.name === "runtime.v1.RuntimeService/StartContainer");
        return m.created && m.scheduled && m.ready && started ? got : undefined;
      },
      120_000,
    );
    console.log([...formatTimeline(mine), formatSummary(milestones(mine))].join("\n"));

    const services = new Set(mine.map((s) => s.service));
    expect([...services].sort()).toEqual(expect.arrayContaining(["apiserver", "kube-scheduler", "kubelet"]));
    for (const s of mine.filter((x) => attr(x, "k8s.pod.uid") !== undefined))
      expect(attr(s, "k8s.pod.uid")).toBe(uid);

    const first = (pred: (s: SpanRecord) => boolean, what: string) => {
      const found = mine.find(pred);
      if (!found) throw new Error(`no ${what} span among:\n${formatTimeline(mine).join("\n")}`);
      return found;
    };
    const create = first((s) => s.name === "Create etcd3", "storage create");
    const schedule = first((s) => s.name === "scheduleOne", "scheduleOne");
    const bindingCycle = first((s) => s.name === "bindingCycle", "bindingCycle");
    const bindRequest = first((s) => attr(s, "k8s.subresource") === "binding", "binding request");
    const sync = first((s) => s.name === "syncPod" && s.service === "kubelet", "kubelet syncPod");
    const start = first((s) => s.name === "runtime.v1.RuntimeService/StartContainer", "StartContainer");
    const readySpan = first(
      (s) => s.name === "statusManager.syncPod" && attr(s, "k8s.pod.ready") === true,
      "Ready status",
    );

    // The binding request is the API server's span, child of the scheduler's: one trace, two processes.
    expect(bindRequest.service).toBe("apiserver");
    expect(bindRequest.traceId).toBe(bindingCycle.traceId);
    expect(bindRequest.parentSpanId).toBe(bindingCycle.spanId);
    // The container was started from inside the kubelet's sync.
    expect(start.traceId).toBe(sync.traceId);
    // The life, in order (clocks of one machine; the API server's write ends before anyone sees it).
    expect(create.endMs).toBeLessThanOrEqual(schedule.startMs);
    expect(schedule.startMs).toBeLessThanOrEqual(bindRequest.startMs);
    expect(bindRequest.endMs).toBeLessThanOrEqual(sync.startMs);
    expect(sync.startMs).toBeLessThanOrEqual(start.startMs);
    expect(start.endMs).toBeLessThanOrEqual(readySpan.startMs);
    // The watch delivered the pod to the scheduler and to the kubelet of its node.
    const watchers = new Set(
      mine.filter((s) => s.name.startsWith("watch ")).map((s) => attr(s, "k8s.watcher")),
    );
    expect(watchers).toContain("system:kube-scheduler");
    expect(watchers).toContain("system:node:node-1");
  }, 420_000);
});

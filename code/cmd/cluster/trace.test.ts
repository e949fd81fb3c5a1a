import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { describe, expect, it } from "vitest";
import type { SpanRecord } from "../../tracing/collector.ts";
import { formatSummary, formatTimeline, gatherPodSpans, milestones, podUID, run } from "./trace.ts";

const T = 1_800_000_000_000;
let n = 0;
function span(
  p: Partial<SpanRecord> & { name: string; service: string; at: number; dur: number },
): SpanRecord {
  const { at, dur, ...rest } = p;
  return {
    traceId: "t1",
    spanId: `s${++n}`,
    attributes: {},
    events: [],
    startMs: T + at,
    endMs: T + at + dur,
    ...rest,
  };
}
const pod = (uid: string) => ({ "k8s.pod.uid": uid, "k8s.pod.name": "web", "k8s.namespace.name": "default" });

// One pod's life, with an older incarnation of the same name and an unrelated watch around it.
const watch = span({
  name: "GET /api/v1/pods",
  service: "apiserver",
  at: -5000,
  dur: 60_000,
  traceId: "w",
  attributes: { "k8s.verb": "watch" },
});
const old = span({
  name: "syncPod",
  service: "kubelet",
  at: -3000,
  dur: 5,
  traceId: "old",
  attributes: pod("u-old"),
});
const create = span({
  name: "POST /api/v1/namespaces/{:namespace}/pods",
  service: "apiserver",
  at: 0,
  dur: 4,
  attributes: { ...pod("u1"), "k8s.verb": "create", "http.status_code": 201 },
});
const store = span({
  name: "Create etcd3",
  service: "apiserver",
  at: 1,
  dur: 2,
  parentSpanId: create.spanId,
  attributes: pod("u1"),
});
const auth = span({
  name: "authentication",
  service: "apiserver",
  at: 0.5,
  dur: 0.1,
  parentSpanId: create.spanId,
});
const delivered = span({
  name: "watch ADDED",
  service: "apiserver",
  at: 5,
  dur: 0.1,
  traceId: "w",
  parentSpanId: watch.spanId,
  attributes: { ...pod("u1"), "k8s.watcher": "system:kube-scheduler" },
});
const cycle = span({
  name: "scheduleOne",
  service: "kube-scheduler",
  at: 6,
  dur: 1,
  traceId: "t2",
  attributes: { ...pod("u1"), "k8s.node.name": "node-1" },
});
const bind = span({
  name: "bindingCycle",
  service: "kube-scheduler",
  at: 7,
  dur: 5,
  traceId: "t2",
  parentSpanId: cycle.spanId,
  attributes: { "k8s.node.name": "node-1" },
});
const bindReq = span({
  name: "POST /api/v1/namespaces/{:namespace}/pods/{:name}/binding",
  service: "apiserver",
  at: 8,
  dur: 3,
  traceId: "t2",
  parentSpanId: bind.spanId,
  attributes: { "k8s.verb": "create", "k8s.subresource": "binding" },
});
const sync = span({
  name: "syncPod",
  service: "kubelet",
  at: 20,
  dur: 300,
  traceId: "t3",
  attributes: { ...pod("u1"), "k8s.pod.update_type": "create" },
});
const start = span({
  name: "runtime.v1.RuntimeService/StartContainer",
  service: "kubelet",
  at: 100,
  dur: 50,
  traceId: "t3",
  parentSpanId: sync.spanId,
});
const running = span({
  name: "statusManager.syncPod",
  service: "kubelet",
  at: 400,
  dur: 10,
  traceId: "t4",
  attributes: { ...pod("u1"), "k8s.pod.phase": "Running", "k8s.pod.ready": false },
});
const ready = span({
  name: "statusManager.syncPod",
  service: "kubelet",
  at: 900,
  dur: 10,
  traceId: "t5",
  attributes: { ...pod("u1"), "k8s.pod.phase": "Running", "k8s.pod.ready": true },
});
const all = [watch, old, ready, create, auth, store, delivered, cycle, bind, bindReq, sync, start, running];

describe("a pod's spans", () => {
  it("finds the latest incarnation's uid by name, or takes a uid as it is", () => {
    expect(podUID(all, "web", "default")).toBe("u1");
    expect(podUID(all, "u-old", "default")).toBe("u-old");
    expect(podUID(all, "web", "other")).toBeUndefined();
  });

  it("gathers the pod's spans with what they contain, leaving out the watch around a delivery and the old incarnation", () => {
    const names = gatherPodSpans(all, "u1").map((s) => s.spanId);
    expect(names).toEqual(
      [create, auth, store, delivered, cycle, bind, bindReq, sync, start, running, ready].map(
        (s) => s.spanId,
      ),
    );
  });

  it("prints one line per span, indented under its parent, offsets from the first span", () => {
    const lines = formatTimeline(gatherPodSpans(all, "u1"));
    expect(lines).toHaveLength(11);
    expect(lines[0]).toMatch(
      /^ {4}\+0\.00 {2}apiserver {7}POST \/api\/v1\/namespaces\/\{:namespace\}\/pods {2}4\.00ms {2}http\.status_code=201$/,
    );
    expect(lines[1]).toMatch(/\+0\.50 {2}apiserver {7} {2}authentication/);
    expect(lines[2]).toMatch(/\+1\.00 {2}apiserver {7} {2}Create etcd3 {2}2\.00ms/);
    const bindLine = lines.find((l) => l.includes("/binding"))!;
    expect(bindLine).toMatch(/\+8\.00 {2}apiserver {7} {4}POST/); // two levels under scheduleOne
    expect(lines.find((l) => l.includes("StartContainer"))).toMatch(/\+100 {2}kubelet + {2}runtime\.v1/);
    expect(lines.at(-1)).toMatch(/\+900 {2}kubelet .*phase=Running ready=true/);
  });

  it("summarises create → scheduled → running → ready from the milestones", () => {
    const m = milestones(gatherPodSpans(all, "u1"));
    expect(m).toEqual({ created: T + 3, scheduled: T + 11, running: T + 410, ready: T + 910 });
    expect(formatSummary(m)).toBe(
      "created → scheduled +8.00ms → running +399ms → ready +500ms (total 907ms)",
    );
    expect(formatSummary({ created: T })).toBe(
      "created → scheduled (not seen) → running (not seen) → ready (not seen)",
    );
  });
});

describe("trace <pod>", () => {
  it("says why when there is nothing to show", async () => {
    const dir = await mkdtemp(join(tmpdir(), "trace-"));
    const file = join(dir, "spans.jsonl");
    const out: string[] = [];
    expect(await run(["web", "--traces-file", file], (l) => out.push(l))).toBe(1);
    expect(out[0]).toMatch(/^no span file at .*is tracing on\?/);
    await writeFile(file, `${all.map((s) => JSON.stringify(s)).join("\n")}\n{"torn`);
    out.length = 0;
    expect(await run(["api", "-n", "default", "--traces-file", file], (l) => out.push(l))).toBe(1);
    expect(out).toEqual([
      expect.stringMatching(/^no spans of pod default\/api in .* \(13 spans in all\): check the name/),
    ]);
    out.length = 0;
    expect(await run(["web", `--traces-file=${file}`], (l) => out.push(l))).toBe(0);
    expect(out[0]).toMatch(/^pod default\/web \(uid u1\): 11 spans from 3 components/);
    expect(out.filter((l) => l.includes("authentication"))).toEqual([]); // left out unless --all
    expect(out).toHaveLength(1 + 10 + 1);
    out.length = 0;
    expect(await run(["web", `--traces-file=${file}`, "--all"], (l) => out.push(l))).toBe(0);
    expect(out.filter((l) => l.includes("authentication"))).toHaveLength(1);
    expect(out.at(-1)).toMatch(/^created → scheduled/);
    expect(await run(["--dir", dir, "web"], () => {})).toBe(1); // no cluster.json there
    await rm(dir, { recursive: true, force: true });
  });
});

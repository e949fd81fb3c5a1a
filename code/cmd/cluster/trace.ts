/**
 * `npm run cluster -- trace <pod> [-n ns] [--traces-file f]` — one pod's life across the cluster's
 * processes, read back from the collector's span file: every span about the pod (by its uid),
 * the spans they contain and the ones that contain them, as a timeline indented by parent, and a
 * summary: created → scheduled → running → ready.
 * No upstream counterpart: upstream leaves traces to a backend (Jaeger, Tempo) and its UI.
 *
 * Solves:
 * - "where did the time go between `kubectl apply` and Ready?" answered from what the components
 *   recorded, not guessed from the pod's conditions (whole seconds, and only the last of each);
 * - a pod name is enough: the name → the uid of its latest incarnation (a pod deleted and made
 *   again under the same name is another pod);
 * - a span without the pod's attributes still belongs to its life when it is inside one that has
 *   them (the API server's handling of the scheduler's binding) or contains one (the ReplicaSet
 *   controller's sync that created the pod).
 *
 * Invariants:
 * - offsets are from the first span shown; a child is printed under its parent, children and
 *   roots in start order;
 * - a watch request's span (minutes long, every pod's events) is never pulled in as a container:
 *   only its deliveries of this pod's events are shown;
 * - no span file, or no span of that pod: one line saying why and what to do, exit code 1.
 *
 * @upstream none — course tooling (a text rendering of what a tracing UI shows)
 * @chapter 08-cluster
 */
import { existsSync, readFileSync } from "node:fs";
import { join, resolve } from "node:path";
import type { SpanRecord } from "../../tracing/collector.ts";

const repoRoot = resolve(new URL("../../..", import.meta.url).pathname);

// #region gather
/** The span file's lines as records; a torn or foreign line is skipped. */
export function parseSpans(text: string): SpanRecord[] {
  const out: SpanRecord[] = [];
  for (const line of text.split("\n")) {
    if (!line.trim()) continue;
    try {
      const s = JSON.parse(line) as SpanRecord;
      if (s.spanId && s.traceId && typeof s.startMs === "number") out.push(s);
    } catch {
      // a line being written while we read: the next run sees it whole
    }
  }
  return out;
}

const attr = (s: SpanRecord, k: string) => s.attributes[k] as string | number | boolean | undefined;

/** The uid of the pod's latest incarnation seen in the spans (or `pod` itself when it is a uid). */
export function podUID(spans: SpanRecord[], pod: string, namespace: string): string | undefined {
  if (spans.some((s) => attr(s, "k8s.pod.uid") === pod)) return pod;
  let latest: SpanRecord | undefined;
  for (const s of spans) {
    if (attr(s, "k8s.pod.name") !== pod || attr(s, "k8s.namespace.name") !== namespace) continue;
    if (!attr(s, "k8s.pod.uid")) continue;
    if (!latest || s.startMs > latest.startMs) latest = s;
  }
  return latest ? String(attr(latest, "k8s.pod.uid")) : undefined;
}

/** Every span of the pod's life: the pod's own, what they contain, and what contains them. */
export function gatherPodSpans(spans: SpanRecord[], uid: string): SpanRecord[] {
  const byId = new Map(spans.map((s) => [`${s.traceId}/${s.spanId}`, s]));
  const picked = new Map<string, SpanRecord>();
  const key = (s: SpanRecord) => `${s.traceId}/${s.spanId}`;
  for (const s of spans) if (attr(s, "k8s.pod.uid") === uid) picked.set(key(s), s);
  // Ancestors, except a watch's request span.
  for (const s of [...picked.values()]) {
    let parent = s.parentSpanId ? byId.get(`${s.traceId}/${s.parentSpanId}`) : undefined;
    while (parent && attr(parent, "k8s.verb") !== "watch" && !picked.has(key(parent))) {
      picked.set(key(parent), parent);
      parent = parent.parentSpanId ? byId.get(`${parent.traceId}/${parent.parentSpanId}`) : undefined;
    }
  }
  // Descendants, until nothing new is found.
  for (let grew = true; grew; ) {
    grew = false;
    for (const s of spans) {
      if (picked.has(key(s)) || !s.parentSpanId) continue;
      if (picked.has(`${s.traceId}/${s.parentSpanId}`) && attr(s, "k8s.verb") !== "watch") {
        picked.set(key(s), s);
        grew = true;
      }
    }
  }
  return [...picked.values()].sort((a, b) => a.startMs - b.startMs);
}
// #endregion gather

// #region timeline
/** The attributes worth a glance on a timeline line, in this order. */
const keyAttributes = [
  "k8s.node.name",
  "k8s.user",
  "k8s.watcher",
  "http.status_code",
  "k8s.pod.update_type",
  "k8s.container.name",
  "k8s.pod.phase",
  "k8s.pod.ready",
  "k8s.replicaset",
  "status",
];

const ms = (n: number) => (n < 10 ? n.toFixed(2) : n < 100 ? n.toFixed(1) : n.toFixed(0));

/** One line per span, indented under its parent: `+offset  component  name  duration  attributes`. */
export function formatTimeline(spans: SpanRecord[]): string[] {
  if (spans.length === 0) return [];
  const t0 = Math.min(...spans.map((s) => s.startMs));
  const ids = new Set(spans.map((s) => `${s.traceId}/${s.spanId}`));
  const children = new Map<string, SpanRecord[]>();
  const roots: SpanRecord[] = [];
  for (const s of spans) {
    const parent = s.parentSpanId ? `${s.traceId}/${s.parentSpanId}` : "";
    if (parent && ids.has(parent)) children.set(parent, [...(children.get(parent) ?? []), s]);
    else roots.push(s);
  }
  const width = Math.max(...spans.map((s) => s.service.length));
  const lines: string[] = [];
  const visit = (s: SpanRecord, depth: number) => {
    const attrs = keyAttributes
      .filter((k) => attr(s, k) !== undefined && attr(s, k) !== "")
      .map((k) => `${k.replace(/^k8s\.(pod\.)?/, "")}=${attr(s, k)}`);
    if (s.error) attrs.push(`error=${JSON.stringify(s.error)}`);
    const offset = `+${ms(s.startMs - t0)}`.padStart(9);
    lines.push(
      `${offset}  ${s.service.padEnd(width)}  ${"  ".repeat(depth)}${s.name}  ${ms(s.endMs - s.startMs)}ms${attrs.length ? `  ${attrs.join(" ")}` : ""}`,
    );
    const kids = (children.get(`${s.traceId}/${s.spanId}`) ?? []).sort((a, b) => a.startMs - b.startMs);
    for (const c of kids) visit(c, depth + 1);
  };
  for (const r of roots.sort((a, b) => a.startMs - b.startMs)) visit(r, 0);
  return lines;
}

/** The milestones, in ms since the epoch: when each was first seen in the spans. */
export interface Milestones {
  created?: number;
  scheduled?: number;
  running?: number;
  ready?: number;
}

/**
 * created: the storage write of the pod's create ended; scheduled: the binding's storage write
 * ended (else the scheduler's bindingCycle); running: the kubelet first reported phase Running;
 * ready: the kubelet first wrote Ready=True.
 */
export function milestones(spans: SpanRecord[]): Milestones {
  const first = (pred: (s: SpanRecord) => boolean, at: (s: SpanRecord) => number) => {
    const xs = spans.filter(pred).map(at);
    return xs.length ? Math.min(...xs) : undefined;
  };
  const isStatus = (s: SpanRecord) => s.name === "statusManager.syncPod";
  return {
    created: first(
      (s) =>
        s.name === "Create etcd3" ||
        (s.service === "apiserver" &&
          s.name.startsWith("POST ") &&
          attr(s, "k8s.verb") === "create" &&
          !attr(s, "k8s.subresource")),
      (s) => s.endMs,
    ),
    scheduled:
      first(
        (s) => s.service === "apiserver" && attr(s, "k8s.subresource") === "binding",
        (s) => s.endMs,
      ) ??
      first(
        (s) => s.name === "bindingCycle" && !s.error,
        (s) => s.endMs,
      ),
    running: first(
      (s) => isStatus(s) && attr(s, "k8s.pod.phase") === "Running",
      (s) => s.endMs,
    ),
    ready: first(
      (s) => isStatus(s) && attr(s, "k8s.pod.ready") === true,
      (s) => s.endMs,
    ),
  };
}

/** `created → scheduled +12ms → running +340ms → ready +341ms (total 693ms)`. */
export function formatSummary(m: Milestones): string {
  const steps: [string, number | undefined][] = [
    ["created", m.created],
    ["scheduled", m.scheduled],
    ["running", m.running],
    ["ready", m.ready],
  ];
  let prev = m.created;
  const parts = steps.map(([name, t], i) => {
    if (t === undefined) return `${name} (not seen)`;
    if (i === 0 || prev === undefined) {
      prev = t;
      return name;
    }
    const part = `${name} +${ms(t - prev)}ms`;
    prev = t;
    return part;
  });
  const last = [m.ready, m.running, m.scheduled].find((t) => t !== undefined);
  const total = m.created !== undefined && last !== undefined ? ` (total ${ms(last - m.created)}ms)` : "";
  return `${parts.join(" → ")}${total}`;
}
// #endregion timeline

/** Where the spans are: `--traces-file`, else cluster.json's `traces` in `--dir` (default .cluster/). */
function tracesFile(flags: Map<string, string>): string | { problem: string } {
  const given = flags.get("traces-file");
  if (given) return given;
  const dir = flags.get("dir") ?? join(repoRoot, ".cluster");
  const state = join(dir, "cluster.json");
  if (!existsSync(state))
    return {
      problem: `no cluster in ${dir} (no cluster.json): start one with \`npm run cluster\`, or pass --traces-file <spans.jsonl>`,
    };
  const traces = (JSON.parse(readFileSync(state, "utf8")) as { traces?: string }).traces;
  if (!traces)
    return {
      problem: `the cluster in ${dir} records no traces (cluster.json has no "traces"): restart it with tracing, or pass --traces-file`,
    };
  return traces;
}

const usage =
  "usage: npm run cluster -- trace <pod> [-n <namespace>] [--traces-file <file>] [--dir <cluster dir>] [--all]";

/** Spans the timeline leaves out unless `--all`: inside every request, rarely the story. */
const quiet = new Set(["authentication"]);

export async function run(args: string[], out: (line: string) => void = console.log): Promise<number> {
  const flags = new Map<string, string>();
  const positional: string[] = [];
  for (let i = 0; i < args.length; i++) {
    const a = args[i];
    const m = /^--?([a-z-]+)(?:=(.*))?$/.exec(a);
    if (!m) {
      positional.push(a);
      continue;
    }
    const name = m[1] === "n" ? "namespace" : m[1];
    if (name === "all") {
      flags.set("all", "true");
      continue;
    }
    if (!["namespace", "traces-file", "dir", "help", "h"].includes(name)) {
      out(`unknown flag: ${a}\n${usage}`);
      return 2;
    }
    if (name === "help" || name === "h") {
      out(usage);
      return 0;
    }
    const value = m[2] ?? args[++i];
    if (value === undefined) {
      out(`flag needs an argument: ${a}\n${usage}`);
      return 2;
    }
    flags.set(name, value);
  }
  if (positional.length !== 1) {
    out(usage);
    return 2;
  }
  const [pod] = positional;
  const namespace = flags.get("namespace") ?? "default";
  const file = tracesFile(flags);
  if (typeof file !== "string") {
    out(file.problem);
    return 1;
  }
  if (!existsSync(file)) {
    out(
      `no span file at ${file}: no component has exported a span yet (is tracing on? spans arrive about a second after they end)`,
    );
    return 1;
  }
  const spans = parseSpans(readFileSync(file, "utf8"));
  const uid = podUID(spans, pod, namespace);
  if (!uid) {
    out(
      `no spans of pod ${namespace}/${pod} in ${file} (${spans.length} spans in all): check the name and namespace (-n), or wait a second for the components to export`,
    );
    return 1;
  }
  const mine = gatherPodSpans(spans, uid);
  const when = new Date(Math.min(...mine.map((s) => s.startMs))).toISOString();
  out(
    `pod ${namespace}/${pod} (uid ${uid}): ${mine.length} spans from ${new Set(mine.map((s) => s.service)).size} components, first at ${when}`,
  );
  const shown = flags.has("all") ? mine : mine.filter((s) => !quiet.has(s.name));
  for (const line of formatTimeline(shown)) out(line);
  out(formatSummary(milestones(mine)));
  return 0;
}

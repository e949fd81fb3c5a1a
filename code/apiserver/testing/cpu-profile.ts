/**
 * CPU profile summary — the top entries of a V8 `.cpuprofile` (what `node --cpu-prof` writes),
 * by self time and by inclusive time, as shares of the busy time (idle left out), so a benchmark
 * can print where the server's CPU went beside its CPU per pod.
 * No upstream counterpart: upstream profiles with pprof (`go tool pprof -top`).
 *
 * Invariants: shares are of the samples' summed time deltas, without `(idle)`; a function is
 * counted once per sample in the inclusive table, even when it recurses.
 *
 * @upstream none — benchmark tooling
 * @chapter 05-scheduler
 */
import { readdirSync, readFileSync, statSync } from "node:fs";
import { join } from "node:path";

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string };
  children?: number[];
}
export interface CPUProfile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

export interface ProfileEntry {
  name: string;
  /** Percent of the busy time. */
  share: number;
}

const nameOf = (n: ProfileNode) => {
  const file = n.callFrame.url.split("/").slice(-2).join("/");
  return `${n.callFrame.functionName || "(anonymous)"}${file ? ` ${file}` : ""}`;
};

// #region summarize
/** The `top` entries by self time and by inclusive time, and the busy time in ms. */
export function summarizeProfile(
  p: CPUProfile,
  top = 12,
): { busyMs: number; self: ProfileEntry[]; inclusive: ProfileEntry[] } {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const timeOf = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++) {
    const id = p.samples[i];
    timeOf.set(id, (timeOf.get(id) ?? 0) + (p.timeDeltas[i] ?? 0));
  }
  const self = new Map<string, number>();
  const inclusive = new Map<string, number>();
  let busy = 0;
  for (const [id, t] of timeOf) {
    const node = byId.get(id);
    if (!node || node.callFrame.functionName === "(idle)") continue;
    busy += t;
    self.set(nameOf(node), (self.get(nameOf(node)) ?? 0) + t);
    const seen = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const name = nameOf(byId.get(cur) as ProfileNode);
      if (seen.has(name)) continue;
      seen.add(name);
      inclusive.set(name, (inclusive.get(name) ?? 0) + t);
    }
  }
  const rank = (m: Map<string, number>) =>
    [...m]
      .filter(([name]) => !name.startsWith("(root)"))
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, t]) => ({ name, share: busy > 0 ? Math.round((1000 * t) / busy) / 10 : 0 }));
  return { busyMs: Math.round(busy / 1000), self: rank(self), inclusive: rank(inclusive) };
}
// #endregion summarize

// #region categorize
/** One cost of the write path: a name and a test on one frame's function name and file. */
export interface CostRule {
  name: string;
  /** Only the sample's own frame (the leaf) is tested: a cost paid in a native call. */
  leaf?: boolean;
  test: (functionName: string, url: string) => boolean;
}

/**
 * Where the busy time went, by cost: each sample goes to the first rule (in the rules' order)
 * that one frame of its stack matches, from the leaf up; what none matches is "other". The
 * order decides overlaps: with the socket write first, a write inside a handler counts as a
 * write, not as the handler. Shares in percent of the busy time, largest first.
 */
export function categorizeProfile(p: CPUProfile, rules: readonly CostRule[]): ProfileEntry[] {
  const byId = new Map(p.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of p.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const timeOf = new Map<number, number>();
  for (let i = 0; i < p.samples.length; i++)
    timeOf.set(p.samples[i], (timeOf.get(p.samples[i]) ?? 0) + (p.timeDeltas[i] ?? 0));
  const spent = new Map<string, number>();
  let busy = 0;
  for (const [id, t] of timeOf) {
    const leaf = byId.get(id);
    if (!leaf || leaf.callFrame.functionName === "(idle)") continue;
    busy += t;
    const stack: ProfileNode[] = [];
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur))
      stack.push(byId.get(cur) as ProfileNode);
    const rule = rules.find((r) =>
      (r.leaf ? [leaf] : stack).some((n) => r.test(n.callFrame.functionName, n.callFrame.url)),
    );
    const name = rule?.name ?? "other";
    spent.set(name, (spent.get(name) ?? 0) + t);
  }
  return [...spent]
    .sort((a, b) => b[1] - a[1])
    .map(([name, t]) => ({ name, share: busy > 0 ? Math.round((1000 * t) / busy) / 10 : 0 }));
}
// #endregion categorize

/**
 * The busiest `.cpuprofile` process `pid` wrote in `dir` (node names them
 * `CPU.<date>.<time>.<pid>.<thread>.<n>.cpuprofile`, one per thread; the main thread's is busiest).
 */
export function busiestProfile(dir: string, pid: number): CPUProfile | undefined {
  let best: { p: CPUProfile; busy: number } | undefined;
  for (const f of readdirSync(dir).filter(
    (f) => f.endsWith(".cpuprofile") && f.split(".")[3] === String(pid),
  )) {
    const path = join(dir, f);
    if (!statSync(path).isFile()) continue;
    const p = JSON.parse(readFileSync(path, "utf8")) as CPUProfile;
    const busy = summarizeProfile(p, 0).busyMs;
    if (!best || busy > best.busy) best = { p, busy };
  }
  return best?.p;
}

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

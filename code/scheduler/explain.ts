/**
 * Explain — why did the pod land there? A per-cycle recorder of every node's Filter verdict
 * per plugin and every Score plugin's raw, normalized and weighted score per node, written on
 * the pod as the kube-scheduler-simulator's annotations and printed as one table.
 *
 * @upstream kubernetes-sigs/kube-scheduler-simulator simulator/scheduler/plugin/annotation/annotation.go (FilterResultAnnotationKey, ScoreResultAnnotationKey, FinalScoreResultAnnotationKey, SelectedNodeAnnotationKey)
 * @upstream kubernetes-sigs/kube-scheduler-simulator simulator/scheduler/storereflector (the results reflected onto the pod's annotations)
 * @upstream kubernetes/kubernetes pkg/scheduler/framework/runtime/framework.go (RunFilterPlugins, RunScorePlugins: where the numbers come from)
 * @chapter 05-scheduler
 *
 * Solves: FailedScheduling says *how many* nodes failed and why, but a pod that did land gives
 * no reason at all: which plugin preferred that node, by how much, after which weight? The
 * simulator answers by wrapping every plugin; here the framework's own loops report to a
 * recorder that exists only when explain is on (`state.explain`), so an ordinary cycle pays one
 * property check per node and per Score plugin, nothing else.
 *
 * Invariants:
 * - Filter results are derived from the status each node ended with: the plugins before the
 *   deciding one "passed", the deciding one carries its message, later ones did not run (absent).
 *   Plugins whose PreFilter returned Skip are absent as well (they never ran).
 * - raw scores are copied before NormalizeScore runs; the normalized ones are read from the same
 *   list afterwards (NormalizeScore rewrites it in place — that is its contract); final = normalized
 *   × the plugin's weight, and a node's total is the sum of its finals, as RunScorePlugins adds it.
 * - annotation values are JSON maps of strings, node → plugin → value, as the simulator writes them.
 * - the annotations keep every plugin that ran; the table leaves out the columns of plugins that
 *   ran nowhere for this pod (PreFilter / PreScore Skip, or a Filter no node reached) and names
 *   them, and its abbreviated headers, in the lines under it.
 */
import type { ExplainRecorder } from "./framework/cycle-state.ts";
import type { NodeScore } from "./framework/interface.ts";
import type { Framework } from "./framework/runtime/framework.ts";
import { isSuccess, type Status } from "./framework/status.ts";

// #region annotation-keys
export const FilterResultAnnotationKey = "kube-scheduler-simulator.sigs.k8s.io/filter-result";
export const ScoreResultAnnotationKey = "kube-scheduler-simulator.sigs.k8s.io/score-result";
/** The final score: normalized and multiplied by the plugin's weight. */
export const FinalScoreResultAnnotationKey = "kube-scheduler-simulator.sigs.k8s.io/finalscore-result";
export const SelectedNodeAnnotationKey = "kube-scheduler-simulator.sigs.k8s.io/selected-node";
/** The simulator's value for a Filter plugin that let the node through. */
export const PassedFilterMessage = "passed";
// #endregion annotation-keys

/** One pod's decision, everything the table and the annotations need. */
export interface ExplainResult {
  /** The nodes Filter looked at, by name. */
  nodes: string[];
  filterPlugins: string[];
  scorePlugins: { name: string; weight: number }[];
  /** node → plugin → "passed" or the rejection's message. */
  filter: Record<string, Record<string, string>>;
  /** plugin → node → score, before NormalizeScore. */
  raw: Record<string, Record<string, number>>;
  /** plugin → node → score after NormalizeScore (0–100). */
  normalized: Record<string, Record<string, number>>;
  /** The chosen node; "" when none was. */
  selectedNode: string;
  /** Filter plugins whose PreFilter returned Skip for this pod (they ran on no node). */
  skippedFilterPlugins: string[];
  /** Score plugins whose PreScore returned Skip for this pod; empty when nothing was scored. */
  skippedScorePlugins: string[];
}

// #region recorder
export class Explain implements ExplainRecorder {
  private readonly filter = new Map<string, Map<string, string>>();
  private readonly scored: { plugin: string; raw: Map<string, number>; live: NodeScore[] }[] = [];
  private skipFilter: ReadonlySet<string> = new Set();
  selectedNode = "";

  constructor(private readonly fwk: Framework) {}

  /** A node's Filter verdict, from the status RunFilterPlugins returned for it. */
  recordFilter(skip: ReadonlySet<string>, nodeName: string, s: Status | undefined): void {
    this.skipFilter = skip;
    const row = new Map<string, string>();
    for (const pl of this.fwk.filterPlugins) {
      const name = pl.name();
      if (skip.has(name)) continue;
      if (!isSuccess(s) && s!.plugin === name) {
        row.set(name, s!.message());
        break;
      }
      row.set(name, PassedFilterMessage);
    }
    this.filter.set(nodeName, row);
  }

  /** One Score plugin's list, before NormalizeScore rewrites it in place. */
  recordScores(plugin: string, list: NodeScore[]): void {
    this.scored.push({ plugin, raw: new Map(list.map((ns) => [ns.name, ns.score])), live: list });
  }

  result(): ExplainResult {
    const obj = <V>(m: Map<string, V>) => Object.fromEntries(m) as Record<string, V>;
    const raw: ExplainResult["raw"] = {};
    const normalized: ExplainResult["normalized"] = {};
    for (const s of this.scored) {
      raw[s.plugin] = obj(s.raw);
      normalized[s.plugin] = Object.fromEntries(s.live.map((ns) => [ns.name, ns.score]));
    }
    const filterPlugins = this.fwk.filterPlugins.map((p) => p.name());
    // Score ran when a plugin reported, or when a node was chosen among several feasible ones
    // (then every Score plugin's PreScore said Skip); a single feasible node is not scored.
    const feasible = [...this.filter.values()].filter((row) =>
      [...row.values()].every((v) => v === PassedFilterMessage),
    ).length;
    const scoreRan = this.scored.length > 0 || (this.selectedNode !== "" && feasible > 1);
    const scoredNames = new Set(this.scored.map((s) => s.plugin));
    return {
      nodes: [...this.filter.keys()].sort(),
      filterPlugins,
      scorePlugins: this.scored.map((s) => ({
        name: s.plugin,
        weight: this.fwk.scorePluginWeight.get(s.plugin) ?? 1,
      })),
      filter: Object.fromEntries([...this.filter].map(([n, row]) => [n, obj(row)])),
      raw,
      normalized,
      selectedNode: this.selectedNode,
      skippedFilterPlugins: this.filter.size > 0 ? filterPlugins.filter((p) => this.skipFilter.has(p)) : [],
      skippedScorePlugins: scoreRan
        ? this.fwk.scorePlugins.map((p) => p.name()).filter((p) => !scoredNames.has(p))
        : [],
    };
  }
}
// #endregion recorder

// #region annotations
/** The pod's annotations as the simulator writes them: node → plugin → string. */
export function explainAnnotations(r: ExplainResult): Record<string, string> {
  const byNode = (f: (plugin: string, weight: number, node: string) => number | undefined) => {
    const out: Record<string, Record<string, string>> = {};
    for (const { name, weight } of r.scorePlugins) {
      for (const node of Object.keys(r.raw[name] ?? {}).sort()) {
        const v = f(name, weight, node);
        if (v === undefined) continue;
        out[node] ??= {};
        out[node][name] = String(v);
      }
    }
    return JSON.stringify(out);
  };
  const out: Record<string, string> = {
    [FilterResultAnnotationKey]: JSON.stringify(r.filter),
    [ScoreResultAnnotationKey]: byNode((p, _w, n) => r.raw[p][n]),
    [FinalScoreResultAnnotationKey]: byNode((p, w, n) => r.normalized[p][n] * w),
  };
  if (r.selectedNode) out[SelectedNodeAnnotationKey] = r.selectedNode;
  return out;
}
// #endregion annotations

// #region table
/** Each node's total: Σ normalized × weight over the Score plugins; undefined when not scored. */
export function totalScore(r: ExplainResult, node: string): number | undefined {
  if (r.scorePlugins.length === 0 || !(node in (r.raw[r.scorePlugins[0].name] ?? {}))) return undefined;
  return r.scorePlugins.reduce((sum, { name, weight }) => sum + r.normalized[name][node] * weight, 0);
}

/**
 * Short column headers for the default profile's long plugin names; the table's last line
 * spells out the ones it used. Any other plugin keeps its name.
 */
export const explainHeaderAbbreviations: Readonly<Record<string, string>> = {
  NodeName: "Name",
  TaintToleration: "Taint",
  NodeResourcesFit: "Fit",
  NodeResourcesBalancedAllocation: "Balanced",
  ImageLocality: "Image",
};

/** The Score section's label, over its columns. */
export const ScoreColumnsLabel = "Score: raw → normalized ×weight";

/**
 * formatExplainTable: rows are nodes, columns the Filter plugins (✓ or the reason), then the
 * Score plugins (raw → normalized × weight), then the total; the chosen node is marked. A
 * "Filter" / "Score" line above the headers groups the columns (TaintToleration and
 * NodeResourcesFit have one of each). A Filter column in which no node ran the plugin and a
 * Score plugin PreScore skipped are left out; the legend under the table names them, and the
 * abbreviated headers. The annotations keep everything (explainAnnotations).
 */
export function formatExplainTable(r: ExplainResult): string {
  const ran = (p: string) => r.nodes.some((n) => r.filter[n]?.[p] !== undefined);
  const filterCols = r.filterPlugins.filter(ran);
  const scoreCols = r.scorePlugins;
  const short = (p: string) => explainHeaderAbbreviations[p] ?? p;
  const header = ["NODE", ...filterCols.map(short), ...scoreCols.map((p) => short(p.name)), "TOTAL"];
  const rows = r.nodes.map((node) => {
    const f = r.filter[node] ?? {};
    const cells = [r.selectedNode === node ? `${node} ←` : node];
    for (const p of filterCols) {
      const v = f[p];
      cells.push(v === undefined ? "-" : v === PassedFilterMessage ? "✓" : v);
    }
    for (const { name, weight } of scoreCols) {
      const raw = r.raw[name]?.[node];
      cells.push(raw === undefined ? "-" : `${raw} → ${r.normalized[name][node]} ×${weight}`);
    }
    cells.push(String(totalScore(r, node) ?? "-"));
    return cells;
  });
  const widths = header.map((h, i) => Math.max(h.length, ...rows.map((row) => row[i].length)));
  // The group labels sit over their section's first column; a section narrower than its label
  // is widened at its last column.
  const groups: { label: string; from: number; to: number }[] = [];
  if (filterCols.length > 0) groups.push({ label: "Filter", from: 1, to: filterCols.length });
  if (scoreCols.length > 0)
    groups.push({
      label: ScoreColumnsLabel,
      from: filterCols.length + 1,
      to: filterCols.length + scoreCols.length,
    });
  for (const g of groups) {
    const span = widths.slice(g.from, g.to + 1).reduce((a, w) => a + w + 2, -2);
    if (span < g.label.length) widths[g.to] += g.label.length - span;
  }
  const line = (cells: string[]) =>
    cells
      .map((c, i) => c.padEnd(widths[i]))
      .join("  ")
      .trimEnd();
  const groupCells = header.map(() => "");
  for (const g of groups) groupCells[g.from] = g.label;
  const lines = [line(groupCells), line(header), ...rows.map(line)];
  if (scoreCols.length === 0 && r.selectedNode) {
    lines.push(
      r.skippedScorePlugins.length > 0
        ? "(every Score plugin skipped: the nodes tied)"
        : "(one feasible node: scoring skipped)",
    );
  }
  const scoreNames = scoreCols.map((p) => p.name);
  lines.push(...explainLegend(r, filterCols, scoreNames));
  return lines.join("\n");
}
// #endregion table

// #region legend
/**
 * The lines under the table: the plugins left out (skipped by PreFilter / PreScore, or a Filter
 * no node reached because an earlier one rejected every node), and the abbreviated headers. A
 * plugin whose other column is shown says which of its columns is left out.
 */
function explainLegend(r: ExplainResult, filterCols: string[], scoreCols: string[]): string[] {
  const shown = new Set([...filterCols, ...scoreCols]);
  const hidden = new Map<string, Set<"Filter" | "Score">>();
  const hide = (p: string, phase: "Filter" | "Score") => {
    if (!hidden.has(p)) hidden.set(p, new Set());
    hidden.get(p)!.add(phase);
  };
  const unreached: string[] = [];
  for (const p of r.filterPlugins) {
    if (filterCols.includes(p)) continue;
    if (r.skippedFilterPlugins.includes(p)) hide(p, "Filter");
    else if (r.nodes.length > 0) unreached.push(p);
  }
  for (const p of r.skippedScorePlugins) hide(p, "Score");
  const name = (p: string) => (shown.has(p) ? `${p} (${[...hidden.get(p)!].join(", ")})` : p);
  const parts: string[] = [];
  if (hidden.size > 0) parts.push(`plugins skipped for this pod: ${[...hidden.keys()].map(name).join(", ")}`);
  if (unreached.length > 0) parts.push(`Filter plugins no node reached: ${unreached.join(", ")}`);
  const lines = parts.length > 0 ? [`not shown: ${parts.join("; ")}`] : [];
  const abbreviated = [...shown].filter((p) => explainHeaderAbbreviations[p]);
  if (abbreviated.length > 0)
    lines.push(
      `abbreviated: ${abbreviated.map((p) => `${explainHeaderAbbreviations[p]} = ${p}`).join(", ")}`,
    );
  return lines;
}
// #endregion legend

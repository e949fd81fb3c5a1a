/**
 * What `<BenchFigures/>` draws for one benchmark: per figure, two bars on one scale — ours and the
 * figure it is measured against — with their values, and a verdict as a rate ("2.10× better"),
 * whichever way the unit runs; and the line saying where and when the figures were measured.
 * Kept apart from the component so the drawing's arithmetic is plain TypeScript a test can read.
 *
 * Invariants:
 * - the longer bar is 100% wide and the other in proportion (at least 1%, so a tiny value
 *   still shows); both values are printed as they are in the results, never rescaled;
 * - the verdict's ratio is above 1 exactly when ours is better (`better`: higher or lower).
 *
 * @upstream none — course tooling
 * @chapter 00-life-of-a-pod
 */
import type { Figure, Section } from "../../scripts/bench-figures.ts";

export interface Bar {
  who: string;
  kind: "ours" | "reference";
  value: string;
  /** CSS width: a percentage of the row. */
  width: string;
}

export interface ChartRow {
  label: string;
  /** "(ms, lower is better)". */
  unit: string;
  bars: [Bar, Bar];
  verdict: string;
}

/** 1234567 → "1,234,567"; small values as measured. */
export const formatValue = (n: number): string =>
  n >= 1000 ? Math.round(n).toLocaleString("en-US") : String(n);

const width = (v: number, other: number) =>
  `${Math.max(1, Math.round((1000 * v) / Math.max(v, other, Number.MIN_VALUE)) / 10)}%`;

/** "0.46× (worse)": ours ÷ reference as a rate, so above 1 is better whichever way the unit runs. */
export function verdict(f: Figure): string {
  const r = f.better === "higher" ? f.ours / f.reference.value : f.reference.value / f.ours;
  if (!Number.isFinite(r)) return "no ratio (a zero figure)";
  return `${r >= 10 ? Math.round(r) : r.toFixed(2)}× ${r >= 1 ? "(better or equal)" : "(worse)"}`;
}

// #region chart-rows
export function chartRows(section: Section): ChartRow[] {
  return section.figures.map((f) => ({
    label: f.label,
    unit: `(${f.unit}, ${f.better} is better)`,
    bars: [
      { who: "ours", kind: "ours", value: formatValue(f.ours), width: width(f.ours, f.reference.value) },
      {
        who: f.reference.label,
        kind: "reference",
        value: formatValue(f.reference.value),
        width: width(f.reference.value, f.ours),
      },
    ],
    verdict: verdict(f),
  }));
}
// #endregion chart-rows

/** "Measured 2026-12-07 at commit abc1234 on 2 × …, 8 GiB, Node v20…; load average 0.5 before, 0.7 after; flags --quick." */
export function measuredLine(s: Section): string {
  const m = s.machine;
  const flags = s.args.length ? `; flags ${s.args.join(" ")}` : "";
  const etcd = m.etcd ? `, etcd ${m.etcd}` : "";
  return `Measured ${s.date.slice(0, 10)} at commit ${s.commit} on ${m.cpus} × ${m.cpuModel}, ${m.memoryGiB} GiB, ${m.os}, Node ${m.node}${etcd}; load average ${s.loadAverage.before} before, ${s.loadAverage.after} after${flags}.`;
}
